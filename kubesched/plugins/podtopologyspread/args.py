"""``PodTopologySpreadArgs``: the cluster's default spread constraints, validated as upstream
validates them."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TopologySpreadConstraint(_Model):
    """``v1.TopologySpreadConstraint`` as a default constraint (``labelSelector`` is refused:
    default constraints get their selector from the pod's workload)."""

    maxSkew: int = 0
    topologyKey: str = ""
    whenUnsatisfiable: str = ""
    labelSelector: dict[str, Any] | None = None
    minDomains: int | None = None
    nodeAffinityPolicy: Literal["Honor", "Ignore"] | None = None
    nodeTaintsPolicy: Literal["Honor", "Ignore"] | None = None
    matchLabelKeys: list[str] | None = None


_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _label_name_errors(path: str, value: str) -> list[str]:
    """Upstream ``ValidateLabelName`` (a qualified name: optional DNS prefix, then a name part)."""
    prefix, _, name = value.rpartition("/")
    errs: list[str] = []
    if "/" in value and not prefix:
        errs.append(f"{path}: Invalid value: {value!r}: prefix part must be non-empty")
    elif prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        errs.append(f"{path}: Invalid value: {value!r}: prefix part must be a lowercase RFC 1123 subdomain")
    if not name:
        errs.append(f"{path}: Invalid value: {value!r}: name part must be non-empty")
    elif len(name) > 63:
        errs.append(f"{path}: Invalid value: {value!r}: name part must be no more than 63 characters")
    elif not _NAME_PART.match(name):
        errs.append(
            f"{path}: Invalid value: {value!r}: name part must consist of alphanumeric characters, '-', '_' or "
            "'.', and must start and end with an alphanumeric character"
        )
    return errs


class PodTopologySpreadArgs(_Model):
    """``PodTopologySpreadArgs``: cluster-level default constraints and how they are chosen.

    ``defaultingType: System`` uses the built-in defaults (hostname maxSkew 3 and zone maxSkew 5,
    both ScheduleAnyway) and requires ``defaultConstraints`` to be empty; ``List`` uses
    ``defaultConstraints`` as given (an empty list disables defaulting).
    """

    defaultConstraints: list[TopologySpreadConstraint] = []
    defaultingType: Literal["System", "List"] = "System"

    @model_validator(mode="after")
    def _validate(self) -> PodTopologySpreadArgs:
        errs: list[str] = []
        if self.defaultingType == SYSTEM_DEFAULTING and self.defaultConstraints:
            errs.append(f'defaultingType: Invalid value: "{SYSTEM_DEFAULTING}": when .defaultConstraints are not empty')
        seen: list[tuple[str, str]] = []
        for i, c in enumerate(self.defaultConstraints):
            p = f"defaultConstraints[{i}]"
            if c.maxSkew <= 0:
                errs.append(f"{p}.maxSkew: Invalid value: {c.maxSkew}: not in valid range (0, inf)")
            if not c.topologyKey:
                errs.append(f"{p}.topologyKey: Required value: can not be empty")
            else:
                errs.extend(_label_name_errors(f"{p}.topologyKey", c.topologyKey))
            if not c.whenUnsatisfiable:
                errs.append(f"{p}.whenUnsatisfiable: Required value: can not be empty")
            elif c.whenUnsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                errs.append(
                    f'{p}.whenUnsatisfiable: Unsupported value: "{c.whenUnsatisfiable}": supported values: '
                    f'"{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"'
                )
            if c.labelSelector is not None:
                errs.append(
                    f"{p}.labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"
                )
            pair = (c.topologyKey, c.whenUnsatisfiable)
            if pair in seen:
                errs.append(f'{p}: Duplicate value: "{{{c.topologyKey}, {c.whenUnsatisfiable}}}"')
            seen.append(pair)
        if errs:
            raise ValueError("; ".join(errs))
        return self
