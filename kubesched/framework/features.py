"""Feature gates: kube-scheduler 1.37's scheduler gates, their stages and defaults, and the
kube-apiserver gates of the pod fields the simulated API server validates.

kubesched keeps upstream's gate names and 1.37's defaults (its versioned gate table): a
behaviour that upstream switches with a gate is switched here by the same name, a gate
locked to its default in 1.37 cannot be set to the other value, and a gate on whose
dependencies are off is refused as component-base refuses it. The scheduler reads them from
``SchedulerOptions.feature_gates``; a plugin reads them from its handle::

    if handle.feature_gates.enabled("DRAPartitionableDevices"):
        ...

``--feature-gates`` (kubesched.config.feature_gates) parses the command-line form.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

from kubesched.errors import ConfigurationError

Stage = Literal["Alpha", "Beta", "GA"]


@dataclass(frozen=True, slots=True)
class GateSpec:
    """One gate as 1.37 has it: its stage, its default, and whether it is locked there."""

    name: str
    stage: Stage
    default: bool
    locked: bool = False


def _gate(name: str, stage: Stage, default: bool, locked: bool = False) -> GateSpec:
    return GateSpec(name, stage, default, locked)


#: The scheduler's gates in kube-scheduler 1.37, as its versioned table has them at 1.37, the
#: two gates of the debugging pages every component serves, and the gates of other components
#: the simulator follows (kube-apiserver's pod fields, kube-controller-manager's Job workloads).
GATES: dict[str, GateSpec] = {
    g.name: g
    for g in (
        # kube-apiserver's: a binding clears status.nominatedNodeName (the simulator's store).
        _gate("ClearingNominatedNodeNameAfterBinding", "Beta", True),
        _gate("CompositePodGroup", "Alpha", False),
        # component-base's debugging pages, which kube-scheduler serves (/flagz, /statusz).
        _gate("ComponentFlagz", "Beta", True),
        _gate("ComponentStatusz", "Beta", True),
        # kube-apiserver's (and the kubelet's): a container's restartPolicy and
        # restartPolicyRules, dropped on create while off (pkg/api/pod dropDisabledFields).
        _gate("ContainerRestartRules", "Beta", True),
        _gate("DRAAdminAccess", "GA", True, locked=True),
        _gate("DRAConsumableCapacity", "Beta", True),
        _gate("DRADerivedAttributes", "Alpha", False),
        _gate("DRADeviceBindingConditions", "Beta", True),
        _gate("DRADeviceCompatibilityGroups", "Alpha", False),
        _gate("DRADeviceTaintRules", "GA", True),
        _gate("DRADeviceTaints", "GA", True),
        _gate("DRAExtendedResource", "GA", True, locked=True),
        _gate("DRAFractionalCapacityRange", "Beta", True),
        _gate("DRAListTypeAttributes", "Alpha", False),
        _gate("DRANodeAllocatableResources", "Alpha", False),
        _gate("DRAOptionalNodeOperations", "Alpha", False),
        _gate("DRAPartitionableDevices", "Beta", True),
        _gate("DRAPrioritizedList", "GA", True, locked=True),
        _gate("DRAResourceClaimDeviceStatus", "GA", True, locked=True),
        _gate("DRASchedulerFilterTimeout", "Beta", True),
        _gate("DRAWorkloadResourceClaims", "Beta", False),
        _gate("DynamicResourceAllocation", "GA", True, locked=True),
        _gate("GenericWorkload", "Beta", False),
        _gate("InPlacePodLevelResourcesVerticalScaling", "Beta", True),
        _gate("InPlacePodVerticalScaling", "GA", True, locked=True),
        _gate("InPlacePodVerticalScalingSchedulerPreemption", "Alpha", False),
        _gate("InterPodAffinityHostnameFastPath", "Alpha", False),
        _gate("MatchLabelKeysInPodTopologySpread", "Beta", True),
        _gate("NodeDeclaredFeatures", "GA", True, locked=True),
        _gate("NodeInclusionPolicyInPodTopologySpread", "GA", True, locked=True),
        _gate("NominatedNodeNameForExpectation", "Beta", True),
        _gate("OpportunisticBatching", "Beta", True),
        _gate("PodGroupPreemptionPolicy", "Alpha", False),
        _gate("PodLevelResources", "Beta", True),
        # kube-apiserver's (and the kubelet's): the RestartAllContainers action of a restart
        # rule, and rules on sidecars; refused while off (beta and on since 1.36).
        _gate("RestartAllContainersOnContainerExits", "Beta", True),
        _gate("SchedulerAsyncAPICalls", "Beta", False),
        _gate("SchedulerAsyncPreemption", "Beta", True),
        _gate("SchedulerPopFromBackoffQ", "Beta", True),
        _gate("SchedulerPreQueueingHints", "Alpha", False),
        _gate("StorageCapacityScoring", "Beta", True),
        _gate("TaintTolerationComparisonOperators", "Alpha", False),
        _gate("TopologyAwareWorkloadScheduling", "Alpha", False),
        _gate("VolumeAttributesClass", "GA", True, locked=True),
        _gate("VolumeLimitScaling", "Beta", True),
        # kube-controller-manager's: the Job controller makes Workloads and PodGroups (the
        # simulator's controllers act on it; it needs GenericWorkload).
        _gate("WorkloadWithJob", "Alpha", False),
    )
}

#: Gates that need others on (component-base's feature dependencies, pkg/features 1.37): a
#: gate on with one of these off is refused, as every component refuses to start with it.
DEPENDENCIES: dict[str, tuple[str, ...]] = {
    # "All restart rules will be dropped by API if ContainerRestartRules feature is not enabled."
    "RestartAllContainersOnContainerExits": ("ContainerRestartRules", "NodeDeclaredFeatures"),
}


class FeatureGates(Mapping[str, bool]):
    """Every gate of :data:`GATES` with its value: 1.37's default unless ``overrides`` sets it.

    Immutable. An unknown name, a locked gate set away from its default, or a gate on whose
    :data:`DEPENDENCIES` are not all on, is refused with a
    :class:`~kubesched.errors.ConfigurationError` naming the gate (upstream's words for the
    last two)."""

    __slots__ = ("_values",)

    def __init__(self, overrides: Mapping[str, bool] | None = None) -> None:
        values = {name: spec.default for name, spec in GATES.items()}
        for name, value in (overrides or {}).items():
            spec = GATES.get(name)
            if spec is None:
                raise ConfigurationError(f"unrecognized feature gate: {name}")
            if spec.locked and value != spec.default:
                raise ConfigurationError(
                    f"cannot set feature gate {name} to {str(value).lower()}, "
                    f"feature is locked to {str(spec.default).lower()}"
                )
            values[name] = bool(value)
        for name, needs in DEPENDENCIES.items():
            off = [dep for dep in needs if not values[dep]]
            if values[name] and off:
                # component-base featuregate: fmt's %v of a []Feature.
                raise ConfigurationError(
                    f"{name} is enabled, but depends on features that are disabled: [{' '.join(off)}]"
                )
        self._values = values

    def enabled(self, name: str) -> bool:
        """Whether gate ``name`` is on. An unknown name is a programming error: KeyError."""
        try:
            return self._values[name]
        except KeyError:
            raise KeyError(f"unknown feature gate {name!r}") from None

    def changed(self) -> dict[str, bool]:
        """The gates whose value differs from 1.37's default."""
        return {n: v for n, v in self._values.items() if v != GATES[n].default}

    def replace(self, **values: bool) -> FeatureGates:
        """A copy with ``values`` set on top of this one's."""
        return FeatureGates({**self.changed(), **values})

    def __getitem__(self, name: str) -> bool:
        return self.enabled(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        changed = ",".join(f"{n}={str(v).lower()}" for n, v in sorted(self.changed().items()))
        return f"FeatureGates({changed or '1.37 defaults'})"

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items())))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FeatureGates):
            return self._values == other._values
        return super().__eq__(other)
