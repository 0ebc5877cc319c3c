"""The incoming pod's affinity terms with their namespace selectors resolved, as upstream
resolves them once per pod against the namespace lister."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.framework.selectors import LabelSelector
from kubesched.framework.types import AffinityTerm, PodInfo


class ResolvedTerm:
    """An incoming pod's term with its ``namespaceSelector`` folded into a namespace set.

    Upstream resolves the selector against the namespace lister once per pod, so matching an
    existing pod never needs that pod's namespace labels. An empty selector (``{}``) selects
    every namespace and stays a wildcard.
    """

    __slots__ = ("namespaces", "all_namespaces", "selector", "topology_key", "weight")

    def __init__(
        self,
        namespaces: frozenset[str],
        all_namespaces: bool,
        selector: LabelSelector | None,
        topology_key: str,
        weight: int = 0,
    ) -> None:
        self.namespaces = namespaces
        self.all_namespaces = all_namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.weight = weight

    def matches(self, pod: PodInfo) -> bool:
        if not self.all_namespaces and pod.namespace not in self.namespaces:
            return False
        return self.selector is not None and self.selector.matches(pod.labels)


def resolve_terms(terms: Sequence[AffinityTerm], listers: Any) -> list[ResolvedTerm]:
    """The incoming pod's ``terms`` with namespace selectors resolved through ``listers``."""
    out: list[ResolvedTerm] = []
    namespace_objects: list[dict[str, Any]] | None = None
    for t in terms:
        ns_sel = t.namespace_selector
        names = t.namespaces
        all_ns = False
        if ns_sel is not None:
            if ns_sel.empty:
                all_ns = True
            else:
                if namespace_objects is None:
                    namespace_objects = list(listers.list("Namespace"))
                extra = {
                    (o.get("metadata") or {}).get("name", "")
                    for o in namespace_objects
                    if ns_sel.matches((o.get("metadata") or {}).get("labels") or {})
                }
                if extra:
                    names = names | extra
        out.append(ResolvedTerm(names, all_ns, t.selector, t.topology_key, t.weight))
    return out


def pod_matches_all_terms(terms: Sequence[ResolvedTerm], pod: PodInfo) -> bool:
    """Whether ``pod`` matches every one of ``terms`` (False when there are none)."""
    if not terms:
        return False
    for t in terms:
        if not t.matches(pod):
            return False
    return True
