"""NodeDeclaredFeatures: a pod that needs a node feature goes only to nodes that declare it.

A kubelet publishes in ``status.declaredFeatures`` the features it supports (KEP-5328). Some
fields of a pod's spec only work on a node with the matching feature; the pod's required
features are inferred from its spec, as the component-helpers ``nodedeclaredfeatures``
framework infers them for kube-scheduler 1.37 (its version is the target version: a feature
whose ``max_version`` is older is assumed everywhere and no longer required), and a node is a
fit only if it declares every one of them.

Of the features 1.37 registers, three can be required by a pod at scheduling time:

* ``RestartAllContainersOnContainerExits``: a container or init container with a
  ``restartPolicyRules`` action ``RestartAllContainers``;
* ``UserNamespacesHostNetworkSupport``: ``hostNetwork: true`` with ``hostUsers: false``;
* ``VolumeBindMountOptions``: a volume mount of any container (init and ephemeral included)
  with ``bindMountOptions``.

The others (``GuaranteedQoSPodCPUResize``, ``InPlacePodLevelResourcesVerticalScaling``,
``InPlacePodVerticalScalingMemoryBackedVolumes``, ``InPlacePodVerticalScalingInitContainers``,
``ExtendWebSocketsToKubelet``, ``DRAOptionalNodeOperations``, ``DRANodeAllocatableResources``)
are required only by updates of running pods, which the API server's admission checks, or not
by pods at all: a pod being scheduled never requires them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo

log = logging.getLogger(__name__)

NAME = "NodeDeclaredFeatures"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"

#: The Kubernetes version kubesched schedules as: the target version of the inference.
SCHEDULER_VERSION: tuple[int, int, int] = (1, 37, 0)

Version = tuple[int, int, int]
Spec = Mapping[str, Any]

NODE_ADD_OR_DECLARED_FEATURES = ClusterEvent(
    EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE
)
TARGET_POD_UPDATE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE)


@dataclass(frozen=True)
class DeclaredFeature:
    """A feature a node may declare: its name, whether a pod spec requires it at scheduling
    time, and the last version that may lack it (``None``: no such version yet)."""

    name: str
    infer_for_scheduling: Callable[[Spec], bool]
    max_version: Version | None = None


def _is_mapping(value: Any) -> bool:
    # A dict (what decoded JSON holds) is told at once; any other Mapping by the ABC.
    return type(value) is dict or isinstance(value, Mapping)


def requires_restart_all_containers(spec: Spec) -> bool:
    for f in ("containers", "initContainers"):
        for c in spec.get(f) or ():
            if not _is_mapping(c):
                continue
            for rule in c.get("restartPolicyRules") or ():
                if _is_mapping(rule) and rule.get("action") == "RestartAllContainers":
                    return True
    return False


def requires_user_namespaces_host_network(spec: Spec) -> bool:
    return spec.get("hostNetwork") is True and spec.get("hostUsers") is False


def requires_volume_bind_mount_options(spec: Spec) -> bool:
    for f in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(f) or ():
            if not _is_mapping(c):
                continue
            for m in c.get("volumeMounts") or ():
                if _is_mapping(m) and m.get("bindMountOptions"):
                    return True
    return False


#: The features 1.37 registers that a pod can require when it is scheduled.
FEATURES: tuple[DeclaredFeature, ...] = (
    DeclaredFeature("RestartAllContainersOnContainerExits", requires_restart_all_containers),
    DeclaredFeature("UserNamespacesHostNetworkSupport", requires_user_namespaces_host_network),
    DeclaredFeature("VolumeBindMountOptions", requires_volume_bind_mount_options),
)


def _may_require_any(spec: Spec) -> bool:
    """False only when ``spec`` requires none of :data:`FEATURES`: no ``hostNetwork: true``, and
    no container (init and ephemeral included) with volume mounts or restart policy rules — what
    each feature's inference needs before it can say yes. Most pods are told by this one look
    instead of a walk per feature."""
    if spec.get("hostNetwork") is True:
        return True
    for f in ("containers", "initContainers", "ephemeralContainers"):
        for c in spec.get(f) or ():
            if not _is_mapping(c) or c.get("volumeMounts") or c.get("restartPolicyRules"):
                return True
    return False


class _InferenceError(ValueError):
    """The requirements of a pod cannot be inferred."""


def infer_for_scheduling(
    spec: Spec, features: Sequence[DeclaredFeature] = FEATURES, version: Version | None = SCHEDULER_VERSION
) -> frozenset[str]:
    """The names of the features ``spec`` requires of a node, for a scheduler at ``version``."""
    if version is None:
        raise _InferenceError("target version cannot be nil")
    return _infer_active(spec, tuple(f for f in features if f.max_version is None or version <= f.max_version))


def _infer_active(spec: Spec, active: Sequence[DeclaredFeature]) -> frozenset[str]:
    """The names of the features of ``active`` (those still required at the target version)
    that ``spec`` requires."""
    names = [f.name for f in active if f.infer_for_scheduling(spec)]
    return frozenset(names) if names else _NONE


_NONE: frozenset[str] = frozenset()


def is_pod_resize_deferred(pod: Mapping[str, Any]) -> bool:
    """A resize of the pod the kubelet deferred (condition ``PodResizePending``, ``Deferred``)."""
    return any(
        isinstance(c, Mapping)
        and c.get("type") == "PodResizePending"
        and c.get("status") == "True"
        and c.get("reason") == "Deferred"
        for c in (pod.get("status") or {}).get("conditions") or ()
    )


class NodeDeclaredFeatures:
    """PreFilter infers the pod's required features (Skip when there are none); Filter rejects a
    node that does not declare them all, UnschedulableAndUnresolvable: no preemption changes
    what a node's kubelet supports. Requeued when a node is added or its declared features
    change, and when an update of the pod changes what it requires.

    Off (the plugin answers Skip and registers no events) when the ``NodeDeclaredFeatures``
    gate is off. With ``InPlacePodVerticalScalingSchedulerPreemption`` on, a pod whose resize
    the kubelet deferred is not checked: it is already placed.
    """

    name = NAME

    def __init__(
        self,
        args: Any = None,
        handle: Handle | None = None,
        *,
        features: Sequence[DeclaredFeature] = FEATURES,
        version: Version | None = SCHEDULER_VERSION,
    ) -> None:
        gates: FeatureGates = handle.feature_gates if handle is not None else FeatureGates()
        self.enabled = gates.enabled("NodeDeclaredFeatures")
        self.skip_deferred_resize = gates.enabled("InPlacePodVerticalScalingSchedulerPreemption")
        self.features = tuple(features)
        self.version = version
        #: The features still required at the target version (none when it is unset: inferring
        #: is then an error).
        self._active = (
            tuple(f for f in self.features if f.max_version is None or version <= f.max_version)
            if version is not None
            else ()
        )
        #: Whether every active feature is one of :data:`FEATURES`, so that
        #: :func:`_may_require_any` saying no means none is required.
        self._screened = all(f in FEATURES for f in self._active)

    def _infer(self, pod: Mapping[str, Any]) -> frozenset[str]:
        if self.version is None:
            raise _InferenceError("target version cannot be nil")
        spec = pod.get("spec") or {}
        if self._screened and not _may_require_any(spec):
            return _NONE
        return _infer_active(spec, self._active)

    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        if self.skip_deferred_resize and is_pod_resize_deferred(pod.pod):
            return Status(Code.SKIP)
        if not self.enabled:
            return Status(Code.SKIP)
        try:
            reqs = self._infer(pod.pod)
        except _InferenceError as exc:
            return Status.as_error(str(exc))
        if not reqs:
            return Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, reqs)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not self.enabled or (self.skip_deferred_resize and is_pod_resize_deferred(pod.pod)):
            return None
        reqs = state.get(PRE_FILTER_STATE_KEY)
        if reqs is None:
            return Status.as_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycle-state: not found')
        if not reqs <= node.declared_features:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNSATISFIED_REQUIREMENTS)
        return None

    def sign_pod(self, pod: PodInfo) -> dict[str, Any] | None:
        try:
            return {"Features": sorted(self._infer(pod.pod))}
        except _InferenceError:
            return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        if not self.enabled:
            return []
        return [
            ClusterEventWithHint(NODE_ADD_OR_DECLARED_FEATURES, self.is_schedulable_after_node_change),
            ClusterEventWithHint(TARGET_POD_UPDATE, self.is_schedulable_after_target_pod_update),
        ]

    @staticmethod
    def is_schedulable_after_node_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue on a new node, or on a node whose declared features changed."""
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            old_features = ((old.get("status") or {}).get("declaredFeatures")) or []
            new_features = ((new.get("status") or {}).get("declaredFeatures")) or []
            if list(old_features) == list(new_features):
                return QueueingHint.SKIP
        return QueueingHint.QUEUE

    def is_schedulable_after_target_pod_update(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when the update is of the rejected pod itself and changes what it requires."""
        if not isinstance(old, Mapping) or not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        target = pod.pod if isinstance(pod, PodInfo) else pod
        uid = ((target or {}).get("metadata") or {}).get("uid")
        if uid != (new.get("metadata") or {}).get("uid"):
            return QueueingHint.SKIP
        try:
            changed = self._infer(old) != self._infer(new)
        except _InferenceError:
            log.exception("failed to infer the feature requirements of pod %s", uid)
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE if changed else QueueingHint.SKIP
