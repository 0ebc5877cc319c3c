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

import math
import re
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, model_validator

from kubesched.framework import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    NodeScore,
    PodInfo,
    QueueingHint,
    Status,
)
from kubesched.framework.columns import MISSING, columns_of
from kubesched.framework.selectors import LabelSelector, NodeSelector, SelectorError, find_untolerated_taint
from kubesched.plugins.helper import pod_uid
from kubesched.plugins.podtopologyspread.topology_counts import DomainCounts, NodeCounts

NAME = "PodTopologySpread"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
HONOR = "Honor"
IGNORE = "Ignore"
SYSTEM_DEFAULTING = "System"
LIST_DEFAULTING = "List"

LABEL_HOSTNAME = "kubernetes.io/hostname"
LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone"

_MAX_INT32 = 2**31 - 1
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


# --- args ------------------------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class TopologySpreadConstraint(_Model):
    """``v1.TopologySpreadConstraint`` as a default constraint (``labelSelector`` is refused:
    default constraints get their selector from the pod's workload)."""

    maxSkew: int = 0
    topologyKey: str = ""
    whenUnsatisfiable: str = ""
    labelSelector: dict[str, Any] | None = None
    minDomains: int | None = None
    nodeAffinityPolicy: Literal["Honor", "Ignore"] | None = None
    nodeTaintsPolicy: Literal["Honor", "Ignore"] | None = None
    matchLabelKeys: list[str] | None = None


_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def _label_name_errors(path: str, value: str) -> list[str]:
    """Upstream ``ValidateLabelName`` (a qualified name: optional DNS prefix, then a name part)."""
    prefix, _, name = value.rpartition("/")
    errs: list[str] = []
    if "/" in value and not prefix:
        errs.append(f"{path}: Invalid value: {value!r}: prefix part must be non-empty")
    elif prefix and (len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        errs.append(f"{path}: Invalid value: {value!r}: prefix part must be a lowercase RFC 1123 subdomain")
    if not name:
        errs.append(f"{path}: Invalid value: {value!r}: name part must be non-empty")
    elif len(name) > 63:
        errs.append(f"{path}: Invalid value: {value!r}: name part must be no more than 63 characters")
    elif not _NAME_PART.match(name):
        errs.append(
            f"{path}: Invalid value: {value!r}: name part must consist of alphanumeric characters, '-', '_' or "
            "'.', and must start and end with an alphanumeric character"
        )
    return errs


class PodTopologySpreadArgs(_Model):
    """``PodTopologySpreadArgs``: cluster-level default constraints and how they are chosen.

    ``defaultingType: System`` uses the built-in defaults (hostname maxSkew 3 and zone maxSkew 5,
    both ScheduleAnyway) and requires ``defaultConstraints`` to be empty; ``List`` uses
    ``defaultConstraints`` as given (an empty list disables defaulting).
    """

    defaultConstraints: list[TopologySpreadConstraint] = []
    defaultingType: Literal["System", "List"] = "System"

    @model_validator(mode="after")
    def _validate(self) -> PodTopologySpreadArgs:
        errs: list[str] = []
        if self.defaultingType == SYSTEM_DEFAULTING and self.defaultConstraints:
            errs.append(f'defaultingType: Invalid value: "{SYSTEM_DEFAULTING}": when .defaultConstraints are not empty')
        seen: list[tuple[str, str]] = []
        for i, c in enumerate(self.defaultConstraints):
            p = f"defaultConstraints[{i}]"
            if c.maxSkew <= 0:
                errs.append(f"{p}.maxSkew: Invalid value: {c.maxSkew}: not in valid range (0, inf)")
            if not c.topologyKey:
                errs.append(f"{p}.topologyKey: Required value: can not be empty")
            else:
                errs.extend(_label_name_errors(f"{p}.topologyKey", c.topologyKey))
            if not c.whenUnsatisfiable:
                errs.append(f"{p}.whenUnsatisfiable: Required value: can not be empty")
            elif c.whenUnsatisfiable not in (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY):
                errs.append(
                    f'{p}.whenUnsatisfiable: Unsupported value: "{c.whenUnsatisfiable}": supported values: '
                    f'"{DO_NOT_SCHEDULE}", "{SCHEDULE_ANYWAY}"'
                )
            if c.labelSelector is not None:
                errs.append(
                    f"{p}.labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"
                )
            pair = (c.topologyKey, c.whenUnsatisfiable)
            if pair in seen:
                errs.append(f'{p}: Duplicate value: "{{{c.topologyKey}, {c.whenUnsatisfiable}}}"')
            seen.append(pair)
        if errs:
            raise ValueError("; ".join(errs))
        return self


# --- constraints -----------------------------------------------------------------------------


class Constraint:
    """One spread constraint with its selector compiled (``selector is None``: matches nothing)."""

    __slots__ = ("max_skew", "topology_key", "selector", "min_domains", "honor_affinity", "honor_taints")

    def __init__(
        self,
        max_skew: int,
        topology_key: str,
        selector: LabelSelector | None,
        min_domains: int = 1,
        honor_affinity: bool = True,
        honor_taints: bool = False,
    ) -> None:
        self.max_skew = max_skew
        self.topology_key = topology_key
        self.selector = selector
        self.min_domains = min_domains
        self.honor_affinity = honor_affinity
        self.honor_taints = honor_taints

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.selector is not None and self.selector.matches(labels)

    def __repr__(self) -> str:
        return (
            f"Constraint({self.topology_key!r}, maxSkew={self.max_skew}, minDomains={self.min_domains}, "
            f"affinity={'Honor' if self.honor_affinity else 'Ignore'}, "
            f"taints={'Honor' if self.honor_taints else 'Ignore'}, {self.selector!r})"
        )


def compile_constraints(
    raw: Iterable[Mapping[str, Any]], pod_labels: Mapping[str, str], action: str
) -> list[Constraint]:
    """The constraints of ``raw`` with ``whenUnsatisfiable == action``, compiled.

    ``matchLabelKeys`` adds ``key In (pod's value)`` for each key the pod carries, ahead of the
    selector's own requirements; a nil selector stays nil. Raises ``SelectorError``.
    """
    out: list[Constraint] = []
    for c in raw:
        if c.get("whenUnsatisfiable") != action:
            continue
        selector = LabelSelector.compile(c.get("labelSelector"))
        keys = c.get("matchLabelKeys") or ()
        if keys and selector is not None:
            extra = {k: pod_labels[k] for k in keys if k in pod_labels}
            if extra:
                merged = [(k, "In", frozenset((v,))) for k, v in sorted(extra.items())]
                selector = LabelSelector(merged + list(selector.requirements))
        min_domains = c.get("minDomains")
        out.append(
            Constraint(
                int(c.get("maxSkew") or 0),
                c.get("topologyKey") or "",
                selector,
                1 if min_domains is None else int(min_domains),
                (c.get("nodeAffinityPolicy") or HONOR) == HONOR,
                (c.get("nodeTaintsPolicy") or IGNORE) == HONOR,
            )
        )
    return out


def node_has_all_keys(labels: Mapping[str, str], constraints: Sequence[Constraint]) -> bool:
    for c in constraints:
        if c.topology_key not in labels:
            return False
    return True


def count_matching(pods: Iterable[PodInfo], selector: LabelSelector | None, namespace: str) -> int:
    """Pods in ``namespace``, not terminating, that ``selector`` matches (an empty selector counts none)."""
    if selector is None or selector.empty:
        return 0
    n = 0
    for p in pods:
        if p.deleting or p.namespace != namespace:
            continue
        if selector.matches(p.labels):
            n += 1
    return n


def _required_affinity_matches(
    node_selector: Mapping[str, str], required: NodeSelector | None, labels: Mapping[str, str], name: str
) -> bool:
    for k, v in node_selector.items():
        if labels.get(k) != v:
            return False
    return required is None or required.matches(labels, name)


class _Inclusion:
    """Node inclusion policies of one pod, evaluated at most once per node and policy."""

    __slots__ = ("node_selector", "required", "tolerations")

    def __init__(self, pod: PodInfo) -> None:
        self.node_selector = pod.node_selector
        self.required = pod.required_node_affinity
        self.tolerations = pod.tolerations

    def includes(self, c: Constraint, node: NodeInfo) -> bool:
        if c.honor_affinity and (self.node_selector or self.required is not None):
            if not _required_affinity_matches(self.node_selector, self.required, node.labels, node.name):
                return False
        if c.honor_taints and node.taints:
            if find_untolerated_taint(node.taints, self.tolerations) is not None:
                return False
        return True


# --- per-node counts cached across cycles -------------------------------------------------------


def _counts_key(pod: PodInfo, constraints: Sequence[Constraint]) -> tuple[Hashable, ...]:
    """Everything besides the node that decides a node's :data:`NodeCounts`."""
    honor_affinity = any(c.honor_affinity for c in constraints)
    honor_taints = any(c.honor_taints for c in constraints)
    required = pod.required_node_affinity
    return (
        pod.namespace,
        tuple(
            (c.topology_key, None if c.selector is None else c.selector.requirements, c.honor_affinity, c.honor_taints)
            for c in constraints
        ),
        repr(pod.node_selector) if honor_affinity else None,
        None
        if not honor_affinity or required is None
        else tuple((tuple(t.labels), tuple(t.fields)) for t in required.terms),
        repr(pod.tolerations) if honor_taints else None,
    )


# --- PreFilter state -------------------------------------------------------------------------


class CriticalPaths:
    """The two topology values with the fewest matching pods, as upstream keeps them.

    ``paths[0]`` always holds the minimum; ``paths[1]`` is not guaranteed to be the second
    minimum after incremental updates (preemption evaluates each node on its own copy).
    """

    __slots__ = ("v0", "n0", "v1", "n1")

    def __init__(self, v0: str = "", n0: int = _MAX_INT32, v1: str = "", n1: int = _MAX_INT32) -> None:
        self.v0, self.n0, self.v1, self.n1 = v0, n0, v1, n1

    def update(self, value: str, num: int) -> None:
        if value == self.v0:
            self.n0 = num
        elif value == self.v1:
            self.n1 = num
        else:
            if num < self.n0:
                self.v1, self.n1 = self.v0, self.n0
                self.v0, self.n0 = value, num
            elif num < self.n1:
                self.v1, self.n1 = value, num
            return
        if self.n0 > self.n1:
            self.v0, self.n0, self.v1, self.n1 = self.v1, self.n1, self.v0, self.n0

    def pairs(self) -> tuple[tuple[str, int], tuple[str, int]]:
        return (self.v0, self.n0), (self.v1, self.n1)

    def copy(self) -> CriticalPaths:
        return CriticalPaths(self.v0, self.n0, self.v1, self.n1)

    def __repr__(self) -> str:
        return f"CriticalPaths({self.pairs()!r})"


class PreFilterState:
    """Hard constraints and, per constraint, matching pods per topology value.

    ``self_match[i]``: whether the incoming pod matches constraint ``i``'s selector (fixed for
    the cycle, so Filter does not re-evaluate it per node). ``shared``: ``counts`` are the
    cross-cycle cache's own dicts, copied before the first change (:meth:`own_counts`).
    """

    __slots__ = ("constraints", "self_match", "counts", "paths", "shared")

    def __init__(
        self,
        constraints: list[Constraint],
        self_match: list[int],
        counts: list[dict[str, int]],
        paths: list[CriticalPaths],
        shared: bool = False,
    ) -> None:
        self.constraints = constraints
        self.self_match = self_match
        self.counts = counts
        self.paths = paths
        self.shared = shared

    def min_match(self, i: int) -> int:
        """The global minimum for constraint ``i``: 0 while fewer domains than minDomains exist."""
        if len(self.counts[i]) < self.constraints[i].min_domains:
            return 0
        return self.paths[i].n0

    def own_counts(self) -> list[dict[str, int]]:
        """``counts``, safe to change."""
        if self.shared:
            self.counts = [dict(c) for c in self.counts]
            self.shared = False
        return self.counts

    def clone(self) -> PreFilterState:
        # Constraints never change during a cycle: share them.
        return PreFilterState(
            self.constraints, self.self_match, [dict(c) for c in self.counts], [p.copy() for p in self.paths]
        )


class PreScoreState:
    """Soft constraints, nodes left out of scoring, per-value counts and normalizing weights."""

    __slots__ = ("constraints", "ignored_nodes", "counts", "weights")

    def __init__(self) -> None:
        self.constraints: list[Constraint] = []
        self.ignored_nodes: set[str] = set()
        self.counts: list[dict[str, int]] = []
        self.weights: list[float] = []

    def clone(self) -> PreScoreState:
        return self


def topology_normalizing_weight(size: int) -> float:
    """Weight of a topology with ``size`` values: small topologies are not watered down by big ones."""
    return math.log(size + 2)


def score_for_count(count: int, max_skew: int, weight: float) -> float:
    """``maxSkew - 1`` is added so that a larger maxSkew tolerates more difference between domains."""
    return count * weight + (max_skew - 1)


def _go_round(x: float) -> int:
    """Round half away from zero, as Go's ``math.Round``."""
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


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
        self.handle = handle
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
            return compile_constraints(spec_constraints, labels, action)
        return self._default_constraints(pod, action)

    def _default_constraints(self, pod: Mapping[str, Any], action: str) -> list[Constraint]:
        if not self.default_constraints:
            return []
        constraints = compile_constraints(self.default_constraints, _labels_of(pod), action)
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
        inclusion = _Inclusion(pod)
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
            _counts_key(pod, constraints), self.handle.snapshot(), len(constraints), compute
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
        inclusion = _Inclusion(pod)
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
        inclusion = _Inclusion(pod)
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

        key = (require_all, *_counts_key(pod, constraints))
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
        return _go_round(total)

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
    assigned pod of its namespace."""
    if pod_uid(incoming) == pod_uid(target):
        return True
    node_name = (incoming.get("spec") or {}).get("nodeName")
    same_ns = (_meta(incoming).get("namespace") or "default") == (_meta(target).get("namespace") or "default")
    return bool(node_name) and same_ns
