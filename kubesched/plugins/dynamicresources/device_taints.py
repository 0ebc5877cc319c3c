"""DeviceTaintRules (upstream's DRADeviceTaintRules): taints an administrator puts on devices
without touching their ResourceSlices. As upstream's ResourceSlice tracker does for the
scheduler (``ListWithDeviceTaintRules``), the allocator is given the slices with each matching
rule's taint added to the devices it selects (``spec.deviceSelector``: driver, pool, device; an
empty selector selects every device, a rule without one none — :func:`.taints.rule_selects`), so
that it sees one list of taints per device, whatever put them there.

Only scheduling is concerned: evicting the pods of devices tainted ``NoExecute`` is the
device-taint-eviction controller's job (kube-controller-manager), not the scheduler's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.objects import Obj
from kubesched.plugins.dynamicresources.taints import rule_selects

#: The gate, on by default in 1.37.
GATE = "DRADeviceTaintRules"


def _taint(rule: Mapping[str, Any]) -> Obj:
    taint = (rule.get("spec") or {}).get("taint") or {}
    out: Obj = {"key": taint.get("key", ""), "effect": taint.get("effect", "")}
    if taint.get("value"):
        out["value"] = taint["value"]
    if taint.get("timeAdded"):
        out["timeAdded"] = taint["timeAdded"]
    return out


def apply_rules(slice_: Obj, rules: Sequence[Mapping[str, Any]]) -> Obj:
    """``slice_`` with the taints of the ``rules`` that select its devices (``slice_`` itself
    when none does; a copy otherwise, the original is left alone)."""
    spec = slice_.get("spec") or {}
    driver = str(spec.get("driver") or "")
    pool = str((spec.get("pool") or {}).get("name") or "")
    patched: Obj | None = None
    for rule in rules:
        for i, device in enumerate(spec.get("devices") or ()):
            if not rule_selects(rule, (driver, pool, str(device.get("name") or ""))):
                continue
            if patched is None:
                patched = {**slice_, "spec": {**spec, "devices": list(spec.get("devices") or ())}}
            devices = patched["spec"]["devices"]
            devices[i] = {**devices[i], "taints": [*(devices[i].get("taints") or ()), _taint(rule)]}
    return patched if patched is not None else slice_


class TaintedSlices:
    """The slices with the rules applied, remembered while neither a slice nor the rules change
    (a new object version is a new dict), so that the allocator's per-device memos keep
    working across scheduling cycles."""

    def __init__(self) -> None:
        self._rules_key: tuple[int, ...] = ()
        #: the rules ``_rules_key`` names, kept alive so that their ids are not reused
        self._rules: list[Obj] = []
        self._patched: dict[int, tuple[Obj, Obj]] = {}

    def __call__(self, slices: Sequence[Obj], rules: Sequence[Obj]) -> list[Obj]:
        if not rules:
            self._patched.clear()
            self._rules_key, self._rules = (), []
            return list(slices)
        key = tuple(id(r) for r in rules)
        if key != self._rules_key:
            self._rules_key = key
            self._rules = list(rules)
            self._patched.clear()
        out = []
        seen: dict[int, tuple[Obj, Obj]] = {}
        for s in slices:
            hit = self._patched.get(id(s))
            if hit is None or hit[0] is not s:
                hit = (s, apply_rules(s, rules))
            seen[id(s)] = hit
            out.append(hit[1])
        self._patched = seen
        return out


__all__ = ["GATE", "TaintedSlices", "apply_rules"]
