"""DynamicResources: devices claimed through ResourceClaims (DRA with structured parameters).

As upstream's plugin in kube-scheduler 1.37 (pkg/scheduler/framework/plugins/dynamicresources):

* PreEnqueue: every claim of the pod exists (the resource-claim controller has made the ones of
  its templates), is not being deleted, and a generated one belongs to the pod;
* PreFilter: Skip for a pod without claims and without extended resources a DeviceClass stands
  for (the cost of the plugin for every other pod); a claim allocated and reserved to the limit
  for others, or one being allocated for another pod, or a request naming a DeviceClass that
  does not exist makes the pod wait. A pod asking for extended resources backed by DRA gets an
  in-memory claim for them (:mod:`.extended_resources`);
* Filter: an allocated claim must be available on the node (its allocation's node selector; and,
  with binding conditions, not failed nor timed out); the unallocated ones must all be
  allocatable from the ResourceSlices reaching the node, DeviceTaintRules applied
  (:mod:`.allocator`, :mod:`.device_taints`), else "cannot allocate all claims";
* PostFilter: deallocates one allocated claim not available where the pod could go and not
  used by anyone else (or deletes a stale claim for extended resources), so that the next
  attempt may allocate it elsewhere;
* Reserve: the node's allocation is held in flight, so that the next pod does not take the same
  devices before PreBind has written them; Unreserve drops it (and the pod's reservation, and
  the claim for extended resources PreBind created);
* PreBind: creates the claim for extended resources, writes ``status.allocation`` and
  ``status.reservedFor`` (with upstream's finalizer), the pod's
  ``status.extendedResourceClaimStatus``, then waits for binding conditions
  (:mod:`.binding_conditions`).

ResourceClaims shared by a PodGroup (KEP-5729, ``DRAWorkloadResourceClaims``, beta and off by
default in 1.37): a member's ``spec.resourceClaims`` entry that matches an entry of its PodGroup
exactly (same name, same source) is the group's claim. Its status leads a template entry to the
claim the controller made for the group, which the group (not the pod) controls; a claim whose
``status.reservedFor`` names the member's PodGroup (by name) is reserved for the member; PreBind
reserves such a claim for the PodGroup (``{apiGroup: scheduling.k8s.io, resource: podgroups,
name, uid}``), once for all members, past the 256-entry limit; Unreserve never takes the group's
reservation off, and PostFilter does, when no member is placed, so that the next attempt may
allocate anew. Whatever the gate, the members of one pod-group cycle share an allocation an
earlier member made in Reserve and PreBind has not written yet (upstream's pending allocations
of the cycle): they use it, on the nodes it allows, and the last of them to let go of it (PreBind
or Unreserve) takes it out of flight; a pod outside that cycle waits for it to be written.
"""

from __future__ import annotations

import asyncio
import copy
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from kubesched.framework import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    NodeInfo,
    NodeScore,
    PodInfo,
    PostFilterResult,
    QueueingHint,
    Status,
)
from kubesched.framework.columns import Array
from kubesched.framework.features import FeatureGates
from kubesched.framework.podgroup import pod_group_name
from kubesched.framework.selectors import NodeSelector, SelectorError
from kubesched.plugins.dynamicresources import device_taints
from kubesched.plugins.dynamicresources import extended_resources as ext
from kubesched.plugins.dynamicresources.allocator import Allocator
from kubesched.plugins.dynamicresources.allocator_types import (
    AllocatedState,
    AllocationError,
    AllocationFailedOnNode,
    AllocationTimeout,
    CompileFailure,
    Features,
    RuntimeFailure,
    claim_key,
)
from kubesched.plugins.dynamicresources.binding_conditions import (
    BindingFailed,
    claim_ready_for_binding,
    claim_timed_out,
    has_binding_conditions,
    rfc3339_now,
)
from kubesched.plugins.dynamicresources.cel import CELError, compile_expression, device_variables, evaluate
from kubesched.plugins.helper import default_normalize_score, default_normalize_scores, feature_gates_of

Obj = dict[str, Any]

STATE_KEY = "DynamicResources"
#: Upstream's finalizer on claims the scheduler allocated.
FINALIZER = "resource.kubernetes.io/delete-protection"
#: Upstream's limit on ``status.reservedFor`` (ResourceClaimReservedForMaxSize).
RESERVED_FOR_MAX_SIZE = 256
#: ResourceClaims shared by a PodGroup (KEP-5729, beta and off by default in 1.37).
WORKLOAD_CLAIMS_GATE = "DRAWorkloadResourceClaims"
#: How ``status.reservedFor`` names a PodGroup.
POD_GROUP_API_GROUP = "scheduling.k8s.io"
POD_GROUP_RESOURCE = "podgroups"
#: How many (expression, device) answers are remembered before starting over.
_MATCH_CACHE_LIMIT = 200_000
#: Upstream's limit on a request's ``firstAvailable`` alternatives: the first one allocated
#: scores this much, each later one a point less.
FIRST_AVAILABLE_MAX_SIZE = 8
#: How often PreBind looks at the binding conditions while it waits (upstream: 5s).
BINDING_POLL_SECONDS = 5.0

#: Upstream's ``DynamicResourcesBindingTimeoutDefault``.
BINDING_TIMEOUT_DEFAULT = "10m0s"
FILTER_TIMEOUT_GATE = "DRASchedulerFilterTimeout"
BINDING_GATES = ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")


_DURATION = re.compile(r"^-?((\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+|0)$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(text: str) -> float:
    """A Go duration (``10s``, ``1m30s``, ``0``, ``-1s``) in seconds."""
    total = sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(text))
    return -total if text.startswith("-") else total


class DynamicResourcesArgs(BaseModel):
    """``DynamicResourcesArgs`` as 1.37 has them.

    * ``filterTimeout`` (a duration, default 10s; 0 disables it; DRASchedulerFilterTimeout)
      bounds how long Filter may spend allocating on one node: past it, the attempt ends with
      an Error ("node <name>: timed out trying to allocate devices") and the pod backs off;
    * ``bindingTimeout`` (at least 1s; DRADeviceBindingConditions with
      DRAResourceClaimDeviceStatus; the configuration defaults it to 10m0s when both are on, and
      the plugin waits that long when it is unset) bounds how long PreBind waits for the binding
      conditions of allocated devices.

    Setting a field whose gate is off is refused, as upstream refuses it (``filterTimeout:
    Forbidden: ...``): by the configuration's validation, and by the plugin when it is built."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    filterTimeout: str = "10s"
    bindingTimeout: str | None = None

    @field_validator("filterTimeout", "bindingTimeout")
    @classmethod
    def _duration(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return v
        if not _DURATION.match(v):
            raise ValueError(
                f"{info.field_name}: Invalid value: {v!r}: must be a duration such as 10s or 1m30s, not negative"
            )
        if info.field_name == "filterTimeout" and duration_seconds(v) < 0:
            raise ValueError(f"filterTimeout: Invalid value: {v!r}: must be zero or positive")
        return v


def check_args(args: DynamicResourcesArgs, gates: FeatureGates) -> None:
    """Upstream's ``ValidateDynamicResourcesArgs`` for what depends on the feature gates: a field
    set while its gate is off is an error (ValueError naming the field)."""
    problems = []
    if not gates.enabled(FILTER_TIMEOUT_GATE) and "filterTimeout" in args.model_fields_set:
        problems.append("filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled")
    binding = args.bindingTimeout if "bindingTimeout" in args.model_fields_set else None
    if binding is not None:
        if not all(gates.enabled(g) for g in BINDING_GATES):
            problems.append(
                "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
                "feature gate is disabled"
            )
        elif duration_seconds(binding) < 1:
            problems.append(f'bindingTimeout: Invalid value: "{binding}": must be at least 1 second')
    if problems:
        raise ValueError("; ".join(problems))


class ClaimProblem(Exception):
    """Why a pod cannot use its claims now (UnschedulableAndUnresolvable)."""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _uid(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("uid") or claim_key(obj))


def _allocation(claim: Mapping[str, Any]) -> Any:
    return (claim.get("status") or {}).get("allocation")


def _reserved_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any], accept_group: bool = False) -> bool:
    """Whether ``claim.status.reservedFor`` lists the pod, or (``accept_group``: the
    DRAWorkloadResourceClaims gate) the pod's PodGroup, which upstream matches by name: a
    PodGroup cannot be deleted and made again under its name while members use it."""
    uid = _meta(pod).get("uid")
    group = pod_group_name(pod) if accept_group else ""
    for r in (claim.get("status") or {}).get("reservedFor") or ():
        if r.get("uid") == uid:
            return True
        if group and _is_group_ref(r) and r.get("name") == group:
            return True
    return False


def _is_group_ref(ref: Mapping[str, Any]) -> bool:
    return ref.get("apiGroup") == POD_GROUP_API_GROUP and ref.get("resource") == POD_GROUP_RESOURCE


def _pod_ref(pod: Mapping[str, Any]) -> Obj:
    meta = _meta(pod)
    return {"resource": "pods", "name": meta.get("name", ""), "uid": meta.get("uid", "")}


def _group_ref(group: Mapping[str, Any]) -> Obj:
    meta = _meta(group)
    return {
        "apiGroup": POD_GROUP_API_GROUP,
        "resource": POD_GROUP_RESOURCE,
        "name": meta.get("name", ""),
        "uid": meta.get("uid", ""),
    }


def _same_claim(pod_claim: Mapping[str, Any], group_claim: Mapping[str, Any]) -> bool:
    """A pod's ``spec.resourceClaims`` entry is its PodGroup's claim when it matches the group's
    entry exactly: the same name and the same source."""
    return all(
        (pod_claim.get(k) or None) == (group_claim.get(k) or None)
        for k in ("name", "resourceClaimName", "resourceClaimTemplateName")
    )


def bind_to(pod: Mapping[str, Any], group: Mapping[str, Any] | None, pod_claim: Mapping[str, Any]) -> Obj:
    """What ``status.reservedFor`` gets for one of the pod's claims (upstream's ``BindTo``): its
    PodGroup when the group lists the same claim, else the pod. Raises :class:`ClaimProblem`
    for an entry with no source, or a group that is not the pod's."""
    meta = _meta(pod)
    ns = meta.get("namespace") or "default"
    if not pod_claim.get("resourceClaimName") and not pod_claim.get("resourceClaimTemplateName"):
        raise ClaimProblem(
            f"Pod {ns}/{meta.get('name', '')} claim {pod_claim.get('name', '')}: none of the supported fields are set"
        )
    if group is None:
        return _pod_ref(pod)
    gmeta = _meta(group)
    gns = gmeta.get("namespace") or "default"
    if gns != ns or gmeta.get("name") != pod_group_name(pod):
        raise ClaimProblem(
            f"Pod {ns}/{meta.get('name', '')} belongs to PodGroup {ns}/{pod_group_name(pod)}, "
            f"not PodGroup {gns}/{gmeta.get('name', '')}"
        )
    for group_claim in (group.get("spec") or {}).get("resourceClaims") or ():
        if _same_claim(pod_claim, group_claim):
            return _group_ref(group)
    return _pod_ref(pod)


def _reserved_by(claim: Mapping[str, Any], ref: Mapping[str, Any]) -> bool:
    """Whether ``status.reservedFor`` holds the consumer ``ref`` (by UID)."""
    return any(r.get("uid") == ref.get("uid") for r in (claim.get("status") or {}).get("reservedFor") or ())


def _same_devices(a: Mapping[str, Any] | None, b: Mapping[str, Any] | None) -> bool:
    """Whether two allocations hold the same devices (their timestamps aside)."""
    if a is None or b is None:
        return False
    return (a.get("devices") or {}).get("results") == (b.get("devices") or {}).get("results")


def _controlled_by_group(claim: Mapping[str, Any], name: str) -> bool:
    """Whether a PodGroup named ``name`` controls the claim (any version of the API group)."""
    for r in _meta(claim).get("ownerReferences") or ():
        if not r.get("controller") or r.get("kind") != "PodGroup" or r.get("name") != name:
            continue
        if str(r.get("apiVersion") or "").split("/")[0] == POD_GROUP_API_GROUP:
            return True
    return False


def _claim_statuses(obj: Mapping[str, Any]) -> dict[Any, str]:
    """``status.resourceClaimStatuses`` of a pod or a PodGroup: the claim made for each of its
    template entries, by entry name (``""``: none is needed)."""
    return {
        s.get("name"): s.get("resourceClaimName") or ""
        for s in (obj.get("status") or {}).get("resourceClaimStatuses") or ()
    }


def _entry_claim_name(
    entry: Mapping[str, Any], statuses: Mapping[Any, str], owner: str, entry_label: str
) -> tuple[str, bool]:
    """The claim a ``spec.resourceClaims`` entry of ``owner`` (a pod or a PodGroup, as messages
    name it) stands for, and whether it was made from a template (its owner is then checked);
    ``""`` when the controller said no claim is needed. Raises :class:`ClaimProblem`."""
    if entry.get("resourceClaimName"):
        return str(entry["resourceClaimName"]), False
    if entry.get("resourceClaimTemplateName"):
        made = statuses.get(entry.get("name"))
        if made is None:
            raise ClaimProblem(f"{owner}: ResourceClaim not created yet")
        return made, True
    raise ClaimProblem(f"{owner}, spec.resourceClaim {entry_label}: none of the supported fields are set")


def _unreserved(claim: Mapping[str, Any], uid: Any) -> Obj:
    """A copy of ``claim`` without the consumer ``uid`` (a pod, or a PodGroup) in
    ``status.reservedFor`` (the field dropped when no one is left)."""
    updated = copy.deepcopy(dict(claim))
    kept = [r for r in updated["status"].get("reservedFor") or () if r.get("uid") != uid]
    if kept:
        updated["status"]["reservedFor"] = kept
    else:
        updated["status"].pop("reservedFor", None)
    return updated


def _can_be_reserved(claim: Mapping[str, Any]) -> bool:
    return len((claim.get("status") or {}).get("reservedFor") or ()) < RESERVED_FOR_MAX_SIZE


def _requests(claim: Mapping[str, Any]) -> Any:
    return ((claim.get("spec") or {}).get("devices") or {}).get("requests")


@dataclass
class _NodeAllocation:
    """What Filter found for one node: the claims it allocated there (the claim for extended
    resources in this node's variant), their results in the same order, and the pod's
    container-to-request mappings for that claim."""

    indices: list[int]
    claims: list[Obj]
    results: list[Obj]
    extended_claim: Obj | None = None
    mappings: list[Obj] = field(default_factory=list)


class _State:
    __slots__ = (
        "claims",
        "extended",
        "initial_extended_uid",
        "pod_scalar",
        "class_mapping",
        "node_claims",
        "allocator",
        "to_allocate",
        "classes",
        "allocated",
        "slices",
        "available_on",
        "allocations",
        "node_allocations",
        "unavailable",
        "bindings",
        "shared",
        "signalled",
        "cycle",
    )

    def __init__(self, claims: list[Obj], extended: Obj | None = None) -> None:
        #: the pod's claims in ``spec.resourceClaims`` order, then the one for extended resources
        self.claims = [*claims, extended] if extended is not None else claims
        #: the index of the claim for extended resources (``None``: the pod has none)
        self.extended: int | None = len(claims) if extended is not None else None
        self.initial_extended_uid = _uid(extended) if extended is not None else ""
        self.pod_scalar: dict[str, int] = {}
        self.class_mapping: dict[str, Obj] = {}
        #: the resources DRA provides on a node -> that node's variant of the claim for extended
        #: resources, and the request mappings
        self.node_claims: dict[tuple[str, ...], tuple[Obj, list[Obj]]] = {}
        self.allocator: Allocator | None = None
        #: indices of the claims the scheduler allocates
        self.to_allocate: list[int] = []
        self.classes: dict[str, Obj] = {}
        #: devices other claims hold, and the slices (DeviceTaintRules applied): the allocator's
        #: view of the cluster for this cycle
        self.allocated: AllocatedState = AllocatedState()
        self.slices: list[Obj] = []
        #: per claim: the node selector of its allocation (allocated claims only)
        self.available_on: list[NodeSelector | None] = [None] * len(self.claims)
        #: per claim: the allocation Reserve chose (claims the scheduler allocates)
        self.allocations: list[Obj | None] = [None] * len(self.claims)
        self.node_allocations: dict[str, _NodeAllocation] = {}
        self.unavailable: set[int] = set()
        #: per claim: what ``status.reservedFor`` gets (the pod, or its PodGroup)
        self.bindings: list[Obj] = []
        #: indices of claims whose allocation an earlier member of the same pod-group cycle made
        #: in Reserve and PreBind has not written yet: this pod uses that allocation
        self.shared: set[int] = set()
        #: indices of claims whose in-flight allocation this pod holds a share of (Reserve took
        #: it, PreBind or Unreserve gives it back)
        self.signalled: set[int] = set()
        #: the pod-group cycle this pod is placed in (``None`` in a pod's own cycle)
        self.cycle: object | None = None

    def clone(self) -> _State:
        return self

    def extended_claim(self) -> Obj | None:
        return None if self.extended is None else self.claims[self.extended]

    def no_user_claim(self) -> bool:
        return len(self.claims) - (0 if self.extended is None else 1) == 0


class DynamicResources:
    name = "DynamicResources"
    Args = DynamicResourcesArgs

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        args = args if args is not None else DynamicResourcesArgs()
        gates = feature_gates_of(handle)
        check_args(args, gates)
        self.gates = gates
        #: What the allocator does by these gates (one conversion, not one per allocation).
        self.allocator_features = Features.from_gates(gates)
        timeout = duration_seconds(args.filterTimeout)
        #: How long Filter may search one node for devices (None: no limit).
        self.filter_timeout: float | None = timeout if timeout > 0 and gates.enabled(FILTER_TIMEOUT_GATE) else None
        #: Whether binding conditions are honoured (both gates on).
        self.binding_conditions = all(gates.enabled(g) for g in BINDING_GATES)
        #: How long PreBind waits for binding conditions, in seconds (upstream's 10 minutes
        #: when the configuration left it unset).
        self.binding_timeout = duration_seconds(args.bindingTimeout or BINDING_TIMEOUT_DEFAULT)
        self.binding_poll = BINDING_POLL_SECONDS
        self.extended_resources = gates.enabled(ext.GATE)
        self.taint_rules = gates.enabled(device_taints.GATE)
        self._tainted = device_taints.TaintedSlices()
        #: claim uid -> the claim with the allocation Reserve chose, until PreBind wrote it
        self._in_flight: dict[str, Obj] = {}
        #: claim uid -> how many pods hold a share of its in-flight allocation (members of one
        #: pod-group cycle share it), and the pod-group cycle that made it (``None``: a pod's own)
        self._sharers: dict[str, int] = {}
        self._in_flight_cycle: dict[str, object | None] = {}
        self.workload_claims = gates.enabled(WORKLOAD_CLAIMS_GATE)
        #: claim uid -> the claim as PreBind wrote it, until the informer has it too
        self._assumed: dict[str, Obj] = {}
        #: (expression, driver, device JSON identity) -> verdict, or the CEL error
        self._matches: dict[tuple[str, str, int], bool | CELError] = {}
        #: the devices ``_matches`` is keyed by, kept alive so that their ids are not reused
        self._keep_alive: list[Obj] = []

    # --- claims --------------------------------------------------------------------------
    def _claim(self, namespace: str, name: str) -> Obj | None:
        live = self.handle.listers.get("ResourceClaim", namespace, name)
        if live is None:
            return None
        assumed = self._assumed.get(_uid(live))
        if assumed is not None:
            if int(_meta(live).get("resourceVersion") or 0) >= int(_meta(assumed).get("resourceVersion") or 0):
                self._assumed.pop(_uid(live), None)
            else:
                return assumed
        return cast("dict[str, Any] | None", live)

    def _pod_claims(self, pod: Mapping[str, Any]) -> list[Obj]:
        """The pod's claims, in ``spec.resourceClaims`` order; raises :class:`ClaimProblem`."""
        return [claim for _, claim in self._pod_claim_entries(pod)]

    def _pod_claim_entries(self, pod: Mapping[str, Any]) -> list[tuple[Obj, Obj]]:
        """The pod's ``spec.resourceClaims`` entries with their claims (an entry the controller
        made no claim for is left out); raises :class:`ClaimProblem`.

        A claim made from a template must be the pod's (its controller owner), or, with
        DRAWorkloadResourceClaims, the pod's PodGroup's: a member's entry that matches its
        group's claim leads, through the pod's status, to the one claim made for the group."""
        meta = _meta(pod)
        ns = meta.get("namespace") or "default"
        statuses = _claim_statuses(pod)
        group = pod_group_name(pod) if self.workload_claims else ""
        owner = f'pod "{ns}/{meta.get("name", "")}"'
        out = []
        for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
            name, must_check_owner = _entry_claim_name(entry, statuses, owner, f'"{entry.get("name", "")}"')
            if not name:
                continue  # no claim needed for this one (the controller said so)
            claim = self._claim(ns, name)
            if claim is None:
                raise ClaimProblem(f'resourceclaim.resource.k8s.io "{name}" not found')
            if _meta(claim).get("deletionTimestamp"):
                raise ClaimProblem(f'resourceclaim "{name}" is being deleted')
            if must_check_owner and not any(
                r.get("controller") and r.get("uid") == meta.get("uid")
                for r in _meta(claim).get("ownerReferences") or ()
            ):
                if not group:
                    raise ClaimProblem(
                        f"ResourceClaim {ns}/{name} was not created for pod {ns}/{meta.get('name', '')} (pod is not owner)"
                    )
                if not _controlled_by_group(claim, group):
                    raise ClaimProblem(
                        f"ResourceClaim {ns}/{name} was not created for Pod {ns}/{meta.get('name', '')} "
                        f"(neither Pod nor PodGroup {group} is the owner)"
                    )
            out.append((entry, claim))
        return out

    def _pod_group(self, pod: Mapping[str, Any]) -> Obj | None:
        """The pod's PodGroup when DRAWorkloadResourceClaims is on and the pod names one (else
        ``None``); raises :class:`ClaimProblem` when it does not exist (yet)."""
        name = pod_group_name(pod) if self.workload_claims else ""
        if not name:
            return None
        ns = _meta(pod).get("namespace") or "default"
        group = self.handle.listers.get("PodGroup", ns, name)
        if group is None:
            raise ClaimProblem(f'podgroups.scheduling.k8s.io "{name}" not found')
        return cast("Obj", group)

    def _bindings(self, pod: Mapping[str, Any], entries: list[tuple[Obj, Obj]]) -> list[Obj]:
        """What ``status.reservedFor`` gets for each claim: the pod, or its PodGroup for the
        claims the group shares (DRAWorkloadResourceClaims); raises :class:`ClaimProblem`."""
        group = self._pod_group(pod) if entries else None
        return [bind_to(pod, group, entry) for entry, _ in entries]

    def _may_ask_extended(self, pod: PodInfo) -> bool:
        """Whether the pod asks for some resource a DeviceClass could stand for (a look at its
        requests only: most pods ask for none)."""
        return self.extended_resources and any(
            q and ext.is_dra_extended_resource_name(n) for n, q in pod.requests.scalar.items()
        )

    # --- PreEnqueue ----------------------------------------------------------------------
    def pre_enqueue(self, pod: PodInfo) -> Status | None:
        if not (pod.pod.get("spec") or {}).get("resourceClaims"):
            return None
        try:
            self._pod_claims(pod.pod)
        except ClaimProblem as exc:
            return Status.unresolvable(str(exc))
        return None

    # --- PreFilter -----------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        has_claims = bool((pod.pod.get("spec") or {}).get("resourceClaims"))
        if not has_claims and not self._may_ask_extended(pod):
            return Status.skip()
        # As upstream, PostFilter finds no claims to deallocate after an early rejection.
        state.write(STATE_KEY, _State([]))
        try:
            entries = self._pod_claim_entries(pod.pod) if has_claims else []
            bindings = self._bindings(pod.pod, entries)
        except ClaimProblem as exc:
            return Status.unresolvable(str(exc))
        claims = [claim for _, claim in entries]
        mapping: dict[str, Obj] = {}
        extended: Obj | None = None
        if self._may_ask_extended(pod):
            mapping = ext.device_class_mapping(self.handle.listers.list("DeviceClass"))
            if any(q and n in mapping for n, q in pod.requests.scalar.items()):
                found = ext.find_extended_resource_claim(
                    pod.pod, self.handle.listers.list("ResourceClaim", pod.namespace)
                )
                if found is not None:
                    extended = self._claim(pod.namespace, _meta(found).get("name", "")) or found
                else:
                    extended = ext.special_claim(pod.pod)
        if not claims and extended is None:
            return Status.skip()
        s = _State(claims, extended)
        s.bindings = [*bindings, _pod_ref(pod.pod)] if extended is not None else bindings
        s.cycle = state.pod_group
        if extended is not None:
            s.pod_scalar = dict(pod.requests.scalar)
            s.class_mapping = mapping
        for index, claim in enumerate(s.claims):
            allocation = _allocation(claim)
            if allocation is not None:
                if not _can_be_reserved(claim) and not _reserved_for_pod(pod.pod, claim, self.workload_claims):
                    return Status.unresolvable("resourceclaim in use")
                status = self._available_on(s, index, allocation)
                if status is not None:
                    return status
                continue
            held = self._in_flight.get(_uid(claim))
            if held is not None:
                # An earlier member of this pod group's cycle allocated it in Reserve, PreBind has
                # not written it yet: this member shares that allocation (and must go where it
                # allows), as upstream's pending allocations within one pod-group cycle. Anyone
                # else waits for the allocation to be written.
                if s.cycle is None or index == s.extended or self._in_flight_cycle.get(_uid(claim)) is not s.cycle:
                    return Status.unresolvable(
                        f"resource claim {claim_key(claim)} is in the process of being allocated"
                    )
                pending = _allocation(held)
                s.allocations[index] = pending
                s.shared.add(index)
                status = self._available_on(s, index, pending or {})
                if status is not None:
                    return status
                continue
            s.to_allocate.append(index)
            if index == s.extended:
                # Its requests are made per node by Filter; a stale one is Filter's to reject.
                for resource, quantity in s.pod_scalar.items():
                    cls = mapping.get(resource)
                    if quantity and cls is not None:
                        s.classes[str(cls["metadata"]["name"])] = cls
                continue
            status = self._check_classes(claim, s.classes)
            if status is not None:
                return status
        state.write(STATE_KEY, s)
        if s.to_allocate:
            slices = self.handle.listers.list("ResourceSlice")
            if self.taint_rules:
                slices = self._tainted(slices, self.handle.listers.list("DeviceTaintRule"))
            s.slices = slices
            s.allocated = self._allocated_devices()
            s.allocator = self._allocator(s, [s.claims[i] for i in s.to_allocate])
        return None

    @staticmethod
    def _available_on(s: _State, index: int, allocation: Mapping[str, Any]) -> Status | None:
        """Where the claim's allocation is usable: its node selector, for Filter."""
        if allocation.get("nodeSelector"):
            try:
                s.available_on[index] = NodeSelector.compile(allocation["nodeSelector"])
            except SelectorError as exc:
                return Status.as_error(exc)
        return None

    def _allocator(self, s: _State, claims: list[Obj]) -> Allocator:
        held = s.allocated
        return Allocator(
            claims,
            held.devices,
            s.classes,
            s.slices,
            self._selector_matches,
            features=self.allocator_features,
            shared=held.shared,
            consumed_capacity=held.consumed,
        )

    def _check_classes(self, claim: Mapping[str, Any], classes: dict[str, Obj]) -> Status | None:
        """Every way to meet every request names a DeviceClass that exists (collected into
        ``classes``); else the pod waits for one."""
        for request in _requests(claim) or ():
            name = request.get("name", "")
            # Each way to meet the request names its class: ``exactly``, or every one of its
            # ``firstAvailable`` subrequests (``request/subrequest``).
            if request.get("firstAvailable"):
                ways = [(f"{name}/{sub.get('name', '')}", sub) for sub in request["firstAvailable"]]
            elif request.get("exactly"):
                ways = [(name, request["exactly"])]
            else:
                return Status.as_error(f"request {name}: unsupported request type")
            for way, spec in ways:
                class_name = spec.get("deviceClassName") or ""
                cls = self.handle.listers.get("DeviceClass", None, class_name) if class_name else None
                if cls is None:
                    return Status.unresolvable(f"request {way}: device class {class_name} does not exist")
                classes[class_name] = cls
        return None

    def _allocated_devices(self) -> AllocatedState:
        """What every allocated claim holds (but for admin access), in flight ones included:
        devices used whole, devices shared (``shareID``) and the capacity their shares consume."""
        used = AllocatedState()
        seen: set[str] = set()
        consumable = self.gates.enabled("DRAConsumableCapacity")

        def add(claim: Mapping[str, Any]) -> None:
            for r in ((_allocation(claim) or {}).get("devices") or {}).get("results") or ():
                used.add_result(r, consumable)

        for claim in self._in_flight.values():
            seen.add(_uid(claim))
            add(claim)
        for claim in self._assumed.values():
            if _uid(claim) not in seen:
                seen.add(_uid(claim))
                add(claim)
        for claim in self.handle.listers.list("ResourceClaim"):
            if _uid(claim) not in seen:
                add(claim)
        return used

    def _selector_matches(self, expression: str, driver: str, device: Obj) -> bool:
        key = (expression, driver, id(device))
        hit = self._matches.get(key)
        if hit is None:
            try:
                compile_expression(expression)
            except CELError as exc:
                raise CompileFailure(str(exc)) from None
            try:
                hit = evaluate(expression, device_variables(driver, device))
            except CELError as exc:
                hit = exc
            if len(self._matches) > _MATCH_CACHE_LIMIT:
                self._matches.clear()
                self._keep_alive.clear()
            # Keyed by the device dict's identity: a new ResourceSlice version is a new dict.
            self._matches[key] = hit
            self._keep_alive.append(device)
        if isinstance(hit, CELError):
            raise RuntimeFailure(str(hit))
        return hit

    # --- Filter --------------------------------------------------------------------------
    def _filter_extended(self, s: _State, pod: PodInfo, node: NodeInfo) -> tuple[Obj | None, list[Obj], Status | None]:
        """The node's variant of the claim for extended resources (``None``: the node's device
        plugins provide them all, or there is nothing to allocate), its request mappings, or why
        the node cannot have them."""
        claim = s.extended_claim()
        if claim is None:
            return None, [], None
        if _requests(claim) is not None:
            # Made by an earlier attempt: PostFilter deletes it, and the next attempt starts anew.
            return None, [], Status.unresolvable("cannot schedule extended resource claim")
        needed: list[str] = []
        alloc = node.allocatable.scalar
        for resource, quantity in s.pod_scalar.items():
            if not quantity or not ext.is_dra_extended_resource_name(resource):
                continue
            if resource in s.class_mapping and alloc.get(resource, 0) == 0:
                needed.append(resource)  # the node provides it through DRA
            elif resource not in alloc:
                return None, [], Status.unresolvable("cannot fit resource")
        if not needed or _allocation(claim) is not None:
            return None, [], None
        # Nodes that lack the same resources share one variant (read-only from here on).
        key = tuple(needed)
        made = s.node_claims.get(key)
        if made is None:
            requests, mappings = ext.requests_and_mappings(pod.pod, needed, s.class_mapping)
            node_claim = copy.deepcopy(claim)
            node_claim.setdefault("spec", {})["devices"] = {"requests": requests}
            made = s.node_claims[key] = (node_claim, mappings)
        return made[0], made[1], None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None
        node_claim, mappings, status = self._filter_extended(s, pod, node)
        if status is not None:
            return status
        if node_claim is None and s.no_user_claim():
            return None  # the node's device plugins provide the extended resources
        labels = ((node.node or {}).get("metadata") or {}).get("labels") or {}
        unavailable = []
        for i, claim in enumerate(s.claims):
            selector = s.available_on[i]
            if selector is not None and not selector.matches(labels, node.name):
                unavailable.append(i)
            elif self.binding_conditions and _allocation(claim) is not None:
                try:
                    if not claim_ready_for_binding(claim) and claim_timed_out(claim, self.binding_timeout):
                        unavailable.append(i)
                except BindingFailed:
                    unavailable.append(i)
        found: _NodeAllocation | None = None
        if s.allocator is not None:
            indices = [i for i in s.to_allocate if i != s.extended or node_claim is not None]
            claims = [s.claims[i] if i != s.extended or node_claim is None else node_claim for i in indices]
            found = _NodeAllocation(indices, claims, [], node_claim, mappings)
            if claims:
                # The node's own variant of the claim for extended resources needs its own.
                allocator = s.allocator if node_claim is None else self._allocator(s, claims)
                deadline = None if self.filter_timeout is None else time.monotonic() + self.filter_timeout
                try:
                    results = allocator.allocate(node.name, labels, deadline)
                except AllocationTimeout:
                    # As upstream since the change to Error: a timeout may be transient, so the
                    # pod goes to backoff rather than waiting for a cluster event.
                    return Status.as_error(f"node {node.name}: timed out trying to allocate devices")
                except AllocationFailedOnNode as exc:
                    # As upstream: this node's devices cannot serve the pod, others may.
                    return Status.unresolvable(str(exc))
                except AllocationError as exc:
                    return Status.as_error(exc)
                if results is None or len(results) != len(claims):
                    return Status.unresolvable("cannot allocate all claims")
                found.results = results
        if unavailable:
            s.unavailable.update(unavailable)
            return Status.unresolvable("resourceclaim not available on the node")
        if found is not None:
            s.node_allocations[node.name] = found
        return None

    # --- PostFilter ----------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: PodInfo, filtered: Mapping[str, Status]) -> Any:
        s: _State | None = state.get(STATE_KEY)
        if (s is None or not s.claims) and not (pod.pod.get("spec") or {}).get("resourceClaims"):
            return None, Status.unschedulable()
        return self._post_filter(state, pod)

    async def _post_filter(self, state: CycleState, pod: PodInfo) -> tuple[PostFilterResult | None, Status]:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None, Status.unschedulable("no new claims to deallocate")
        uid = _meta(pod.pod).get("uid")
        extended = s.extended_claim()
        for index in sorted(s.unavailable):
            if index == s.extended or index in s.shared:
                continue  # a stale claim for extended resources is deleted below
            claim = s.claims[index]
            reserved = (claim.get("status") or {}).get("reservedFor") or []
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == uid):
                updated = copy.deepcopy(claim)
                status = updated.setdefault("status", {})
                for key in ("reservedFor", "allocation", "devices"):
                    status.pop(key, None)
                try:
                    await self.handle.cluster.update_object("ResourceClaim", updated, "status")
                except Exception as exc:  # noqa: BLE001 - any API failure ends the attempt
                    return None, Status.as_error(exc)
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        if extended is not None and not ext.is_special(extended):
            try:
                await self._delete_claim(extended)
            except Exception as exc:  # noqa: BLE001 - any API failure ends the attempt
                return None, Status.as_error(exc)
            return None, Status.unschedulable("deletion of ResourceClaim completed")
        if self.workload_claims:
            # Not all of the group could be placed: unless a member is placed already, let the
            # next attempt find new devices for the group's claims (their allocation may be what
            # failed to bind in an earlier cycle).
            status = await self._unreserve_pod_group_claims(pod)
            if status is not None:
                return None, status
        return None, Status.unschedulable("still not schedulable")

    async def _unreserve_pod_group_claims(self, pod: PodInfo) -> Status | None:
        """Upstream's unreservePodGroupClaims: with no member of the pod's group bound or
        assumed, take the group out of ``status.reservedFor`` of the first of its allocated
        claims that is reserved for it (a later PostFilter deallocates a claim nobody reserves,
        as upstream's ``postfilter-deallocate-podgroup``)."""
        name = pod_group_name(pod.pod)
        if not name:
            return None
        groups = getattr(self.handle, "pod_groups", None)
        if groups is not None and groups.state(pod.namespace, name).scheduled:
            return None
        try:
            group = self._pod_group(pod.pod)
        except ClaimProblem as exc:
            return Status.as_error(str(exc))
        if group is None:
            return None
        statuses = _claim_statuses(group)
        gmeta = _meta(group)
        for entry in (group.get("spec") or {}).get("resourceClaims") or ():
            try:
                claim_name, must_check_owner = _entry_claim_name(
                    entry, statuses, f"PodGroup {pod.namespace}/{name}", entry.get("name", "")
                )
            except ClaimProblem as exc:
                return Status.as_error(str(exc))
            if not claim_name:
                continue
            claim = self._claim(pod.namespace, claim_name)
            if claim is None:
                return Status.as_error(f'resourceclaim.resource.k8s.io "{claim_name}" not found')
            if must_check_owner and not any(
                r.get("controller") and r.get("uid") == gmeta.get("uid")
                for r in _meta(claim).get("ownerReferences") or ()
            ):
                continue
            if _allocation(claim) is None or not _reserved_for_pod(pod.pod, claim, True):
                continue
            try:
                await self.handle.cluster.update_object("ResourceClaim", _unreserved(claim, gmeta.get("uid")), "status")
            except Exception:  # noqa: BLE001 - tried again with the pod's next attempt
                continue
            return Status.unschedulable("ResourceClaim unreserved for PodGroup")
        return None

    async def _delete_claim(self, claim: Obj) -> None:
        """Delete ``claim``, its finalizer removed first (the claim for extended resources the
        scheduler created, when it is stale or its pod was not bound)."""
        cluster = self.handle.cluster
        ns = _meta(claim).get("namespace") or "default"
        name = _meta(claim).get("name", "")
        current = self.handle.listers.get("ResourceClaim", ns, name) or claim
        finalizers = list(_meta(current).get("finalizers") or ())
        if FINALIZER in finalizers:
            updated = copy.deepcopy(current)
            updated["metadata"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
            try:
                await cluster.update_object("ResourceClaim", updated)
            except Exception as exc:
                raise RuntimeError(f"update resourceclaim {ns}/{name}: {exc}") from exc
        await cluster.delete_object("ResourceClaim", ns, name)

    # --- Score -----------------------------------------------------------------------------
    def _has_alternatives(self, s: _State | None) -> bool:
        return s is not None and any(
            r.get("firstAvailable") for i in s.to_allocate for r in _requests(s.claims[i]) or ()
        )

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Any) -> Array | None:
        """Every node scores 0 unless a claim to allocate lists ``firstAvailable`` alternatives
        (then node by node): the cost of Score for most pods."""
        if self._has_alternatives(state.get(STATE_KEY)):
            return None
        return np.zeros(len(nodes), np.int64)

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        """As upstream: for each alternative the node's allocation took, the earlier it is in
        its request's ``firstAvailable`` list the more it scores (8 for the first, 7 for the
        second, ...)."""
        s: _State | None = state.get(STATE_KEY)
        found = None if s is None else s.node_allocations.get(node.name)
        if found is None:
            return 0
        total = 0
        for claim, result in zip(found.claims, found.results, strict=False):
            taken = {r.get("request") for r in (result.get("devices") or {}).get("results") or ()}
            for request in _requests(claim) or ():
                for i, sub in enumerate(request.get("firstAvailable") or ()):
                    if f"{request.get('name', '')}/{sub.get('name', '')}" in taken:
                        total += FIRST_AVAILABLE_MAX_SIZE - i
        return total

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: Array) -> Array:
        return default_normalize_scores(MAX_NODE_SCORE, False, scores)

    # --- Reserve / Unreserve -------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return None
        for index in sorted(s.shared - s.signalled):
            uid = _uid(s.claims[index])
            if uid not in self._in_flight:
                return Status.as_error(f"pending allocation of claim {claim_key(s.claims[index])} is gone")
            self._sharers[uid] = self._sharers.get(uid, 0) + 1
            s.signalled.add(index)
        if s.allocator is None:
            return None
        found = s.node_allocations.get(node_name)
        if found is None or not found.results:
            if all(i == s.extended for i in s.to_allocate):
                return None  # only extended resources, all from the node's device plugins
            return Status.as_error("claim allocation not found for node")
        if len(found.results) != len(found.claims):
            return Status.as_error(
                f"internal error, have {len(found.results)} allocations, {len(found.claims)} claims to allocate"
            )
        for index, claim, allocation in zip(found.indices, found.claims, found.results, strict=True):
            s.allocations[index] = allocation
            held = copy.deepcopy(claim)
            finalizers = held.setdefault("metadata", {}).setdefault("finalizers", [])
            if FINALIZER not in finalizers:
                finalizers.append(FINALIZER)
            held.setdefault("status", {})["allocation"] = allocation
            uid = _uid(claim)
            if index not in s.signalled:
                self._in_flight[uid] = held
                self._sharers[uid] = self._sharers.get(uid, 0) + 1
                self._in_flight_cycle[uid] = s.cycle
                s.signalled.add(index)
        return None

    def _release_pending(self, uid: str, everyone: bool = False) -> None:
        """One pod gives back its share of an in-flight allocation (``everyone``: the allocation
        is written, nobody needs it in flight); the last one takes it out of flight."""
        left = 0 if everyone else self._sharers.get(uid, 0) - 1
        if left > 0:
            self._sharers[uid] = left
            return
        self._in_flight.pop(uid, None)
        self._sharers.pop(uid, None)
        self._in_flight_cycle.pop(uid, None)

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Any:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None  # a pod without claims: nothing to await
        return self._unreserve(s, pod)

    async def _unreserve(self, s: _State, pod: PodInfo) -> None:
        for index, claim in enumerate(s.claims):
            if index == s.extended:
                continue
            if index in s.signalled:
                s.signalled.discard(index)
                self._release_pending(_uid(claim))
            live = self._claim(_meta(claim).get("namespace") or "default", _meta(claim).get("name", "")) or claim
            # Only the pod's own reservation goes: a reservation for its PodGroup stays for the
            # members that use the claim (upstream leaves it to PostFilter, once no member is
            # placed, to unreserve the group).
            if _allocation(live) is not None and _reserved_for_pod(pod.pod, live):
                try:
                    await self.handle.cluster.update_object(
                        "ResourceClaim", _unreserved(live, _meta(pod.pod).get("uid")), "status"
                    )
                except Exception:  # noqa: BLE001 - retried with the pod's next attempt
                    pass
        extended = s.extended_claim()
        if extended is None:
            return
        if s.extended is not None:
            s.signalled.discard(s.extended)
        self._release_pending(s.initial_extended_uid, everyone=True)
        if not ext.is_special(extended):
            # PreBind created it: the pod goes back to the queue without it.
            try:
                await self._delete_claim(extended)
            except Exception:  # noqa: BLE001 - a stale claim is deleted by the next PostFilter
                pass

    # --- PreBind -------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Upstream's PreBindPreFlight: whether PreBind has work for this pod (Skip: none)."""
        s: _State | None = state.get(STATE_KEY)
        return Status.skip() if s is None or not s.claims else None

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Any:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None  # a pod without claims: nothing to await
        return self._pre_bind(s, pod, node_name)

    async def _pre_bind(self, s: _State, pod: PodInfo, node_name: str) -> Status | None:
        for index, claim in enumerate(s.claims):
            uid = _uid(claim)
            binding = self._binding(s, index, pod.pod)
            if _is_group_ref(binding) and index != s.extended:
                # Another member's PreBind may have written it since PreFilter.
                latest = self._claim(_meta(claim).get("namespace") or "default", _meta(claim).get("name", ""))
                if latest is not None and _reserved_by(latest, binding):
                    s.claims[index] = latest
                    if index in s.signalled:
                        s.signalled.discard(index)
                        self._release_pending(uid)
                    continue
            if _reserved_for_pod(pod.pod, claim, self.workload_claims):
                continue
            written = False
            try:
                s.claims[index] = await self._bind_claim(s, index, pod.pod, node_name)
                written = True
            except Exception as exc:  # noqa: BLE001 - the pod is unreserved and retried
                return Status.as_error(exc)
            finally:
                if index in s.signalled:
                    # Written: the claim as written is what counts from now on, for everyone.
                    s.signalled.discard(index)
                    self._release_pending(uid, everyone=written)
        if not self.binding_conditions or not has_binding_conditions(s.claims):
            return None
        return await self._wait_for_binding_conditions(s, pod, node_name)

    async def _bind_claim(self, s: _State, index: int, pod: Mapping[str, Any], node_name: str) -> Obj:
        cluster = self.handle.cluster
        claim = s.claims[index]
        allocation = s.allocations[index]
        is_extended = index == s.extended
        if is_extended and allocation is None and _requests(claim) is None:
            return claim  # all from the node's device plugins
        if is_extended and ext.is_special(claim):
            claim = await self._create_extended_claim(s, node_name)
            s.claims[index] = claim  # Unreserve deletes it if binding fails from here on
        key = claim_key(claim)
        binding = self._binding(s, index, pod)
        group = _is_group_ref(binding) and not is_extended
        if group:
            # Members of one group write the same claim: see what the others wrote already.
            live = self._claim(_meta(claim).get("namespace") or "default", _meta(claim).get("name", ""))
        else:
            live = self.handle.listers.get("ResourceClaim", _meta(claim).get("namespace"), _meta(claim).get("name", ""))
        current = copy.deepcopy(live if live is not None else claim)
        if _meta(current).get("deletionTimestamp"):
            raise RuntimeError(f"claim {key} got deleted in the meantime")
        if group and _reserved_by(current, binding):
            return current  # another member reserved it for the group already
        if allocation is not None and _allocation(current) is not None:
            if not (group and _same_devices(_allocation(current), allocation)):
                raise RuntimeError(f"claim {key} got allocated elsewhere in the meantime")
            allocation = None  # written by another member of the group: only reserve it
        if allocation is not None:
            finalizers = current.setdefault("metadata", {}).setdefault("finalizers", [])
            if FINALIZER not in finalizers:
                finalizers.append(FINALIZER)
                try:
                    current = copy.deepcopy(await cluster.update_object("ResourceClaim", current))
                except Exception as exc:
                    raise RuntimeError(f"add finalizer to claim {key}: {exc}") from exc
            current.setdefault("status", {})["allocation"] = copy.deepcopy(allocation)
        status = current.setdefault("status", {})
        status["reservedFor"] = [*(status.get("reservedFor") or ()), dict(binding)]
        if self.binding_conditions and status.get("allocation") and not status["allocation"].get("allocationTimestamp"):
            status["allocation"]["allocationTimestamp"] = rfc3339_now()
        try:
            updated = await cluster.update_object("ResourceClaim", current, "status")
        except Exception as exc:
            what = "add allocation and reservation to" if allocation is not None else "add reservation to"
            raise RuntimeError(f"{what} claim {key}: {exc}") from exc
        self._assumed[_uid(updated)] = updated
        if is_extended:
            await self._write_extended_claim_status(s, pod, dict(updated), node_name)
        return dict(updated)

    @staticmethod
    def _binding(s: _State, index: int, pod: Mapping[str, Any]) -> Obj:
        """What ``status.reservedFor`` gets for claim ``index``: the pod unless PreFilter found
        the pod's PodGroup shares the claim."""
        return s.bindings[index] if index < len(s.bindings) else _pod_ref(pod)

    async def _create_extended_claim(self, s: _State, node_name: str) -> Obj:
        found = s.node_allocations.get(node_name)
        if found is None or found.extended_claim is None:
            raise RuntimeError(f"extended resource claim not found for node {node_name}")
        claim = copy.deepcopy(found.extended_claim)
        meta = claim["metadata"]
        for key in ("name", "uid", "resourceVersion"):
            meta.pop(key, None)
        claim.pop("status", None)
        try:
            created: Obj = await self.handle.cluster.create_object("ResourceClaim", claim)
        except Exception as exc:
            ext.observe_claim_created(self.handle, False)
            ns = meta.get("namespace") or "default"
            raise RuntimeError(f"create claim for extended resources {ns}/: {exc}") from exc
        ext.observe_claim_created(self.handle, True)
        return created

    async def _write_extended_claim_status(self, s: _State, pod: Mapping[str, Any], claim: Obj, node_name: str) -> None:
        """``status.extendedResourceClaimStatus`` on the pod: the claim's name and which request
        serves which container's resource."""
        meta = _meta(pod)
        ns = meta.get("namespace") or "default"
        found = s.node_allocations.get(node_name)
        mappings = found.mappings if found is not None else []
        if not mappings:
            raise RuntimeError(
                f"nil or empty request mappings, no update of pod {ns}/{meta.get('name', '')} ExtendedResourceClaimStatus"
            )
        cluster = self.handle.cluster
        value = {"requestMappings": mappings, "resourceClaimName": _meta(claim).get("name", "")}
        try:
            for attempt in range(3):
                current = copy.deepcopy(await cluster.get_pod(ns, meta.get("name", "")))
                current.setdefault("status", {})["extendedResourceClaimStatus"] = value
                try:
                    await cluster.update_object("Pod", current, "status")
                    return
                except Exception as exc:
                    if attempt == 2 or getattr(exc, "code", None) != 409:
                        raise  # a conflict is read again, as upstream's patch would not have one
        except Exception as exc:
            raise RuntimeError(f"update pod {ns}/{meta.get('name', '')} ExtendedResourceClaimStatus: {exc}") from exc

    async def _wait_for_binding_conditions(self, s: _State, pod: PodInfo, node_name: str) -> Status | None:
        """Wait, looking every ``binding_poll`` seconds, until every binding condition of the
        pod's allocated devices is True; an error on a failure condition or past
        ``binding_timeout`` (the pod is unreserved and retried)."""
        cluster = self.handle.cluster
        try:
            await cluster.record_event(
                pod.pod,
                "Normal",
                "BindingConditionsPending",
                "Scheduling",
                f"waiting for binding conditions for device on node {node_name}",
                getattr(self.handle, "profile_name", "default-scheduler"),
            )
        except Exception:  # noqa: BLE001 - an event is a courtesy; the wait goes on
            pass
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + self.binding_timeout
        drivers = _binding_drivers(s.claims)
        while True:
            try:
                if self._ready_for_binding(s):
                    self._observe_binding(drivers, "success", loop.time() - started)
                    return None
            except (BindingFailed, RuntimeError) as exc:
                self._observe_binding(
                    drivers, "timeout" if isinstance(exc, _BindingTimeout) else "failure", loop.time() - started
                )
                return Status.as_error(str(exc))
            remaining = deadline - loop.time()
            if remaining <= 0:
                self._observe_binding(drivers, "timeout", loop.time() - started)
                return Status.as_error("device binding timeout")
            await asyncio.sleep(min(self.binding_poll, remaining))

    def _observe_binding(self, drivers: Iterable[str], status: str, seconds: float) -> None:
        """scheduler_dra_bindingconditions_{allocations_total,wait_duration_seconds}: one count
        and one wait per driver of the devices with binding conditions, per attempt."""
        record = getattr(getattr(self.handle, "observer", None), "dra_binding_conditions", None)
        if record is None:
            return
        profile = getattr(self.handle, "profile_name", "default-scheduler")
        for driver in drivers:
            record(profile, driver, status, seconds)

    def _ready_for_binding(self, s: _State) -> bool:
        for index, claim in enumerate(s.claims):
            ns = _meta(claim).get("namespace") or "default"
            current = self._claim(ns, _meta(claim).get("name", ""))
            if current is None:
                raise RuntimeError(f'resourceclaim.resource.k8s.io "{_meta(claim).get("name", "")}" not found')
            s.claims[index] = current
            if not claim_ready_for_binding(current):
                if claim_timed_out(current, self.binding_timeout):
                    raise _BindingTimeout(f"claim {_meta(current).get('name', '')} binding timeout")
                return False
        return True

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
                ClusterEvent(EventResource.RESOURCE_CLAIM, add_or_update), self.is_schedulable_after_claim_change
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
        try:
            claims = self._pod_claims(pod)
        except ClaimProblem:
            return QueueingHint.SKIP
        if old is not None and _allocation(old) is not None and _allocation(new) is None:
            return QueueingHint.QUEUE  # deallocated: its devices are free for anyone
        if not any(_uid(c) == _uid(new) for c in claims):
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        return QueueingHint.SKIP if old.get("status") == new.get("status") else QueueingHint.QUEUE

    def is_schedulable_after_pod_change(self, pod: Obj, old: Obj | None, new: Obj) -> QueueingHint:
        if _meta(pod).get("uid") != _meta(new).get("uid"):
            return QueueingHint.SKIP
        try:
            self._pod_claims(new)
        except ClaimProblem:
            return QueueingHint.SKIP
        return QueueingHint.QUEUE


class _BindingTimeout(RuntimeError):
    """A claim's devices were allocated longer than ``bindingTimeout`` ago, conditions unmet."""


def _binding_drivers(claims: Iterable[Mapping[str, Any]]) -> list[str]:
    """The drivers of the allocated devices of ``claims`` that have binding conditions, each once."""
    seen: dict[str, None] = {}
    for claim in claims:
        allocation = (claim.get("status") or {}).get("allocation") or {}
        for result in (allocation.get("devices") or {}).get("results") or ():
            if result.get("bindingConditions"):
                seen.setdefault(str(result.get("driver") or ""), None)
    return list(seen)
