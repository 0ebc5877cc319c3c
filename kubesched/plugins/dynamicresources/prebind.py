"""PreBind of DynamicResources: write each claim's ``status.allocation`` and ``status.reservedFor``
(with the finalizer; once for a PodGroup's claim, whichever member comes first), create the claim
for extended resources and write the pod's ``status.extendedResourceClaimStatus``, then wait for
the binding conditions of the allocated devices (DRADeviceBindingConditions)."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.framework.interface import CycleState
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo
from kubesched.objects import Obj
from kubesched.plugins.dynamicresources import extended_resources as ext
from kubesched.plugins.dynamicresources.allocator_types import claim_key
from kubesched.plugins.dynamicresources.binding_conditions import (
    BindingFailed,
    claim_ready_for_binding,
    claim_timed_out,
    has_binding_conditions,
    rfc3339_now,
)
from kubesched.plugins.dynamicresources.claims import (
    FINALIZER,
    allocation_of,
    is_group_ref,
    meta_of,
    pod_ref,
    requests_of,
    reserved_by,
    reserved_for_pod,
    same_devices,
    uid_of,
)
from kubesched.plugins.dynamicresources.plugin_base import DynamicResourcesBase
from kubesched.plugins.dynamicresources.state import STATE_KEY, State


class PreBinding(DynamicResourcesBase):
    """PreBindPreFlight and PreBind (see the module)."""

    # --- PreBind -------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Upstream's PreBindPreFlight: whether PreBind has work for this pod (Skip: none)."""
        s: State | None = state.get(STATE_KEY)
        return Status.skip() if s is None or not s.claims else None

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Any:
        s: State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None  # a pod without claims: nothing to await
        return self._pre_bind(s, pod, node_name)

    async def _pre_bind(self, s: State, pod: PodInfo, node_name: str) -> Status | None:
        for index, claim in enumerate(s.claims):
            uid = uid_of(claim)
            binding = self._binding(s, index, pod.pod)
            if is_group_ref(binding) and index != s.extended:
                # Another member's PreBind may have written it since PreFilter.
                latest = self._claim(meta_of(claim).get("namespace") or "default", meta_of(claim).get("name", ""))
                if latest is not None and reserved_by(latest, binding):
                    s.claims[index] = latest
                    if index in s.signalled:
                        s.signalled.discard(index)
                        self._release_pending(uid)
                    continue
            if reserved_for_pod(pod.pod, claim, self.workload_claims):
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

    async def _bind_claim(self, s: State, index: int, pod: Mapping[str, Any], node_name: str) -> Obj:
        cluster = self.handle.cluster
        claim = s.claims[index]
        allocation = s.allocations[index]
        is_extended = index == s.extended
        if is_extended and allocation is None and requests_of(claim) is None:
            return claim  # all from the node's device plugins
        if is_extended and ext.is_special(claim):
            claim = await self._create_extended_claim(s, node_name)
            s.claims[index] = claim  # Unreserve deletes it if binding fails from here on
        key = claim_key(claim)
        binding = self._binding(s, index, pod)
        group = is_group_ref(binding) and not is_extended
        if group:
            # Members of one group write the same claim: see what the others wrote already.
            live = self._claim(meta_of(claim).get("namespace") or "default", meta_of(claim).get("name", ""))
        else:
            live = self.handle.listers.get(
                "ResourceClaim", meta_of(claim).get("namespace"), meta_of(claim).get("name", "")
            )
        current = copy.deepcopy(live if live is not None else claim)
        if meta_of(current).get("deletionTimestamp"):
            raise RuntimeError(f"claim {key} got deleted in the meantime")
        if group and reserved_by(current, binding):
            return current  # another member reserved it for the group already
        if allocation is not None and allocation_of(current) is not None:
            if not (group and same_devices(allocation_of(current), allocation)):
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
        self._assumed[uid_of(updated)] = updated
        if live is not None:
            self._assumed_listed.add(uid_of(updated))
        if is_extended:
            await self._write_extended_claim_status(s, pod, dict(updated), node_name)
        return dict(updated)

    @staticmethod
    def _binding(s: State, index: int, pod: Mapping[str, Any]) -> Obj:
        """What ``status.reservedFor`` gets for claim ``index``: the pod unless PreFilter found
        the pod's PodGroup shares the claim."""
        return s.bindings[index] if index < len(s.bindings) else pod_ref(pod)

    async def _create_extended_claim(self, s: State, node_name: str) -> Obj:
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

    async def _write_extended_claim_status(self, s: State, pod: Mapping[str, Any], claim: Obj, node_name: str) -> None:
        """``status.extendedResourceClaimStatus`` on the pod: the claim's name and which request
        serves which container's resource."""
        meta = meta_of(pod)
        ns = meta.get("namespace") or "default"
        found = s.node_allocations.get(node_name)
        mappings = found.mappings if found is not None else []
        if not mappings:
            raise RuntimeError(
                f"nil or empty request mappings, no update of pod {ns}/{meta.get('name', '')} ExtendedResourceClaimStatus"
            )
        cluster = self.handle.cluster
        value = {"requestMappings": mappings, "resourceClaimName": meta_of(claim).get("name", "")}
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

    async def _wait_for_binding_conditions(self, s: State, pod: PodInfo, node_name: str) -> Status | None:
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

    def _ready_for_binding(self, s: State) -> bool:
        for index, claim in enumerate(s.claims):
            ns = meta_of(claim).get("namespace") or "default"
            current = self._claim(ns, meta_of(claim).get("name", ""))
            if current is None:
                raise RuntimeError(f'resourceclaim.resource.k8s.io "{meta_of(claim).get("name", "")}" not found')
            s.claims[index] = current
            if not claim_ready_for_binding(current):
                if claim_timed_out(current, self.binding_timeout):
                    raise _BindingTimeout(f"claim {meta_of(current).get('name', '')} binding timeout")
                return False
        return True


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
