"""Structured-parameters allocation for DynamicResources, as kube-scheduler 1.37's allocator
(k8s.io/dynamic-resource-allocation/structured, the "incubating" implementation that 1.37's
default gates select): for one node, pick devices from the ResourceSlices that reach it for every
request of every claim still to allocate, by depth-first search with backtracking, first fit.

What a device must pass, in order: not in use (by an allocated claim, or by this allocation
unless it allows multiple allocations), the DeviceClass's and the request's CEL selectors, its
own node selection (``perDeviceNodeSelection``), enough capacity left (consumable capacity),
enough of the shared counters it consumes (partitionable devices), no untolerated NoSchedule or
NoExecute taint (its own or a DeviceTaintRule's), and the claim's ``matchAttribute`` and
``distinctAttribute`` constraints. A request is ``exactly`` one way (``ExactCount`` or ``All``
devices, admin access, tolerations, capacity requests) or lists ``firstAvailable`` alternatives
(the prioritized list, GA and locked on in 1.37): the first that can be met together with
everything else is taken, its results named ``request/subrequest``.

Each optional behaviour follows its 1.37 gate through :class:`Features` (all on by default, as
1.37 has them): DRAPartitionableDevices, DRADeviceTaints, DRADeviceTaintRules,
DRADeviceBindingConditions (with DRAResourceClaimDeviceStatus), DRAConsumableCapacity,
DRAFractionalCapacityRange. Not done: list-type attributes (DRAListTypeAttributes, alpha, off).
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from kubesched.framework.selectors import NodeSelector, SelectorError
from kubesched.plugins.dynamicresources import capacity as cap
from kubesched.plugins.dynamicresources.taints import RuleTaints, blocks

Obj = dict[str, Any]
DeviceID = tuple[str, str, str]  # driver, pool, device

#: Upstream's limit on the devices of one claim (resourceapi.AllocationResultsMaxSize).
ALLOCATION_RESULTS_MAX_SIZE = 32


class AllocationTimeout(Exception):
    """The search for one node took longer than its deadline (DynamicResourcesArgs.filterTimeout)."""


class AllocationError(Exception):
    """A claim or class that cannot be allocated anywhere (a broken CEL expression, an unknown
    mode, a constraint that ``allocationMode: All`` cannot meet): the scheduling attempt ends
    with an Error."""


class AllocationFailedOnNode(AllocationError):
    """A failure of this node only (upstream's ErrFailedAllocationOnNode: its invalid pools),
    which the plugin reports as the node's Unschedulable status, with this message, not as an
    Error of the whole attempt."""


class _TooManyDevices(Exception):
    """Upstream's errAllocationResultMaxSizeExceeded: this branch would give a claim more than
    ALLOCATION_RESULTS_MAX_SIZE devices, backtrack further."""


class CompileFailure(Exception):
    """A selector that does not compile (raised by the evaluate callback)."""


class RuntimeFailure(Exception):
    """A selector that fails on a device (raised by the evaluate callback)."""


class _Gates(Protocol):
    def enabled(self, name: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class Features:
    """The allocator's optional behaviours, each as its kube-scheduler 1.37 gate sets it (all on by
    default there). DRAAdminAccess and DRAPrioritizedList are GA and locked on in 1.37: always on."""

    partitionable_devices: bool = True
    device_taints: bool = True
    device_taint_rules: bool = True
    binding_conditions: bool = True
    consumable_capacity: bool = True
    fractional_capacity_range: bool = True

    @classmethod
    def from_gates(cls, gates: _Gates) -> Features:
        """The features of a FeatureGates (``handle.feature_gates``)."""
        return cls(
            partitionable_devices=gates.enabled("DRAPartitionableDevices"),
            device_taints=gates.enabled("DRADeviceTaints"),
            device_taint_rules=gates.enabled("DRADeviceTaints") and gates.enabled("DRADeviceTaintRules"),
            binding_conditions=gates.enabled("DRADeviceBindingConditions")
            and gates.enabled("DRAResourceClaimDeviceStatus"),
            consumable_capacity=gates.enabled("DRAConsumableCapacity"),
            fractional_capacity_range=gates.enabled("DRAFractionalCapacityRange"),
        )


@dataclass
class AllocatedState:
    """What allocated claims (and allocations in flight) hold, as upstream's AllocatedState:
    ``devices`` used whole, ``shared`` devices with at least one share (``shareID``), and the
    capacity their shares consume (``consumed``, per device and capacity name)."""

    devices: set[DeviceID] = field(default_factory=set)
    shared: set[DeviceID] = field(default_factory=set)
    consumed: dict[DeviceID, dict[str, Fraction]] = field(default_factory=dict)

    @classmethod
    def from_claims(cls, claims: Iterable[Mapping[str, Any]], consumable_capacity: bool = True) -> AllocatedState:
        """The state of ``claims`` (those without an allocation add nothing; admin access uses
        nothing; with consumable capacity a result with a ``shareID`` is one share)."""
        state = cls()
        for claim in claims:
            allocation = (claim.get("status") or {}).get("allocation") or {}
            for r in (allocation.get("devices") or {}).get("results") or ():
                state.add_result(r, consumable_capacity)
        return state

    def add_result(self, result: Mapping[str, Any], consumable_capacity: bool = True) -> None:
        if result.get("adminAccess"):
            return
        dev = (str(result.get("driver", "")), str(result.get("pool", "")), str(result.get("device", "")))
        if consumable_capacity and result.get("shareID"):
            self.shared.add(dev)
            consumed = result.get("consumedCapacity")
            if consumed:
                total = self.consumed.setdefault(dev, {})
                cap.add_to(total, {k: cap.amount_of(v).value for k, v in consumed.items()})
            return
        self.devices.add(dev)

    def holds(self, dev: DeviceID) -> bool:
        """Upstream's IsDeviceAllocated: used whole, or by at least one share."""
        return dev in self.devices or dev in self.shared or dev in self.consumed


def claim_key(claim: Mapping[str, Any]) -> str:
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name', '')}"


def _kobj(claim: Mapping[str, Any]) -> str:
    """A claim as upstream's messages name it (klog.KObj): ``namespace/name``, or ``name``."""
    meta = claim.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


def device_id_str(dev: DeviceID) -> str:
    return "/".join(dev)


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

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def key(self) -> tuple[str, str]:
        return (self.driver, self.name)


def _spec(s: Mapping[str, Any]) -> Mapping[str, Any]:
    return s.get("spec") or {}


def _pool_key(s: Mapping[str, Any]) -> tuple[str, str]:
    return (str(_spec(s).get("driver", "")), str((_spec(s).get("pool") or {}).get("name", "")))


def _generation(s: Mapping[str, Any]) -> int:
    return int((_spec(s).get("pool") or {}).get("generation") or 0)


def _slice_count(s: Mapping[str, Any]) -> int:
    return int((_spec(s).get("pool") or {}).get("resourceSliceCount") or 0)


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
        spec = _spec(s)
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
            identity = (key, tuple(map(id, slices)), None if whole is None else tuple(map(id, whole)))
            hit = cache.pools.get(identity)
            if hit is None:
                hit = cache.pools[identity] = _build_pool(key, slices, features, whole)
            pool = hit
        if pool.binding_conditions:
            with_binding_conditions.append(pool)
        else:
            result.append(pool)
    result.sort(key=lambda p: p.key)
    with_binding_conditions.sort(key=lambda p: p.key)
    return result + with_binding_conditions


@dataclass
class PoolCache:
    """What :func:`gather_pools` may reuse from one node to the next (one Allocator's slices)."""

    pools: dict[Any, Pool] = field(default_factory=dict)
    selectors: SelectorCache = field(default_factory=dict)


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
        if features.partitionable_devices and _spec(s).get("sharedCounters"):
            counter_slices.append(s)
        else:
            pool.slices.append(s)
    if whole is not None and len(slices) < len(whole):
        names = {(s.get("metadata") or {}).get("name") for s in slices}
        for s in whole:
            if (s.get("metadata") or {}).get("name") in names:
                continue
            if features.partitionable_devices and _spec(s).get("sharedCounters"):
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
        [Candidate((key[0], key[1], str(d.get("name", ""))), d, s, pool) for d in _spec(s).get("devices") or ()]
        for s in pool.slices
    ]
    pool.binding_conditions = any(c.device.get("bindingConditions") is not None for row in pool.candidates for c in row)
    return pool


def _duplicate_device(slices: Iterable[Obj]) -> str:
    seen: set[str] = set()
    for s in slices:
        for d in _spec(s).get("devices") or ():
            name = str(d.get("name", ""))
            if name in seen:
                return f"duplicate device name {name}"
            seen.add(name)
    return ""


def _counter_sets(slices: Iterable[Obj], into: dict[str, dict[str, int]]) -> str:
    for s in slices:
        for cs in _spec(s).get("sharedCounters") or ():
            name = str(cs.get("name", ""))
            if name in into:
                return f"duplicate counter set name {name}"
            into[name] = {c: _nano((v or {}).get("value", "0")) for c, v in (cs.get("counters") or {}).items()}
    return ""


def _check_consumption(counter_sets: Mapping[str, Mapping[str, int]], slices: Iterable[Obj]) -> str:
    for s in slices:
        for d in _spec(s).get("devices") or ():
            for use in d.get("consumesCounters") or ():
                name = str(use.get("counterSet", ""))
                counters = counter_sets.get(name)
                if counters is None:
                    return f"counter set {name} not found"
                for c in use.get("counters") or {}:
                    if c not in counters:
                        return f"counter {c} not found in counter set {name}"
    return ""


def _attribute(cand: Candidate, name: str) -> tuple[str, Any] | None:
    """The device's attribute ``name`` (fully qualified, or short in the driver's domain) as
    (type, value); ("", None) for a value of a type this allocator does not know."""
    attrs = cand.device.get("attributes") or {}
    value = attrs.get(name)
    if value is None:
        domain, sep, short = name.partition("/")
        if not sep or domain != cand.id[0]:
            return None
        value = attrs.get(short)
        if value is None:
            return None
    if isinstance(value, Mapping):
        for k in ("string", "int", "bool", "version"):
            if value.get(k) is not None:
                return (k, value[k])
    return ("", None)


class _Constraint:
    def __init__(self, requests: Iterable[str], attribute: str) -> None:
        self.requests = frozenset(requests)
        self.attribute = attribute

    def applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (bool(sub) and f"{base}/{sub}" in self.requests)

    def may_add(self, base: str, sub: str, cand: Candidate) -> bool:
        """Whether :meth:`add` would accept ``cand`` (no change made)."""
        raise NotImplementedError

    def add(self, base: str, sub: str, cand: Candidate) -> bool:
        raise NotImplementedError

    def remove(self, base: str, sub: str, cand: Candidate) -> None:
        raise NotImplementedError


class _MatchAttribute(_Constraint):
    """Every device of the named requests has the same value of the attribute."""

    def __init__(self, requests: Iterable[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.value: tuple[str, Any] | None = None
        self.count = 0

    def may_add(self, base: str, sub: str, cand: Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        value = _attribute(cand, self.attribute)
        if value is None:
            return False
        return self.count == 0 or (bool(value[0]) and value == self.value)

    def add(self, base: str, sub: str, cand: Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        value = _attribute(cand, self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.value, self.count = value, 1
            return True
        if not value[0] or value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str, cand: Candidate) -> None:
        if self.applies(base, sub):
            self.count -= 1


class _DistinctAttribute(_Constraint):
    """Devices of the named requests have different values of the attribute (as upstream, the
    values are remembered per request name)."""

    def __init__(self, requests: Iterable[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.values: dict[str, tuple[str, Any]] = {}
        self.count = 0

    def may_add(self, base: str, sub: str, cand: Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        value = _attribute(cand, self.attribute)
        if value is None:
            return False
        return not self.count or (bool(value[0]) and value not in self.values.values())

    def add(self, base: str, sub: str, cand: Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        value = _attribute(cand, self.attribute)
        if value is None:
            return False
        if self.count and (not value[0] or value in self.values.values()):
            return False
        self.values[base] = value
        self.count += 1
        return True

    def remove(self, base: str, sub: str, cand: Candidate) -> None:
        if self.applies(base, sub):
            self.values.pop(base, None)
            self.count -= 1


@dataclass
class _Request:
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

    @property
    def full_name(self) -> str:
        return f"{self.parent}/{self.name}" if self.parent else self.name

    @property
    def base(self) -> str:
        return self.parent or self.name

    @property
    def sub(self) -> str:
        return self.name if self.parent else ""


@dataclass
class _Picked:
    req: _Request
    cand: Candidate
    share_id: str | None = None
    consumed: dict[str, cap.Amount] | None = None


class Allocator:
    """Allocates ``claims`` (unallocated) on one node at a time.

    ``allocated``: the devices allocated claims (and allocations in flight) use whole; admin
    access results excluded. Keyword arguments, each with 1.37's default:

    * ``features``: :class:`Features`, or the FeatureGates to read them from (default: 1.37's);
    * ``device_taint_rules``: the DeviceTaintRule objects whose taints apply to devices;
    * ``shared``: devices with at least one share allocated (results with a ``shareID``);
    * ``consumed_capacity``: per device, the capacity those shares consume.

    :meth:`AllocatedState.from_claims` computes ``allocated``, ``shared`` and
    ``consumed_capacity`` from the claims."""

    def __init__(
        self,
        claims: Sequence[Obj],
        allocated: set[DeviceID],
        classes: Mapping[str, Obj],
        slices: Sequence[Obj],
        evaluate: Callable[[str, str, Obj], bool],
        *,
        features: Features | _Gates | None = None,
        device_taint_rules: Iterable[Mapping[str, Any]] = (),
        shared: Iterable[DeviceID] = (),
        consumed_capacity: Mapping[DeviceID, Mapping[str, Fraction]] | None = None,
    ) -> None:
        self.claims = list(claims)
        self.allocated = allocated
        self.classes = classes
        self.slices = slices
        self._evaluate = evaluate
        if features is None:
            features = Features()
        elif not isinstance(features, Features):
            features = Features.from_gates(features)
        self.features = features
        self.state = AllocatedState(allocated, set(shared), {k: dict(v) for k, v in (consumed_capacity or {}).items()})
        self.rule_taints = RuleTaints(device_taint_rules if features.device_taint_rules else ())
        self._on_node: dict[str, list[Obj]] = {}
        self._shared_slices: list[Obj] = []
        for s in slices:
            name = _spec(s).get("nodeName") or ""
            if name:
                self._on_node.setdefault(name, []).append(s)
            else:
                self._shared_slices.append(s)
        #: Per pool: its counters left after the allocated devices (computed once, as upstream).
        self._available: dict[tuple[str, str], tuple[dict[str, dict[str, int]], bool]] = {}
        #: How many times the search looked for one device (upstream's NumAllocateOneInvocations).
        self.invocations = 0
        self.pool_cache = PoolCache()
        #: Per (request, device object): what the CEL selectors say, for every node.
        self.selected: dict[tuple[tuple[int, int, int], int], bool] = {}
        #: Per (request, device object): whether the capacity fits a device nobody uses yet.
        self.capacity_fits: dict[tuple[tuple[int, int, int], int], bool] = {}

    def allocate(self, node_name: str, labels: Mapping[str, str], deadline: float | None = None) -> list[Obj] | None:
        """One allocation result per claim, or ``None`` when they do not all fit on this node.
        Past ``deadline`` (``time.monotonic()``), the search gives up: AllocationTimeout. Raises
        :class:`AllocationError` for what fails on every node, :class:`AllocationFailedOnNode`
        for what fails on this one."""
        return _Search(self, node_name, labels, deadline).run()

    # --- per pool, shared by every node ------------------------------------------------------
    def available_counters(self, pool: Pool) -> tuple[dict[str, dict[str, int]], bool]:
        """The pool's counters left after the allocated devices (on any node), and whether one
        of them is overdrawn already (then no device drawing on the pool fits, as upstream)."""
        have = self._available.get(pool.key)
        if have is None:
            left = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            for s in (*pool.slices, *pool.elsewhere):
                for d in _spec(s).get("devices") or ():
                    if not self.state.holds((pool.driver, pool.name, str(d.get("name", "")))):
                        continue
                    for set_name, c, value in Candidate((pool.driver, pool.name, ""), d, s).uses:
                        counters = left.get(set_name)
                        if counters is not None and c in counters:
                            counters[c] -= value
            overdrawn = any(v < 0 for counters in left.values() for v in counters.values())
            have = (left, overdrawn)
            self._available[pool.key] = have
        return have

    def taints(self, cand: Candidate) -> Sequence[Obj]:
        own: Sequence[Obj] = cand.device.get("taints") or ()
        if self.rule_taints:
            added = self.rule_taints.of(cand.id)
            if added:
                return [*own, *added]
        return own


class _Search:
    """The state of one :meth:`Allocator.allocate` call."""

    def __init__(self, a: Allocator, node_name: str, labels: Mapping[str, str], deadline: float | None) -> None:
        self.a = a
        self.f = a.features
        self.node_name = node_name
        self.labels = labels
        self.deadline = deadline
        self.pools: list[Pool] = []
        self.requests: dict[tuple[int, int, int], _Request] = {}
        self.selected: dict[tuple[int, int], int] = {}
        self.constraints: list[list[_Constraint]] = []
        self.memo: dict[tuple[tuple[int, int, int], DeviceID], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        self.counters: dict[tuple[str, str], dict[str, dict[str, int]]] = {}
        self.results: list[list[_Picked]] = [[] for _ in a.claims]
        self._requests: list[Sequence[Obj]] = [
            (((c.get("spec") or {}).get("devices")) or {}).get("requests") or () for c in a.claims
        ]

    def _requests_of(self, ci: int) -> Sequence[Obj]:
        return self._requests[ci]

    def run(self) -> list[Obj] | None:
        a = self.a
        slices_for_node = [*a._on_node.get(self.node_name, ()), *a._shared_slices]
        self.pools = gather_pools(slices_for_node, self.node_name, self.labels, self.f, a.slices, a.pool_cache)
        for ci, claim in enumerate(a.claims):
            minimum = 0
            for ri, r in enumerate(self._requests_of(ci)):
                name = str(r.get("name", ""))
                subrequests = r.get("firstAvailable") or ()
                if not self.f.consumable_capacity:
                    if (r.get("exactly") or {}).get("capacity") is not None:
                        raise AllocationError(
                            f"claim {_kobj(claim)}, request {name}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
                        )
                    for sub in subrequests:
                        if sub.get("capacity") is not None:
                            raise AllocationError(
                                f"claim {_kobj(claim)}, subrequest {sub.get('name', '')}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
                            )
                if subrequests:
                    counts = []
                    for si, sub in enumerate(subrequests):
                        req = self._validate((ci, ri, si), claim, str(sub.get("name", "")), name, sub)
                        self.requests[req.key] = req
                        counts.append(req.count)
                    minimum += min(counts)
                else:
                    req = self._validate((ci, ri, 0), claim, name, "", r.get("exactly") or {})
                    self.requests[req.key] = req
                    minimum += req.count
            if minimum > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {_kobj(claim)}: number of requested devices {minimum} exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            mine: list[_Constraint] = []
            for i, c in enumerate(((claim.get("spec") or {}).get("devices") or {}).get("constraints") or ()):
                if c.get("matchAttribute"):
                    mine.append(_MatchAttribute(c.get("requests") or (), str(c["matchAttribute"])))
                elif c.get("distinctAttribute"):
                    mine.append(_DistinctAttribute(c.get("requests") or (), str(c["distinctAttribute"])))
                else:
                    raise AllocationError(
                        f"claim {_kobj(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints.append(mine)

        if not self._one(0, 0, 0, 0, False, (0, 0, 0)):
            if any(p.invalid for p in self.pools):
                raise AllocationFailedOnNode("invalid resource pools were encountered")
            return None
        return [self._result(ci, claim) for ci, claim in enumerate(a.claims)]

    # --- requests ----------------------------------------------------------------------------
    def _validate(
        self, key: tuple[int, int, int], claim: Obj, name: str, parent: str, spec: Mapping[str, Any]
    ) -> _Request:
        where = f"claim {_kobj(claim)}, request {name}"
        selectors = []
        for i, s in enumerate(spec.get("selectors") or ()):
            expression = (s.get("cel") or {}).get("expression")
            if not expression:
                raise AllocationError(f"{where}, selector #{i}: CEL expression empty (unsupported selector type?)")
            selectors.append(str(expression))
        class_name = spec.get("deviceClassName") or ""
        if not class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        cls = self.a.classes.get(class_name)
        if cls is None:
            raise AllocationError(
                f'{where}: could not retrieve device class {class_name}: deviceclass.resource.k8s.io "{class_name}" not found'
            )
        mode = spec.get("allocationMode") or "ExactCount"
        req = _Request(
            key,
            name,
            parent,
            cls,
            selectors,
            bool(spec.get("adminAccess")) and not parent,
            [dict(t) for t in spec.get("tolerations") or ()],
            spec.get("capacity"),
            mode,
        )
        if mode == "ExactCount":
            req.count = int(spec.get("count") or 1)
        elif mode == "All":
            req.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"{where}: asks for all devices, but resource pool {pool.pool_id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"{where}: asks for all devices, but resource pool {pool.pool_id} is currently invalid"
                    )
                for row in pool.candidates:
                    for cand in row:
                        if self._selectable(req, cand) and (
                            not self.f.consumable_capacity or self._capacity_fits(req, cand)
                        ):
                            req.all_devices.append(cand)
            req.count = len(req.all_devices)
        else:
            raise AllocationError(f"{where}: unsupported count mode {mode}")
        return req

    # --- the search (upstream's allocateOne) ----------------------------------------------------
    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int, int]) -> bool:
        self.a.invocations += 1
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimeout(self.node_name)
        if ci >= len(self.a.claims):
            return True
        if ri >= len(self._requests_of(ci)):
            try:
                return self._one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except _TooManyDevices:
                # Another way to allocate the claims before may need fewer devices here.
                return False
        req = self.requests[(ci, ri, si)]
        if not in_sub and req.parent:
            every_one_too_many = True
            k = 0
            while (ci, ri, k) in self.requests:
                try:
                    ok = self._one(ci, ri, k, di, True, (0, 0, 0))
                except _TooManyDevices:
                    k += 1
                    continue
                every_one_too_many = False
                if ok:
                    self.selected[(ci, ri)] = k
                    return True
                k += 1
            if every_one_too_many:
                raise _TooManyDevices
            return False

        if req.all_devices is not None and not req.all_devices:
            return False  # "All" needs at least one device
        if di >= req.count:
            return self._one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if len(self.results[ci]) + req.count - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _TooManyDevices

        if req.all_devices is not None:
            undo = self._take(ci, req, req.all_devices[di], must=True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, di + 1, in_sub, (0, 0, 0))
            except _TooManyDevices:
                undo()
                raise
            if not done:
                undo()
            return done

        constraints = self.constraints[ci]
        # The loop below runs for every device of every pool on every node: locals, not lookups.
        selectable = req.selectable
        in_use = self.a.state.devices
        allocating = self.allocating
        consumable = self.f.consumable_capacity
        admin = req.admin_access
        base, sub = req.base, req.sub
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            first_slice = start[1] if pi == start[0] else 0
            for sli in range(first_slice, len(pool.candidates)):
                row = pool.candidates[sli]
                first_device = start[2] if (pi == start[0] and sli == start[1]) else 0
                for dvi in range(first_device, len(row)):
                    cand = row[dvi]
                    if admin:
                        if ci in allocating.get(cand.id, ()):
                            continue
                    elif cand.id in in_use or allocating.get(cand.id):
                        continue
                    known = selectable.get(id(cand))
                    if known is None:
                        known = selectable[id(cand)] = self._selectable(req, cand)
                    if not known:
                        continue
                    if (
                        consumable
                        and (req.capacity is not None or "capacity" in cand.device)
                        and not self._capacity_fits(req, cand)
                    ):
                        continue
                    # Cheap before the counters: a device another device's constraint rules out.
                    if constraints and not all(c.may_add(base, sub, cand) for c in constraints):
                        continue
                    undo = self._take(ci, req, cand, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._one(ci, ri, si, di + 1, in_sub, (pi, sli, dvi + 1))
                    except _TooManyDevices:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _in_use(self, dev: DeviceID) -> bool:
        return dev in self.a.state.devices or bool(self.allocating.get(dev))

    # --- one device --------------------------------------------------------------------------
    def _selectable(self, req: _Request, cand: Candidate) -> bool:
        device = cand.device
        if not self.f.binding_conditions and device.get("bindingConditions"):
            return False
        key = (req.key, cand.id)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        # What the selectors say does not depend on the node: remembered for every node.
        shared_key = (req.key, id(device))
        ok = self.a.selected.get(shared_key)
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
            self.a.selected[shared_key] = ok
        if ok and _spec(cand.slice).get("perDeviceNodeSelection"):
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

    def _selectors_match(self, req: _Request, cls: Obj | None, selectors: Sequence[str], cand: Candidate) -> bool:
        claim = self.a.claims[req.key[0]]
        where = f"class {cls['metadata']['name']}" if cls is not None else f"claim {_kobj(claim)}"
        for i, expression in enumerate(selectors):
            try:
                ok = self.a._evaluate(expression, cand.id[0], cand.device)
            except CompileFailure as exc:
                raise AllocationError(f"{where}: selector #{i}: CEL compile error: {exc}") from None
            except RuntimeFailure as exc:
                raise AllocationError(
                    f"{where}: selector #{i} on device {device_id_str(cand.id)}: CEL runtime error: {exc}"
                ) from None
            if not ok:
                return False
        return True

    def _capacity_fits(self, req: _Request, cand: Candidate) -> bool:
        in_use = self.a.state.consumed.get(cand.id)
        allocating = self.allocating_capacity.get(cand.id)
        key = (req.key, id(cand.device))
        if in_use is None and allocating is None:
            # Nothing taken of the device yet: the answer depends on the request and device alone.
            hit = self.a.capacity_fits.get(key)
            if hit is not None:
                return hit
        try:
            ok = cap.fits(req.capacity, cand.device, in_use, allocating, self.f.fractional_capacity_range)
        except cap.CapacityError:
            ok = False
        if in_use is None and allocating is None:
            self.a.capacity_fits[key] = ok
        return ok

    def _take(self, ci: int, req: _Request, cand: Candidate, must: bool) -> Callable[[], None] | None:
        """Upstream's allocateDevice: hold ``cand`` for ``req`` if it is free, tolerated, within
        the counters and the constraints; the callable returned undoes it."""
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
                        f"claim {_kobj(self.a.claims[ci])}, request {req.name}: cannot add device {device_id_str(cand.id)} because a claim constraint would not be satisfied"
                    )
                return None
        if not multi:
            self.allocating.setdefault(cand.id, set()).add(ci)
        picked = _Picked(req, cand)
        if multi:
            picked.consumed = cap.consumption(req.capacity, device, self.f.fractional_capacity_range)
            picked.share_id = str(uuid.uuid4())
            cap.add_to(self.allocating_capacity.setdefault(cand.id, {}), _values(picked.consumed))
        self.results[ci].append(picked)

        def undo() -> None:
            for c in constraints:
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

        return undo

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

    # --- the result --------------------------------------------------------------------------
    def _result(self, ci: int, claim: Obj) -> Obj:
        device_results = []
        for p in self.results[ci]:
            entry: Obj = {
                "request": p.req.full_name,
                "driver": p.cand.id[0],
                "pool": p.cand.id[1],
                "device": p.cand.id[2],
            }
            if p.req.admin_access:
                entry["adminAccess"] = True
            if p.req.tolerations:
                entry["tolerations"] = [dict(t) for t in p.req.tolerations]
            if self.f.binding_conditions:
                for k in ("bindingConditions", "bindingFailureConditions"):
                    if p.cand.device.get(k):
                        entry[k] = list(p.cand.device[k])
            if p.share_id is not None:
                entry["shareID"] = p.share_id
            if p.consumed:
                entry["consumedCapacity"] = {k: v.text for k, v in p.consumed.items()}
            device_results.append(entry)
        devices: Obj = {"results": device_results}
        config = self._config(ci, claim)
        if config:
            devices["config"] = config
        result: Obj = {"devices": devices}
        try:
            selector = _node_selector(self.results[ci], self.node_name)
        except ValueError as exc:
            raise AllocationError(
                f"create NodeSelector for claim {(claim.get('metadata') or {}).get('name', '')}: {exc}"
            ) from None
        if selector is not None:
            result["nodeSelector"] = selector
        return result

    def _chosen(self, ci: int, ri: int) -> _Request:
        req = self.requests[(ci, ri, 0)]
        if req.parent:
            req = self.requests[(ci, ri, self.selected.get((ci, ri), 0))]
        return req

    def _config(self, ci: int, claim: Obj) -> list[Obj]:
        config: list[Obj] = []
        requests = self._requests_of(ci)
        by_class: dict[str, tuple[int, int]] = {}
        for ri in range(len(requests)):
            req = self._chosen(ci, ri)
            cls = req.class_obj
            if cls is None:
                continue
            name = cls["metadata"]["name"]
            if name in by_class:
                lo, hi = by_class[name]
                for entry in config[lo:hi]:
                    entry["requests"].append(req.full_name)
                continue
            lo = len(config)
            for c in (cls.get("spec") or {}).get("config") or ():
                config.append(
                    {
                        "source": "FromClass",
                        "requests": [req.full_name],
                        **{k: v for k, v in c.items() if k != "requests"},
                    }
                )
            by_class[name] = (lo, len(config))
        for c in ((claim.get("spec") or {}).get("devices") or {}).get("config") or ():
            wanted = list(c.get("requests") or ())
            entry = {"source": "FromClaim", **{k: v for k, v in c.items() if k != "requests"}}
            if not wanted:
                config.append(entry)
                continue
            for ri, r in enumerate(requests):
                req = self._chosen(ci, ri)
                if r.get("name") in wanted or (req.parent and req.full_name in wanted):
                    config.append({**entry, "requests": wanted})
                    break
        # A config for every request says so by naming none ("empty means all").
        for entry in config:
            names = entry.get("requests")
            if not names:
                continue
            if all(r.get("name") in names or self._chosen(ci, ri).full_name in names for ri, r in enumerate(requests)):
                entry.pop("requests")
        return config


def _values(amounts: Mapping[str, cap.Amount]) -> dict[str, Fraction]:
    return {k: v.value for k, v in amounts.items()}


def _node_selector(picked: Iterable[_Picked], node_name: str) -> Obj | None:
    """Where the allocated devices are reachable (upstream's createNodeSelector): the node
    itself when one is local to it or binds to it, else the requirements of every node selector
    (one term), else anywhere (``None``)."""
    fields: list[Obj] = []
    expressions: list[Obj] = []
    for p in picked:
        spec = _spec(p.cand.slice)
        if spec.get("perDeviceNodeSelection"):
            name, selector = p.cand.device.get("nodeName"), p.cand.device.get("nodeSelector")
        else:
            name, selector = spec.get("nodeName"), spec.get("nodeSelector")
        if name or p.cand.device.get("bindsToNode"):
            return {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            }
        if selector is not None:
            terms = selector.get("nodeSelectorTerms") or []
            if len(terms) > 1:
                raise ValueError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
            if terms:
                _add_requirements(terms[0].get("matchFields") or (), fields)
                _add_requirements(terms[0].get("matchExpressions") or (), expressions)
    if not fields and not expressions:
        return None
    term: Obj = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _add_requirements(new: Iterable[Obj], into: list[Obj]) -> None:
    for r in new:
        values = set(r.get("values") or ())
        if not any(
            have.get("key") == r.get("key")
            and have.get("operator") == r.get("operator")
            and set(have.get("values") or ()) == values
            for have in into
        ):
            into.append(dict(r))
