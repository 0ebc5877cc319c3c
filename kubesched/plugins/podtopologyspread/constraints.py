"""A pod's spread constraints compiled, the nodes each one counts (node inclusion policies), and
the key of a node's cached counts."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import Any

from kubesched.framework.selectors import LabelSelector, NodeSelector, find_untolerated_taint
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.podtopologyspread.args import HONOR, IGNORE


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
    raw: Iterable[Mapping[str, Any]], pod_labels: Mapping[str, str], action: str, match_label_keys: bool = True
) -> list[Constraint]:
    """The constraints of ``raw`` with ``whenUnsatisfiable == action``, compiled.

    ``matchLabelKeys`` adds ``key In (pod's value)`` for each key the pod carries, ahead of the
    selector's own requirements; a nil selector stays nil. Without ``match_label_keys`` (the
    MatchLabelKeysInPodTopologySpread gate off) the keys are ignored. Raises ``SelectorError``.
    """
    out: list[Constraint] = []
    for c in raw:
        if c.get("whenUnsatisfiable") != action:
            continue
        selector = LabelSelector.compile(c.get("labelSelector"))
        keys = (c.get("matchLabelKeys") or ()) if match_label_keys else ()
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


def required_affinity_matches(
    node_selector: Mapping[str, str], required: NodeSelector | None, labels: Mapping[str, str], name: str
) -> bool:
    for k, v in node_selector.items():
        if labels.get(k) != v:
            return False
    return required is None or required.matches(labels, name)


class Inclusion:
    """Node inclusion policies of one pod, evaluated at most once per node and policy."""

    __slots__ = ("node_selector", "required", "tolerations", "comparison_operators")

    def __init__(self, pod: PodInfo, comparison_operators: bool = False) -> None:
        self.node_selector = pod.node_selector
        self.required = pod.required_node_affinity
        self.tolerations = pod.tolerations
        #: The TaintTolerationComparisonOperators gate: ``Lt``/``Gt`` tolerations may match.
        self.comparison_operators = comparison_operators

    def includes(self, c: Constraint, node: NodeInfo) -> bool:
        if c.honor_affinity and (self.node_selector or self.required is not None):
            if not required_affinity_matches(self.node_selector, self.required, node.labels, node.name):
                return False
        if c.honor_taints and node.taints:
            if (
                find_untolerated_taint(node.taints, self.tolerations, comparison_operators=self.comparison_operators)
                is not None
            ):
                return False
        return True


# --- per-node counts cached across cycles -------------------------------------------------------


def counts_key(pod: PodInfo, constraints: Sequence[Constraint]) -> tuple[Hashable, ...]:
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
