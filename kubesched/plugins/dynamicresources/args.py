"""DynamicResourcesArgs as kube-scheduler 1.37 has them (``filterTimeout``, ``bindingTimeout``),
their Go durations, and the check of the fields a disabled feature gate forbids."""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from kubesched.framework.features import FeatureGates

#: Upstream's ``DynamicResourcesBindingTimeoutDefault``.
BINDING_TIMEOUT_DEFAULT = "10m0s"
FILTER_TIMEOUT_GATE = "DRASchedulerFilterTimeout"
BINDING_GATES = ("DRADeviceBindingConditions", "DRAResourceClaimDeviceStatus")


_DURATION = re.compile(r"^-?((\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+|0)$")
_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def duration_seconds(text: str) -> float:
    """A Go duration (``10s``, ``1m30s``, ``0``, ``-1s``) in seconds."""
    total = sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(text))
    return -total if text.startswith("-") else total


class DynamicResourcesArgs(BaseModel):
    """``DynamicResourcesArgs`` as 1.37 has them.

    * ``filterTimeout`` (a duration, default 10s; 0 disables it; DRASchedulerFilterTimeout)
      bounds how long Filter may spend allocating on one node: past it, the attempt ends with
      an Error ("node <name>: timed out trying to allocate devices") and the pod backs off;
    * ``bindingTimeout`` (at least 1s; DRADeviceBindingConditions with
      DRAResourceClaimDeviceStatus; the configuration defaults it to 10m0s when both are on, and
      the plugin waits that long when it is unset) bounds how long PreBind waits for the binding
      conditions of allocated devices.

    Setting a field whose gate is off is refused, as upstream refuses it (``filterTimeout:
    Forbidden: ...``): by the configuration's validation, and by the plugin when it is built."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    filterTimeout: str = "10s"
    bindingTimeout: str | None = None

    @field_validator("filterTimeout", "bindingTimeout")
    @classmethod
    def _duration(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return v
        if not _DURATION.match(v):
            raise ValueError(
                f"{info.field_name}: Invalid value: {v!r}: must be a duration such as 10s or 1m30s, not negative"
            )
        if info.field_name == "filterTimeout" and duration_seconds(v) < 0:
            raise ValueError(f"filterTimeout: Invalid value: {v!r}: must be zero or positive")
        return v


def check_args(args: DynamicResourcesArgs, gates: FeatureGates) -> None:
    """Upstream's ``ValidateDynamicResourcesArgs`` for what depends on the feature gates: a field
    set while its gate is off is an error (ValueError naming the field)."""
    problems = []
    if not gates.enabled(FILTER_TIMEOUT_GATE) and "filterTimeout" in args.model_fields_set:
        problems.append("filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled")
    binding = args.bindingTimeout if "bindingTimeout" in args.model_fields_set else None
    if binding is not None:
        if not all(gates.enabled(g) for g in BINDING_GATES):
            problems.append(
                "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
                "feature gate is disabled"
            )
        elif duration_seconds(binding) < 1:
            problems.append(f'bindingTimeout: Invalid value: "{binding}": must be at least 1 second')
    if problems:
        raise ValueError("; ".join(problems))
