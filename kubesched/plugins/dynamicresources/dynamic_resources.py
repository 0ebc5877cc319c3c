"""DynamicResources: devices claimed through ResourceClaims (DRA with structured parameters).

As upstream's plugin (pkg/scheduler/framework/plugins/dynamicresources):

* PreEnqueue: every claim of the pod exists (the resource-claim controller has made the ones of
  its templates), is not being deleted, and a generated one belongs to the pod;
* PreFilter: Skip for a pod without claims (the cost of the plugin for every other pod); a claim
  allocated and reserved to the limit for others, or one being allocated for another pod, or a
  request naming a DeviceClass that does not exist makes the pod wait;
* Filter: an allocated claim must be available on the node (its allocation's node selector);
  the unallocated ones must all be allocatable from the ResourceSlices reaching the node
  (:mod:`.dynamic_resources_allocator`), else "cannot allocate all claims";
* PostFilter: deallocates one allocated claim not available where the pod could go and not
  used by anyone else, so that the next attempt may allocate it elsewhere;
* Reserve: the node's allocation is held in flight, so that the next pod does not take the same
  devices before PreBind has written them; Unreserve drops it (and the pod's reservation);
* PreBind: writes ``status.allocation`` and ``status.reservedFor`` (with upstream's finalizer).
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from kubesched.framework import (
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    PostFilterResult,
    QueueingHint,
    Status,
)
from kubesched.framework.selectors import NodeSelector, SelectorError
from kubesched.plugins.dynamicresources.allocator import (
    AllocationError,
    AllocationTimeout,
    Allocator,
    CompileFailure,
    DeviceID,
    RuntimeFailure,
    claim_key,
)
from kubesched.plugins.dynamicresources.cel import CELError, compile_expression, device_variables, evaluate

Obj = dict[str, Any]

STATE_KEY = "DynamicResources"
#: Upstream's finalizer on claims the scheduler allocated.
FINALIZER = "resource.kubernetes.io/delete-protection"
#: Upstream's limit on ``status.reservedFor`` (ResourceClaimReservedForMaxSize).
RESERVED_FOR_MAX_SIZE = 256
#: How many (expression, device) answers are remembered before starting over.
_MATCH_CACHE_LIMIT = 200_000


_DURATION = re.compile(r"^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$|^0$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(text: str) -> float:
    """A Go duration (``10s``, ``1m30s``, ``0``) in seconds."""
    return sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(text))


class DynamicResourcesArgs(BaseModel):
    """``DynamicResourcesArgs``: ``filterTimeout`` (a duration, upstream's default 10s; 0
    disables it) bounds how long Filter may spend allocating on one node: past it, the node is
    Unschedulable ("timed out trying to allocate devices"), as upstream."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    filterTimeout: str = "10s"
    #: How long PreBind waits for device binding conditions (upstream's default 10m0s with
    #: DRADeviceBindingConditions, set by the configuration's defaulting). Binding conditions
    #: are not acted on here yet.
    bindingTimeout: str | None = None

    @field_validator("filterTimeout", "bindingTimeout")
    @classmethod
    def _duration(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is not None and not _DURATION.match(v):
            raise ValueError(
                f"{info.field_name}: Invalid value: {v!r}: must be a duration such as 10s or 1m30s, not negative"
            )
        return v


class ClaimProblem(Exception):
    """Why a pod cannot use its claims now (UnschedulableAndUnresolvable)."""


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def _uid(obj: Mapping[str, Any]) -> str:
    return str(_meta(obj).get("uid") or claim_key(obj))


def _reserved_for_pod(pod: Mapping[str, Any], claim: Mapping[str, Any]) -> bool:
    uid = _meta(pod).get("uid")
    return any(r.get("uid") == uid for r in (claim.get("status") or {}).get("reservedFor") or ())


def _can_be_reserved(claim: Mapping[str, Any]) -> bool:
    return len((claim.get("status") or {}).get("reservedFor") or ()) < RESERVED_FOR_MAX_SIZE


class _State:
    __slots__ = ("claims", "allocator", "available_on", "allocations", "node_allocations", "unavailable")

    def __init__(self, claims: list[Obj]) -> None:
        self.claims = claims
        self.allocator: Allocator | None = None
        #: per claim: the node selector of its allocation (allocated claims only)
        self.available_on: list[NodeSelector | None] = [None] * len(claims)
        #: per claim: the allocation Reserve chose (claims the scheduler allocates)
        self.allocations: list[Obj | None] = [None] * len(claims)
        self.node_allocations: dict[str, list[Obj]] = {}
        self.unavailable: set[int] = set()

    def clone(self) -> _State:
        return self


class DynamicResources:
    name = "DynamicResources"
    Args = DynamicResourcesArgs

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle = handle
        timeout = duration_seconds((args or DynamicResourcesArgs()).filterTimeout)
        #: How long Filter may search one node for devices (None: no limit).
        self.filter_timeout: float | None = timeout if timeout > 0 else None
        #: claim uid -> the claim with the allocation Reserve chose, until PreBind wrote it
        self._in_flight: dict[str, Obj] = {}
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
        meta = _meta(pod)
        ns = meta.get("namespace") or "default"
        statuses = {
            s.get("name"): s.get("resourceClaimName")
            for s in (pod.get("status") or {}).get("resourceClaimStatuses") or ()
        }
        out = []
        for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
            must_check_owner = False
            if entry.get("resourceClaimName"):
                name = entry["resourceClaimName"]
            elif entry.get("resourceClaimTemplateName"):
                if entry.get("name") not in statuses:
                    raise ClaimProblem(f'pod "{ns}/{meta.get("name", "")}": ResourceClaim not created yet')
                name = statuses[entry.get("name")]
                if not name:
                    continue  # no claim needed for this one (the controller said so)
                must_check_owner = True
            else:
                raise ClaimProblem(
                    f'pod "{ns}/{meta.get("name", "")}", spec.resourceClaim "{entry.get("name", "")}": none of the supported fields are set'
                )
            claim = self._claim(ns, name)
            if claim is None:
                raise ClaimProblem(f'resourceclaim.resource.k8s.io "{name}" not found')
            if _meta(claim).get("deletionTimestamp"):
                raise ClaimProblem(f'resourceclaim "{name}" is being deleted')
            if must_check_owner and not any(
                r.get("controller") and r.get("uid") == meta.get("uid")
                for r in _meta(claim).get("ownerReferences") or ()
            ):
                raise ClaimProblem(
                    f"ResourceClaim {ns}/{name} was not created for pod {ns}/{meta.get('name', '')} (pod is not owner)"
                )
            out.append(claim)
        return out

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
        if not (pod.pod.get("spec") or {}).get("resourceClaims"):
            return Status.skip()
        try:
            claims = self._pod_claims(pod.pod)
        except ClaimProblem as exc:
            return Status.unresolvable(str(exc))
        if not claims:
            return Status.skip()
        # As upstream, PostFilter finds no claims to deallocate after an early rejection.
        state.write(STATE_KEY, _State([]))
        s = _State(claims)
        to_allocate: list[Obj] = []
        classes: dict[str, Obj] = {}
        for index, claim in enumerate(claims):
            allocation = (claim.get("status") or {}).get("allocation")
            if allocation is not None:
                if not _can_be_reserved(claim) and not _reserved_for_pod(pod.pod, claim):
                    return Status.unresolvable("resourceclaim in use")
                if allocation.get("nodeSelector"):
                    try:
                        s.available_on[index] = NodeSelector.compile(allocation["nodeSelector"])
                    except SelectorError as exc:
                        return Status.as_error(exc)
                continue
            to_allocate.append(claim)
            if _uid(claim) in self._in_flight:
                return Status.unresolvable(f"resource claim {claim_key(claim)} is in the process of being allocated")
            for request in ((claim.get("spec") or {}).get("devices") or {}).get("requests") or ():
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
        state.write(STATE_KEY, s)
        if to_allocate:
            s.allocator = Allocator(
                to_allocate,
                self._allocated_devices(),
                classes,
                self.handle.listers.list("ResourceSlice"),
                self._selector_matches,
            )
        return None

    def _allocated_devices(self) -> set[DeviceID]:
        """Devices of every allocated claim (but for admin access), in flight ones included."""
        used: set[DeviceID] = set()
        seen: set[str] = set()

        def add(claim: Mapping[str, Any]) -> None:
            for r in (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or ():
                if not r.get("adminAccess"):
                    used.add((str(r.get("driver", "")), str(r.get("pool", "")), str(r.get("device", ""))))

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
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None
        labels = ((node.node or {}).get("metadata") or {}).get("labels") or {}
        unavailable = [
            i for i, sel in enumerate(s.available_on) if sel is not None and not sel.matches(labels, node.name)
        ]
        allocations = None
        if s.allocator is not None:
            deadline = None if self.filter_timeout is None else time.monotonic() + self.filter_timeout
            try:
                allocations = s.allocator.allocate(node.name, labels, deadline)
            except AllocationTimeout:
                return Status.unschedulable("timed out trying to allocate devices")
            except AllocationError as exc:
                return Status.as_error(exc)
            if allocations is None:
                return Status.unresolvable("cannot allocate all claims")
        if unavailable:
            s.unavailable.update(unavailable)
            return Status.unresolvable("resourceclaim not available on the node")
        if allocations is not None:
            s.node_allocations[node.name] = allocations
        return None

    # --- PostFilter ----------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: PodInfo, filtered: Mapping[str, Status]) -> Any:
        if not (pod.pod.get("spec") or {}).get("resourceClaims"):
            return None, Status.unschedulable()
        return self._post_filter(state, pod)

    async def _post_filter(self, state: CycleState, pod: PodInfo) -> tuple[PostFilterResult | None, Status]:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None, Status.unschedulable("no new claims to deallocate")
        uid = _meta(pod.pod).get("uid")
        for index in sorted(s.unavailable):
            claim = s.claims[index]
            reserved = (claim.get("status") or {}).get("reservedFor") or []
            if not reserved or (len(reserved) == 1 and reserved[0].get("uid") == uid):
                updated = copy.deepcopy(claim)
                status = updated.setdefault("status", {})
                status.pop("reservedFor", None)
                status.pop("allocation", None)
                try:
                    await self.handle.cluster.update_object("ResourceClaim", updated, "status")
                except Exception as exc:  # noqa: BLE001 - any API failure ends the attempt
                    return None, Status.as_error(exc)
                return None, Status.unschedulable("deallocation of ResourceClaim completed")
        return None, Status.unschedulable("still not schedulable")

    # --- Reserve / Unreserve -------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None or s.allocator is None:
            return None
        allocations = s.node_allocations.get(node_name)
        if allocations is None:
            return Status.as_error("claim allocation not found for node")
        pending = s.allocator.claims
        if len(allocations) != len(pending):
            return Status.as_error(
                f"internal error, have {len(allocations)} allocations, {len(pending)} claims to allocate"
            )
        for claim, allocation in zip(pending, allocations, strict=True):
            index = s.claims.index(claim)
            s.allocations[index] = allocation
            held = copy.deepcopy(claim)
            finalizers = held.setdefault("metadata", {}).setdefault("finalizers", [])
            if FINALIZER not in finalizers:
                finalizers.append(FINALIZER)
            held.setdefault("status", {})["allocation"] = allocation
            self._in_flight[_uid(claim)] = held
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Any:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None  # a pod without claims: nothing to await
        return self._unreserve(s, pod)

    async def _unreserve(self, s: _State, pod: PodInfo) -> None:
        for claim in s.claims:
            self._in_flight.pop(_uid(claim), None)
            live = self._claim(_meta(claim).get("namespace") or "default", _meta(claim).get("name", "")) or claim
            if (live.get("status") or {}).get("allocation") is not None and _reserved_for_pod(pod.pod, live):
                updated = copy.deepcopy(live)
                uid = _meta(pod.pod).get("uid")
                kept = [r for r in updated["status"].get("reservedFor") or () if r.get("uid") != uid]
                if kept:
                    updated["status"]["reservedFor"] = kept
                else:
                    updated["status"].pop("reservedFor", None)
                try:
                    await self.handle.cluster.update_object("ResourceClaim", updated, "status")
                except Exception:  # noqa: BLE001 - retried with the pod's next attempt
                    pass

    # --- PreBind -------------------------------------------------------------------------
    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Any:
        s: _State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None  # a pod without claims: nothing to await
        return self._pre_bind(s, pod)

    async def _pre_bind(self, s: _State, pod: PodInfo) -> Status | None:
        for index, claim in enumerate(s.claims):
            if _reserved_for_pod(pod.pod, claim):
                continue
            try:
                s.claims[index] = await self._bind_claim(s, index, pod.pod)
            except Exception as exc:  # noqa: BLE001 - the pod is unreserved and retried
                return Status.as_error(exc)
            finally:
                if s.allocations[index] is not None:
                    self._in_flight.pop(_uid(claim), None)
        return None

    async def _bind_claim(self, s: _State, index: int, pod: Mapping[str, Any]) -> Obj:
        cluster = self.handle.cluster
        claim = s.claims[index]
        allocation = s.allocations[index]
        key = claim_key(claim)
        live = self.handle.listers.get("ResourceClaim", _meta(claim).get("namespace"), _meta(claim).get("name", ""))
        current = copy.deepcopy(live if live is not None else claim)
        if _meta(current).get("deletionTimestamp"):
            raise RuntimeError(f"claim {key} got deleted in the meantime")
        if allocation is not None:
            if (current.get("status") or {}).get("allocation") is not None:
                raise RuntimeError(f"claim {key} got allocated elsewhere in the meantime")
            finalizers = current.setdefault("metadata", {}).setdefault("finalizers", [])
            if FINALIZER not in finalizers:
                finalizers.append(FINALIZER)
                try:
                    current = copy.deepcopy(await cluster.update_object("ResourceClaim", current))
                except Exception as exc:
                    raise RuntimeError(f"add finalizer to claim {key}: {exc}") from exc
            current.setdefault("status", {})["allocation"] = allocation
        meta = _meta(pod)
        status = current.setdefault("status", {})
        status["reservedFor"] = [
            *(status.get("reservedFor") or ()),
            {"resource": "pods", "name": meta.get("name", ""), "uid": meta.get("uid", "")},
        ]
        try:
            updated = await cluster.update_object("ResourceClaim", current, "status")
        except Exception as exc:
            what = "add allocation and reservation to" if allocation is not None else "add reservation to"
            raise RuntimeError(f"{what} claim {key}: {exc}") from exc
        self._assumed[_uid(updated)] = updated
        return dict(updated)

    # --- events ----------------------------------------------------------------------------
    def sign_pod(self, pod: PodInfo) -> Mapping[str, Any] | None:
        # A pod with claims depends on what earlier pods were allocated: never batched.
        return None if (pod.pod.get("spec") or {}).get("resourceClaims") else {}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_or_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.RESOURCE_CLAIM, add_or_update), self.is_schedulable_after_claim_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.DEVICE_CLASS, add_or_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.RESOURCE_SLICE, add_or_update)),
        ]

    def is_schedulable_after_claim_change(self, pod: Obj, old: Obj | None, new: Obj) -> QueueingHint:
        try:
            claims = self._pod_claims(pod)
        except ClaimProblem:
            return QueueingHint.SKIP
        if (
            old is not None
            and (old.get("status") or {}).get("allocation") is not None
            and (new.get("status") or {}).get("allocation") is None
        ):
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
