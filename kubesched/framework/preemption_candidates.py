"""Preemption's candidates, as upstream's ``framework/preemption`` package keeps them: a
:class:`Candidate` (a node and its victims), the order of victims by importance
(:func:`sort_by_importance`), PodDisruptionBudget accounting
(:func:`filter_pods_with_pdb_violation`), the choice among candidates
(:func:`pick_one_node_for_preemption`'s criteria) and the "no candidate" message kube-scheduler
gives (:func:`fit_error_message`). The evaluator (:mod:`kubesched.framework.preemption`) uses
them and offers them to plugins that import the face alone."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.selectors import LabelSelector, SelectorError
from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo, parse_time

log = logging.getLogger(__name__)

#: The reason given to nodes the dry run did not examine (their filter status was
#: UnschedulableAndUnresolvable, or the search stopped before reaching them).
PREEMPTION_NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_VICTIMS_FOUND = "No preemption victims found for incoming pod"

_MAX_INT32 = 2**31 - 1


@dataclass
class Candidate:
    """A node the preemptor could be nominated to, with the pods to evict there.

    ``victims`` are ordered from the most to the least important pod.
    """

    name: str
    victims: list[PodInfo] = field(default_factory=list)
    num_pdb_violations: int = 0


class CandidateList:
    """Candidates gathered during the dry run, capped at ``capacity`` (extra adds are dropped)."""

    __slots__ = ("capacity", "items")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.items: list[Candidate] = []

    def add(self, c: Candidate) -> None:
        if len(self.items) < self.capacity:
            self.items.append(c)

    def __len__(self) -> int:
        return len(self.items)


# --- pod ordering -------------------------------------------------------------------------------


def pod_start_time(pod: PodInfo, now: float | None = None) -> float:
    """``status.startTime`` in seconds; a pod not started yet (assumed, or bound but not
    running) counts as starting now."""
    raw = (pod.pod.get("status") or {}).get("startTime")
    if raw:
        return parse_time(raw)
    return time.time() if now is None else now


def more_important_key(now: float) -> Callable[[PodInfo], tuple[int, float]]:
    """A sort key putting higher priority first, then the pod that started earlier."""

    def key(p: PodInfo) -> tuple[int, float]:
        return (-p.priority, pod_start_time(p, now))

    return key


def sort_by_importance(pods: list[PodInfo], now: float | None = None) -> None:
    pods.sort(key=more_important_key(time.time() if now is None else now))


def earliest_start_time_of_highest_priority(victims: Sequence[PodInfo], now: float) -> float | None:
    """Among the victims with the highest priority, the earliest start time."""
    if not victims:
        return None
    max_priority = victims[0].priority
    earliest = pod_start_time(victims[0], now)
    for p in victims:
        if p.priority == max_priority:
            t = pod_start_time(p, now)
            if t < earliest:
                earliest = t
        elif p.priority > max_priority:
            max_priority = p.priority
            earliest = pod_start_time(p, now)
    return earliest


# --- PodDisruptionBudgets -----------------------------------------------------------------------


def filter_pods_with_pdb_violation(
    pods: Iterable[PodInfo], pdbs: Sequence[Mapping[str, Any]]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """Split ``pods`` into those whose eviction would violate a PodDisruptionBudget and the rest.

    Each matching budget's ``status.disruptionsAllowed`` is spent as pods are walked in order, so
    the order of ``pods`` (most important first) decides which pods are the violating ones. A pod
    already listed in a budget's ``status.disruptedPods`` was counted by the API server and spends
    nothing. Budgets with a missing, empty or invalid selector match nothing. Both lists keep the
    input order.
    """
    allowed: list[int] = []
    compiled: list[tuple[str, LabelSelector | None, Mapping[str, Any]]] = []
    for pdb in pdbs:
        status = pdb.get("status") or {}
        allowed.append(int(status.get("disruptionsAllowed") or 0))
        meta = pdb.get("metadata") or {}
        try:
            selector = LabelSelector.compile((pdb.get("spec") or {}).get("selector"))
        except SelectorError:
            selector = None
        compiled.append((meta.get("namespace") or "default", selector, status.get("disruptedPods") or {}))

    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    for p in pods:
        violated = False
        if p.labels:
            for i, (namespace, selector, disrupted) in enumerate(compiled):
                if namespace != p.namespace:
                    continue
                if selector is None or selector.empty or not selector.matches(p.labels):
                    continue
                if p.name in disrupted:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violated = True
        (violating if violated else non_violating).append(p)
    return violating, non_violating


# --- choosing among candidates ------------------------------------------------------------------


def pick_one_node_for_preemption(
    nodes_to_victims: Mapping[str, Candidate],
    score_funcs: Sequence[Callable[[str], float]] | None = None,
    now: float | None = None,
) -> str:
    """The best node to preempt on, by upstream's criteria, each consulted only to break ties
    left by the previous one:

    1. fewest PodDisruptionBudget violations;
    2. lowest priority of the most important victim;
    3. smallest sum of victim priorities (each shifted by 2^31 so that more victims never
       score better just because their priorities are negative);
    4. fewest victims;
    5. latest start among the highest-priority victims (evict what ran the shortest);
    6. the first remaining node.

    Victims of each candidate must be ordered by decreasing importance.
    """
    if not nodes_to_victims:
        return ""
    now = time.time() if now is None else now
    candidates = list(nodes_to_victims)

    if not score_funcs:

        def fewest_pdb_violations(node: str) -> float:
            return -nodes_to_victims[node].num_pdb_violations

        def lowest_highest_priority(node: str) -> float:
            return -nodes_to_victims[node].victims[0].priority

        def smallest_priority_sum(node: str) -> float:
            return -sum(p.priority + _MAX_INT32 + 1 for p in nodes_to_victims[node].victims)

        def fewest_victims(node: str) -> float:
            return -len(nodes_to_victims[node].victims)

        def latest_start_time(node: str) -> float:
            t = earliest_start_time_of_highest_priority(nodes_to_victims[node].victims, now)
            return float("-inf") if t is None else t

        score_funcs = [
            fewest_pdb_violations,
            lowest_highest_priority,
            smallest_priority_sum,
            fewest_victims,
            latest_start_time,
        ]

    for f in score_funcs:
        best: list[str] = []
        best_score = float("-inf")
        for node in candidates:
            s = f(node)
            if s > best_score:
                best_score = s
                best = []
            if s == best_score:
                best.append(node)
        if len(best) == 1:
            return best[0]
        candidates = best
    return candidates[0]


# --- messages -----------------------------------------------------------------------------------


def fit_error_message(num_all_nodes: int, node_statuses: Mapping[str, Status]) -> str:
    """``0/N nodes are available: <count> <reason>, ....`` as upstream's ``FitError``.

    Reasons are counted over the nodes with a status; nodes without one count as
    "Preemption is not helpful for scheduling". The ``"<count> <reason>"`` strings are sorted as
    strings, exactly as upstream sorts them.
    """
    counts: Counter[str] = Counter()
    for status in node_statuses.values():
        for reason in status.reasons:
            counts[reason] += 1
    absent = num_all_nodes - len(node_statuses)
    if absent > 0:
        counts[PREEMPTION_NOT_HELPFUL] += absent
    msg = f"0/{num_all_nodes} nodes are available:"
    parts = sorted(f"{n} {reason}" for reason, n in counts.items())
    if parts:
        msg += f" {', '.join(parts)}."
    return msg


def aggregate_errors(messages: Sequence[str]) -> str:
    """Several error messages as one, the way Go's ``utilerrors.NewAggregate`` prints them."""
    unique = list(dict.fromkeys(messages))
    if len(unique) == 1:
        return unique[0]
    return "[" + ", ".join(unique) + "]"
