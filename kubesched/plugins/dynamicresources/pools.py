"""The pools of devices that reach one node (upstream's GatherPools): the slices of each pool's
newest generation that the node's name, labels or a device's own node selection select, and the
checks that make a pool incomplete (slices missing) or invalid (duplicate device names, the
shared counters of partitionable devices broken). :class:`PoolCache` keeps, from one node and one
cycle to the next while the slices stay the same objects, the pools built, the node selectors
compiled, each set of slices' :class:`Layout` (by node, the views, the pools of each view) and
the answers about devices (selectors, capacity)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.selectors import NodeSelector, SelectorError
from kubesched.objects import Obj
from kubesched.plugins.dynamicresources import capacity as cap
from kubesched.plugins.dynamicresources.allocator_types import AllocationError, DeviceID, Features, slice_spec
from kubesched.plugins.dynamicresources.node_views import NodeViews, ViewKey

#: How many device answers (selectors, capacity) a PoolCache keeps before starting over.
_VERDICTS_LIMIT = 400_000

#: How many DeviceClasses a PoolCache keeps (by identity, beside the answers of their selectors)
#: before starting over, at least.
_CLASSES_LIMIT = 4096

#: How many sets of slices a PoolCache keeps the layout of.
_LAYOUTS_LIMIT = 8

#: Compiled node selectors by the identity of the selector object (kept alive beside them).
SelectorCache = dict[int, tuple[Any, "NodeSelector | None"]]


def node_matches(
    node_name: str,
    labels: Mapping[str, str],
    name: str,
    all_nodes: bool,
    selector: Any,
    compiled_selectors: SelectorCache | None = None,
) -> bool:
    """Upstream's NodeMatches: a node name, all nodes, or a node selector (an invalid one raises
    :class:`SelectorError`); none of them: no node."""
    if name:
        return name == node_name
    if all_nodes:
        return True
    if selector is not None:
        hit = compiled_selectors.get(id(selector)) if compiled_selectors is not None else None
        if hit is None:
            hit = (selector, NodeSelector.compile(selector))
            if compiled_selectors is not None:
                compiled_selectors[id(selector)] = hit
        compiled = hit[1]
        return compiled is None or compiled.matches(labels, node_name)
    return False


@dataclass
class Candidate:
    id: DeviceID
    device: Obj
    slice: Obj
    pool: Pool | None = None
    _uses: tuple[tuple[str, str, int], ...] | None = None

    @property
    def uses(self) -> tuple[tuple[str, str, int], ...]:
        """What the device consumes of its pool's counters: (counter set, counter, nano-units)."""
        if self._uses is None:
            self._uses = tuple(
                (str(use.get("counterSet", "")), c, _nano((v or {}).get("value", "0")))
                for use in self.device.get("consumesCounters") or ()
                for c, v in (use.get("counters") or {}).items()
            )
        return self._uses


def _nano(quantity: Any) -> int:
    """A quantity in billionths, the finest a Kubernetes quantity has (exact integer arithmetic)."""
    return math.ceil(cap.amount_of(quantity).value * 1_000_000_000)


@dataclass
class Pool:
    driver: str
    name: str
    generation: int = 0
    #: Device slices reaching the node, by name (the first-fit order).
    slices: list[Obj] = field(default_factory=list)
    #: The pool's other device slices (their allocated devices still consume counters).
    elsewhere: list[Obj] = field(default_factory=list)
    #: Counter set name -> counter -> value in billionths (``spec.sharedCounters``).
    counter_sets: dict[str, dict[str, int]] = field(default_factory=dict)
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    #: Per slice of ``slices``, its devices.
    candidates: list[list[Candidate]] = field(default_factory=list)
    #: Whether a device has binding conditions (such pools are tried last).
    binding_conditions: bool = False
    #: Per attribute name, the values its devices have of it (``None``: one is not hashable):
    #: see ``constraints.none_can_match``.
    attribute_values: dict[str, frozenset[Any] | None] = field(default_factory=dict)
    #: (a request's selection, binding conditions on) -> the DeviceClass of the selection, once
    #: its selectors have answered on every device of the pool without an error.
    judged: dict[Any, Obj] = field(default_factory=dict)
    #: The pool's version in an allocated state (``AllocatedState.versions``), and its counters
    #: left then (see ``AllocatorBase.available_counters``).
    counters_left: tuple[int | None, tuple[dict[str, dict[str, int]], bool]] | None = None
    #: How many devices reach the node (counted once: see :meth:`device_count`).
    _devices: int = field(default=-1, repr=False, compare=False)

    def device_count(self) -> int:
        """How many devices of the pool reach the node (its candidates, built once)."""
        if self._devices < 0:
            self._devices = sum(map(len, self.candidates))
        return self._devices

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def key(self) -> tuple[str, str]:
        return (self.driver, self.name)


def _pool_key(s: Mapping[str, Any]) -> tuple[str, str]:
    return (str(slice_spec(s).get("driver", "")), str((slice_spec(s).get("pool") or {}).get("name", "")))


def _generation(s: Mapping[str, Any]) -> int:
    return int((slice_spec(s).get("pool") or {}).get("generation") or 0)


def _slice_count(s: Mapping[str, Any]) -> int:
    return int((slice_spec(s).get("pool") or {}).get("resourceSliceCount") or 0)


def gather_pools(
    slices_for_node: Iterable[Obj],
    node_name: str,
    labels: Mapping[str, str],
    features: Features | None = None,
    all_slices: Sequence[Obj] | None = None,
    cache: PoolCache | None = None,
) -> list[Pool]:
    """The pools with devices for this node (upstream's GatherPools): the slices of each pool's
    newest generation that reach the node; a pool missing slices of that generation is
    incomplete, one with duplicate device names or broken counters invalid. Sorted by driver and
    pool, the pools with binding conditions last. ``all_slices`` (default: ``slices_for_node``)
    is where a pool's other slices are looked for. ``cache`` keeps pools (and compiled node
    selectors) across nodes: a pool built of the same slice objects is the same pool."""
    features = features or Features()
    selectors = cache.selectors if cache is not None else None
    slices_for_node = list(slices_for_node)
    everything = slices_for_node if all_slices is None else all_slices
    pools: dict[tuple[str, str], list[Obj]] = {}
    for s in slices_for_node:
        spec = slice_spec(s)
        if not features.partitionable_devices and (
            spec.get("perDeviceNodeSelection") is not None or spec.get("sharedCounters")
        ):
            continue
        name, all_nodes, selector = spec.get("nodeName") or "", bool(spec.get("allNodes")), spec.get("nodeSelector")
        try:
            if name or all_nodes or selector is not None:
                relevant = node_matches(node_name, labels, name, all_nodes, selector, selectors)
            elif spec.get("perDeviceNodeSelection"):
                relevant = any(
                    node_matches(
                        node_name,
                        labels,
                        d.get("nodeName") or "",
                        bool(d.get("allNodes")),
                        d.get("nodeSelector"),
                        selectors,
                    )
                    for d in spec.get("devices") or ()
                )
            else:
                continue  # some future way of node selection: not for us
        except SelectorError as exc:
            raise AllocationError(
                f"gather pool information: failed to perform node selection for slice {(s.get('metadata') or {}).get('name', '')}: {exc}"
            ) from None
        if not relevant:
            continue
        key = _pool_key(s)
        have = pools.get(key)
        if have is None or _generation(s) > _generation(have[0]):
            pools[key] = [s]
        elif _generation(s) == _generation(have[0]):
            have.append(s)

    result: list[Pool] = []
    with_binding_conditions: list[Pool] = []
    for key, slices in pools.items():
        count = _slice_count(slices[0])
        whole: list[Obj] | None = None
        if len(slices) != count:
            obsolete, whole = _slices_in_pool(everything, key, _generation(slices[0]))
            if obsolete:
                continue  # the driver is replacing this generation; its newer one is not for us
            if len(whole) != count:
                result.append(Pool(key[0], key[1], _generation(slices[0]), incomplete=True))
                continue
        if cache is None:
            pool = _build_pool(key, slices, features, whole)
        else:
            identity = (key, features, tuple(map(id, slices)), None if whole is None else tuple(map(id, whole)))
            hit = cache.pools.get(identity)
            if hit is None:
                # The slices are kept beside the pool, so that their ids are not reused.
                hit = cache.pools[identity] = (slices, whole, _build_pool(key, slices, features, whole))
            pool = hit[2]
        if pool.binding_conditions:
            with_binding_conditions.append(pool)
        else:
            result.append(pool)
    result.sort(key=lambda p: p.key)
    with_binding_conditions.sort(key=lambda p: p.key)
    return result + with_binding_conditions


class Layout:
    """One set of slices (the same objects from one cycle to the next while none changes): the
    slices of each node, the cluster-wide ones, the views of them (:class:`NodeViews`), and the
    pools gathered for each view (filled by the allocators of the cycles that see this set)."""

    def __init__(self, slices: Sequence[Any]) -> None:
        #: The slices, kept alive: the set is known by their ids.
        self.slices = list(slices)
        self.on_node: dict[str, list[Any]] = {}
        self.shared: list[Any] = []
        for s in self.slices:
            name = slice_spec(s).get("nodeName") or ""
            if name:
                self.on_node.setdefault(name, []).append(s)
            else:
                self.shared.append(s)
        self.views = NodeViews(self.on_node, self.shared)
        self.pools: dict[ViewKey, list[Pool]] = {}
        #: (view, the requests' selections) -> (their classes, whether no device of the view's own
        #: pools is chosen by them): see ``AllocatorBase.view``.
        self.own_unused: dict[Any, tuple[tuple[Any, ...], bool]] = {}
        #: (pools, a request's selection and capacity request, features) -> its Walk, or that
        #: it was asked for once (see :mod:`.walks`).
        self.walks: dict[Any, Any] = {}


@dataclass
class PoolCache:
    """What :func:`gather_pools` may reuse from one node to the next, and from one scheduling
    cycle to the next: a pool built of the same slice objects is the same pool (a changed
    ResourceSlice is a new object, so its pool is built anew), a selector object compiles the
    same. :meth:`bound` keeps it from growing without end as slices change."""

    pools: dict[Any, tuple[list[Obj], list[Obj] | None, Pool]] = field(default_factory=dict)
    selectors: SelectorCache = field(default_factory=dict)
    #: (DeviceClass identity, the request's CEL selectors; device identity) -> what they say
    #: of the device. The device lives in a slice ``pools`` keeps, the class in ``classes``:
    #: their ids are not reused while the answer is kept.
    selected: dict[tuple[Any, int], bool] = field(default_factory=dict)
    classes: dict[int, Obj] = field(default_factory=dict)
    #: (capacity request as JSON, fractional ranges; device identity) -> whether the request
    #: fits the device when nobody uses it yet.
    capacity_fits: dict[tuple[Any, int], bool] = field(default_factory=dict)
    #: The same key -> what the request asks of each of the device's capacities
    #: (:func:`~kubesched.plugins.dynamicresources.capacity.demand`; ``None``: never fits), for a
    #: device some of whose capacity is taken already.
    capacity_demands: dict[tuple[Any, int], Any] = field(default_factory=dict)

    #: (features, the slices' ids) -> their Layout (see :meth:`layout`).
    layouts: dict[Any, Layout] = field(default_factory=dict)

    def layout(self, slices: Sequence[Obj], features: Features) -> Layout:
        """The :class:`Layout` of these slice objects (the same while none changes)."""
        key = (features, tuple(map(id, slices)))
        hit = self.layouts.get(key)
        if hit is None:
            if len(self.layouts) >= _LAYOUTS_LIMIT:
                self.layouts.clear()  # of slice sets changed since
            hit = self.layouts[key] = Layout(slices)
        return hit

    def bound(self, slices: int) -> None:
        """Start over when a part holds more than a cycle can use (the rest are of slices or
        classes changed or gone since): the pools (and what is keyed by their devices'
        identity) past the ``slices`` of a cycle, the classes (and the answers keyed by theirs)
        past as many classes as a cluster is likely to have, the answers past their own limit.
        Each part is dropped alone, so that a cluster of a thousand DeviceClasses (one per
        extended resource) does not rebuild its pools every few hundred pods."""
        limit = 4 * slices + 64
        if len(self.pools) > limit or len(self.selectors) > 4 * limit:
            self.pools.clear()
            self.selectors.clear()
            self.layouts.clear()
            self._drop_answers()
        if len(self.classes) > max(limit, _CLASSES_LIMIT):
            self.classes.clear()
            self.selected.clear()
        if len(self.selected) + len(self.capacity_fits) + len(self.capacity_demands) > _VERDICTS_LIMIT:
            self._drop_answers()

    def _drop_answers(self) -> None:
        self.selected.clear()
        self.capacity_fits.clear()
        self.capacity_demands.clear()


def _slices_in_pool(slices: Iterable[Obj], key: tuple[str, str], generation: int) -> tuple[bool, list[Obj]]:
    """Every slice of the pool with ``generation``, or (True, []) when a newer generation exists."""
    found = []
    for s in slices:
        if _pool_key(s) != key:
            continue
        g = _generation(s)
        if g == generation:
            found.append(s)
        elif g > generation:
            return True, []
    return False, found


def _build_pool(key: tuple[str, str], slices: list[Obj], features: Features, whole: list[Obj] | None) -> Pool:
    slices = sorted(slices, key=lambda s: str((s.get("metadata") or {}).get("name", "")))
    pool = Pool(key[0], key[1], _generation(slices[0]))
    counter_slices: list[Obj] = []
    for s in slices:
        if features.partitionable_devices and slice_spec(s).get("sharedCounters"):
            counter_slices.append(s)
        else:
            pool.slices.append(s)
    if whole is not None and len(slices) < len(whole):
        names = {(s.get("metadata") or {}).get("name") for s in slices}
        for s in whole:
            if (s.get("metadata") or {}).get("name") in names:
                continue
            if features.partitionable_devices and slice_spec(s).get("sharedCounters"):
                counter_slices.append(s)
            else:
                pool.elsewhere.append(s)
    reason = _duplicate_device(pool.slices)
    if not reason and features.partitionable_devices:
        reason = _counter_sets(counter_slices, pool.counter_sets)
        if not reason:
            reason = _check_consumption(pool.counter_sets, pool.slices) or _check_consumption(
                pool.counter_sets, pool.elsewhere
            )
    if reason:
        return Pool(key[0], key[1], pool.generation, invalid=True, invalid_reason=reason)
    pool.candidates = [
        [Candidate((key[0], key[1], str(d.get("name", ""))), d, s, pool) for d in slice_spec(s).get("devices") or ()]
        for s in pool.slices
    ]
    pool.binding_conditions = any(c.device.get("bindingConditions") is not None for row in pool.candidates for c in row)
    return pool


def _duplicate_device(slices: Iterable[Obj]) -> str:
    seen: set[str] = set()
    for s in slices:
        for d in slice_spec(s).get("devices") or ():
            name = str(d.get("name", ""))
            if name in seen:
                return f"duplicate device name {name}"
            seen.add(name)
    return ""


def _counter_sets(slices: Iterable[Obj], into: dict[str, dict[str, int]]) -> str:
    for s in slices:
        for cs in slice_spec(s).get("sharedCounters") or ():
            name = str(cs.get("name", ""))
            if name in into:
                return f"duplicate counter set name {name}"
            into[name] = {c: _nano((v or {}).get("value", "0")) for c, v in (cs.get("counters") or {}).items()}
    return ""


def _check_consumption(counter_sets: Mapping[str, Mapping[str, int]], slices: Iterable[Obj]) -> str:
    for s in slices:
        for d in slice_spec(s).get("devices") or ():
            for use in d.get("consumesCounters") or ():
                name = str(use.get("counterSet", ""))
                counters = counter_sets.get(name)
                if counters is None:
                    return f"counter set {name} not found"
                for c in use.get("counters") or {}:
                    if c not in counters:
                        return f"counter {c} not found in counter set {name}"
    return ""
