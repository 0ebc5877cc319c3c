"""The devices one request may choose from a view's pools, in the search's first-fit order:
:class:`Walk`. The search visits every device of every pool for every request of every attempt,
while most of what it checks does not change from one attempt to the next — whether the class's
and the request's selectors choose the device, what the request would consume of its capacity.
A walk holds the devices they choose, with that demand, per pool; it is made once per view's
pools and request (kept on the :class:`~.pools.Layout`, which lives while no slice changes),
and the search then checks only what the attempt changes: whether a device is in use, whether
its capacity left fits, the claim's constraints and counters.

A walk is made only where it gives the search's answers exactly: no pool selects its devices per
node (``perDeviceNodeSelection``: the verdict depends on the node) and every selector answers
on every device without an error (the search reports the first such error where it reaches the
device; without a walk it still does)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kubesched.objects import Obj
from kubesched.plugins.dynamicresources import capacity as cap
from kubesched.plugins.dynamicresources.allocator_base import AllocatorBase, selection_of
from kubesched.plugins.dynamicresources.allocator_types import slice_spec
from kubesched.plugins.dynamicresources.pools import Candidate, Pool

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
    #: Per pool that is complete, valid and has a device to choose: its index in ``pools``,
    #: the pool, and its devices to choose in first-fit order. ``None``: no walk (see the module).
    groups: list[tuple[int, Pool, list[Step]]] | None


def walk_for(
    a: AllocatorBase,
    pools: Sequence[Pool],
    cls: Obj,
    selectors: Sequence[str],
    capacity: Any,
    capacity_key: tuple[str, bool],
) -> Walk:
    """The walk of a request of class ``cls`` with these CEL ``selectors`` and ``capacity``
    request over ``pools`` (kept on the allocator's layout)."""
    f = a.features
    selection = selection_of(cls, selectors)
    key = (id(pools), selection[0], capacity_key, f.binding_conditions, f.consumable_capacity)
    walks = a.layout.walks
    hit: Walk | None = walks.get(key)
    if hit is not None and hit.pools is pools and hit.cls is cls:
        return hit
    walk = Walk(pools, cls, _groups(a, pools, selection, capacity, capacity_key))
    if len(walks) >= _WALKS_LIMIT:
        walks.clear()
    walks[key] = walk
    return walk


def _groups(
    a: AllocatorBase, pools: Sequence[Pool], selection: Any, capacity: Any, capacity_key: tuple[str, bool]
) -> list[tuple[int, Pool, list[Step]]] | None:
    f = a.features
    demands = a.pool_cache.capacity_demands
    groups: list[tuple[int, Pool, list[Step]]] = []
    for pi, pool in enumerate(pools):
        if pool.incomplete or pool.invalid:
            continue  # the search passes over it
        if any(slice_spec(s).get("perDeviceNodeSelection") for s in pool.slices):
            return None
        steps: list[Step] = []
        for row in pool.candidates:
            for cand in row:
                device = cand.device
                if not f.binding_conditions and device.get("bindingConditions"):
                    continue  # never chosen
                verdict = a.quiet_verdict(selection, cand)
                if verdict is None:
                    return None
                if not verdict:
                    continue
                wanted = None
                if f.consumable_capacity and (capacity is not None or "capacity" in device):
                    dkey = (capacity_key, id(device))
                    wanted = demands.get(dkey, _UNKNOWN)
                    if wanted is _UNKNOWN:
                        try:
                            wanted = cap.demand(capacity, device, f.fractional_capacity_range)
                        except cap.CapacityError:
                            wanted = None
                        demands[dkey] = wanted
                    if wanted is None:
                        continue  # never fits
                steps.append((cand, wanted))
        if steps:
            groups.append((pi, pool, steps))
    return groups


#: A capacity demand not worked out yet (``None`` is an answer: never fits).
_UNKNOWN: Any = object()
