"""Device taints and tolerations (DRADeviceTaints, GA in 1.37) and DeviceTaintRules
(DRADeviceTaintRules, GA in 1.37).

A device's taints are those of its ResourceSlice entry plus the taint of every DeviceTaintRule
whose ``spec.deviceSelector`` picks it (driver, pool and device, each when set; an empty selector
picks every device, a rule without one none). A taint with effect NoSchedule or NoExecute keeps a
device from a request that does not tolerate it; None and effects unknown to 1.37 do nothing.

A toleration matches a taint as upstream's ``resourceclaim.ToleratesTaint``: its effect, when
set, must equal the taint's; its key, when set, the taint's; operator ``Exists`` matches any
value, ``Equal`` (the default) the same value, anything else nothing — a pod's tolerations'
rule (:func:`kubesched.framework.selectors.tolerates`), which this module uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched.framework.selectors import tolerates
from kubesched.objects import Obj

__all__ = ["BLOCKING_EFFECTS", "RuleTaints", "blocks", "rule_selects", "tolerates"]

DeviceID = tuple[str, str, str]

#: The effects that keep a device from a request that does not tolerate them.
BLOCKING_EFFECTS = frozenset({"NoSchedule", "NoExecute"})


def blocks(taints: Iterable[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]]) -> bool:
    """Whether one of ``taints`` keeps the device from a request with ``tolerations``."""
    for taint in taints:
        if taint.get("effect") in BLOCKING_EFFECTS and not any(tolerates(t, taint) for t in tolerations):
            return True
    return False


def rule_selects(rule: Mapping[str, Any], device: DeviceID) -> bool:
    """Whether DeviceTaintRule ``rule`` applies to ``device`` (driver, pool, name)."""
    selector = (rule.get("spec") or {}).get("deviceSelector")
    if selector is None:
        return False
    for field, value in zip(("driver", "pool", "device"), device, strict=True):
        want = selector.get(field)
        if want is not None and want != value:
            return False
    return True


class RuleTaints:
    """The taints DeviceTaintRules add, looked up per device (rules are few, devices many: the
    answer for each device is remembered)."""

    __slots__ = ("_rules", "_memo")

    def __init__(self, rules: Iterable[Mapping[str, Any]]) -> None:
        self._rules = [r for r in rules if isinstance((r.get("spec") or {}).get("taint"), Mapping)]
        self._memo: dict[DeviceID, list[Obj]] = {}

    def __bool__(self) -> bool:
        return bool(self._rules)

    def of(self, device: DeviceID) -> list[Obj]:
        hit = self._memo.get(device)
        if hit is None:
            hit = [dict(r["spec"]["taint"]) for r in self._rules if rule_selects(r, device)]
            self._memo[device] = hit
        return hit
