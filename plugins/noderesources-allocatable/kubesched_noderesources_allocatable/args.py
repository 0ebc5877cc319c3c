"""``pluginConfig`` args: scheduler-plugins' ``NodeResourcesAllocatableArgs``
(``kubescheduler.config.k8s.io/v1``), with upstream's defaulting (``apis/config/v1/defaults.go``)
and validation (``apis/config/validation``):

* ``resources``: a list of ``{name, weight}`` (kube-scheduler's ``ResourceSpec``); none given
  (absent, null or empty) is ``cpu`` weighted ``1 << 20`` and ``memory`` weighted 1 — a
  millicore counts as much as a MiB;
* ``mode``: ``Least`` (the default, also for an empty string) or ``Most``.

Refused, naming the field as upstream does: a weight of 0 or below
(``resources[1].weight: Invalid value: 0: resource weight of cpu should be a positive value, got :0``)
and any other mode (``mode: Invalid value: "X": invalid support ModeType``). Several problems
are reported together, in brackets, as upstream's aggregate error prints them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, StrictInt, StrictStr, field_validator, model_validator

LEAST = "Least"
MOST = "Most"
MODES = (LEAST, MOST)

#: Upstream's default weights: a millicore weighs as much as a MiB of memory.
DEFAULT_CPU_WEIGHT = 1 << 20
DEFAULT_MEMORY_WEIGHT = 1


class ResourceSpec(BaseModel):
    """A resource and its weight (kube-scheduler's ``ResourceSpec``)."""

    model_config = ConfigDict(extra="forbid")

    name: StrictStr
    weight: StrictInt = 0


def default_resources() -> list[ResourceSpec]:
    return [
        ResourceSpec(name="cpu", weight=DEFAULT_CPU_WEIGHT),
        ResourceSpec(name="memory", weight=DEFAULT_MEMORY_WEIGHT),
    ]


class NodeResourcesAllocatableArgs(BaseModel):
    """The args of NodeResourcesAllocatable, defaults applied (see the module doc)."""

    model_config = ConfigDict(extra="forbid")

    resources: list[ResourceSpec] = []
    mode: StrictStr = LEAST

    @field_validator("resources", mode="before")
    @classmethod
    def _null_is_none(cls, v: Any) -> Any:
        return [] if v is None else v

    @field_validator("mode", mode="before")
    @classmethod
    def _null_mode(cls, v: Any) -> Any:
        return "" if v is None else v

    @model_validator(mode="after")
    def _defaults_then_validate(self) -> NodeResourcesAllocatableArgs:
        # defaulting first (v1 SetDefaults_NodeResourcesAllocatableArgs), then validation
        if not self.resources:
            self.resources = default_resources()
        if self.mode == "":
            self.mode = LEAST
        errs = [
            f"resources[{i}].weight: Invalid value: {r.weight}: resource weight of {r.name} "
            f"should be a positive value, got :{r.weight}"
            for i, r in enumerate(self.resources)
            if r.weight <= 0
        ]
        if self.mode not in MODES:
            errs.append(f'mode: Invalid value: "{self.mode}": invalid support ModeType')
        if len(errs) == 1:
            raise ValueError(errs[0])
        if errs:
            raise ValueError("[" + ", ".join(errs) + "]")
        return self

    def weights(self) -> dict[str, int]:
        """Each resource's weight; a name given twice keeps its last weight (upstream's map)."""
        return {r.name: r.weight for r in self.resources}
