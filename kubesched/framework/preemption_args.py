"""``DefaultPreemptionArgs`` (kubescheduler.config.k8s.io/v1), on the plugin face: the args of
DefaultPreemption, and of any preemption plugin that takes the same two numbers (scheduler-plugins'
PreemptionToleration names them ``PreemptionTolerationArgs``), defaulted and validated as
upstream's ``ValidateDefaultPreemptionArgs``:

* ``minCandidateNodesPercentage`` (default 10) and ``minCandidateNodesAbsolute`` (default 100):
  how many nodes the dry run gathers as candidates before it stops, the larger of the share of
  the potential nodes and the absolute number, at most all of them.

Refused, naming the field: a percentage outside [0, 100], a negative absolute number, both zero
at once; several at once as upstream's aggregate of errors words them (``[first, second]``).
"""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel, ConfigDict, Field, StrictInt, model_validator

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE = 100


class DefaultPreemptionArgs(BaseModel):
    """Upstream ``DefaultPreemptionArgs``, defaults applied (see the module doc)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    min_candidate_nodes_percentage: StrictInt = Field(
        default=DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE, alias="minCandidateNodesPercentage"
    )
    min_candidate_nodes_absolute: StrictInt = Field(
        default=DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE, alias="minCandidateNodesAbsolute"
    )

    @model_validator(mode="after")
    def _check(self) -> Self:
        pct = self.min_candidate_nodes_percentage
        absolute = self.min_candidate_nodes_absolute
        errs: list[str] = []
        if not 0 <= pct <= 100:
            errs.append(f"minCandidateNodesPercentage: Invalid value: {pct}: not in valid range [0, 100]")
        if absolute < 0:
            errs.append(f"minCandidateNodesAbsolute: Invalid value: {absolute}: not in valid range [0, inf)")
        if pct == 0 and absolute == 0:
            errs.append(
                "minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesAbsolute"
            )
            errs.append(
                "minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as "
                "minCandidateNodesPercentage"
            )
        if len(errs) == 1:
            raise ValueError(errs[0])
        if errs:
            raise ValueError("[" + ", ".join(errs) + "]")
        return self

    def num_candidates(self, num_nodes: int) -> int:
        """How many candidates a dry run over ``num_nodes`` potential nodes gathers."""
        n = num_nodes * self.min_candidate_nodes_percentage // 100
        return min(max(n, self.min_candidate_nodes_absolute), num_nodes)
