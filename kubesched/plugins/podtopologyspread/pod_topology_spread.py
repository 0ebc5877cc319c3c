"""PodTopologySpread: spread matching pods evenly across topology domains.

A pod's ``topologySpreadConstraints`` with ``whenUnsatisfiable: DoNotSchedule`` are hard: Filter
rejects a node when placing the pod there would make ``matching pods in the node's domain + 1
(if the pod matches its own selector) - global minimum`` exceed ``maxSkew``. Constraints with
``ScheduleAnyway`` are soft: Score prefers nodes whose domains hold fewer matching pods.

Counting follows upstream:

* only pods in the incoming pod's namespace, not terminating, matching the constraint's selector
  (merged with the pod's own values for ``matchLabelKeys``) count; a nil selector matches nothing
  and an empty one counts nothing;
* only nodes that carry *all* the constraints' topology keys form domains, and only those that
  pass the constraint's node inclusion policies: ``nodeAffinityPolicy`` (Honor by default: the
  pod's nodeSelector and required node affinity) and ``nodeTaintsPolicy`` (Ignore by default;
  Honor skips nodes with NoSchedule/NoExecute taints the pod does not tolerate);
* with ``minDomains``, when fewer domains than ``minDomains`` exist the global minimum is 0.

PreFilter and PreScore walk every node in the snapshot. What one node contributes (its topology
values and matching pods per constraint, or that it does not count) is kept across cycles, keyed
by everything it depends on besides the node — namespace, selectors, topology keys, inclusion
policies and the pod's node selector, required node affinity and tolerations where a policy
honors them — and recomputed only when the node's ``NodeInfo.generation`` changed: a snapshot's
clone keeps its node's generation, and every change of pods, labels or taints bumps it. The sums
are still built in node order each cycle, so they come out exactly as an uncached walk.

Default constraints apply only to pods that declare none. Upstream gives them a selector built
from the Services, ReplicationControllers, ReplicaSets and StatefulSets that select the pod
(``helper.DefaultSelector``); when none is found the pod gets no default constraints. Here those
objects are looked up through the handle's listers under the kinds ``Service``,
``ReplicationController``, ``ReplicaSet`` and ``StatefulSet``, which the scheduler watches (and
scenarios may contain); a pod that none of them selects gets no default spreading (PreFilter and
PreScore Skip it), exactly as upstream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.framework.columns import MISSING, columns_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import MAX_NODE_SCORE, CycleState, Handle, NodeScore
from kubesched.framework.selectors import LabelSelector, SelectorError
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.helper import feature_enabled, pod_uid
from kubesched.plugins.podtopologyspread.args import (
    DO_NOT_SCHEDULE,
    HONOR,
    IGNORE,
    LIST_DEFAULTING,
    SCHEDULE_ANYWAY,
    SYSTEM_DEFAULTING,
    PodTopologySpreadArgs,
    TopologySpreadConstraint,
)
from kubesched.plugins.podtopologyspread.constraints import (
    Constraint,
    Inclusion,
    compile_constraints,
    count_matching,
    counts_key,
    node_has_all_keys,
)
from kubesched.plugins.podtopologyspread.state import (
    CriticalPaths,
    PreFilterState,
    PreScoreState,
    go_round,
    score_for_count,
    topology_normalizing_weight,
)
from kubesched.plugins.podtopologyspread.topology_counts import DomainCounts, NodeCounts

__all__ = [
    "DO_NOT_SCHEDULE",
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "HONOR",
    "IGNORE",
    "LIST_DEFAULTING",
    "NAME",
    "PRE_FILTER_KEY",
    "PRE_SCORE_KEY",
    "SCHEDULE_ANYWAY",
    "SYSTEM_DEFAULTING",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "Constraint",
    "CriticalPaths",
    "PodTopologySpread",
    "PodTopologySpreadArgs",
    "PreFilterState",
    "PreScoreState",
    "TopologySpreadConstraint",
    "compile_constraints",
    "count_matching",
    "node_has_all_keys",
    "score_for_count",
    "topology_normalizing_weight",
]

NAME = "PodTopologySpread"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"


LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"

_INVALID_SCORE = -1

SYSTEM_DEFAULT_CONSTRAINTS: tuple[dict[str, Any], ...] = (
    {"topologyKey": LABEL_HOSTNAME, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 3},
    {"topologyKey": LABEL_TOPOLOGY_ZONE, "whenUnsatisfiable": SCHEDULE_ANYWAY, "maxSkew": 5},
)

POD_CHANGE = ClusterEvent(
    EventResource.POD,
    ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATIONS | ActionType.DELETE,
)
OWN_TOLERATIONS_CHANGE = ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_TOLERATIONS)
NODE_CHANGE = ClusterEvent(
    EventResource.NODE,
    ActionType.ADD | ActionType.DELETE | ActionType.UPDATE_NODE_LABEL | ActionType.UPDATE_NODE_TAINT,
)


# --- plugin ----------------------------------------------------------------------------------


def _meta(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (obj or {}).get("metadata") or {}


def _labels_of(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    return _meta(obj).get("labels") or {}


class PodTopologySpread:
    """PreFilter (+ add_pod/remove_pod), Filter, PreScore, Score and NormalizeScore."""

    name = NAME
    Args = PodTopologySpreadArgs

    def __init__(self, args: PodTopologySpreadArgs | None = None, handle: Any = None) -> None:
        self.handle: Handle = handle
        self.comparison_operators = feature_enabled(handle, "TaintTolerationComparisonOperators")
        self.match_label_keys = feature_enabled(handle, "MatchLabelKeysInPodTopologySpread")
        args = args if args is not None else PodTopologySpreadArgs()
        self.system_defaulted = args.defaultingType == SYSTEM_DEFAULTING
        self.default_constraints: list[dict[str, Any]] = (
            [dict(c) for c in SYSTEM_DEFAULT_CONSTRAINTS]
            if self.system_defaulted
            else [c.model_dump(exclude_none=True) for c in args.defaultConstraints]
        )
        self._pre_filter_counts = DomainCounts()
        self._pre_score_counts = DomainCounts()

    # --- constraints of a pod -------------------------------------------------------------------
    def _constraints(
        self, spec_constraints: Sequence[Mapping[str, Any]], pod: Mapping[str, Any], action: str
    ) -> list[Constraint]:
        labels = _labels_of(pod)
        if spec_constraints:
            return compile_constraints(spec_constraints, labels, action, self.match_label_keys)
        return self._default_constraints(pod, action)

    def _default_constraints(self, pod: Mapping[str, Any], action: str) -> list[Constraint]:
        if not self.default_constraints:
            return []
        constraints = compile_constraints(self.default_constraints, _labels_of(pod), action, self.match_label_keys)
        if not constraints:
            return []
        selector = self._default_selector(pod)
        if selector is None:
            return []
        for c in constraints:
            c.selector = selector
        return constraints

    def _default_selector(self, pod: Mapping[str, Any]) -> LabelSelector | None:
        """Upstream ``helper.DefaultSelector``: what selects this pod's workload; None when empty."""
        listers = getattr(self.handle, "listers", None)
        if listers is None:
            return None
        meta = _meta(pod)
        ns = meta.get("namespace") or "default"
        labels = meta.get("labels") or {}
        merged: dict[str, str] = {}
        for svc in listers.list("Service", ns) or ():
            sel = (svc.get("spec") or {}).get("selector")
            # A service without a selector selects nothing, not everything.
            if sel is None:
                continue
            if all(labels.get(k) == v for k, v in sel.items()):
                merged.update(sel)
        extra: list[tuple[str, str, frozenset[str]]] = []
        owner = next((o for o in meta.get("ownerReferences") or () if o.get("controller")), None)
        if owner is not None:
            kind, api_version, name = owner.get("kind"), owner.get("apiVersion"), owner.get("name", "")
            if kind == "ReplicationController" and api_version == "v1":
                rc = listers.get("ReplicationController", ns, name)
                if rc is not None:
                    merged.update((rc.get("spec") or {}).get("selector") or {})
            elif kind in ("ReplicaSet", "StatefulSet") and api_version == "apps/v1":
                obj = listers.get(kind, ns, name)
                if obj is not None:
                    try:
                        compiled = LabelSelector.compile((obj.get("spec") or {}).get("selector"))
                    except SelectorError:
                        compiled = None
                    if compiled is not None:
                        extra.extend(compiled.requirements)
        requirements = [(k, "In", frozenset((v,))) for k, v in sorted(merged.items())] + extra
        if not requirements:
            return None
        return LabelSelector(requirements)

    def hard_constraints(self, pod: Mapping[str, Any]) -> list[Constraint]:
        """The pod's DoNotSchedule constraints (its own, else the defaults)."""
        spec = pod.get("spec") or {}
        return self._constraints(spec.get("topologySpreadConstraints") or (), pod, DO_NOT_SCHEDULE)

    # --- PreFilter ------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo) -> tuple[None, Status | None]:
        try:
            constraints = self._constraints(pod.topology_spread_constraints, pod.pod, DO_NOT_SCHEDULE)
        except SelectorError as exc:
            return None, Status.as_error(f"get constraints from pod: {exc}")
        if not constraints:
            return None, Status(Code.SKIP)
        inclusion = Inclusion(pod, self.comparison_operators)
        ns = pod.namespace

        def compute(node: NodeInfo) -> NodeCounts:
            labels = node.labels
            if not node_has_all_keys(labels, constraints):
                return None
            return tuple(
                (labels[c.topology_key], count_matching(node.pods, c.selector, ns))
                if inclusion.includes(c, node)
                else None
                for c in constraints
            )

        sums = self._pre_filter_counts.sums(
            counts_key(pod, constraints), self.handle.snapshot(), len(constraints), compute
        )
        paths = []
        for tp in sums:
            cp = CriticalPaths()
            # In value order: which of two equally small domains is paths[0] must not depend on
            # the order the nodes were counted in (upstream iterates a Go map here).
            for value in sorted(tp):
                cp.update(value, tp[value])
            paths.append(cp)
        self_match = [1 if c.matches(pod.labels) else 0 for c in constraints]
        state.write(PRE_FILTER_KEY, PreFilterState(constraints, self_match, sums, paths, shared=True))
        return None, None

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod, to_add, node, 1)

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo) -> Status | None:
        return self._update_with_pod(state, pod, to_remove, node, -1)

    def _update_with_pod(
        self, state: CycleState, pod: PodInfo, updated: PodInfo, node: NodeInfo, delta: int
    ) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.as_error(f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
        if updated.namespace != pod.namespace or node.node is None:
            return None
        labels = node.labels
        if not node_has_all_keys(labels, s.constraints):
            return None
        inclusion = Inclusion(pod, self.comparison_operators)
        for i, c in enumerate(s.constraints):
            if not c.matches(updated.labels):
                continue
            if not inclusion.includes(c, node):
                continue
            value = labels[c.topology_key]
            tp = s.own_counts()[i]
            tp[value] = tp.get(value, 0) + delta
            s.paths[i].update(value, tp[value])
        return None

    # --- Filter ---------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s = state.get(PRE_FILTER_KEY)
        if s is None:
            return Status.as_error(f'reading "{PRE_FILTER_KEY}" from cycleState: not found')
        labels = node.labels
        counts, paths, self_match = s.counts, s.paths, s.self_match
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_NODE_LABEL_NOT_MATCH)
            tp = counts[i]
            # Same as PreFilterState.min_match, inlined: Filter runs once per node.
            minimum = 0 if len(tp) < c.min_domains else paths[i].n0
            if tp.get(value, 0) + self_match[i] - minimum > c.max_skew:
                return Status(Code.UNSCHEDULABLE, ERR_REASON_CONSTRAINTS_NOT_MATCH)
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> np.ndarray | None:
        batch = columns_of(nodes)
        s = state.get(PRE_FILTER_KEY)
        if batch is None or s is None:
            return None
        ok = np.ones(len(batch), bool)
        for i, c in enumerate(s.constraints):
            col = batch.columns.labels(c.topology_key)
            codes = col.codes[batch.rows]
            tp = s.counts[i]
            minimum = 0 if len(tp) < c.min_domains else s.paths[i].n0
            # Matching pods by the code of the topology value (code -1, no such label, is
            # rejected anyway).
            matching = col.by_code(tp)
            ok &= (codes != MISSING) & (matching[codes] + s.self_match[i] - minimum <= c.max_skew)
        return ok

    # --- PreScore / Score -----------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        all_nodes = self.handle.snapshot().list()
        if not all_nodes:
            return Status(Code.SKIP)
        # Only pod-declared or listed defaults require every topology key: with the system
        # defaults a node without a zone label still gets hostname spreading.
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        try:
            constraints = self._constraints(pod.topology_spread_constraints, pod.pod, SCHEDULE_ANYWAY)
        except SelectorError as exc:
            return Status.as_error(f"calculating preScoreState: {exc}")
        if not constraints:
            return Status(Code.SKIP)
        s = PreScoreState()
        s.constraints = constraints
        s.counts = [{} for _ in constraints]
        topo_size = [0] * len(constraints)
        for node in nodes:
            labels = node.labels
            if require_all and not node_has_all_keys(labels, constraints):
                s.ignored_nodes.add(node.name)
                continue
            for i, c in enumerate(constraints):
                # Per-node counts for hostname are taken in Score.
                if c.topology_key == LABEL_HOSTNAME:
                    continue
                value = labels.get(c.topology_key, "")
                if value not in s.counts[i]:
                    s.counts[i][value] = 0
                    topo_size[i] += 1
        for i, c in enumerate(constraints):
            size = len(nodes) - len(s.ignored_nodes) if c.topology_key == LABEL_HOSTNAME else topo_size[i]
            s.weights.append(topology_normalizing_weight(size))
        inclusion = Inclusion(pod, self.comparison_operators)
        ns = pod.namespace

        def compute(node: NodeInfo) -> NodeCounts:
            labels = node.labels
            if require_all and not node_has_all_keys(labels, constraints):
                return None
            # Hostname domains are counted per node in Score, never here.
            return tuple(
                None
                if c.topology_key == LABEL_HOSTNAME or not inclusion.includes(c, node)
                else (labels.get(c.topology_key, ""), count_matching(node.pods, c.selector, ns))
                for c in constraints
            )

        key = (require_all, *counts_key(pod, constraints))
        sums = self._pre_score_counts.sums(key, self.handle.snapshot(), len(constraints), compute)
        for i, tp in enumerate(s.counts):
            totals = sums[i]
            for value in tp:
                tp[value] = totals.get(value, 0)
        state.write(PRE_SCORE_KEY, s)
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int | tuple[int, Status]:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return 0, Status.as_error(f'error reading "{PRE_SCORE_KEY}" from cycleState: not found')
        if node.name in s.ignored_nodes:
            return 0
        labels = node.labels
        total = 0.0
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == LABEL_HOSTNAME:
                cnt = count_matching(node.pods, c.selector, pod.namespace)
            else:
                cnt = s.counts[i].get(value, 0)
            total += score_for_count(cnt, c.max_skew, s.weights[i])
        return go_round(total)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> np.ndarray | None:
        batch = columns_of(nodes)
        s = state.get(PRE_SCORE_KEY)
        if batch is None or s is None:
            return None
        cols, rows = batch.columns, batch.rows
        total = np.zeros(len(batch))
        for i, c in enumerate(s.constraints):
            col = cols.labels(c.topology_key)
            codes = col.codes[rows]
            present = codes != MISSING
            if c.topology_key == LABEL_HOSTNAME:
                count = np.zeros(len(batch), np.int64)
                for j in np.flatnonzero(present).tolist():
                    count[j] = count_matching(batch[j].pods, c.selector, pod.namespace)
            else:
                count = col.by_code(s.counts[i])[codes]
            # The same float operations, in the same order, as score_for_count node by node.
            total = total + np.where(present, count * s.weights[i] + (c.max_skew - 1), 0.0)
        rounded = np.where(total >= 0, np.floor(total + 0.5), -np.floor(-total + 0.5)).astype(np.int64)
        if s.ignored_nodes:
            names = cols.names
            ignored = np.fromiter((names[r] in s.ignored_nodes for r in rows.tolist()), bool, len(batch))
            rounded[ignored] = 0
        return rounded

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: np.ndarray) -> np.ndarray | None:
        """Declines (``None``) when some nodes are left out of scoring: which ones is known by
        name only, and the per-node form handles them."""
        s = state.get(PRE_SCORE_KEY)
        if s is None or s.ignored_nodes:
            return None
        if not len(scores):
            return scores
        invalid = scores == _INVALID_SCORE
        valid = scores[~invalid]
        min_score = int(valid.min()) if len(valid) else 0
        max_score = max(0, int(valid.max())) if len(valid) else 0
        if max_score == 0:
            out = np.full(len(scores), MAX_NODE_SCORE, np.int64)
        else:
            out = MAX_NODE_SCORE * (max_score + min_score - scores) // max_score
        out[invalid] = 0
        return out

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        s = state.get(PRE_SCORE_KEY)
        if s is None:
            return Status.as_error(f'error reading "{PRE_SCORE_KEY}" from cycleState: not found')
        min_score: int | None = None
        max_score = 0
        ignored = s.ignored_nodes
        for ns in scores:
            if ns.name in ignored:
                ns.score = _INVALID_SCORE
                continue
            if min_score is None or ns.score < min_score:
                min_score = ns.score
            if ns.score > max_score:
                max_score = ns.score
        for ns in scores:
            if ns.score == _INVALID_SCORE:
                ns.score = 0
            elif max_score == 0:
                ns.score = MAX_NODE_SCORE
            else:
                ns.score = MAX_NODE_SCORE * (max_score + (min_score or 0) - ns.score) // max_score
        return None

    def sign_pod(self, pod: PodInfo) -> dict[str, Any] | None:
        """Spreading depends on where every earlier pod went: a pod with constraints (its own,
        or the plugin's defaults, which the System defaulting always has) is never batched."""
        if pod.topology_spread_constraints or self.default_constraints:
            return None
        return {}

    # --- events ---------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(POD_CHANGE, self.is_schedulable_after_pod_change),
            ClusterEventWithHint(OWN_TOLERATIONS_CHANGE, self.is_schedulable_after_pod_change),
            ClusterEventWithHint(NODE_CHANGE, self.is_schedulable_after_node_change),
        ]

    def is_schedulable_after_pod_change(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when a pod of this namespace that the constraints select is added or deleted,
        when an assigned pod's labels change whether it is selected, or when the rejected pod
        got new tolerations and a constraint honors taints."""
        if not isinstance(pod, Mapping) or (new is not None and not isinstance(new, Mapping)):
            return QueueingHint.QUEUE
        if old is not None and not isinstance(old, Mapping):
            return QueueingHint.QUEUE
        if (new is not None and not _involved(new, pod)) or (old is not None and not _involved(old, pod)):
            return QueueingHint.SKIP
        try:
            constraints = self.hard_constraints(pod)
        except SelectorError:
            return QueueingHint.QUEUE
        if new is not None and old is not None:
            if (
                pod_uid(pod) == pod_uid(new)
                and (new.get("spec") or {}).get("tolerations") != (old.get("spec") or {}).get("tolerations")
                and any(c.honor_taints for c in constraints)
            ):
                return QueueingHint.QUEUE
            old_labels, new_labels = _labels_of(old), _labels_of(new)
            if old_labels == new_labels:
                return QueueingHint.SKIP
            for c in constraints:
                if c.matches(old_labels) != c.matches(new_labels):
                    return QueueingHint.QUEUE
            return QueueingHint.SKIP
        changed = new if new is not None else old
        labels = _labels_of(changed)
        return QueueingHint.QUEUE if any(c.matches(labels) for c in constraints) else QueueingHint.SKIP

    def is_schedulable_after_node_change(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when a node carrying all topology keys appears or disappears, when an update
        changes whether it carries them, or changes a topology value or the taints of one that does."""
        if not isinstance(pod, Mapping):
            return QueueingHint.QUEUE
        if (new is not None and not isinstance(new, Mapping)) or (old is not None and not isinstance(old, Mapping)):
            return QueueingHint.QUEUE
        try:
            constraints = self.hard_constraints(pod)
        except SelectorError:
            return QueueingHint.QUEUE
        old_matching = old is not None and node_has_all_keys(_labels_of(old), constraints)
        new_matching = new is not None and node_has_all_keys(_labels_of(new), constraints)
        if old is not None and new is not None:
            if old_matching != new_matching:
                return QueueingHint.QUEUE
            if new_matching:
                old_labels, new_labels = _labels_of(old), _labels_of(new)
                if any(old_labels.get(c.topology_key) != new_labels.get(c.topology_key) for c in constraints):
                    return QueueingHint.QUEUE
                if (old.get("spec") or {}).get("taints") != (new.get("spec") or {}).get("taints"):
                    return QueueingHint.QUEUE
            return QueueingHint.SKIP
        if new is not None:
            return QueueingHint.QUEUE if new_matching else QueueingHint.SKIP
        return QueueingHint.QUEUE if old_matching else QueueingHint.SKIP


def _involved(incoming: Mapping[str, Any], target: Mapping[str, Any]) -> bool:
    """Whether ``incoming`` takes part in ``target``'s spreading: the target itself, or an
    assigned or (as 1.36 has it) nominated pod of its namespace."""
    if pod_uid(incoming) == pod_uid(target):
        return True
    node_name = (incoming.get("spec") or {}).get("nodeName") or (incoming.get("status") or {}).get("nominatedNodeName")
    same_ns = (_meta(incoming).get("namespace") or "default") == (_meta(target).get("namespace") or "default")
    return bool(node_name) and same_ns
