"""Which nodes see the same pools, for one :class:`~.allocator.Allocator`: a node's view of the
slices is its own slices (``nodeName``) and the cluster-wide ones its name and labels select
(``allNodes``, a node selector). Nodes without slices of their own whose labels every distinct
node selector answers alike see the same pools, so the allocator gathers those pools once and
searches them once, not once per node (:class:`NodeViews`).

A view is shared only when nothing in the search depends on the node: a slice with per-device
node selection, or a node selector that does not compile, makes every node's view its own (the
search then runs for each node, as without views)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kubesched.framework.selectors import NodeSelector, SelectorError
from kubesched.plugins.dynamicresources.allocator_types import slice_spec

#: A node's view: nodes with equal keys see the same pools.
ViewKey = tuple[str | None, tuple[bool, ...], tuple[tuple[str, str], ...]]


class NodeViews:
    """The view key of each node over one allocator's slices (see the module)."""

    def __init__(self, on_node: Mapping[str, Sequence[Any]], shared_slices: Sequence[Any]) -> None:
        self._on_node = on_node
        #: The distinct node selectors of the cluster-wide slices, compiled (``None``: matches all).
        self._selectors: list[NodeSelector | None] = []
        #: Whether every node's view is its own (see the module).
        self.per_node = False
        seen: dict[str, int] = {}
        for s in shared_slices:
            spec = slice_spec(s)
            if spec.get("perDeviceNodeSelection"):
                self.per_node = True
            selector = spec.get("nodeSelector")
            if selector is None or spec.get("allNodes"):
                continue
            text = json.dumps(selector, sort_keys=True)
            if text in seen:
                continue
            seen[text] = len(self._selectors)
            try:
                self._selectors.append(NodeSelector.compile(selector))
            except SelectorError:
                self.per_node = True  # gathering the pools reports it, node by node
                return

    def key(self, node_name: str, labels: Mapping[str, str]) -> ViewKey:
        """The node's view: its name when its view is its own (slices of its own, or see the
        module), what each distinct node selector says of it, and its labels when per-device
        node selection looks at them."""
        own = node_name if self.per_node or self._on_node.get(node_name) else None
        verdicts = tuple(c is None or c.matches(labels, node_name) for c in self._selectors)
        return own, verdicts, tuple(sorted(labels.items())) if self.per_node else ()
