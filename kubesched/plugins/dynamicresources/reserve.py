"""Reserve and Unreserve of DynamicResources: Reserve holds the node's allocation in flight (so
that the next pod does not take the same devices before PreBind has written them), shared by
the members of one pod-group cycle; Unreserve gives that share back, takes the pod (never its
PodGroup) out of ``status.reservedFor`` and deletes the claim for extended resources PreBind
created."""

from __future__ import annotations

import copy
from typing import Any

from kubesched.framework.interface import CycleState
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.dynamicresources import extended_resources as ext
from kubesched.plugins.dynamicresources.allocator_types import claim_key
from kubesched.plugins.dynamicresources.claims import (
    FINALIZER,
    allocation_of,
    meta_of,
    reserved_for_pod,
    uid_of,
    unreserved,
)
from kubesched.plugins.dynamicresources.plugin_base import DynamicResourcesBase
from kubesched.plugins.dynamicresources.state import STATE_KEY, State


class Reserving(DynamicResourcesBase):
    """Reserve and Unreserve (see the module)."""

    # --- Reserve / Unreserve -------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: State | None = state.get(STATE_KEY)
        if s is None:
            return None
        for index in sorted(s.shared - s.signalled):
            uid = uid_of(s.claims[index])
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
            uid = uid_of(claim)
            if index not in s.signalled:
                self._in_flight[uid] = held
                self._sharers[uid] = self._sharers.get(uid, 0) + 1
                self._in_flight_cycle[uid] = s.cycle
                s.signalled.add(index)
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Any:
        s: State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None  # a pod without claims: nothing to await
        return self._unreserve(s, pod)

    async def _unreserve(self, s: State, pod: PodInfo) -> None:
        for index, claim in enumerate(s.claims):
            if index == s.extended:
                continue
            if index in s.signalled:
                s.signalled.discard(index)
                self._release_pending(uid_of(claim))
            live = self._claim(meta_of(claim).get("namespace") or "default", meta_of(claim).get("name", "")) or claim
            # Only the pod's own reservation goes: a reservation for its PodGroup stays for the
            # members that use the claim (upstream leaves it to PostFilter, once no member is
            # placed, to unreserve the group).
            if allocation_of(live) is not None and reserved_for_pod(pod.pod, live):
                try:
                    await self.handle.cluster.update_object(
                        "ResourceClaim", unreserved(live, meta_of(pod.pod).get("uid")), "status"
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
