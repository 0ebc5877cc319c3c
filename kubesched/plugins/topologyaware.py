"""TopologyPlacementGenerator (upstream's ``topologyaware`` plugin of kube-scheduler 1.37,
``TopologyAwareWorkloadScheduling``): the candidate placements of a pod group that asks for its
members to share one topology domain.

PlacementGenerate, no args. The PodGroup's ``spec.schedulingConstraints.topology`` names a node
label (only the first entry counts; the API allows one):

* no constraint: the parent placement itself, unchanged (one candidate);
* a constraint ``key``: one placement per distinct value of ``key`` among the parent's nodes,
  named after the value and holding the parent's nodes that carry it. A node without the label
  is in no placement; an empty value is a domain like any other. No node with the label: no
  placement at all (an empty list, not an error);
* members already placed (bound or assumed) pin the group to their domain: each must sit on a
  node known to the snapshot that carries ``key``, all with one value, and only that domain is
  offered (none when the parent has no node of it). Otherwise it is an error:
  ``cannot determine domain for already scheduled pods: <why>`` where ``<why>`` is
  ``getting node for pod ns/name: <lookup error>``, ``no topology domain found for pod ns/name``
  or ``more than 1 domain found for pod group: d0, d1``.

The PodGroup comes from the cycle's :class:`PodGroupInfo` (else the handle's pod groups); an
unknown one is an error, as upstream's lister lookup is. Placements come out in the order their
domain first appears among the parent's nodes (upstream leaves the order unspecified). A parent
whose nodes are rows of the snapshot's columns (the whole cluster, as the pod-group cycle hands
it) is split by the label's codes in the columns, without a look at each node.

For a CompositePodGroup (its own ``schedulingConstraints``) the placed members are those of
every PodGroup below it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import itemgetter
from typing import Any, ClassVar

import numpy as np

from kubesched.errors import PluginError
from kubesched.framework.columns import MISSING, Array, Categorical, NodeColumns, NodeSubset
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.names import TOPOLOGY_PLACEMENT_GENERATOR
from kubesched.framework.podgroup import Placement, PodGroupInfo, PodGroupView
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.helper import scheduled_pods, snapshot_columns

#: What a node without the constraint's label gives for its domain (no label value is this).
_ABSENT: Any = object()


class DomainError(PluginError):
    """Why the placed members do not name one topology domain (turned into an Error status)."""


def topology_key(pod_group: PodGroupView) -> str | None:
    """The label key of the group's first topology constraint, ``None`` without one."""
    topology = pod_group.topology
    if not topology or not isinstance(topology[0], dict):
        return None
    return str(topology[0].get("key") or "")


class DomainSplit:
    """How a parent's nodes (their rows in the snapshot's columns) fall into the domains of one
    label: the domains in the order they first appear, each with the positions of its nodes in
    the parent (a slice where they are consecutive). It holds while the rows and their codes
    are the same. Each domain's node list is kept while none of its rows is given a new
    NodeInfo (``NodeColumns.replaced``), and taken from the parent anew when one is (the
    snapshot replaces a node's NodeInfo as pods come and go)."""

    __slots__ = ("labels", "rows", "codes", "runs", "run_rows", "starts", "ends", "seen", "nodes")

    def __init__(self, labels: Categorical, rows: Array, codes: Array) -> None:
        self.labels = labels
        self.rows = rows
        self.codes = codes.copy()
        at = np.flatnonzero(codes != MISSING)
        by_code = at[np.argsort(codes[at], kind="stable")]
        sorted_codes = codes[by_code]
        cuts = (np.flatnonzero(sorted_codes[1:] != sorted_codes[:-1]) + 1).tolist()
        positions: list[int] = by_code.tolist()
        runs: list[tuple[int, str, Callable[[Sequence[NodeInfo]], Sequence[NodeInfo]], Array]] = []
        for a, b in zip([0, *cuts], [*cuts, len(positions)], strict=True):
            if b == a:
                continue
            first, last = positions[a], positions[b - 1]
            # Positions within a run rise (the sort is stable): consecutive ones are a slice.
            take = itemgetter(slice(first, last + 1)) if last - first == b - a - 1 else itemgetter(*positions[a:b])
            runs.append((first, labels.values[int(sorted_codes[a])], take, rows[by_code[a:b]]))
        runs.sort(key=itemgetter(0))
        #: ``(domain, take)`` in the order each domain first appears: ``take(parent)`` gives
        #: its nodes; ``run_rows[starts[k]:ends[k]]`` are run ``k``'s rows.
        self.runs = [(domain, take) for _, domain, take, _ in runs]
        self.run_rows: Array = np.concatenate([r for *_, r in runs]) if runs else np.empty(0, np.intp)
        self.starts: Array = np.cumsum([0, *(len(r) for *_, r in runs[:-1])]) if runs else np.empty(0, np.intp)
        self.ends: list[int] = [*self.starts.tolist()[1:], len(self.run_rows)]
        #: Per run, its rows' replacement counts when its nodes were taken (-1: not yet).
        self.seen: Array = np.full(len(runs), -1, np.int64)
        self.nodes: list[NodeSubset | None] = [None] * len(runs)

    def holds(self, labels: Categorical, rows: Array, codes: Array) -> bool:
        return labels is self.labels and np.array_equal(rows, self.rows) and np.array_equal(codes, self.codes)

    def placements(self, parent: Sequence[NodeInfo], columns: NodeColumns, required: str | None) -> list[Placement]:
        if not self.runs:
            return []
        counts = np.add.reduceat(columns.replaced[self.run_rows], self.starts)
        for k in np.flatnonzero(counts != self.seen).tolist():
            domain, take = self.runs[k]
            rows = self.run_rows[int(self.starts[k]) : self.ends[k]]
            self.nodes[k] = NodeSubset.at_rows(take(parent), columns, rows)
        self.seen = counts
        return [
            Placement(domain, nodes)
            for (domain, _), nodes in zip(self.runs, self.nodes, strict=True)
            if nodes is not None and (required is None or domain == required)
        ]


class TopologyPlacementGenerator:
    """One placement per topology domain (see the module docstring)."""

    name: ClassVar[str] = TOPOLOGY_PLACEMENT_GENERATOR

    def __init__(self, args: Any, handle: Handle) -> None:
        self.handle = handle
        self._splits: dict[str, DomainSplit] = {}

    def generate_placements(
        self, state: CycleState, group: PodGroupInfo, parent: Placement
    ) -> tuple[list[Placement], Status | None]:
        view = group.view
        if view.obj is None:
            groups = self.handle.pod_groups
            obj = (
                groups.composite(group.namespace, group.name)
                if group.is_composite
                else groups.get(group.namespace, group.name)
            )
            if obj is None:
                kind = "compositepodgroup" if group.is_composite else "podgroup"
                return [], Status(Code.ERROR, f'{kind}.scheduling.k8s.io "{group.name}" not found')
            view = PodGroupView(obj, group.kind)
        key = topology_key(view)
        if key is None:
            return [parent], None
        placed = scheduled_pods(self.handle.pod_groups, group)
        required: str | None = None
        if placed:
            try:
                required = self._domain_of(key, placed)
            except DomainError as exc:
                return [], Status(Code.ERROR, f"cannot determine domain for already scheduled pods: {exc}")
        if isinstance(parent.nodes, NodeSubset):
            columns = snapshot_columns(self.handle.snapshot())
            if columns is not None:
                return self._from_columns(key, required, parent.nodes, columns), None
        by_domain: dict[str, list[NodeInfo]] = {}
        for ni in parent.nodes:
            domain = ni.labels.get(key, _ABSENT)
            if domain is _ABSENT or (required is not None and domain != required):
                continue
            members = by_domain.get(domain)
            if members is None:
                by_domain[domain] = [ni]
            else:
                members.append(ni)
        return [Placement(domain, nodes) for domain, nodes in by_domain.items()], None

    def _from_columns(
        self, key: str, required: str | None, parent: NodeSubset, columns: NodeColumns
    ) -> list[Placement]:
        """The same placements, from the label's codes in the snapshot's columns: each holds its
        nodes in the parent's order, with their rows. How the parent splits is kept per label
        key while the parent's rows and their codes stay the same."""
        rows = parent.rows_in(columns)
        labels = columns.labels(key)
        codes = labels.codes[rows]
        split = self._splits.get(key)
        if split is None or not split.holds(labels, rows, codes):
            split = self._splits[key] = DomainSplit(labels, rows, codes)
        return split.placements(parent, columns, required)

    def _domain_of(self, key: str, placed: list[PodInfo]) -> str:
        """The one domain every placed member's node is in."""
        snapshot = self.handle.snapshot()
        found: str | None = None
        for pi in placed:
            try:
                node = snapshot.get(pi.node_name)
            except KeyError as exc:
                raise DomainError(f"getting node for pod {pi.key}: {exc.args[0] if exc.args else exc}") from None
            labels = node.labels
            if key not in labels:
                raise DomainError(f"no topology domain found for pod {pi.key}")
            domain = labels[key]
            if found is not None and found != domain:
                raise DomainError(f"more than 1 domain found for pod group: {found}, {domain}")
            found = domain
        assert found is not None
        return found
