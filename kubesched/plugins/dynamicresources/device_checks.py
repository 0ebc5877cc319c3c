"""One device for one request, within one :meth:`Allocator.allocate <.allocator.Allocator.allocate>`
call: the ways to meet a request (:class:`Request`), whether a device is selectable for it
(binding conditions, the class's and the request's CEL selectors, per-device node selection),
whether its consumable capacity fits, and taking it (free, tolerated, within its pool's shared
counters and the claim's constraints) with the means to give it back. :class:`DeviceChecks`
holds the call's state; the search (:mod:`.search`) builds on it."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.selectors import SelectorError
from kubesched.objects import Obj
from kubesched.plugins.dynamicresources import capacity as cap
from kubesched.plugins.dynamicresources.allocator_base import AllocatorBase, selection_of
from kubesched.plugins.dynamicresources.allocator_types import (
    AllocationError,
    CompileFailure,
    DeviceID,
    RuntimeFailure,
    device_id_str,
    kobj,
    slice_spec,
)
from kubesched.plugins.dynamicresources.constraints import Constraint
from kubesched.plugins.dynamicresources.pools import Candidate, Pool, node_matches
from kubesched.plugins.dynamicresources.taints import blocks
from kubesched.plugins.dynamicresources.walks import Walk


@dataclass
class Request:
    """One way to meet a request: the request itself, or one of its ``firstAvailable``
    subrequests (``parent`` is then the request's name)."""

    key: tuple[int, int, int]  # claim, request, subrequest
    name: str
    parent: str
    class_obj: Obj | None
    selectors: list[str]
    admin_access: bool
    tolerations: list[Obj]
    capacity: Mapping[str, Any] | None
    mode: str
    count: int = 0
    all_devices: list[Candidate] | None = None
    #: Per device (by identity), whether it is selectable for this request on this node.
    selectable: dict[int, bool] = field(default_factory=dict)
    #: What the verdicts of its selectors are kept under (the class's identity, its own
    #: selectors), and those of its capacity request (see PoolCache).
    selection: tuple[int, tuple[str, ...]] = (0, ())
    capacity_key: tuple[str, bool] = ("", False)
    #: The devices it may choose, where the search may walk them instead of every device
    #: (``None``: every device; see :mod:`.walks`).
    walk: Walk | None = None

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def base(self) -> str:
        return self.parent or self.name

    @property
    def sub(self) -> str:
        return self.name if self.parent else ""


@dataclass(slots=True)
class Picked:
    req: Request
    cand: Candidate
    share_id: str | None = None
    consumed: dict[str, cap.Amount] | None = None


#: What :meth:`DeviceChecks._take` held: the claim's index, the device as picked, and whether it
#: took the device's counters.
Taken = tuple[int, "Picked", bool]


class DeviceChecks:
    """The state of one :meth:`Allocator.allocate <.allocator.Allocator.allocate>` call, and what
    it does with one device."""

    def __init__(self, a: AllocatorBase, node_name: str, labels: Mapping[str, str], deadline: float | None) -> None:
        self.a = a
        self.f = a.features
        self.claims = a.claims
        self.node_name = node_name
        self.labels = labels
        self.deadline = deadline
        self.pools: list[Pool] = []
        self.requests: dict[tuple[int, int, int], Request] = {}
        self.selected: dict[tuple[int, int], int] = {}
        self.constraints: list[list[Constraint]] = []
        self.memo: dict[tuple[tuple[int, int, int], DeviceID], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, cap.Exact]] = {}
        self.counters: dict[tuple[str, str], dict[str, dict[str, int]]] = {}
        self.results: list[list[Picked]] = [[] for _ in a.claims]
        self._requests: list[Sequence[Obj]] = a.requests_of_claims

    def settle(self) -> None:
        """Done searching: drop what only the search used (what it said of each device, the
        devices and counters it was trying, the pools) and the allocator itself, keeping what
        the results are made of. An allocator keeps its searches to answer the other nodes of a
        view; were they to refer back to it, every allocator would be a reference cycle, freed
        only by a full collection, which a busy scheduler runs rarely (see GcPacer)."""
        del self.a
        self.pools = []
        self.constraints = []
        self.memo = {}
        self.allocating = {}
        self.allocating_capacity = {}
        self.counters = {}
        for req in self.requests.values():
            req.selectable = {}
            req.all_devices = None
            req.walk = None

    def _in_use(self, dev: DeviceID) -> bool:
        return dev in self.a.state.devices or bool(self.allocating.get(dev))

    # --- one device --------------------------------------------------------------------------
    def _selectable(self, req: Request, cand: Candidate) -> bool:
        device = cand.device
        if not self.f.binding_conditions and device.get("bindingConditions"):
            return False
        key = (req.key, cand.id)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        # What the selectors say does not depend on the node, nor on the cycle: remembered.
        shared_key = (req.selection, id(device))
        verdicts = self.a.pool_cache.selected
        ok = verdicts.get(shared_key)
        if ok is None:
            ok = True
            if req.class_obj is not None:
                class_selectors = [
                    ((s.get("cel") or {}).get("expression") or "")
                    for s in (req.class_obj.get("spec") or {}).get("selectors") or ()
                ]
                ok = self._selectors_match(req, req.class_obj, class_selectors, cand)
            if ok:
                ok = self._selectors_match(req, None, req.selectors, cand)
            verdicts[shared_key] = ok
        if ok and slice_spec(cand.slice).get("perDeviceNodeSelection"):
            try:
                ok = node_matches(
                    self.node_name,
                    self.labels,
                    device.get("nodeName") or "",
                    bool(device.get("allNodes")),
                    device.get("nodeSelector"),
                    self.a.pool_cache.selectors,
                )
            except SelectorError as exc:
                raise AllocationError(f"failed to parse node selector: {exc}") from None
        self.memo[key] = ok
        return ok

    def _judged(self, pool: Pool, req: Request) -> bool:
        """Whether passing over the pool's devices unvisited changes nothing the search would
        report: the request's selectors answer on each of them without an error (a device they
        fail on is an error of the search's when it is reached). Verdicts missing (devices in use
        are not looked at) are worked out here, quietly; the answer is kept on the pool."""
        key = (req.selection, self.f.binding_conditions)
        cls = pool.judged.get(key)
        if cls is not None and cls is req.class_obj:
            return True
        if req.class_obj is None or any(slice_spec(s).get("perDeviceNodeSelection") for s in pool.slices):
            return False
        selection = selection_of(req.class_obj, req.selectors)
        if any(verdict is None for _, verdict in self.a.verdicts(selection, pool)):
            return False
        pool.judged[key] = req.class_obj
        return True

    def _selectors_match(self, req: Request, cls: Obj | None, selectors: Sequence[str], cand: Candidate) -> bool:
        claim = self.a.claims[req.key[0]]
        where = f"class {cls['metadata']['name']}" if cls is not None else f"claim {kobj(claim)}"
        for i, expression in enumerate(selectors):
            try:
                ok = self.a.evaluate(expression, cand.id[0], cand.device)
            except CompileFailure as exc:
                raise AllocationError(f"{where}: selector #{i}: CEL compile error: {exc}") from None
            except RuntimeFailure as exc:
                raise AllocationError(
                    f"{where}: selector #{i} on device {device_id_str(cand.id)}: CEL runtime error: {exc}"
                ) from None
            if not ok:
                return False
        return True

    def _capacity_fits(self, req: Request, cand: Candidate) -> bool:
        in_use = self.a.state.consumed.get(cand.id)
        allocating = self.allocating_capacity.get(cand.id)
        key = (req.capacity_key, id(cand.device))
        verdicts = self.a.pool_cache.capacity_fits
        if in_use is None and allocating is None:
            # Nothing taken of the device yet: the answer depends on the request and device alone.
            hit = verdicts.get(key)
            if hit is not None:
                return hit
        # What is already used of a shared device changes from one check to the next; what the
        # request asks of it does not.
        wanted = self.a.demand(req.capacity, req.capacity_key, cand.device)
        ok = cap.fits_demand(wanted, in_use, allocating)
        if in_use is None and allocating is None:
            verdicts[key] = ok
        return ok

    def _take(self, ci: int, req: Request, cand: Candidate, must: bool) -> Taken | None:
        """Upstream's allocateDevice: hold ``cand`` for ``req`` if it is free, tolerated, within
        the counters and the constraints; what :meth:`_give_back` takes to undo it."""
        device = cand.device
        multi = self.f.consumable_capacity and device.get("allowMultipleAllocations") is True
        if not multi and req.admin_access and ci in self.allocating.get(cand.id, ()):
            return None
        if not req.admin_access and self._in_use(cand.id):
            return None
        uses_counters = bool(device.get("consumesCounters"))
        if uses_counters and not self.f.partitionable_devices:
            return None
        if self.f.device_taints and blocks(self.a.taints(cand), req.tolerations):
            return None
        if self.f.consumable_capacity and not self._capacity_fits(req, cand):
            return None  # "All" devices were picked before this allocation took some of them
        # A shared device already in use has had its counters taken by its first share.
        took_counters = uses_counters and not (multi and self._capacity_in_use(cand.id))
        if took_counters and not self._take_counters(cand):
            return None
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(req.base, req.sub, cand):
                for earlier in constraints[:i]:
                    earlier.remove(req.base, req.sub, cand)
                if took_counters:
                    self._give_counters(cand)
                if must:
                    # A claim whose own constraint keeps it from "All" its devices is an error.
                    raise AllocationError(
                        f"claim {kobj(self.a.claims[ci])}, request {req.name}: cannot add device {device_id_str(cand.id)} because a claim constraint would not be satisfied"
                    )
                return None
        if not multi:
            self.allocating.setdefault(cand.id, set()).add(ci)
        picked = Picked(req, cand)
        if multi:
            picked.consumed = cap.consumption(req.capacity, device, self.f.fractional_capacity_range)
            picked.share_id = str(uuid.uuid4())
            cap.add_to(self.allocating_capacity.setdefault(cand.id, {}), _values(picked.consumed))
        self.results[ci].append(picked)
        return (ci, picked, took_counters)

    def _give_back(self, taken: Taken) -> None:
        """Undo a :meth:`_take` (the last one not undone yet)."""
        ci, picked, took_counters = taken
        req, cand = picked.req, picked.cand
        for c in self.constraints[ci]:
            c.remove(req.base, req.sub, cand)
        self.allocating.get(cand.id, set()).discard(ci)
        if picked.consumed is not None:
            held = self.allocating_capacity[cand.id]
            cap.add_to(held, _values(picked.consumed), -1)
            if not any(held.values()):
                del self.allocating_capacity[cand.id]
        if took_counters:
            self._give_counters(cand)
        self.results[ci].pop()

    def _capacity_in_use(self, dev: DeviceID) -> bool:
        return dev in self.a.state.consumed or dev in self.allocating_capacity

    def _take_counters(self, cand: Candidate) -> bool:
        pool = cand.pool
        if pool is None:
            return False
        available, overdrawn = self.a.available_counters(pool)
        if overdrawn:
            return False
        taken = self.counters.setdefault(pool.key, {})
        uses = cand.uses
        for set_name, c, value in uses:
            counters = taken.setdefault(set_name, {})
            counters[c] = counters.get(c, 0) + value
        # Only the counters this device draws on changed: the others were within bounds.
        for set_name, c, _ in uses:
            if taken[set_name][c] > available.get(set_name, {}).get(c, 0):
                self._give_counters(cand)
                return False
        return True

    def _give_counters(self, cand: Candidate) -> None:
        assert cand.pool is not None
        taken = self.counters[cand.pool.key]
        for set_name, c, value in cand.uses:
            taken[set_name][c] -= value


def _values(amounts: Mapping[str, cap.Amount]) -> dict[str, cap.Exact]:
    return {k: v.value for k, v in amounts.items()}
