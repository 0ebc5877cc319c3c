"""The allocator's terms, shared by its parts and its callers: how a device is named, the 1.37
feature gates it follows (:class:`Features`), the errors it raises, and what allocated claims
hold (:class:`AllocatedState`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from kubesched.plugins.dynamicresources import capacity as cap

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


class CompileFailure(Exception):
    """A selector that does not compile (raised by the evaluate callback)."""


class RuntimeFailure(Exception):
    """A selector that fails on a device (raised by the evaluate callback)."""


class Gates(Protocol):
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
    def from_gates(cls, gates: Gates) -> Features:
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


class ValidatedRequest(NamedTuple):
    """What validating an exact-count request (or subrequest) gives that no node changes: kept
    by an allocator once its first node's search validated it (see ``Search._validate``)."""

    name: str
    parent: str
    class_obj: Any
    selectors: list[str]
    admin_access: bool
    tolerations: list[Any]
    capacity: Mapping[str, Any] | None
    devices: int
    selection: tuple[int, tuple[str, ...]]
    capacity_key: tuple[str, bool]


@dataclass
class AllocatedState:
    """What allocated claims (and allocations in flight) hold, as upstream's AllocatedState:
    ``devices`` used whole, ``shared`` devices with at least one share (``shareID``), and the
    capacity their shares consume (``consumed``, per device and capacity name)."""

    devices: set[DeviceID] = field(default_factory=set)
    shared: set[DeviceID] = field(default_factory=set)
    consumed: dict[DeviceID, dict[str, cap.Exact]] = field(default_factory=dict)
    #: Per pool (driver, name): a number that changes whenever what its devices hold changes,
    #: unique to that pool's state in the sum that made this state (``None`` for a pool of
    #: which nothing was ever held there); what depends only on a pool's holdings may be kept
    #: under it across attempts. ``None``: not known (a state made by adding claims up).
    versions: dict[tuple[str, str], int] | None = field(default=None, compare=False)

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

    def merge(self, other: AllocatedState) -> None:
        """Add what ``other`` holds (as if its claims' results were added here)."""
        if other.devices:
            self.devices |= other.devices
        if other.shared:
            self.shared |= other.shared
        for dev, consumed in other.consumed.items():
            cap.add_to(self.consumed.setdefault(dev, {}), consumed)

    def holds(self, dev: DeviceID) -> bool:
        """Upstream's IsDeviceAllocated: used whole, or by at least one share."""
        return dev in self.devices or dev in self.shared or dev in self.consumed


def slice_spec(s: Mapping[str, Any]) -> Mapping[str, Any]:
    return s.get("spec") or {}


def claim_key(claim: Mapping[str, Any]) -> str:
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name', '')}"


def kobj(claim: Mapping[str, Any]) -> str:
    """A claim as upstream's messages name it (klog.KObj): ``namespace/name``, or ``name``."""
    meta = claim.get("metadata") or {}
    ns = meta.get("namespace") or ""
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


def device_id_str(dev: DeviceID) -> str:
    return "/".join(dev)
