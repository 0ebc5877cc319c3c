"""storage.k8s.io/v1 CSIDriver and CSIStorageCapacity as kube-apiserver v1.37 defaults and
validates them (pkg/apis/storage/v1 defaults, pkg/apis/storage/validation): the two kinds the
scheduler reads for storage capacity tracking (VolumeBinding) and for drivers that keep pods off
nodes without them (NodeVolumeLimits).

Functions return causes ``(field, reason, message)`` with upstream's paths and words, as the rest
of validation/ (including upstream's ``spec.attachedRequired`` for ``spec.attachRequired``).
"""

from __future__ import annotations

import json
from typing import Any

from kubesched.framework.names import dns1123_subdomain_errors
from kubesched.framework.resources import QuantityError, parse_quantity
from kubesched.objects import Obj
from kubesched.sim.apiserver.validation.core import validate_label_selector
from kubesched.sim.apiserver.validation.meta import Cause, invalid_cause, not_supported_cause, required_cause
from kubesched.sim.apiserver.validation.resources import quantity_string

#: storage.FSGroupPolicy values, as NotSupported lists them (sorted).
FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
#: storage.VolumeLifecycleMode values, in upstream's order.
VOLUME_LIFECYCLE_MODES = ("Persistent", "Ephemeral")
#: A token request's expiration: at least 10 minutes, at most 2^32 seconds.
MIN_TOKEN_EXPIRATION = 600
MAX_TOKEN_EXPIRATION = 1 << 32
MIN_ALLOCATABLE_UPDATE_PERIOD = 10


def _obj(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


# --- CSIDriver ----------------------------------------------------------------------------------


def default_csi_driver(driver: Obj) -> None:
    """SetDefaults_CSIDriver: attach required, no pod info on mount, no capacity tracking,
    ``ReadWriteOnceWithFSType``, persistent volumes only, no republish, no SELinux mount."""
    spec = driver.get("spec")
    if not isinstance(spec, dict):
        return
    for key, value in (
        ("attachRequired", True),
        ("podInfoOnMount", False),
        ("storageCapacity", False),
        ("fsGroupPolicy", "ReadWriteOnceWithFSType"),
        ("requiresRepublish", False),
        ("seLinuxMount", False),
    ):
        if spec.get(key) is None:
            spec[key] = value
    if not spec.get("volumeLifecycleModes"):
        spec["volumeLifecycleModes"] = ["Persistent"]


def _token_requests(requests: Any, path: str) -> list[Cause]:
    """Audiences differ (at most one empty); an expiration lies in [10 minutes, 2^32 seconds]."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, request in enumerate(requests if isinstance(requests, list) else ()):
        request = _obj(request)
        where = f"{path}[{i}]"
        audience = str(request.get("audience") or "")
        if audience in seen:
            causes.append((f"{where}.audience", "FieldValueDuplicate", f'Duplicate value: "{audience}"'))
            continue
        seen.add(audience)
        seconds = request.get("expirationSeconds")
        if not isinstance(seconds, int) or isinstance(seconds, bool):
            continue
        if seconds < MIN_TOKEN_EXPIRATION:
            causes.append(
                invalid_cause(f"{where}.expirationSeconds", seconds, "may not specify a duration less than 10 minutes")
            )
        if seconds > MAX_TOKEN_EXPIRATION:
            causes.append(
                invalid_cause(
                    f"{where}.expirationSeconds", seconds, "may not specify a duration larger than 2^32 seconds"
                )
            )
    return causes


def _driver_spec(spec: Obj) -> list[Cause]:
    causes: list[Cause] = []
    for key, path in (
        ("attachRequired", "spec.attachedRequired"),
        ("podInfoOnMount", "spec.podInfoOnMount"),
        ("storageCapacity", "spec.storageCapacity"),
    ):
        if spec.get(key) is None:
            causes.append(required_cause(path))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in FS_GROUP_POLICIES:
        causes.append(not_supported_cause("spec.fsGroupPolicy", policy, FS_GROUP_POLICIES))
    causes += _token_requests(spec.get("tokenRequests"), "spec.tokenRequests")
    for mode in spec.get("volumeLifecycleModes") or ():
        if mode not in VOLUME_LIFECYCLE_MODES:
            causes.append(not_supported_cause("spec.volumeLifecycleModes", mode, VOLUME_LIFECYCLE_MODES))
    if spec.get("seLinuxMount") is None:
        causes.append(required_cause("spec.seLinuxMount"))
    period = spec.get("nodeAllocatableUpdatePeriodSeconds")
    if isinstance(period, int) and not isinstance(period, bool) and period < MIN_ALLOCATABLE_UPDATE_PERIOD:
        causes.append(
            invalid_cause(
                "spec.nodeAllocatableUpdatePeriodSeconds", period, "must be greater than or equal to 10 seconds"
            )
        )
    in_secrets = spec.get("serviceAccountTokenInSecrets")
    if in_secrets is not None and not spec.get("tokenRequests"):
        causes.append(
            invalid_cause(
                "spec.serviceAccountTokenInSecrets",
                in_secrets,
                "serviceAccountTokenInSecrets is set but no tokenRequests are specified",
            )
        )
    return causes


def validate_csi_driver(driver: Obj, old: Obj | None = None) -> list[Cause]:
    """ValidateCSIDriver (the spec; metadata is checked by the caller), and on an update
    ValidateCSIDriverUpdate's immutable ``attachRequired`` and ``volumeLifecycleModes``."""
    spec = driver.get("spec")
    if not isinstance(spec, dict):
        return [required_cause("spec")]
    causes = _driver_spec(spec)
    if old is not None:
        old_spec = _obj(old.get("spec"))
        for key, path in (
            ("attachRequired", "spec.attachedRequired"),
            ("volumeLifecycleModes", "spec.volumeLifecycleModes"),
        ):
            if spec.get(key) != old_spec.get(key):
                causes.append(invalid_cause(path, spec.get(key), "field is immutable"))
    return causes


# --- CSIStorageCapacity -------------------------------------------------------------------------


def _canonical_quantity(capacity: Obj, key: str) -> list[Cause]:
    """A quantity field stored in its canonical form, as the API server round-trips it."""
    value = capacity.get(key)
    if value is None:
        return []
    try:
        amount = parse_quantity(value)
    except (QuantityError, TypeError, ValueError, ArithmeticError):
        return [
            invalid_cause(
                key,
                value,
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            )
        ]
    capacity[key] = quantity_string(amount, isinstance(value, str) and value.rstrip().endswith("i"))
    if key == "capacity" and amount < 0:
        return [invalid_cause(key, capacity[key], "must be greater than or equal to 0")]
    return []


def validate_csi_storage_capacity(capacity: Obj, old: Obj | None = None) -> list[Cause]:
    """ValidateCSIStorageCapacity (``nodeTopology`` a label selector, ``storageClassName`` a
    DNS subdomain, ``capacity`` not negative; quantities made canonical), and on an update
    ValidateCSIStorageCapacityUpdate's immutable ``nodeTopology`` and ``storageClassName``."""
    causes = _canonical_quantity(capacity, "capacity") + _canonical_quantity(capacity, "maximumVolumeSize")
    causes += validate_label_selector(capacity.get("nodeTopology"), "nodeTopology")
    class_name = capacity.get("storageClassName")
    text = class_name if isinstance(class_name, str) else ""
    causes += [invalid_cause("storageClassName", text, m) for m in dns1123_subdomain_errors(text)]
    if old is not None:
        if capacity.get("nodeTopology") != old.get("nodeTopology"):
            # The selector as JSON (the Go form would be its generated String()).
            shown = json.dumps(capacity.get("nodeTopology"), separators=(",", ":"), sort_keys=True)
            causes.append(("nodeTopology", "FieldValueInvalid", f"Invalid value: {shown}: field is immutable"))
        if class_name != old.get("storageClassName"):
            causes.append(invalid_cause("storageClassName", text, "field is immutable"))
    return causes
