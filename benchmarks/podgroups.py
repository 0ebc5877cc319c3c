"""The objects of upstream scheduler_perf's pod-group workloads (kube-scheduler 1.37,
``test/integration/scheduler_perf/podgroup/{gangscheduling,basicscheduling}``), as data: the
namespace, the PodGroups and the member pods' template.

Upstream's cases run with the GenericWorkload gate on and the default profile (which then holds
GangScheduling). They create ``initPodGroups`` PodGroups (``gang-<i>`` with
``gang.minCount: podsPerGroup``, or ``basic-group-<i>`` with the basic policy) in one namespace,
then ``initPodGroups * podsPerGroup`` pods, pod ``i`` a member of group ``i // podsPerGroup``,
each asking 100m CPU and 100Mi memory, on default nodes (4 CPU, 32Gi, 110 pods). Upstream sets no
throughput threshold on them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Obj = dict[str, Any]

#: The gates the pod-group workloads run with, as upstream's ``featureGates``.
GATES: dict[str, bool] = {"GenericWorkload": True}
GANG_NAMESPACE = "gang-ns-0"
BASIC_NAMESPACE = "basic-ns-0"


def group_name(gang: bool, i: int) -> str:
    return f"gang-{i}" if gang else f"basic-group-{i}"


def pod_group_objects(gang: bool, groups: int, per_group: int) -> Callable[[], list[Obj]]:
    """The namespace and ``groups`` PodGroups: gangs of ``minCount: per_group``, or basic groups."""
    namespace = GANG_NAMESPACE if gang else BASIC_NAMESPACE
    policy: Obj = {"gang": {"minCount": per_group}} if gang else {"basic": {}}

    def make() -> list[Obj]:
        objs: list[Obj] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}]
        objs += [
            {
                "apiVersion": "scheduling.k8s.io/v1beta1",
                "kind": "PodGroup",
                "metadata": {"name": group_name(gang, i), "namespace": namespace},
                "spec": {"schedulingPolicy": dict(policy)},
            }
            for i in range(groups)
        ]
        return objs

    return make


def member_pod(gang: bool, per_group: int) -> Callable[[str, int], Obj]:
    """Pod ``i`` of the measured set, a member of group ``i // per_group`` (upstream's
    gang-pod.yaml / basic-pod.yaml: 100m CPU, 100Mi memory, requests only)."""
    namespace = GANG_NAMESPACE if gang else BASIC_NAMESPACE

    def make(prefix: str, i: int) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": f"{prefix}-{i}", "namespace": namespace},
            "spec": {
                "schedulingGroup": {"podGroupName": group_name(gang, i // per_group)},
                "containers": [
                    {
                        "name": "pause",
                        "image": "registry.k8s.io/pause:3.10.1",
                        "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}},
                    }
                ],
            },
        }

    return make
