"""A pod's attempts, plugin by plugin (:class:`PodResult`: the last one, and the earlier ones
as its history), and its result annotations."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.backend.queue import RESULT_ANNOTATION_PREFIX

#: Attempts kept in a pod's history (the oldest are dropped): a pod retried for hours must not
#: hold every attempt's per-node maps.
HISTORY_LIMIT = 16
HISTORY_ANNOTATION = f"{RESULT_ANNOTATION_PREFIX}result-history"


@dataclass
class PodResult:
    """What happened to a pod on its last attempt, plugin by plugin."""

    namespace: str
    name: str
    scheduler_name: str
    node: str | None = None
    phase: str = "Pending"
    message: str = ""
    attempts: int = 0
    filter: dict[str, dict[str, str]] = field(default_factory=dict)
    score: dict[str, dict[str, int]] = field(default_factory=dict)
    final_score: dict[str, dict[str, int]] = field(default_factory=dict)
    prefilter: dict[str, str] = field(default_factory=dict)
    postfilter: dict[str, str] = field(default_factory=dict)
    prescore: dict[str, str] = field(default_factory=dict)
    reserve: dict[str, str] = field(default_factory=dict)
    permit: dict[str, str] = field(default_factory=dict)
    prebind: dict[str, str] = field(default_factory=dict)
    bind: dict[str, str] = field(default_factory=dict)
    extender_filter: dict[str, dict[str, str]] = field(default_factory=dict)
    extender_prioritize: dict[str, dict[str, int]] = field(default_factory=dict)
    extender_bind: dict[str, str] = field(default_factory=dict)
    #: The earlier attempts, oldest first (at most :data:`HISTORY_LIMIT`), as :meth:`attempt`
    #: gives them; the current (last) attempt is the fields above.
    history: list[dict[str, Any]] = field(default_factory=list)

    def attempt(self) -> dict[str, Any]:
        """This attempt as JSON: its number, outcome and every plugin's results."""
        return {
            "attempt": self.attempts,
            "node": self.node,
            "phase": self.phase,
            "message": self.message,
            "preFilter": dict(self.prefilter),
            "filter": {k: dict(v) for k, v in self.filter.items()},
            "postFilter": dict(self.postfilter),
            "preScore": dict(self.prescore),
            "score": {k: dict(v) for k, v in self.score.items()},
            "finalScore": {k: dict(v) for k, v in self.final_score.items()},
            "reserve": dict(self.reserve),
            "permit": dict(self.permit),
            "preBind": dict(self.prebind),
            "bind": dict(self.bind),
            "extenderFilter": {k: dict(v) for k, v in self.extender_filter.items()},
            "extenderPrioritize": {k: dict(v) for k, v in self.extender_prioritize.items()},
            "extenderBind": dict(self.extender_bind),
        }

    def reset_attempt(self) -> None:
        """A new attempt begins: the last one goes to the history."""
        if self.attempts:
            self.history.append(self.attempt())
            del self.history[:-HISTORY_LIMIT]
        for d in (
            self.filter,
            self.score,
            self.final_score,
            self.prefilter,
            self.postfilter,
            self.prescore,
            self.reserve,
            self.permit,
            self.prebind,
            self.bind,
            self.extender_filter,
            self.extender_prioritize,
            self.extender_bind,
        ):
            d.clear()

    def annotations(self) -> dict[str, str]:
        import json

        def dump(v: Any) -> str:
            return json.dumps(v, sort_keys=True, separators=(",", ":"))

        return {
            f"{RESULT_ANNOTATION_PREFIX}prefilter-result": dump(self.prefilter),
            f"{RESULT_ANNOTATION_PREFIX}filter-result": dump(self.filter),
            f"{RESULT_ANNOTATION_PREFIX}postfilter-result": dump(self.postfilter),
            f"{RESULT_ANNOTATION_PREFIX}score-result": dump(self.score),
            f"{RESULT_ANNOTATION_PREFIX}finalscore-result": dump(self.final_score),
            f"{RESULT_ANNOTATION_PREFIX}reserve-result": dump(self.reserve),
            f"{RESULT_ANNOTATION_PREFIX}permit-result": dump(self.permit),
            f"{RESULT_ANNOTATION_PREFIX}prebind-result": dump(self.prebind),
            f"{RESULT_ANNOTATION_PREFIX}bind-result": dump(self.bind),
            f"{RESULT_ANNOTATION_PREFIX}selected-node": self.node or "",
            f"{RESULT_ANNOTATION_PREFIX}extender-filter-result": dump(self.extender_filter),
            f"{RESULT_ANNOTATION_PREFIX}extender-prioritize-result": dump(self.extender_prioritize),
            f"{RESULT_ANNOTATION_PREFIX}extender-bind-result": dump(self.extender_bind),
            # Every attempt, this one last (kube-scheduler-simulator's result history).
            HISTORY_ANNOTATION: dump([*self.history, self.attempt()]),
        }
