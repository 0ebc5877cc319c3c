"""The ``kind: Steps`` documents of a scenario, read: when each step happens and what it creates,
patches or deletes; and the lifetime annotation of a pod, with the durations both are written in.

The scenario loader (:mod:`kubesched.sim.scenario.reading`) reads steps with this module, and
:mod:`kubesched.sim.scenario.timeline` runs them; this module imports neither.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kubesched import errors
from kubesched.objects import Obj

STEPS_KIND = "Steps"
LIFETIME = "kubesched.io/lifetime"


class TimelineError(errors.ScenarioError):
    """A step or lifetime that cannot be read; the message names the field."""


def seconds(value: Any, where: str) -> float:
    """A Go duration (``90s``, ``1m30s``) or a number of seconds, not negative, no longer than
    Go's longest duration (whichever way it is written)."""
    from kubesched.config.models import INT64_MAX, MAX_DURATION, parse_go_duration

    if isinstance(value, bool):
        raise TimelineError(f"{where}: Invalid value: {value!r}: a duration (90s) or seconds")
    if isinstance(value, int | float):
        if isinstance(value, float) and math.isnan(value):
            raise TimelineError(f"{where}: Invalid value: {value!r}: a duration (90s) or seconds, not NaN")
        if abs(value) > INT64_MAX / 1e9:
            raise TimelineError(f"{where}: Invalid value: {value!r}: out of range (at most {MAX_DURATION})")
        out = float(value)
    elif isinstance(value, str):
        try:
            out = parse_go_duration(value)
        except ValueError as exc:
            raise TimelineError(f"{where}: Invalid value: {value!r}: {exc}") from None
    else:
        raise TimelineError(f"{where}: Invalid value: {value!r}: a duration (90s) or seconds")
    if out < 0:
        raise TimelineError(f"{where}: Invalid value: {value!r}: must not be negative")
    return out


@dataclass
class Ref:
    kind: str
    name: str
    namespace: str | None = None


@dataclass
class Step:
    at: float
    index: int
    create: list[Obj] = field(default_factory=list)
    delete: list[Ref] = field(default_factory=list)
    patch: list[tuple[Ref, Obj]] = field(default_factory=list)
    #: ``create`` parsed as a scenario (set by the scenario loader).
    scenario: Any = None

    def describe(self) -> str:
        parts = []
        if self.create:
            parts.append(f"create {len(self.create)}")
        if self.patch:
            parts.append("patch " + ", ".join(f"{r.kind} {r.name}" for r, _ in self.patch))
        if self.delete:
            parts.append("delete " + ", ".join(f"{r.kind} {r.name}" for r in self.delete))
        return f"step {self.index + 1}: " + ("; ".join(parts) or "nothing")


@dataclass(frozen=True)
class StepProblem:
    """What a step could not do: its ``action`` (create, patch) on ``obj`` (``Node n1``,
    ``Pod ns/p``) and why. The step's other objects, and the run, go on."""

    step: int
    at: float
    action: str
    obj: str
    reason: str

    def __str__(self) -> str:
        return f"step {self.step} at {self.at:g}s: {self.action} {self.obj} refused: {self.reason}"

    def as_json(self) -> Obj:
        return {"step": self.step, "at": self.at, "action": self.action, "object": self.obj, "reason": self.reason}


def _ref(raw: Any, where: str) -> Ref:
    if not isinstance(raw, dict) or not isinstance(raw.get("kind"), str) or not isinstance(raw.get("name"), str):
        raise TimelineError(f"{where}: Required value: kind and name")
    ns = raw.get("namespace")
    if ns is not None and not isinstance(ns, str):
        raise TimelineError(f"{where}.namespace: Invalid value: {ns!r}: a string")
    return Ref(raw["kind"], raw["name"], ns)


def parse_steps(doc: Obj, where: str, first_index: int = 0, after: float = 0.0) -> list[Step]:
    """The steps of one ``kind: Steps`` document (objects in ``create`` are checked by the
    scenario loader, which calls this)."""
    unknown = set(doc) - {"apiVersion", "kind", "metadata", "steps"}
    if unknown:
        raise TimelineError(f"{where}: unknown field {sorted(unknown)[0]!r} (a Steps document has steps)")
    raw_steps = doc.get("steps")
    if not isinstance(raw_steps, list):
        raise TimelineError(f"{where}.steps: Required value: a list of steps")
    out = []
    at = after
    for i, raw in enumerate(raw_steps):
        path = f"{where}.steps[{i}]"
        if not isinstance(raw, dict):
            raise TimelineError(f"{path}: expected a mapping")
        unknown = set(raw) - {"at", "create", "delete", "patch"}
        if unknown:
            raise TimelineError(f"{path}: unknown field {sorted(unknown)[0]!r}")
        if raw.get("at") is not None:
            at = seconds(raw["at"], f"{path}.at")
        step = Step(at, first_index + i)
        creates = raw.get("create") or []
        if not isinstance(creates, list) or not all(isinstance(o, dict) for o in creates):
            raise TimelineError(f"{path}.create: a list of objects")
        step.create = creates
        deletes, patches = raw.get("delete") or [], raw.get("patch") or []
        if not isinstance(deletes, list):
            raise TimelineError(f"{path}.delete: a list of objects to delete (kind, name, namespace)")
        if not isinstance(patches, list):
            raise TimelineError(f"{path}.patch: a list of patches (kind, name, namespace, patch)")
        for j, d in enumerate(deletes):
            step.delete.append(_ref(d, f"{path}.delete[{j}]"))
        for j, p in enumerate(patches):
            ref = _ref(p, f"{path}.patch[{j}]")
            if not isinstance(p.get("patch"), dict):
                raise TimelineError(f"{path}.patch[{j}].patch: Required value: a merge patch (a mapping)")
            step.patch.append((ref, p["patch"]))
        out.append(step)
    return out
