"""What every extension point of DynamicResources shares (:class:`DynamicResourcesBase`): the
plugin's settings from its args and feature gates; its memory across cycles (allocations in
flight between Reserve and PreBind, claims PreBind wrote before the informer has them, CEL
verdicts); and what several points do with them: read a pod's claims and PodGroup, build the
allocator over a cycle's view, take an allocation out of flight, delete a claim."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, cast

from kubesched.framework.interface import Handle
from kubesched.framework.podgroup import pod_group_name
from kubesched.framework.types import PodInfo
from kubesched.objects import Obj
from kubesched.plugins.dynamicresources import device_taints
from kubesched.plugins.dynamicresources import extended_resources as ext
from kubesched.plugins.dynamicresources.allocator import Allocator, PoolCache
from kubesched.plugins.dynamicresources.allocator_types import CompileFailure, Features, RuntimeFailure
from kubesched.plugins.dynamicresources.args import (
    BINDING_GATES,
    BINDING_TIMEOUT_DEFAULT,
    FILTER_TIMEOUT_GATE,
    DynamicResourcesArgs,
    check_args,
    duration_seconds,
)
from kubesched.plugins.dynamicresources.cel import CELError, compile_expression, device_variables, evaluate
from kubesched.plugins.dynamicresources.claims import (
    FINALIZER,
    WORKLOAD_CLAIMS_GATE,
    ClaimProblem,
    claim_statuses,
    controlled_by_group,
    entry_claim_name,
    meta_of,
    uid_of,
)
from kubesched.plugins.dynamicresources.held_claims import HeldClaims
from kubesched.plugins.dynamicresources.state import State
from kubesched.plugins.helper import feature_gates_of

#: How many (expression, device) answers are remembered before starting over.
_MATCH_CACHE_LIMIT = 200_000
#: How often PreBind looks at the binding conditions while it waits (upstream: 5s).
BINDING_POLL_SECONDS = 5.0


class DynamicResourcesBase:
    """The state and shared operations of :class:`~.dynamic_resources.DynamicResources`; each
    extension point is a part of its own built on this."""

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle: Handle = handle
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
        #: uids of assumed claims the informer has listed (a claim PreBind created is not, at
        #: first): one of them missing from the informer since was deleted (see PreFilter)
        self._assumed_listed: set[str] = set()
        #: (expression, driver, device JSON identity) -> verdict, or the CEL error
        self._matches: dict[tuple[str, str, int], bool | CELError] = {}
        #: the devices ``_matches`` is keyed by, kept alive so that their ids are not reused
        self._keep_alive: list[Obj] = []
        #: what allocated claims hold, kept up to date from one cycle to the next
        self._held_claims = HeldClaims()
        #: the pools built of the slices, for every cycle's allocator (a changed slice is a new
        #: object: its pool is built anew)
        self._pool_cache = PoolCache()

    # --- claims --------------------------------------------------------------------------
    def _claim(self, namespace: str, name: str) -> Obj | None:
        live = self.handle.listers.get("ResourceClaim", namespace, name)
        if live is None:
            return None
        assumed = self._assumed.get(uid_of(live))
        if assumed is not None:
            if int(meta_of(live).get("resourceVersion") or 0) >= int(meta_of(assumed).get("resourceVersion") or 0):
                self._assumed.pop(uid_of(live), None)
                self._assumed_listed.discard(uid_of(live))
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
        meta = meta_of(pod)
        ns = meta.get("namespace") or "default"
        statuses = claim_statuses(pod)
        group = pod_group_name(pod) if self.workload_claims else ""
        owner = f'pod "{ns}/{meta.get("name", "")}"'
        out = []
        for entry in (pod.get("spec") or {}).get("resourceClaims") or ():
            name, must_check_owner = entry_claim_name(entry, statuses, owner, f'"{entry.get("name", "")}"')
            if not name:
                continue  # no claim needed for this one (the controller said so)
            claim = self._claim(ns, name)
            if claim is None:
                raise ClaimProblem(f'resourceclaim.resource.k8s.io "{name}" not found')
            if meta_of(claim).get("deletionTimestamp"):
                raise ClaimProblem(f'resourceclaim "{name}" is being deleted')
            if must_check_owner and not any(
                r.get("controller") and r.get("uid") == meta.get("uid")
                for r in meta_of(claim).get("ownerReferences") or ()
            ):
                if not group:
                    raise ClaimProblem(
                        f"ResourceClaim {ns}/{name} was not created for pod {ns}/{meta.get('name', '')} (pod is not owner)"
                    )
                if not controlled_by_group(claim, group):
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
        ns = meta_of(pod).get("namespace") or "default"
        group = self.handle.listers.get("PodGroup", ns, name)
        if group is None:
            raise ClaimProblem(f'podgroups.scheduling.k8s.io "{name}" not found')
        return group

    def _may_ask_extended(self, pod: PodInfo) -> bool:
        """Whether the pod asks for some resource a DeviceClass could stand for (a look at its
        requests only: most pods ask for none)."""
        return self.extended_resources and any(
            q and ext.is_dra_extended_resource_name(n) for n, q in pod.requests.scalar.items()
        )

    def _allocator(self, s: State, claims: list[Obj]) -> Allocator:
        held = s.allocated
        return Allocator(
            claims,
            held.devices,
            s.classes,
            s.slices,
            self._selector_matches,
            features=self.allocator_features,
            pool_cache=self._pool_cache,
            state=held,
        )

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

    async def _delete_claim(self, claim: Obj) -> None:
        """Delete ``claim``, its finalizer removed first (the claim for extended resources the
        scheduler created, when it is stale or its pod was not bound)."""
        cluster = self.handle.cluster
        ns = meta_of(claim).get("namespace") or "default"
        name = meta_of(claim).get("name", "")
        current = self.handle.listers.get("ResourceClaim", ns, name) or claim
        finalizers = list(meta_of(current).get("finalizers") or ())
        if FINALIZER in finalizers:
            updated = copy.deepcopy(current)
            updated["metadata"]["finalizers"] = [f for f in finalizers if f != FINALIZER]
            try:
                await cluster.update_object("ResourceClaim", updated)
            except Exception as exc:
                raise RuntimeError(f"update resourceclaim {ns}/{name}: {exc}") from exc
        await cluster.delete_object("ResourceClaim", ns, name)
