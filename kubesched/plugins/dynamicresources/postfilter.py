"""PostFilter of DynamicResources: when the pod fits nowhere, deallocate one allocated claim that is
not available where the pod could go and that no one else uses, or delete a stale claim for
extended resources, or (DRAWorkloadResourceClaims) take the pod's PodGroup out of the
reservation of its claims when no member is placed, so that the next attempt may allocate anew."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubesched.framework.interface import CycleState, PostFilterResult
from kubesched.framework.podgroup import pod_group_name
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.plugins.dynamicresources import extended_resources as ext
from kubesched.plugins.dynamicresources.claims import (
    ClaimProblem,
    allocation_of,
    claim_statuses,
    entry_claim_name,
    meta_of,
    reserved_for_pod,
    unreserved,
)
from kubesched.plugins.dynamicresources.plugin_base import DynamicResourcesBase
from kubesched.plugins.dynamicresources.state import STATE_KEY, State


class PostFiltering(DynamicResourcesBase):
    """PostFilter (see the module)."""

    # --- PostFilter ----------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: PodInfo, filtered: Mapping[str, Status]) -> Any:
        s: State | None = state.get(STATE_KEY)
        if (s is None or not s.claims) and not (pod.pod.get("spec") or {}).get("resourceClaims"):
            return None, Status.unschedulable()
        return self._post_filter(state, pod)

    async def _post_filter(self, state: CycleState, pod: PodInfo) -> tuple[PostFilterResult | None, Status]:
        s: State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None, Status.unschedulable("no new claims to deallocate")
        uid = meta_of(pod.pod).get("uid")
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
        statuses = claim_statuses(group)
        gmeta = meta_of(group)
        for entry in (group.get("spec") or {}).get("resourceClaims") or ():
            try:
                claim_name, must_check_owner = entry_claim_name(
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
                for r in meta_of(claim).get("ownerReferences") or ()
            ):
                continue
            if allocation_of(claim) is None or not reserved_for_pod(pod.pod, claim, True):
                continue
            try:
                await self.handle.cluster.update_object("ResourceClaim", unreserved(claim, gmeta.get("uid")), "status")
            except Exception:  # noqa: BLE001 - tried again with the pod's next attempt
                continue
            return Status.unschedulable("ResourceClaim unreserved for PodGroup")
        return None
