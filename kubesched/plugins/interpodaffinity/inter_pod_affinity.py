"""InterPodAffinity: required and preferred pod affinity / anti-affinity, both ways.

Filter enforces three rules, each decided from counts PreFilter computed once per pod:

* the incoming pod's required affinity: every term's topology key exists on the node and the
  node's domain holds a pod matching all the terms (or no pod matches anywhere yet and the pod
  matches its own terms: the first pod of a group may go anywhere its topology keys exist);
* the incoming pod's required anti-affinity: no matching pod in the node's domain of any term;
* the required anti-affinity of existing pods: the node is in no domain from which an existing
  pod's term repels the incoming pod.

Scoring sums, per topology domain, the weights of the incoming pod's preferred terms matched by
existing pods, of existing pods' preferred terms matched by the incoming pod, and of existing
pods' required affinity terms matched by the incoming pod (weighted by ``hardPodAffinityWeight``);
anti-affinity weights count negatively. NormalizeScore scales the sums min..max onto 0..100.

Counts are nested dicts ``{topologyKey: {topologyValue: count}}`` so Filter and Score touch only
the keys that matter, never every label of the node.

PreFilter and PreScore sum per-node contributions. Those sums are kept across cycles (see
:class:`NodeSums`), keyed by everything a contribution depends on besides the node itself, and
only nodes whose ``NodeInfo.generation`` changed since the last cycle are walked again: a
snapshot's clone keeps its node's generation, and every change of pods or labels bumps it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from kubesched.framework.columns import MISSING, columns_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import MAX_NODE_SCORE, CycleState, Handle, NodeScore
from kubesched.framework.status import Code, Status
from kubesched.framework.types import AffinityTerm, NodeInfo, PodInfo
from kubesched.plugins.helper import pod_uid
from kubesched.plugins.interpodaffinity.counts import (
    NOTHING,
    Contribution,
    Counts,
    SumsCache,
    Tally,
    every_node,
    flatten,
    has_affinity_pods,
    has_anti_affinity_pods,
    pod_key,
    terms_key,
)
from kubesched.plugins.interpodaffinity.state import PreFilterState, PreScoreState
from kubesched.plugins.interpodaffinity.terms import ResolvedTerm, pod_matches_all_terms, resolve_terms

__all__ = [
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
    "NAME",
    "PRE_FILTER_STATE_KEY",
    "PRE_SCORE_STATE_KEY",
    "Counts",
    "InterPodAffinity",
    "InterPodAffinityArgs",
    "PreFilterState",
    "PreScoreState",
    "ResolvedTerm",
    "flatten",
    "resolve_terms",
]

NAME = "InterPodAffinity"
PRE_FILTER_STATE_KEY = "PreFilter" + NAME
PRE_SCORE_STATE_KEY = "PreScore" + NAME

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"

DEFAULT_HARD_POD_AFFINITY_WEIGHT = 1
MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100


# --- args ------------------------------------------------------------------------------------


class InterPodAffinityArgs(BaseModel):
    """Upstream ``InterPodAffinityArgs`` (kubescheduler.config.k8s.io/v1), defaults applied."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    hard_pod_affinity_weight: int = Field(default=DEFAULT_HARD_POD_AFFINITY_WEIGHT, alias="hardPodAffinityWeight")
    ignore_preferred_terms_of_existing_pods: bool = Field(default=False, alias="ignorePreferredTermsOfExistingPods")

    @field_validator("hard_pod_affinity_weight")
    @classmethod
    def _check_weight(cls, v: int) -> int:
        if v < MIN_HARD_POD_AFFINITY_WEIGHT or v > MAX_HARD_POD_AFFINITY_WEIGHT:
            raise ValueError(
                f"hardPodAffinityWeight: Invalid value: {v}: not in valid range "
                f"[{MIN_HARD_POD_AFFINITY_WEIGHT}, {MAX_HARD_POD_AFFINITY_WEIGHT}]"
            )
        return v


# --- plugin ------------------------------------------------------------------------------------


class InterPodAffinity:
    """PreFilter (+ AddPod/RemovePod), Filter, PreScore, Score and NormalizeScore for inter-pod
    affinity and anti-affinity, as upstream's ``InterPodAffinity``."""

    name = NAME
    Args = InterPodAffinityArgs

    def __init__(self, args: InterPodAffinityArgs | None, handle: Any = None) -> None:
        self.args = args if args is not None else InterPodAffinityArgs()
        self.handle: Handle = handle
        self._existing_anti_sums = SumsCache()
        self._incoming_sums = SumsCache(maps=2)
        self._score_sums = SumsCache()

    # --- helpers ---------------------------------------------------------------------------------
    def _listers(self) -> Any:
        return getattr(self.handle, "listers", None)

    def _namespace_labels(self, namespace: str) -> dict[str, str]:
        listers = self._listers()
        if listers is None:
            return {}
        return listers.namespace_labels(namespace) or {}

    # --- PreFilter ---------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        snapshot = self.handle.snapshot()
        listers = self._listers()
        ns_labels = self._namespace_labels(pod.namespace)
        affinity_terms = resolve_terms(pod.required_affinity, listers)
        anti_terms = resolve_terms(pod.required_anti_affinity, listers)
        if not affinity_terms and not anti_terms and not snapshot.have_pods_with_required_anti_affinity():
            # Nothing to count anywhere: what the walks below would conclude, without them.
            return Status(Code.SKIP)
        s = PreFilterState(pod, affinity_terms, anti_terms, ns_labels)

        def existing_anti(ni: NodeInfo) -> Contribution:
            labels = ni.labels
            tally = Tally()
            for other in ni.pods_with_required_anti_affinity:
                for t in other.required_anti_affinity:
                    if t.matches(pod, ns_labels):
                        tally.add(labels, t.topology_key, 1)
            return tally.result()

        (s.existing_anti_affinity_counts,) = self._existing_anti_sums.get(pod_key(pod, ns_labels)).refresh_snapshot(
            snapshot, snapshot.have_pods_with_required_anti_affinity, has_anti_affinity_pods, existing_anti
        )

        if affinity_terms or anti_terms:
            aff_keys = [rt.topology_key for rt in affinity_terms]

            def incoming(ni: NodeInfo) -> Contribution:
                pods = ni.pods
                if not pods:
                    return NOTHING
                labels = ni.labels
                tally = Tally()
                # A term whose topology key the node lacks counts nowhere: skip matching when
                # no term can count here.
                if any(k in labels for k in aff_keys):
                    matched = 0
                    for other in pods:
                        if pod_matches_all_terms(affinity_terms, other):
                            matched += 1
                    if matched:
                        for key in aff_keys:
                            tally.add(labels, key, 1, matched)
                for rt in anti_terms:
                    key = rt.topology_key
                    if key not in labels:
                        continue
                    matched = 0
                    for other in pods:
                        if rt.matches(other):
                            matched += 1
                    if matched:
                        tally.add(labels, key, 1, matched, into=1)
                return tally.result()

            sums = self._incoming_sums.get((terms_key(affinity_terms), terms_key(anti_terms)))
            s.affinity_counts, s.anti_affinity_counts = sums.refresh_snapshot(
                snapshot, snapshot.list, every_node, incoming
            )

        if not s.existing_anti_affinity_counts and not affinity_terms and not anti_terms:
            return Status(Code.SKIP)
        state.write(PRE_FILTER_STATE_KEY, s)
        return None

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        s.update_with_pod(to_add, node.labels, 1)
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_STATE_KEY)
        if s is None:
            return Status.as_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        s.update_with_pod(to_remove, node.labels, -1)
        return None

    # --- Filter ------------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        try:
            s: PreFilterState = state.read(PRE_FILTER_STATE_KEY)
        except KeyError:
            return Status.as_error(f'error reading "{PRE_FILTER_STATE_KEY}" from cycleState: not found')
        labels = node.labels

        terms = s.affinity_terms
        if terms:
            counts = s.affinity_counts
            pods_exist = True
            for rt in terms:
                key = rt.topology_key
                value = labels.get(key)
                if value is None:
                    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)
                by_value = counts.get(key)
                if by_value is None or by_value.get(value, 0) <= 0:
                    pods_exist = False
            if not pods_exist and (counts or not s.matches_own_affinity):
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_AFFINITY_RULES_NOT_MATCH)

        counts = s.anti_affinity_counts
        if counts:
            for rt in s.anti_affinity_terms:
                key = rt.topology_key
                by_value = counts.get(key)
                if by_value is not None:
                    value = labels.get(key)
                    if value is not None and by_value.get(value, 0) > 0:
                        return Status(Code.UNSCHEDULABLE, ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH)

        counts = s.existing_anti_affinity_counts
        if counts:
            for key, by_value in counts.items():
                value = labels.get(key)
                if value is not None and by_value.get(value, 0) > 0:
                    return Status(Code.UNSCHEDULABLE, ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH)
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> np.ndarray | None:
        batch = columns_of(nodes)
        s: PreFilterState | None = state.get(PRE_FILTER_STATE_KEY)
        if batch is None or s is None:
            return None
        cols, rows = batch.columns, batch.rows
        ok = np.ones(len(batch), bool)
        if s.affinity_terms:
            counts = s.affinity_counts
            pods_exist = np.ones(len(batch), bool)
            for rt in s.affinity_terms:
                col = cols.labels(rt.topology_key)
                ok &= col.codes[rows] != MISSING
                pods_exist &= s.positive(1, rt.topology_key, col, rows)
            if counts or not s.matches_own_affinity:
                ok &= pods_exist
        if s.anti_affinity_counts:
            for rt in s.anti_affinity_terms:
                if rt.topology_key in s.anti_affinity_counts:
                    ok &= ~s.positive(2, rt.topology_key, cols.labels(rt.topology_key), rows)
        for key in s.existing_anti_affinity_counts:
            ok &= ~s.positive(0, key, cols.labels(key), rows)
        return ok

    # --- PreScore / Score ----------------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        if not nodes:
            return Status(Code.SKIP)
        has_constraints = bool(pod.preferred_affinity or pod.preferred_anti_affinity)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return Status(Code.SKIP)
        snapshot = self.handle.snapshot()
        if not has_constraints and not _any_pods_with_affinity(snapshot):
            return Status(Code.SKIP)  # no pod anywhere to score against: the sums would be empty

        listers = self._listers()
        pref = resolve_terms(pod.preferred_affinity, listers)
        pref_anti = resolve_terms(pod.preferred_anti_affinity, listers)
        ns_labels = self._namespace_labels(pod.namespace)
        hard_weight = self.args.hard_pod_affinity_weight

        def contribution(ni: NodeInfo) -> Contribution:
            labels = ni.labels
            if not labels:
                return NOTHING
            tally = Tally()
            for other in ni.pods if has_constraints else ni.pods_with_affinity:
                for rt in pref:
                    if rt.matches(other):
                        tally.add(labels, rt.topology_key, rt.weight)
                for rt in pref_anti:
                    if rt.matches(other):
                        tally.add(labels, rt.topology_key, -rt.weight)
                if hard_weight > 0:
                    for t in other.required_affinity:
                        if t.matches(pod, ns_labels):
                            tally.add(labels, t.topology_key, hard_weight)
                for t in other.preferred_affinity:
                    if t.matches(pod, ns_labels):
                        tally.add(labels, t.topology_key, t.weight)
                for t in other.preferred_anti_affinity:
                    if t.matches(pod, ns_labels):
                        tally.add(labels, t.topology_key, -t.weight)
            return tally.result()

        key = (has_constraints, terms_key(pref), terms_key(pref_anti), pod_key(pod, ns_labels))
        sums = self._score_sums.get(key)
        if has_constraints:
            (scores,) = sums.refresh_snapshot(snapshot, snapshot.list, every_node, contribution)
        else:
            (scores,) = sums.refresh_snapshot(
                snapshot, snapshot.have_pods_with_affinity, has_affinity_pods, contribution
            )

        if not scores:
            return Status(Code.SKIP)
        state.write(PRE_SCORE_STATE_KEY, PreScoreState(scores))
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        try:
            s: PreScoreState = state.read(PRE_SCORE_STATE_KEY)
        except KeyError:
            return 0, Status.as_error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        labels = node.labels
        total = 0
        for key, by_value in s.topology_score.items():
            value = labels.get(key)
            if value is not None:
                total += by_value.get(value, 0)
        return total

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> np.ndarray | None:
        batch = columns_of(nodes)
        s: PreScoreState | None = state.get(PRE_SCORE_STATE_KEY)
        if batch is None or s is None:
            return None
        total = np.zeros(len(batch), np.int64)
        for key, by_value in s.topology_score.items():
            col = batch.columns.labels(key)
            # By code; code -1 (no such label) reads the extra last entry, 0.
            total += col.by_code(by_value)[col.codes[batch.rows]]
        return total

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: np.ndarray) -> np.ndarray | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return None  # normalize_score reports it
        if not s.topology_score or not len(scores):
            return scores
        lo, hi = int(scores.min()), int(scores.max())
        diff = hi - lo
        if diff <= 0:
            return np.zeros(len(scores), np.int64)
        return (float(MAX_NODE_SCORE) * ((scores - lo).astype(np.float64) / float(diff))).astype(np.int64)

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        s = state.get(PRE_SCORE_STATE_KEY)
        if s is None:
            return Status.as_error(f'error reading "{PRE_SCORE_STATE_KEY}" from cycleState: not found')
        if not s.topology_score or not scores:
            return None
        values = [ns.score for ns in scores]
        lo, hi = min(values), max(values)
        diff = hi - lo
        for ns in scores:
            # Float arithmetic truncated toward zero, as upstream: the same inputs give the
            # same integers.
            ns.score = int(float(MAX_NODE_SCORE) * (float(ns.score - lo) / float(diff))) if diff > 0 else 0
        return None

    def sign_pod(self, pod: PodInfo) -> dict[str, Any] | None:
        """A pod with (anti-)affinity terms of its own is never batched. Others are judged by
        existing pods' terms, which read their labels and namespace."""
        if pod.has_affinity:
            return None
        return {"Labels": pod.labels, "Namespace": pod.namespace}

    # --- events ------------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # An assigned pod added may satisfy the pod's affinity; one deleted or relabelled may
            # stop violating an anti-affinity.
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE),
                self.is_schedulable_after_pod_change,
            ),
            # The rejected pod's own labels changed: existing pods' anti-affinity (or its own
            # self-affinity) may now judge it differently.
            ClusterEventWithHint(
                ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
                self.is_schedulable_after_pod_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
                self.is_schedulable_after_node_change,
            ),
        ]

    def is_schedulable_after_pod_change(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when the rejected pod's own labels changed (1.36); when an assigned or nominated
        pod (1.36) was added (or relabelled) to match all of the pod's affinity terms,
        relabelled or deleted so it no longer matches any of its anti-affinity terms (any one
        term repels, as 1.37 has it), or deleted while its own required anti-affinity repelled
        the pod (1.36)."""
        if (new is not None and not isinstance(new, Mapping)) or (old is not None and not isinstance(old, Mapping)):
            return QueueingHint.QUEUE
        if new is not None and old is not None and _uid(new) == _uid(pod) and _labels(new) != _labels(old):
            return QueueingHint.QUEUE
        if (new is not None and not _placed(new)) or (old is not None and not _placed(old)):
            return QueueingHint.SKIP
        target = _as_pod_info(pod)
        if target is None:
            return QueueingHint.QUEUE
        terms = target.required_affinity
        anti = target.required_anti_affinity
        if old is not None and new is not None:
            if not _all_match_raw(terms, old) and _all_match_raw(terms, new):
                return QueueingHint.QUEUE
            if _any_match_raw(anti, old) and not _any_match_raw(anti, new):
                return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new is not None:
            return QueueingHint.QUEUE if _all_match_raw(terms, new) else QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        if _any_match_raw(anti, old):
            return QueueingHint.QUEUE
        # The pod may have been kept off by the deleted pod's own anti-affinity: its removal
        # frees those domains, so it must not be skipped either.
        if _deleted_pod_repels(old, target, self._namespace_labels(target.namespace)):
            return QueueingHint.QUEUE
        return QueueingHint.SKIP

    def is_schedulable_after_node_change(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when the added or updated node carries a topology key of one of the pod's
        required affinity or anti-affinity terms."""
        if not isinstance(new, Mapping):
            return QueueingHint.QUEUE
        target = _as_pod_info(pod)
        if target is None:
            return QueueingHint.QUEUE
        labels = (new.get("metadata") or {}).get("labels") or {}
        for t in target.required_affinity:
            if t.topology_key in labels:
                return QueueingHint.QUEUE
        for t in target.required_anti_affinity:
            if t.topology_key in labels:
                return QueueingHint.QUEUE
        return QueueingHint.SKIP


# --- hint helpers ----------------------------------------------------------------------------------


def _node_name(pod: Mapping[str, Any]) -> str:
    return (pod.get("spec") or {}).get("nodeName") or ""


def _placed(pod: Mapping[str, Any]) -> bool:
    """Assigned to a node, or nominated for one (filters count nominated pods too)."""
    return bool(_node_name(pod) or (pod.get("status") or {}).get("nominatedNodeName"))


def _uid(pod: Any) -> str | None:
    if isinstance(pod, PodInfo):
        return pod.uid
    return pod_uid(pod) if isinstance(pod, Mapping) else None


def _labels(pod: Mapping[str, Any]) -> Mapping[str, str]:
    return (pod.get("metadata") or {}).get("labels") or {}


def _as_pod_info(pod: Any) -> PodInfo | None:
    if isinstance(pod, PodInfo):
        return pod
    if isinstance(pod, Mapping):
        try:
            return PodInfo(dict(pod))
        except ValueError:
            return None
    return None


_NO_LABELS: dict[str, str] = {}


def _term_matches_raw(term: AffinityTerm, pod: Mapping[str, Any]) -> bool:
    """``term`` against a pod dict with no namespace labels at hand (upstream passes nil)."""
    meta = pod.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    if namespace not in term.namespaces:
        if term.namespace_selector is None or not term.namespace_selector.matches(_NO_LABELS):
            return False
    return term.selector is not None and term.selector.matches(meta.get("labels") or {})


def _all_match_raw(terms: Sequence[AffinityTerm], pod: Mapping[str, Any]) -> bool:
    if not terms:
        return False
    for t in terms:
        if not _term_matches_raw(t, pod):
            return False
    return True


def _any_match_raw(terms: Sequence[AffinityTerm], pod: Mapping[str, Any]) -> bool:
    for t in terms:
        if _term_matches_raw(t, pod):
            return True
    return False


def _deleted_pod_repels(deleted: Mapping[str, Any], target: PodInfo, ns_labels: Mapping[str, str]) -> bool:
    affinity = (deleted.get("spec") or {}).get("affinity") or {}
    if not (affinity.get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"):
        return False
    info = _as_pod_info(deleted)
    if info is None:
        return True
    for t in info.required_anti_affinity:
        if t.matches(target, ns_labels):
            return True
    return False


def _any_pods_with_affinity(snapshot: Any) -> bool:
    """Whether a node of ``snapshot`` has a pod with affinity: asked of the scheduler's snapshot
    without listing those nodes (a list it rebuilds whenever one of them changed)."""
    has = getattr(snapshot, "has_pods_with_affinity", None)
    return bool(has()) if callable(has) else bool(snapshot.have_pods_with_affinity())
