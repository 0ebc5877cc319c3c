"""PreEnqueue and PreFilter of DynamicResources: whether every claim of the pod exists and may be
used by it; then, once per cycle, which claims are allocated (where), which an earlier member of
the pod's group cycle is allocating, which the scheduler must allocate and from which
DeviceClasses, the claim for extended resources DRA provides, and the allocator over the slices
(DeviceTaintRules applied) and the devices other claims hold."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched.framework.interface import CycleState
from kubesched.framework.selectors import NodeSelector, SelectorError
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.objects import Obj
from kubesched.plugins.dynamicresources import extended_resources as ext
from kubesched.plugins.dynamicresources.allocator_types import AllocatedState, claim_key
from kubesched.plugins.dynamicresources.claims import (
    ClaimProblem,
    allocation_of,
    bind_to,
    can_be_reserved,
    meta_of,
    pod_ref,
    requests_of,
    reserved_for_pod,
    uid_of,
)
from kubesched.plugins.dynamicresources.plugin_base import DynamicResourcesBase
from kubesched.plugins.dynamicresources.state import STATE_KEY, State


class PreFiltering(DynamicResourcesBase):
    """PreEnqueue and PreFilter (see the module)."""

    def _bindings(self, pod: Mapping[str, Any], entries: list[tuple[Obj, Obj]]) -> list[Obj]:
        """What ``status.reservedFor`` gets for each claim: the pod, or its PodGroup for the
        claims the group shares (DRAWorkloadResourceClaims); raises :class:`ClaimProblem`."""
        group = self._pod_group(pod) if entries else None
        return [bind_to(pod, group, entry) for entry, _ in entries]

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
        state.write(STATE_KEY, State([]))
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
                    extended = self._claim(pod.namespace, meta_of(found).get("name", "")) or found
                else:
                    extended = ext.special_claim(pod.pod)
        if not claims and extended is None:
            return Status.skip()
        s = State(claims, extended)
        s.bindings = [*bindings, pod_ref(pod.pod)] if extended is not None else bindings
        s.cycle = state.pod_group
        if extended is not None:
            s.pod_scalar = dict(pod.requests.scalar)
            s.class_mapping = mapping
        for index, claim in enumerate(s.claims):
            allocation = allocation_of(claim)
            if allocation is not None:
                if not can_be_reserved(claim) and not reserved_for_pod(pod.pod, claim, self.workload_claims):
                    return Status.unresolvable("resourceclaim in use")
                status = self._available_on(s, index, allocation)
                if status is not None:
                    return status
                continue
            held = self._in_flight.get(uid_of(claim))
            if held is not None:
                # An earlier member of this pod group's cycle allocated it in Reserve, PreBind has
                # not written it yet: this member shares that allocation (and must go where it
                # allows), as upstream's pending allocations within one pod-group cycle. Anyone
                # else waits for the allocation to be written.
                if s.cycle is None or index == s.extended or self._in_flight_cycle.get(uid_of(claim)) is not s.cycle:
                    return Status.unresolvable(
                        f"resource claim {claim_key(claim)} is in the process of being allocated"
                    )
                pending = allocation_of(held)
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
    def _available_on(s: State, index: int, allocation: Mapping[str, Any]) -> Status | None:
        """Where the claim's allocation is usable: its node selector, for Filter."""
        if allocation.get("nodeSelector"):
            try:
                s.available_on[index] = NodeSelector.compile(allocation["nodeSelector"])
            except SelectorError as exc:
                return Status.as_error(exc)
        return None

    def _check_classes(self, claim: Mapping[str, Any], classes: dict[str, Obj]) -> Status | None:
        """Every way to meet every request names a DeviceClass that exists (collected into
        ``classes``); else the pod waits for one."""
        for request in requests_of(claim) or ():
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

    def _assumed_is_stale(self, uid: str, claim: Obj) -> bool:
        """Whether the claim PreBind wrote is no longer needed over the informer's copy: the
        informer has caught up with it, or the claim, listed once, is gone (deleted with its pod);
        dropped then, as upstream's assume cache drops an object on the informer's update or
        delete. A claim deleted before it was looked up again would otherwise hold its devices for
        good. A claim PreBind created (extended resources) the informer has not listed yet stays."""
        meta = meta_of(claim)
        live = self.handle.listers.get("ResourceClaim", meta.get("namespace") or "default", meta.get("name") or "")
        if live is not None and uid_of(live) == uid:
            self._assumed_listed.add(uid)
            if int(meta_of(live).get("resourceVersion") or 0) < int(meta.get("resourceVersion") or 0):
                return False
        elif uid not in self._assumed_listed:
            return False
        self._assumed.pop(uid, None)
        self._assumed_listed.discard(uid)
        return True

    def _allocated_devices(self) -> AllocatedState:
        """What every allocated claim holds (but for admin access), in flight ones included:
        devices used whole, devices shared (``shareID``) and the capacity their shares consume
        (kept from one attempt to the next: :class:`~.held_claims.HeldClaims`)."""
        assumed = [(uid, claim) for uid, claim in list(self._assumed.items()) if not self._assumed_is_stale(uid, claim)]
        return self._held_claims.state(
            self.handle.listers, assumed, self._in_flight.values(), self.gates.enabled("DRAConsumableCapacity")
        )
