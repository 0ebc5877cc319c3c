"""What one :class:`~.allocator.Allocator` keeps for every node it is asked about: its inputs
(claims, classes, slices, the CEL callback, the features), what allocated claims hold, the slices
by node, the pools and the search of each view (the nodes that see the same slices,
:mod:`.node_views`), the taints DeviceTaintRules add, each pool's counters left after the
allocated devices (partitionable devices), and the CEL and capacity answers that hold on every
node."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from kubesched.objects import Obj
from kubesched.plugins.dynamicresources import capacity as cap
from kubesched.plugins.dynamicresources.allocator_types import (
    AllocatedState,
    CompileFailure,
    DeviceID,
    Features,
    Gates,
    RuntimeFailure,
    ValidatedRequest,
    slice_spec,
)
from kubesched.plugins.dynamicresources.claims import requests_of
from kubesched.plugins.dynamicresources.node_views import ViewKey
from kubesched.plugins.dynamicresources.pools import Candidate, Pool, PoolCache, gather_pools
from kubesched.plugins.dynamicresources.taints import RuleTaints

#: How a request chooses devices: the key of its selector verdicts (the class's identity, its own
#: CEL selectors), its DeviceClass, the class's selectors and its own.
Selection = tuple[tuple[int, tuple[str, ...]], Obj, tuple[str, ...], tuple[str, ...]]
#: At most this many answers to "are a node's own slices of no use to these requests" per layout.
_OWN_UNUSED_LIMIT = 20_000
#: A capacity demand not worked out yet (``None`` is an answer: never fits).
_UNKNOWN: Any = object()


class AllocatorBase:
    """An Allocator's state shared by every node (see :class:`~.allocator.Allocator`)."""

    def __init__(
        self,
        claims: Sequence[Obj],
        allocated: set[DeviceID],
        classes: Mapping[str, Obj],
        slices: Sequence[Obj],
        evaluate: Callable[[str, str, Obj], bool],
        *,
        features: Features | Gates | None = None,
        device_taint_rules: Iterable[Mapping[str, Any]] = (),
        shared: Iterable[DeviceID] = (),
        consumed_capacity: Mapping[DeviceID, Mapping[str, cap.Exact]] | None = None,
        pool_cache: PoolCache | None = None,
        state: AllocatedState | None = None,
    ) -> None:
        self.claims = list(claims)
        self.allocated = allocated
        self.classes = classes
        self.slices = slices
        #: A CEL selector's verdict on a device, ``evaluate(expression, driver, device)``; it raises
        #: :class:`~.allocator_types.CompileFailure` or :class:`~.allocator_types.RuntimeFailure`.
        self.evaluate = evaluate
        if features is None:
            features = Features()
        elif not isinstance(features, Features):
            features = Features.from_gates(features)
        self.features = features
        if state is None:
            state = AllocatedState(allocated, set(shared), {k: dict(v) for k, v in (consumed_capacity or {}).items()})
        #: What allocated claims hold: read, never changed (what this allocation takes is the search's).
        self.state = state
        self.rule_taints = RuleTaints(device_taint_rules if features.device_taint_rules else ())
        #: The pools built (and node selectors compiled), kept by the caller across allocators.
        self.pool_cache = PoolCache() if pool_cache is None else pool_cache
        self.pool_cache.bound(len(slices))
        #: The slices by node, their views and the pools of each: the same while no slice changes.
        layout = self.layout = self.pool_cache.layout(slices, features)
        self._on_node = layout.on_node
        self._shared_slices = layout.shared
        self.views = layout.views
        self._pools = layout.pools
        #: Per pool: its counters left after the allocated devices (computed once, as upstream).
        self._available: dict[tuple[str, str], tuple[dict[str, dict[str, int]], bool]] = {}
        #: How many times the search looked for one device (upstream's NumAllocateOneInvocations).
        self.invocations = 0
        #: Per view: the search done for one of its nodes (``False``: the claims did not fit
        #: there), or the class and arguments of the AllocationError it raised; the others get
        #: the same answer. A kept search no longer refers to this allocator (see
        #: ``Search.settle``): no reference cycle, so an allocator is freed with its cycle.
        self.searched: dict[ViewKey, object] = {}
        #: Per request: what its capacity answers are kept under (see PoolCache.capacity_fits).
        self._capacity_keys: dict[tuple[int, int, int], tuple[str, bool]] = {}
        #: How each request and subrequest chooses devices (see :meth:`_selections`).
        self._chosen_by: list[Selection] | None | bool = False
        #: Their verdicts' keys, and their classes (set with them).
        self._selection_keys: tuple[tuple[Any, ...], tuple[Obj, ...]] = ((), ())
        #: Per claim, its requests (the same for every node's search).
        self.requests_of_claims: list[Sequence[Obj]] = [requests_of(c) or () for c in self.claims]
        #: Per (claim, request, subrequest) of an exact count: what validating it gave, kept by
        #: the first node's search for the others.
        self.validated: dict[tuple[int, int, int], ValidatedRequest] = {}

    # --- per view, shared by the nodes that see the same slices -------------------------------
    def view(self, node_name: str, labels: Mapping[str, str]) -> ViewKey:
        """The node's view for these claims: a node with slices of its own none of whose devices
        any request can choose sees what a node without slices of its own sees (its own pools
        are passed over by the search, device by device), so it shares that view's search."""
        view = self.views.key(node_name, labels)
        if view[0] is not None and not self.views.per_node and self._own_slices_unused(node_name, labels, view):
            return None, view[1], view[2]
        return view

    def _own_slices_unused(self, node_name: str, labels: Mapping[str, str], view: ViewKey) -> bool:
        selections = self._selections()
        if selections is None:
            return False  # the search reports what is wrong with a request
        keys, classes = self._selection_keys
        key = (view, keys)
        unused = self.layout.own_unused
        hit = unused.get(key)
        if hit is not None and all(a is b for a, b in zip(hit[0], classes, strict=True)):
            return hit[1]
        own = self.pools_for(node_name, labels, view)
        shared = {p.key: p for p in self.pools_for(node_name, labels, (None, view[1], view[2]))}
        verdict = self._unused(own, shared, selections)
        if len(unused) >= _OWN_UNUSED_LIMIT:
            unused.clear()
        unused[key] = (classes, verdict)
        return verdict

    def _unused(self, own: Sequence[Pool], shared: Mapping[tuple[str, str], Pool], selections: list[Selection]) -> bool:
        """Whether the node's pools are the shared ones and pools of its own that are complete,
        valid, and hold no device a request's class and selectors choose (a selector that fails
        on a device counts as choosing it: the search reports the failure)."""
        if sum(1 for p in own if p.key in shared) != len(shared):
            return False
        for pool in own:
            if pool.key in shared:
                if shared[pool.key] is not pool:
                    return False  # a slice of its own is part of a shared pool
                continue
            if pool.incomplete or pool.invalid:
                return False
            for selection in selections:
                if any(verdict is not False for _, verdict in self.verdicts(selection, pool)):
                    return False
        return True

    def verdicts(self, selection: Selection, pool: Pool) -> Iterator[tuple[Candidate, bool | None]]:
        """Each device of the pool a request may be given (one with binding conditions only
        where they are on), with :meth:`quiet_verdict`'s answer."""
        never = not self.features.binding_conditions
        for row in pool.candidates:
            for cand in row:
                if never and cand.device.get("bindingConditions"):
                    continue
                yield cand, self.quiet_verdict(selection, cand)

    def quiet_verdict(self, selection: Selection, cand: Candidate) -> bool | None:
        """What a request's class and selectors say of a device, kept where the search keeps it
        (``PoolCache.selected``); ``None`` when a selector fails on it (an error the search
        reports when it reaches the device; nothing is kept)."""
        key, cls, class_selectors, selectors = selection
        verdicts = self.pool_cache.selected
        ok = verdicts.get((key, id(cand.device)))
        if ok is None:
            driver, device = cand.id[0], cand.device
            try:
                ok = all(self.evaluate(e, driver, device) for e in class_selectors) and all(
                    self.evaluate(e, driver, device) for e in selectors
                )
            except (CompileFailure, RuntimeFailure):
                return None
            self.pool_cache.classes[id(cls)] = cls
            verdicts[(key, id(device))] = ok
        return ok

    def _selections(self) -> list[Selection] | None:
        """Per request and subrequest of the claims: the key its selector verdicts are kept
        under (as the search keeps them), its class, the class's and its own CEL selectors;
        ``None`` when a request names no class, an unknown one, or an empty selector."""
        if self._chosen_by is False:
            chosen = self._chosen_by = self._gather_selections()
            if chosen is not None:
                self._selection_keys = (tuple(sel[0] for sel in chosen), tuple(sel[1] for sel in chosen))
        return self._chosen_by  # type: ignore[return-value]

    def _gather_selections(self) -> list[Selection] | None:
        out: list[Selection] = []
        for requests in self.requests_of_claims:
            for r in requests:
                for spec in r.get("firstAvailable") or (r.get("exactly") or {},):
                    cls = self.classes.get(spec.get("deviceClassName") or "")
                    selectors = tuple(_expressions(spec))
                    if cls is None or not all(selectors):
                        return None
                    out.append(selection_of(cls, selectors))
        return out

    def pools_for(self, node_name: str, labels: Mapping[str, str], view: ViewKey) -> list[Pool]:
        """The pools reaching the node (upstream's GatherPools), gathered once per view."""
        pools = self._pools.get(view)
        if pools is None:
            # A view without a node's name: the shared slices only (see :meth:`view`).
            own = self._on_node.get(node_name, ()) if view[0] is not None else ()
            slices = [*own, *self._shared_slices]
            pools = gather_pools(slices, node_name, labels, self.features, self.slices, self.pool_cache)
            self._pools[view] = pools
        return pools

    # --- per request, shared by every node ---------------------------------------------------
    def capacity_key(self, key: tuple[int, int, int], capacity: Mapping[str, Any] | None) -> tuple[str, bool]:
        """What the capacity answers of request ``key`` are kept under, across cycles."""
        have = self._capacity_keys.get(key)
        if have is None:
            text = "" if capacity is None else json.dumps(capacity, sort_keys=True)
            have = self._capacity_keys[key] = (text, self.features.fractional_capacity_range)
        return have

    def demand(self, capacity: Mapping[str, Any] | None, capacity_key: tuple[str, bool], device: Obj) -> Any:
        """What a request (its ``capacity`` request, kept under ``capacity_key``) asks of each of
        the device's capacities (:func:`~.capacity.demand`; ``None``: never fits), worked out
        once per request and device (parsing quantities and policies), across cycles."""
        demands = self.pool_cache.capacity_demands
        key = (capacity_key, id(device))
        wanted = demands.get(key, _UNKNOWN)
        if wanted is _UNKNOWN:
            try:
                wanted = cap.demand(capacity, device, self.features.fractional_capacity_range)
            except cap.CapacityError:
                wanted = None
            demands[key] = wanted
        return wanted

    # --- per pool, shared by every node ------------------------------------------------------
    def available_counters(self, pool: Pool) -> tuple[dict[str, dict[str, int]], bool]:
        """The pool's counters left after the allocated devices (on any node), and whether one
        of them is overdrawn already (then no device drawing on the pool fits, as upstream)."""
        have = self._available.get(pool.key)
        versions = self.state.versions
        if have is None and versions is not None:
            # What the pool's devices hold is as it was when they were last counted: kept.
            kept = pool.counters_left
            if kept is not None and kept[0] == versions.get(pool.key):
                have = self._available[pool.key] = kept[1]
        if have is None:
            left = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            holds = self.state.holds
            # The devices of the slices reaching the node are the pool's candidates (what they
            # draw is parsed once); those of its other slices are parsed here.
            held = [cand for row in pool.candidates for cand in row if holds(cand.id)]
            for s in pool.elsewhere:
                for d in slice_spec(s).get("devices") or ():
                    dev = (pool.driver, pool.name, str(d.get("name", "")))
                    if holds(dev):
                        held.append(Candidate(dev, d, s))
            for cand in held:
                for set_name, c, value in cand.uses:
                    counters = left.get(set_name)
                    if counters is not None and c in counters:
                        counters[c] -= value
            overdrawn = any(v < 0 for counters in left.values() for v in counters.values())
            have = (left, overdrawn)
            self._available[pool.key] = have
            if versions is not None:
                pool.counters_left = (versions.get(pool.key), have)
        return have

    def taints(self, cand: Candidate) -> Sequence[Obj]:
        own: Sequence[Obj] = cand.device.get("taints") or ()
        if self.rule_taints:
            added = self.rule_taints.of(cand.id)
            if added:
                return [*own, *added]
        return own


def selection_of(cls: Obj, selectors: Sequence[str]) -> Selection:
    """The :data:`Selection` of a request of class ``cls`` with these CEL ``selectors``."""
    return (id(cls), tuple(selectors)), cls, tuple(_expressions(cls.get("spec") or {})), tuple(selectors)


def _expressions(spec: Mapping[str, Any]) -> list[str]:
    """The CEL expressions of a request's or a class's ``selectors``."""
    return [str((s.get("cel") or {}).get("expression") or "") for s in spec.get("selectors") or ()]
