"""TaintToleration: NoSchedule/NoExecute taints a pod does not tolerate keep it off a node;
untolerated PreferNoSchedule taints make a node less attractive.

As in 1.35 and later, the Filter reason does not name the taint (``node(s) had untolerated
taint(s)``), so a pod's status does not show taint keys or values. With the
TaintTolerationComparisonOperators gate (alpha, off in 1.37) tolerations may use ``Lt`` and
``Gt``: the taint's value compared with the toleration's as integers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.framework.columns import Array, columns_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import MAX_NODE_SCORE, CycleState, Handle, NodeScore
from kubesched.framework.selectors import find_untolerated_taint, tolerations_tolerate
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo, node_taints
from kubesched.plugins.helper import (
    default_normalize_score,
    default_normalize_scores,
    feature_enabled,
    pod_uid,
    tolerations_fragment,
)

PRE_SCORE_STATE_KEY = "PreScoreTaintToleration"
ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
COMPARISON_OPERATORS_GATE = "TaintTolerationComparisonOperators"

NODE_ADD_OR_TAINT = ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_TAINT)
POD_TOLERATIONS = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATIONS)


def _tolerations(pod: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    return list(((pod or {}).get("spec") or {}).get("tolerations") or ())


def prefer_no_schedule_tolerations(tolerations: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """Tolerations that can tolerate a PreferNoSchedule taint: that effect, or any (empty)."""
    return [t for t in tolerations if not t.get("effect") or t.get("effect") == "PreferNoSchedule"]


def count_intolerable_prefer_no_schedule(
    taints: Sequence[Mapping[str, Any]], tolerations: Sequence[Mapping[str, Any]], comparison_operators: bool = False
) -> int:
    return sum(
        1
        for t in taints
        if t.get("effect") == "PreferNoSchedule" and not tolerations_tolerate(tolerations, t, comparison_operators)
    )


class TaintToleration:
    """Filter, PreScore, Score and NormalizeScore (reversed: fewer untolerated
    PreferNoSchedule taints score higher)."""

    name = "TaintToleration"

    def __init__(self, args: Any = None, handle: Handle | None = None) -> None:
        self.handle = handle
        self.comparison_operators = feature_enabled(handle, COMPARISON_OPERATORS_GATE)

    # --- Filter ---------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if not node.taints:
            return None
        if find_untolerated_taint(node.taints, pod.tolerations, comparison_operators=self.comparison_operators) is None:
            return None
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_UNTOLERATED)

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        batch = columns_of(nodes)
        if batch is None:
            return None
        taints = batch.columns.taints
        tolerations = pod.tolerations
        compare = self.comparison_operators
        return taints.mask(
            batch.rows, lambda ts: find_untolerated_taint(ts, tolerations, comparison_operators=compare) is None
        )

    # --- Score ----------------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_STATE_KEY, prefer_no_schedule_tolerations(pod.tolerations))
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        tolerations = state.get(PRE_SCORE_STATE_KEY)
        if tolerations is None:
            return 0, Status.as_error(f"failed to read {PRE_SCORE_STATE_KEY!r} from cycleState")
        return count_intolerable_prefer_no_schedule(node.taints, tolerations, self.comparison_operators), None

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        batch = columns_of(nodes)
        tolerations = state.get(PRE_SCORE_STATE_KEY)
        if batch is None or tolerations is None:
            return None
        taints = batch.columns.taints
        counts = np.fromiter(
            (count_intolerable_prefer_no_schedule(ts, tolerations, self.comparison_operators) for ts in taints.values),
            np.int64,
            len(taints.values),
        )
        scores: Array = counts[taints.codes[batch.rows]]
        return scores

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: np.ndarray) -> np.ndarray:
        return default_normalize_scores(MAX_NODE_SCORE, True, scores)

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        return tolerations_fragment(pod)

    # --- events ---------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(NODE_ADD_OR_TAINT, self._node_change_hint),
            ClusterEventWithHint(POD_TOLERATIONS, self.is_schedulable_after_pod_toleration_change),
        ]

    def _node_change_hint(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        return self.is_schedulable_after_node_change(pod, old, new, self.comparison_operators)

    @staticmethod
    def is_schedulable_after_node_change(
        pod: Any, old: Any, new: Any, comparison_operators: bool = False
    ) -> QueueingHint:
        """Queue when the node went from having an untolerated taint (or not existing) to none."""
        if not isinstance(new, Mapping) or (old is not None and not isinstance(old, Mapping)):
            return QueueingHint.QUEUE
        tolerations = _tolerations(pod)
        compare = comparison_operators
        was_untolerated = (
            old is None
            or find_untolerated_taint(node_taints(old), tolerations, comparison_operators=compare) is not None
        )
        is_untolerated = find_untolerated_taint(node_taints(new), tolerations, comparison_operators=compare) is not None
        return QueueingHint.QUEUE if was_untolerated and not is_untolerated else QueueingHint.SKIP

    @staticmethod
    def is_schedulable_after_pod_toleration_change(pod: Any, old: Any, new: Any) -> QueueingHint:
        """A toleration added to the rejected pod itself may make it fit."""
        if not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE if pod_uid(pod) == pod_uid(new) else QueueingHint.SKIP
