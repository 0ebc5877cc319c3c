"""The devices one request may choose from a view's pools, in the search's first-fit order:
:class:`Walk`. The search visits every device of every pool for every request of every attempt,
while most of what it checks does not change from one attempt to the next — whether the class's
and the request's selectors choose the device, what the request would consume of its capacity.
A walk holds the devices they choose, with that demand, per pool; it is made once per view's
pools and request (kept on the :class:`~.pools.Layout`, which lives while no slice changes),
and the search then checks only what the attempt changes: whether a device is in use, whether
its capacity left fits, the claim's constraints and counters. Where the allocated state says
which pools changed (``AllocatedState.versions``), the devices of a pool that what allocated
claims hold leaves open to the request — not in use, capacity left, counters left for it alone —
are kept too, per pool version, so a pool given out whole costs the search one look.

A walk is made only where it gives the search's answers exactly: no pool selects its devices per
node (``perDeviceNodeSelection``: the verdict depends on the node) and every selector answers
on every device without an error (the search reports the first such error where it reaches the
device; without a walk it still does)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.objects import Obj
from kubesched.plugins.dynamicresources import capacity as cap
from kubesched.plugins.dynamicresources.allocator_base import AllocatorBase, selection_of
from kubesched.plugins.dynamicresources.allocator_types import slice_spec
from kubesched.plugins.dynamicresources.pools import Candidate, Pool

#: A view with one pool of fewer devices than this has no walk (see :func:`walk_for`).
_FEW_DEVICES = 32
#: At most this many walks per layout (of requests and classes changed since, when more).
_WALKS_LIMIT = 1024

#: A device the request may choose, and what it asks of the device's capacity
#: (:func:`~.capacity.demand`; ``None``: nothing to check).
Step = tuple[Candidate, Any]


@dataclass(eq=False)
class Walk:
    """What one request may choose of one view's pools (see the module)."""

    #: The pools it was made of (its key holds their list's identity), and the request's class.
    pools: Sequence[Pool]
    cls: Obj
    #: Per pool that is complete, valid and has a device to choose: its key, the pool, and its
    #: devices to choose in first-fit order. ``None``: no walk (see the module).
    groups: list[tuple[tuple[str, str], Pool, list[Step]]] | None
    #: Per group: the pool's version, whether for admin access, and its devices left open then
    #: (see :func:`open_steps`).
    open: dict[int, tuple[int | None, bool, list[Step]]] = field(default_factory=dict)


def walk_for(
    a: AllocatorBase,
    pools: Sequence[Pool],
    cls: Obj,
    selectors: Sequence[str],
    capacity: Any,
    capacity_key: tuple[str, bool],
    selection_key: tuple[int, tuple[str, ...]],
) -> Walk | None:
    """The walk of a request of class ``cls`` with these CEL ``selectors`` (``selection_key``:
    ``Request.selection``) and ``capacity`` request over ``pools`` (kept on the allocator's
    layout); ``None`` the first time it is asked for. A walk looks at every device once, the
    search stops at the first that fits: it pays only when asked for again (not where, say,
    every pod's request names a class of its own, on nodes with slices of their own), and where
    there are many devices to pass over."""
    if len(pools) < 2 and (not pools or pools[0].device_count() < _FEW_DEVICES):
        return None  # a few devices: the search visits them as quickly
    f = a.features
    key = (id(pools), selection_key, capacity_key, f.binding_conditions, f.consumable_capacity)
    walks = a.layout.walks
    hit = walks.get(key)
    if hit is not None and hit is not _ASKED and hit.pools is pools and hit.cls is cls:
        return hit  # type: ignore[no-any-return]
    walk = (
        None
        if hit is None
        else Walk(pools, cls, _groups(a, pools, selection_of(cls, selectors), capacity, capacity_key))
    )
    if len(walks) >= _WALKS_LIMIT:
        walks.clear()
    walks[key] = _ASKED if walk is None else walk
    return walk


def _groups(
    a: AllocatorBase, pools: Sequence[Pool], selection: Any, capacity: Any, capacity_key: tuple[str, bool]
) -> list[tuple[tuple[str, str], Pool, list[Step]]] | None:
    f = a.features
    groups: list[tuple[tuple[str, str], Pool, list[Step]]] = []
    for pool in pools:
        if pool.incomplete or pool.invalid:
            continue  # the search passes over it
        if any(slice_spec(s).get("perDeviceNodeSelection") for s in pool.slices):
            return None
        steps: list[Step] = []
        for cand, verdict in a.verdicts(selection, pool):
            if verdict is None:
                return None
            if not verdict:
                continue
            device = cand.device
            wanted = None
            if f.consumable_capacity and (capacity is not None or "capacity" in device):
                wanted = a.demand(capacity, capacity_key, device)
                if wanted is None:
                    continue  # never fits
            steps.append((cand, wanted))
        if steps:
            groups.append((pool.key, pool, steps))
    return groups


def open_steps(a: AllocatorBase, walk: Walk, gi: int, admin: bool) -> list[Step]:
    """The devices of the walk's group ``gi`` that what allocated claims hold (``a.state``,
    with versions) leaves open to the request: not used whole (unless for admin access), with
    the capacity it asks left, and (partitionable devices) with the pool's counters left for the
    device alone. The search checks each again with what it is taking itself, which only takes
    more: a device left out here it would refuse."""
    assert walk.groups is not None and a.state.versions is not None
    key, pool, steps = walk.groups[gi]
    version = a.state.versions.get(key)
    kept = walk.open.get(gi)
    if kept is not None and kept[0] == version and kept[1] is admin:
        return kept[2]
    state, f = a.state, a.features
    in_use, consumed = state.devices, state.consumed
    out: list[Step] = []
    for step in steps:
        cand, wanted = step
        dev = cand.id
        if not admin and dev in in_use:
            continue
        if wanted is not None and not cap.fits_demand(wanted, consumed.get(dev), None):
            continue
        device = cand.device
        if device.get("consumesCounters"):
            if not f.partitionable_devices:
                continue  # never taken
            # A shared device's counters are taken by its first share only: not judged here.
            if not (f.consumable_capacity and device.get("allowMultipleAllocations") is True):
                available, overdrawn = a.available_counters(pool)
                if overdrawn or any(value > available.get(s, {}).get(c, 0) for s, c, value in cand.uses):
                    continue
        out.append(step)
    walk.open[gi] = (version, admin, out)
    return out


#: A walk asked for once (see :func:`walk_for`).
_ASKED: Any = object()
