"""What brings a pod DynamicResources rejected back to the queue (the cluster events it registers,
with their queueing hints), and which pods may be batched (their signature)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.types import PodInfo
from kubesched.objects import Obj
from kubesched.plugins.dynamicresources import extended_resources as ext
from kubesched.plugins.dynamicresources.claims import ClaimProblem, allocation_of, claim_statuses, meta_of, uid_of
from kubesched.plugins.dynamicresources.plugin_base import DynamicResourcesBase


class EventHints(DynamicResourcesBase):
    """The events, queueing hints and pod signature (see the module)."""

    # --- events ----------------------------------------------------------------------------
    def sign_pod(self, pod: PodInfo) -> Mapping[str, Any] | None:
        # A pod with claims depends on what earlier pods were allocated: never batched; nor one
        # whose extended resources DRA may provide.
        if (pod.pod.get("spec") or {}).get("resourceClaims"):
            return None
        if self._may_ask_extended(pod) and ext.dra_backed(pod.requests.scalar.items(), self.handle):
            return None
        return {}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_or_update = ActionType.ADD | ActionType.UPDATE
        return [
            # Node labels may matter to where devices are; allocatable, to whether an extended
            # resource comes from a device plugin or from DRA.
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.NODE,
                    ActionType.ADD | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_ALLOCATABLE,
                )
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_CLAIM, add_or_update),
                self.is_schedulable_after_claim_change,
                screen=claim_screen,
                pod_keys=pod_claim_keys,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.DEVICE_CLASS, add_or_update)),
            # DeviceTaintRules reach the scheduler as the slices they change (as upstream's
            # ResourceSlice tracker delivers them).
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_SLICE, add_or_update)),
        ]

    def is_schedulable_after_claim_change(self, pod: Obj, old: Obj | None, new: Obj) -> QueueingHint:
        deallocated = old is not None and allocation_of(old) is not None and allocation_of(new) is None
        if not deallocated and not _may_name(pod, new):
            return QueueingHint.SKIP  # as below, without resolving every claim of the pod
        try:
            claims = self._pod_claims(pod)
        except ClaimProblem:
            return QueueingHint.SKIP
        if deallocated:
            return QueueingHint.QUEUE  # deallocated: its devices are free for anyone
        if not any(uid_of(c) == uid_of(new) for c in claims):
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP if old.get("status") == new.get("status") else QueueingHint.QUEUE

    def is_schedulable_after_pod_change(self, pod: Obj, old: Obj | None, new: Obj) -> QueueingHint:
        if meta_of(pod).get("uid") != meta_of(new).get("uid"):
            return QueueingHint.SKIP
        try:
            self._pod_claims(new)
        except ClaimProblem:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


def claim_screen(old: Obj | None, new: Obj) -> tuple[str, Any] | None:
    """The claim's namespace and name, unless the change deallocated it: :meth:`EventHints.
    is_schedulable_after_claim_change` answers SKIP for a pod none of whose entries may name it
    (:func:`pod_claim_keys`), but QUEUE for any pod when devices are given back."""
    if old is not None and allocation_of(old) is not None and allocation_of(new) is None:
        return None
    cmeta = new.get("metadata") or {}
    return (cmeta.get("namespace") or "default", cmeta.get("name"))


def pod_claim_keys(pod: Obj) -> frozenset[tuple[str, Any]]:
    """The (namespace, name) of every claim the pod's entries may stand for (:func:`_may_name`)."""
    return _claim_names(pod)[2]


def _may_name(pod: Obj, claim: Obj) -> bool:
    """Whether one of the pod's ``spec.resourceClaims`` entries stands for a claim of this
    namespace and name (a claim of another name cannot be one of the pod's claims)."""
    namespace, names, _ = _claim_names(pod)
    cmeta = claim.get("metadata") or {}
    return (cmeta.get("namespace") or "default") == namespace and cmeta.get("name") in names


#: Per pod version (uid, resourceVersion): its namespace, the names its ``spec.resourceClaims``
#: entries stand for, and those names as (namespace, name) keys. A claim event asks about every
#: pod waiting in the queue, each the same version until it changes.
_NAMES: dict[tuple[Any, Any], tuple[str, frozenset[Any], frozenset[tuple[str, Any]]]] = {}
#: How many pod versions :data:`_NAMES` keeps before starting over.
_NAMES_LIMIT = 50_000


def _claim_names(pod: Obj) -> tuple[str, frozenset[Any], frozenset[tuple[str, Any]]]:
    """The pod's namespace and the claim names its entries stand for: an entry's
    ``resourceClaimName``, or for a template entry the claim its status names (``None`` when its
    status names none yet, as a claim without a name would match it); and the names as keys."""
    meta = meta_of(pod)
    version = (meta.get("uid"), meta.get("resourceVersion"))
    hit = _NAMES.get(version)
    if hit is not None:
        return hit
    names: set[Any] = set()
    statuses: dict[Any, str] | None = None
    for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
        if entry.get("resourceClaimName"):
            names.add(entry["resourceClaimName"])
        elif entry.get("resourceClaimTemplateName"):
            if statuses is None:
                statuses = claim_statuses(pod)
            names.add(statuses.get(entry.get("name")))
    namespace = meta.get("namespace") or "default"
    found = (namespace, frozenset(names), frozenset((namespace, n) for n in names))
    if version[0] and version[1]:  # an object without both is not known to stay the same
        if len(_NAMES) >= _NAMES_LIMIT:
            _NAMES.clear()
        _NAMES[version] = found
    return found
