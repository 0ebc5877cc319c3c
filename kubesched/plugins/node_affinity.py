"""NodeAffinity: ``spec.nodeSelector``, required and preferred node affinity, plus an affinity
the scheduler profile adds to every pod (``addedAffinity``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, model_validator

from kubesched.framework.batch_selectors import label_map_mask, node_selector_mask, term_mask
from kubesched.framework.columns import Array, columns_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import MAX_NODE_SCORE, CycleState, Handle, NodeScore, PreFilterResult
from kubesched.framework.selectors import (
    NodeSelector,
    PreferredTerm,
    SelectorError,
    compile_preferred,
)
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.helper import default_normalize_score, default_normalize_scores

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

NODE_ADD_OR_LABEL = ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)

_OBJECT_NAME_FIELD = "metadata.name"


# --- args ------------------------------------------------------------------------------------


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class NodeSelectorRequirement(_Model):
    key: str
    operator: Literal["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"]
    values: list[str] | None = None


class NodeSelectorTerm(_Model):
    matchExpressions: list[NodeSelectorRequirement] | None = None
    matchFields: list[NodeSelectorRequirement] | None = None


class NodeSelectorSpec(_Model):
    nodeSelectorTerms: list[NodeSelectorTerm]


class PreferredSchedulingTerm(_Model):
    weight: int
    preference: NodeSelectorTerm


class NodeAffinitySpec(_Model):
    """``v1.NodeAffinity``: the shape of ``addedAffinity``."""

    requiredDuringSchedulingIgnoredDuringExecution: NodeSelectorSpec | None = None
    preferredDuringSchedulingIgnoredDuringExecution: list[PreferredSchedulingTerm] | None = None


class NodeAffinityArgs(_Model):
    """``NodeAffinityArgs``: ``addedAffinity`` is ANDed with (required) or added to (preferred)
    the node affinity of every pod this profile schedules."""

    addedAffinity: NodeAffinitySpec | None = None

    @model_validator(mode="after")
    def _selectors_compile(self) -> NodeAffinityArgs:
        compile_added_affinity(self.addedAffinity)
        return self


def compile_added_affinity(added: NodeAffinitySpec | None) -> tuple[NodeSelector | None, list[PreferredTerm]]:
    """The compiled required selector and preferred terms of ``addedAffinity``.

    Raises ``ValueError`` naming the field when a selector would not parse.
    """
    if added is None:
        return None, []
    required: NodeSelector | None = None
    preferred: list[PreferredTerm] = []
    if added.requiredDuringSchedulingIgnoredDuringExecution is not None:
        raw = added.requiredDuringSchedulingIgnoredDuringExecution.model_dump(exclude_none=True)
        try:
            required = NodeSelector.compile(raw)
        except SelectorError as exc:
            raise ValueError(f"addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: {exc}") from exc
    if added.preferredDuringSchedulingIgnoredDuringExecution:
        raw_terms = [t.model_dump(exclude_none=True) for t in added.preferredDuringSchedulingIgnoredDuringExecution]
        try:
            preferred = compile_preferred(raw_terms)
        except SelectorError as exc:
            raise ValueError(f"addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: {exc}") from exc
    return required, preferred


def _matches_node_selector(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    for k, v in selector.items():
        if labels.get(k) != v:
            return False
    return True


def required_matches(pod: PodInfo, labels: Mapping[str, str], name: str) -> bool:
    """``spec.nodeSelector`` AND required node affinity (upstream ``RequiredNodeAffinity``)."""
    if pod.node_selector and not _matches_node_selector(pod.node_selector, labels):
        return False
    if pod.required_node_affinity is not None and not pod.required_node_affinity.matches(labels, name):
        return False
    return True


def _node_labels_and_name(node: Mapping[str, Any]) -> tuple[dict[str, str], str]:
    meta = node.get("metadata") or {}
    return meta.get("labels") or {}, meta.get("name", "")


# --- plugin ----------------------------------------------------------------------------------


class NodeAffinity:
    """PreFilter (narrows to the nodes named by ``matchFields metadata.name In``), Filter,
    PreScore, Score (sum of the weights of matching preferred terms) and NormalizeScore."""

    name = "NodeAffinity"
    Args = NodeAffinityArgs

    def __init__(self, args: NodeAffinityArgs | None, handle: Handle | None = None) -> None:
        self.handle = handle
        args = args if args is not None else NodeAffinityArgs()
        self.added_node_selector, preferred = compile_added_affinity(args.addedAffinity)
        self.added_pref_sched_terms: list[PreferredTerm] | None = preferred or None

    # --- PreFilter / Filter ---------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: PodInfo) -> tuple[PreFilterResult | None, Status | None]:
        required = pod.required_node_affinity
        if required is None and self.added_node_selector is None and not pod.node_selector:
            return None, Status(Code.SKIP)
        if required is None or not required.terms:
            return None, None
        node_names: set[str] | None = None
        for term in required.terms:
            term_names: set[str] | None = None
            for key, op, values in term.fields:
                if key == _OBJECT_NAME_FIELD and op == "In":
                    # Requirements within a term are ANDed: intersect.
                    term_names = set(values) if term_names is None else term_names & values
            if term_names is None:
                # Terms are ORed, and this one does not pin node names: any node may match.
                return None, None
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(node_names), None
        return None, None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        if self.added_node_selector is not None and not self.added_node_selector.matches(node.labels, node.name):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        if not required_matches(pod, node.labels, node.name):
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return None

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        batch = columns_of(nodes)
        if batch is None:
            return None
        ok = np.ones(len(batch), bool)
        if self.added_node_selector is not None:
            ok &= node_selector_mask(self.added_node_selector, batch)
        if pod.node_selector:
            ok &= label_map_mask(pod.node_selector, batch)
        if pod.required_node_affinity is not None:
            ok &= node_selector_mask(pod.required_node_affinity, batch)
        return ok

    def filter_statuses(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> list[Status | None] | None:
        """:meth:`filter`'s Status for each node, two shared Statuses at most."""
        batch = columns_of(nodes)
        if batch is None:
            return None
        n = len(batch)
        enforced = (
            ~node_selector_mask(self.added_node_selector, batch)
            if self.added_node_selector is not None
            else np.zeros(n, bool)
        )
        ok = np.ones(n, bool)
        if pod.node_selector:
            ok &= label_map_mask(pod.node_selector, batch)
        if pod.required_node_affinity is not None:
            ok &= node_selector_mask(pod.required_node_affinity, batch)
        by_added = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_ENFORCED)
        by_pod = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_REASON_POD)
        return [by_added if e else None if o else by_pod for e, o in zip(enforced.tolist(), ok.tolist(), strict=True)]

    # --- PreScore / Score -----------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        if not pod.preferred_node_affinity and self.added_pref_sched_terms is None:
            return Status(Code.SKIP)
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        count = 0
        labels, name = node.labels, node.name
        if self.added_pref_sched_terms is not None:
            for t in self.added_pref_sched_terms:
                if t.term.matches(labels, name):
                    count += t.weight
        for t in pod.preferred_node_affinity:
            if t.term.matches(labels, name):
                count += t.weight
        return count

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        batch = columns_of(nodes)
        if batch is None:
            return None
        count = np.zeros(len(batch), np.int64)
        for t in (*(self.added_pref_sched_terms or ()), *pod.preferred_node_affinity):
            count += np.where(term_mask(t.term, batch), t.weight, 0)
        return count

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_scores(self, state: CycleState, pod: PodInfo, scores: np.ndarray) -> np.ndarray:
        return default_normalize_scores(MAX_NODE_SCORE, False, scores)

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        affinity = ((pod.pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity")
        return {"NodeAffinity": affinity, "NodeSelector": pod.node_selector}

    # --- events ---------------------------------------------------------------------------------
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(NODE_ADD_OR_LABEL, self.is_schedulable_after_node_change)]

    def is_schedulable_after_node_change(self, pod: Any, old: Any, new: Any) -> QueueingHint:
        """Queue when the (added or updated) node now matches the pod's required affinity, and
        did not before."""
        if not isinstance(new, Mapping) or (old is not None and not isinstance(old, Mapping)):
            return QueueingHint.QUEUE
        labels, name = _node_labels_and_name(new)
        if self.added_node_selector is not None and not self.added_node_selector.matches(labels, name):
            return QueueingHint.SKIP
        if isinstance(pod, PodInfo):
            pi = pod
        else:
            try:
                pi = PodInfo(pod)
            except ValueError:
                return QueueingHint.QUEUE
        if not required_matches(pi, labels, name):
            return QueueingHint.SKIP
        if old is None:
            return QueueingHint.QUEUE
        old_labels, old_name = _node_labels_and_name(old)
        return QueueingHint.SKIP if required_matches(pi, old_labels, old_name) else QueueingHint.QUEUE
