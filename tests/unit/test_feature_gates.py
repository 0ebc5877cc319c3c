"""The feature gates of kube-scheduler 1.37 (kubesched.framework.features)."""

from __future__ import annotations

import pytest

from kubesched.errors import ConfigurationError
from kubesched.framework.features import DEPENDENCIES, GATES, FeatureGates
from kubesched.runtime.framework import Framework
from kubesched.runtime.profile import PluginRef, ProfileSpec
from kubesched.runtime.registry import Registry
from kubesched.scheduler import SchedulerOptions

#: On by default in 1.37, from upstream's versioned gate table.
ON_IN_1_37 = (
    "PodLevelResources InPlacePodLevelResourcesVerticalScaling NominatedNodeNameForExpectation "
    "OpportunisticBatching SchedulerPopFromBackoffQ SchedulerAsyncPreemption StorageCapacityScoring "
    "VolumeLimitScaling NodeDeclaredFeatures DRAPrioritizedList DRAConsumableCapacity "
    "DRAFractionalCapacityRange DRADeviceBindingConditions DRADeviceTaints DRADeviceTaintRules "
    "DRAExtendedResource DRAPartitionableDevices DRAResourceClaimDeviceStatus DRASchedulerFilterTimeout "
    # kube-apiserver's, for the pod fields the simulated API server checks (beta, on)
    "ContainerRestartRules RestartAllContainersOnContainerExits"
).split()
#: Off by default in 1.37 (alpha, or beta on an off-by-default API).
OFF_IN_1_37 = (
    "SchedulerAsyncAPICalls TaintTolerationComparisonOperators DRAListTypeAttributes GenericWorkload "
    "DRAWorkloadResourceClaims TopologyAwareWorkloadScheduling CompositePodGroup PodGroupPreemptionPolicy"
).split()


@pytest.mark.parametrize("name", ON_IN_1_37)
def test_on_by_default_in_1_37(name: str) -> None:
    assert FeatureGates().enabled(name) is True


@pytest.mark.parametrize("name", OFF_IN_1_37)
def test_off_by_default_in_1_37(name: str) -> None:
    assert FeatureGates().enabled(name) is False


def test_every_gate_can_be_read_and_the_unlocked_ones_switched() -> None:
    for name, spec in GATES.items():
        if spec.locked:
            continue
        flip = {name: not spec.default}
        if spec.default:
            # A gate switched off takes the gates that need it along (component-base's dependencies).
            flip.update({dependent: False for dependent, needs in DEPENDENCIES.items() if name in needs})
        gates = FeatureGates(flip)
        assert gates.enabled(name) is (not spec.default)
        assert gates.changed() == flip


def test_a_gate_whose_dependency_is_off_is_refused_as_upstream_refuses_it() -> None:
    assert DEPENDENCIES["RestartAllContainersOnContainerExits"] == ("ContainerRestartRules", "NodeDeclaredFeatures")
    with pytest.raises(
        ConfigurationError,
        match=r"RestartAllContainersOnContainerExits is enabled, but depends on features that are disabled: "
        r"\[ContainerRestartRules\]",
    ):
        FeatureGates({"ContainerRestartRules": False})
    gates = FeatureGates({"ContainerRestartRules": False, "RestartAllContainersOnContainerExits": False})
    with pytest.raises(ConfigurationError, match="depends on features that are disabled"):
        gates.replace(RestartAllContainersOnContainerExits=True)


def test_locked_and_unknown_gates_are_refused_by_name() -> None:
    with pytest.raises(
        ConfigurationError, match="cannot set feature gate DRAPrioritizedList to false, feature is locked to true"
    ):
        FeatureGates({"DRAPrioritizedList": False})
    with pytest.raises(ConfigurationError, match="unrecognized feature gate: NoSuchGate"):
        FeatureGates({"NoSuchGate": True})
    with pytest.raises(KeyError, match="NoSuchGate"):
        FeatureGates().enabled("NoSuchGate")


def test_replace_keeps_the_other_changes() -> None:
    gates = FeatureGates({"OpportunisticBatching": False}).replace(GenericWorkload=True)
    assert gates.changed() == {"OpportunisticBatching": False, "GenericWorkload": True}
    assert gates == FeatureGates({"GenericWorkload": True, "OpportunisticBatching": False})
    assert "GenericWorkload=true" in repr(gates)


def test_plugins_read_the_gates_through_their_handle() -> None:
    seen: dict[str, bool] = {}

    class Reader:
        name = "Reader"

        def __init__(self, args: object, handle: Framework) -> None:
            seen["batching"] = handle.feature_gates.enabled("OpportunisticBatching")

        def filter(self, state: object, pod: object, node: object) -> None:
            return None

    registry = Registry()
    registry.register(Reader, "Reader")
    spec = ProfileSpec("s", {"filter": [PluginRef("Reader")]})
    Framework(spec, registry, partial=True, feature_gates=FeatureGates({"OpportunisticBatching": False}))
    assert seen == {"batching": False}
    Framework(spec, registry, partial=True)
    assert seen == {"batching": True}


def test_scheduler_options_carry_the_gates() -> None:
    options = SchedulerOptions(feature_gates=FeatureGates({"SchedulerAsyncPreemption": False}))
    assert options.async_preemption is False
    assert options.opportunistic_batching is True
