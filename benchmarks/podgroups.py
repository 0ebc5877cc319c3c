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


def _member(name: str, namespace: str, group: str, extra: Obj | None = None) -> Obj:
    """A measured pod of PodGroup ``group``: upstream's pause container asking 100m CPU and
    100Mi memory, ``extra`` first in its spec."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            **(extra or {}),
            "schedulingGroup": {"podGroupName": group},
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.10.1",
                    "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}},
                }
            ],
        },
    }


def member_pod(gang: bool, per_group: int) -> Callable[[str, int], Obj]:
    """Pod ``i`` of the measured set, a member of group ``i // per_group`` (upstream's
    gang-pod.yaml / basic-pod.yaml: 100m CPU, 100Mi memory, requests only)."""
    namespace = GANG_NAMESPACE if gang else BASIC_NAMESPACE

    def make(prefix: str, i: int) -> Obj:
        return _member(f"{prefix}-{i}", namespace, group_name(gang, i // per_group))

    return make


# --- CompositePodGroup (upstream's ``cpg/`` CPGBasicScheduling and CPGGangScheduling) ----------

#: The gates the composite workloads run with (upstream's ``featureGates`` of ``cpg/``).
CPG_GATES: dict[str, bool] = {
    "GenericWorkload": True,
    "TopologyAwareWorkloadScheduling": True,
    "CompositePodGroup": True,
}
CPG_GANG_NAMESPACE = "cpg-gang-ns-0"
CPG_BASIC_NAMESPACE = "cpg-basic-ns-0"
#: Upstream's gang templates also give the composites, their PodGroups and the pods priority
#: 1000 (as a bare ``spec.priority``, which the API server's Priority admission refuses on a
#: pod): left out here, every object at the default priority, which changes nothing in a run
#: without lower-priority pods.


def cpg_group_name(gang: bool, i: int) -> str:
    return f"gang-group-{i}" if gang else f"basic-group-{i}"


def composite_objects(
    gang: bool, cpgs: int, groups: int, per_cpg: int, min_group_count: int, min_count: int
) -> Callable[[], list[Obj]]:
    """The namespace, ``cpgs`` CompositePodGroups ``cpg-<i>`` (gang with ``minGroupCount``, or
    basic) and ``groups`` PodGroups, group ``i`` under ``cpg-<i // per_cpg>`` (gangs of
    ``minCount``, or basic), as upstream's cpg-*.yaml and podgroup-*.yaml make them (each names
    a ``workloadRef`` the API requires; as upstream, no Workload object is created)."""
    namespace = CPG_GANG_NAMESPACE if gang else CPG_BASIC_NAMESPACE

    def make() -> list[Obj]:
        objs: list[Obj] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}]
        for i in range(cpgs):
            spec: Obj = (
                {"schedulingPolicy": {"gang": {"minGroupCount": min_group_count}}}
                if gang
                else {"schedulingPolicy": {"basic": {}}}
            )
            objs.append(
                {
                    "apiVersion": "scheduling.k8s.io/v1alpha3",
                    "kind": "CompositePodGroup",
                    "metadata": {"name": f"cpg-{i}", "namespace": namespace},
                    "spec": {
                        "workloadRef": {
                            "workloadName": f"test-wl-{i}" if gang else "cpg-workload",
                            "templateName": "cpg-template",
                        },
                        **spec,
                    },
                }
            )
        for i in range(groups):
            spec = {
                "parentCompositePodGroupName": f"cpg-{i // per_cpg}",
                "workloadRef": {"workloadName": f"test-wl-{i // per_cpg}", "templateName": "pg-template"},
            }
            if gang:
                spec["schedulingPolicy"] = {"gang": {"minCount": min_count}}
            else:
                spec["schedulingPolicy"] = {"basic": {}}
            objs.append(
                {
                    "apiVersion": "scheduling.k8s.io/v1beta1",
                    "kind": "PodGroup",
                    "metadata": {"name": cpg_group_name(gang, i), "namespace": namespace},
                    "spec": spec,
                }
            )
        return objs

    return make


def composite_member_pod(gang: bool, per_group: int) -> Callable[[str, int], Obj]:
    """Pod ``i`` of the measured set, a member of PodGroup ``i // per_group`` (upstream's
    cpg/templates/gang-pod.yaml with ``cpuRequest: 100m``, or basic-pod.yaml)."""
    namespace = CPG_GANG_NAMESPACE if gang else CPG_BASIC_NAMESPACE

    def make(prefix: str, i: int) -> Obj:
        extra: Obj = {"terminationGracePeriodSeconds": 0} if gang else {}
        return _member(f"{prefix}-{i}", namespace, cpg_group_name(gang, i // per_group), extra)

    return make
