"""``pluginConfig`` args: scheduler-plugins' ``NodeResourceTopologyMatchArgs``, field for field.

Defaults as upstream's: ``scoringStrategy`` LeastAllocated over cpu and memory (weight 1 each;
a weight of 0 becomes 1), ``cacheResyncPeriodSeconds`` 0 (no reserve cache: every cycle reads
the NodeResourceTopology objects as they are), ``cache`` options All / Autodetect / Dedicated /
All, ``preemptionMode`` Disabled. A field that is not one of these is refused, by name.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from .score import LEAST_ALLOCATED, STRATEGIES


class ResourceSpec(BaseModel):
    """A resource and its weight in the score (``kubescheduler.config.k8s.io/v1`` ResourceSpec)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    #: 0 (or below) counts as 1.
    weight: int = 0


def _default_resources() -> list[ResourceSpec]:
    return [ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1)]


class ScoringStrategy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    type: str = LEAST_ALLOCATED
    resources: list[ResourceSpec] = Field(default_factory=_default_resources)

    @field_validator("type")
    @classmethod
    def _known_type(cls, v: str) -> str:
        if v not in STRATEGIES:
            raise ValueError(f"invalid ScoringStrategyType {v!r}: one of {', '.join(STRATEGIES)}")
        return v

    @field_validator("resources")
    @classmethod
    def _defaults(cls, v: list[ResourceSpec]) -> list[ResourceSpec]:
        if not v:
            return _default_resources()
        return [r if r.weight else ResourceSpec(name=r.name, weight=1) for r in v]

    def weights(self) -> dict[str, int]:
        return {r.name: r.weight for r in self.resources}


class NodeResourceTopologyCache(BaseModel):
    """How the reserve cache follows the cluster (accepted; see the README for what each does
    here)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    foreign_pods_detect: Literal["None", "All", "OnlyExclusiveResources"] = Field("All", alias="foreignPodsDetect")
    resync_method: Literal["Autodetect", "All", "OnlyExclusiveResources"] = Field("Autodetect", alias="resyncMethod")
    informer_mode: Literal["Shared", "Dedicated"] = Field("Dedicated", alias="informerMode")
    resync_scope: Literal["All", "OnlyResources"] = Field("All", alias="resyncScope")


class NodeResourceTopologyMatchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    scoring_strategy: ScoringStrategy = Field(default_factory=ScoringStrategy, alias="scoringStrategy")
    #: Above 0: the reserve cache is used, and resynchronised this often.
    cache_resync_period_seconds: int = Field(0, alias="cacheResyncPeriodSeconds")
    #: Refuse nodes where a pod is reserved and not yet bound (takes precedence over the cache).
    discard_reserved_nodes: bool = Field(False, alias="discardReservedNodes")
    cache: NodeResourceTopologyCache = Field(default_factory=lambda: NodeResourceTopologyCache.model_validate({}))
    preemption_mode: Literal["Disabled", "Enabled"] = Field("Disabled", alias="preemptionMode")
