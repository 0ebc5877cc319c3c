"""resource.k8s.io/v1 as kube-apiserver v1.37 validates it (pkg/apis/resource/validation): the
share of ResourceSlice, ResourceClaim (and its template), DeviceClass and DeviceTaintRule that the
scheduler's DynamicResources plugin reads — device taints and tolerations, shared counters and
the devices consuming them, binding conditions, consumable capacity and its request policy,
capacity requests, extended resource names — plus DeviceTaintRule's defaulting (``timeAdded``).

CEL selectors are not compiled here (the scheduler reports an expression it cannot evaluate);
attribute values other than their kinds are not checked either. Functions return causes
``(field, reason, message)`` with upstream's paths and words, as the rest of validation/.

The checks of each kind are a module of this package: :mod:`.slices` (ResourceSlice),
:mod:`.claims` (ResourceClaim and its template), :mod:`.device_classes` (DeviceClass),
:mod:`.taint_rules` (DeviceTaintRule), over :mod:`.fields`, what they share. This face re-exports
them: the API server's admission calls them through it.
"""

from __future__ import annotations

from kubesched.sim.apiserver.validation.dra.claims import (
    ALLOCATION_MODES,
    DEVICE_TOLERATION_OPERATORS,
    MAX_REQUESTS,
    MAX_SUBREQUESTS,
    MAX_TOLERATIONS,
    default_claim_spec,
    validate_claim_spec,
    validate_claim_status,
    validate_device_toleration,
)
from kubesched.sim.apiserver.validation.dra.device_classes import validate_device_class
from kubesched.sim.apiserver.validation.dra.fields import (
    DEVICE_TAINT_EFFECTS,
    DRIVER_NAME_MAX,
    MAX_BINDING_CONDITIONS,
    MAX_ID_LENGTH,
    POOL_NAME_MAX,
    validate_device_taint,
    validate_driver_name,
    validate_pool_name,
    validate_qualified_name,
)
from kubesched.sim.apiserver.validation.dra.slices import (
    MAX_ATTRIBUTE_VALUE_LENGTH,
    MAX_ATTRIBUTES_AND_CAPACITIES,
    MAX_COUNTER_CONSUMPTIONS_PER_DEVICE,
    MAX_COUNTER_SETS,
    MAX_COUNTERS_PER_CONSUMPTION,
    MAX_COUNTERS_PER_SET,
    MAX_DEVICE_TAINTS,
    MAX_DEVICES,
    MAX_DEVICES_WITH_ADVANCED_FEATURES,
    validate_resource_slice,
)
from kubesched.sim.apiserver.validation.dra.taint_rules import (
    MAX_RULE_CONDITIONS,
    default_device_taint_rule,
    validate_device_taint_rule,
    validate_device_taint_rule_status,
)

__all__ = [
    "ALLOCATION_MODES",
    "DEVICE_TAINT_EFFECTS",
    "DEVICE_TOLERATION_OPERATORS",
    "DRIVER_NAME_MAX",
    "MAX_ATTRIBUTES_AND_CAPACITIES",
    "MAX_ATTRIBUTE_VALUE_LENGTH",
    "MAX_BINDING_CONDITIONS",
    "MAX_COUNTERS_PER_CONSUMPTION",
    "MAX_COUNTERS_PER_SET",
    "MAX_COUNTER_CONSUMPTIONS_PER_DEVICE",
    "MAX_COUNTER_SETS",
    "MAX_DEVICES",
    "MAX_DEVICES_WITH_ADVANCED_FEATURES",
    "MAX_DEVICE_TAINTS",
    "MAX_ID_LENGTH",
    "MAX_REQUESTS",
    "MAX_RULE_CONDITIONS",
    "MAX_SUBREQUESTS",
    "MAX_TOLERATIONS",
    "POOL_NAME_MAX",
    "default_claim_spec",
    "default_device_taint_rule",
    "validate_claim_spec",
    "validate_claim_status",
    "validate_device_class",
    "validate_device_taint",
    "validate_device_taint_rule",
    "validate_device_taint_rule_status",
    "validate_device_toleration",
    "validate_driver_name",
    "validate_pool_name",
    "validate_qualified_name",
    "validate_resource_slice",
]
