"""One entry point to the API server's checks for objects that do not come over HTTP (scenario
files): what kube-apiserver would refuse on create, as ``field: message`` lines.

The API server itself runs the same checks in its own order (decoding, then admission and
validation, see :mod:`.admission`); this is for callers that want the verdict without a request.
"""

from __future__ import annotations

from typing import Any

from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.validation import scheduling as workloads
from kubesched.sim.apiserver.validation.core import validate_node_spec, validate_pod_scheduling
from kubesched.sim.apiserver.validation.dra.taint_rules import validate_device_taint_rule
from kubesched.sim.apiserver.validation.meta import validate_labels
from kubesched.sim.apiserver.validation.pods import pod_validation_options, validate_container_restart_policies
from kubesched.sim.apiserver.validation.resources import validate_pod_resources
from kubesched.sim.apiserver.validation.storage import (
    default_csi_driver,
    validate_csi_driver,
    validate_csi_storage_capacity,
)

#: Scenarios are read before any gate is known: the scheduling.k8s.io kinds are checked with
#: every field their gates allow (whether the scheduler acts on them is its gates' business).
_ALL_WORKLOAD_GATES = FeatureGates(
    {
        name: True
        for name in (
            "GenericWorkload",
            "CompositePodGroup",
            "TopologyAwareWorkloadScheduling",
            "PodGroupPreemptionPolicy",
            "DRAWorkloadResourceClaims",
        )
    }
)


def scheduling_problems(kind: str, obj: dict[str, Any], gates: FeatureGates | None = None) -> list[str]:
    """What the API server would refuse in the fields the scheduler reads — a pod's nodeSelector,
    affinity, tolerations, topology spread constraints, priority fields, pod-level resources and
    its containers' restart policies and rules, a node's taints, a DeviceTaintRule's selector and
    taint, a CSIDriver's spec (defaulted first), a CSIStorageCapacity's topology, class and
    quantities, a Workload's, PodGroup's or CompositePodGroup's spec, a pod's scheduling group,
    and labels — as ``field: message`` lines; empty if it would accept them. A pod is checked
    under ``gates`` (1.37's defaults when None) as the API server checks it on create: ``Lt`` and
    ``Gt`` tolerations with TaintTolerationComparisonOperators, the RestartAllContainers action
    with RestartAllContainersOnContainerExits (what a gate that is off drops is the caller's to
    drop first, :func:`.pods.drop_disabled_pod_fields`). Object names and types
    are left to the caller: scenarios keep the names upstream's scheduler tests use (``nodeA``,
    ``subteam1.team1``), which the API server would refuse but the scheduler does not mind."""
    meta = obj.get("metadata")
    causes = validate_labels(meta.get("labels"), "metadata.labels") if isinstance(meta, dict) else []
    spec = obj.get("spec")
    if kind == "Pod" and isinstance(spec, dict):
        opts = pod_validation_options(gates)
        causes += validate_container_restart_policies(spec, opts)
        causes += validate_pod_scheduling(spec, names=False, comparison_operators=opts.comparison_operators)
        if opts.pod_level_resources:
            causes += validate_pod_resources(spec)
    elif kind == "Node":
        causes += validate_node_spec(spec)
    elif kind == "DeviceTaintRule":
        causes += validate_device_taint_rule(obj)
    elif kind == "CSIDriver":
        default_csi_driver(obj)
        causes += validate_csi_driver(obj)
    elif kind == "CSIStorageCapacity":
        causes += validate_csi_storage_capacity(obj)
    elif kind == "Workload":
        causes += workloads.validate_workload(obj, _ALL_WORKLOAD_GATES)
    elif kind == "PodGroup":
        causes += workloads.validate_pod_group(obj, _ALL_WORKLOAD_GATES)
    elif kind == "CompositePodGroup":
        causes += workloads.validate_composite_pod_group(obj, _ALL_WORKLOAD_GATES)
    if kind == "Pod" and isinstance(spec, dict):
        causes += workloads.validate_pod_scheduling_group(spec)
    return [f"{field}: {message}" for field, _, message in causes]
