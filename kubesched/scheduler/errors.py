"""Why a pod fits nowhere: :class:`FitError`, its :class:`Diagnosis`, and the error that ends a
scheduling cycle early."""

from __future__ import annotations

from collections import Counter
from collections.abc import (
    Callable,
    ItemsView,
    Iterable,
    Iterator,
    KeysView,
    Mapping,
    MutableMapping,
    Sequence,
    ValuesView,
)
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.status import Status
from kubesched.framework.types import PodInfo

#: Node names and their statuses, aligned.
Columns = tuple[Sequence[str], Sequence[Status]]


class NodeStatuses(MutableMapping[str, Status]):
    """Node name → the Filter status that rejected it: a diagnosis's map, which PostFilter and
    the extenders read (read-only for PostFilter, as upstream's NodeToStatusReader). Statuses
    of many nodes can be added as columns — names and statuses — which join the map when it is
    first read: a pod that fits nowhere on a large cluster mostly needs only their counts (its
    message), not a map entry per node."""

    __slots__ = ("_map", "_columns", "_pending")

    def __init__(self, statuses: Mapping[str, Status] | None = None) -> None:
        self._map: dict[str, Status] = dict(statuses) if statuses else {}
        self._columns: list[Columns | Callable[[], Columns]] = []
        self._pending = 0

    def add_columns(self, names: Sequence[str], statuses: Sequence[Status]) -> None:
        """The statuses of nodes not in the map yet (one per name), joined when it is read."""
        if len(names) != len(statuses):
            raise ValueError(f"{len(names)} node names for {len(statuses)} statuses")
        self._columns.append((names, statuses))
        self._pending += len(names)

    def add_deferred(self, count: int, columns: Callable[[], Columns]) -> None:
        """The statuses of ``count`` nodes not in the map yet, as ``columns()`` lists them (names
        and statuses) when the map is first read — never, for most pods that fit nowhere."""
        self._columns.append(columns)
        self._pending += count

    def _joined(self) -> dict[str, Status]:
        if self._columns:
            for given in self._columns:
                if callable(given):
                    names, statuses = given()
                    if len(names) != len(statuses):  # columns added whole were checked when added
                        raise ValueError(f"{len(names)} node names for {len(statuses)} statuses")
                else:
                    names, statuses = given
                self._map.update(zip(names, statuses, strict=True))
            self._columns.clear()
            self._pending = 0
        return self._map

    def __len__(self) -> int:
        return len(self._map) + self._pending

    def __getitem__(self, name: str) -> Status:
        return self._joined()[name]

    def get(self, name: str, default: Any = None) -> Any:
        return self._joined().get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self._joined()

    def __iter__(self) -> Iterator[str]:
        return iter(self._joined())

    def __setitem__(self, name: str, status: Status) -> None:
        self._joined()[name] = status

    def __delitem__(self, name: str) -> None:
        del self._joined()[name]

    def keys(self) -> KeysView[str]:
        return self._joined().keys()

    def values(self) -> ValuesView[Status]:
        return self._joined().values()

    def items(self) -> ItemsView[str, Status]:
        return self._joined().items()

    def copy(self) -> dict[str, Status]:
        return dict(self._joined())

    def __repr__(self) -> str:
        return f"NodeStatuses({self._joined()!r})"


@dataclass
class Diagnosis:
    node_to_status: NodeStatuses = field(default_factory=NodeStatuses)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    #: Distinct statuses of ``node_to_status`` and how many nodes have each, as counted where
    #: they were added (:meth:`add_counted`): the message reads them when they cover every
    #: entry of the map, and counts the map itself otherwise.
    counted: list[tuple[Status, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        given: Mapping[str, Status] = self.node_to_status  # a plain mapping is taken as well
        if not isinstance(given, NodeStatuses):
            self.node_to_status = NodeStatuses(given)

    def add_counted(
        self, names: Sequence[str], statuses: Sequence[Status], counted: Iterable[tuple[Status, int]]
    ) -> None:
        """Statuses of nodes not in the map yet, with their distinct ones counted."""
        self.node_to_status.add_columns(names, statuses)
        self.counted.extend(counted)

    def add_counted_deferred(
        self, count: int, columns: Callable[[], Columns], counted: Iterable[tuple[Status, int]]
    ) -> None:
        """:meth:`add_counted` of ``count`` nodes whose names and statuses ``columns()`` lists
        when the map is read (see :meth:`NodeStatuses.add_deferred`)."""
        self.node_to_status.add_deferred(count, columns)
        self.counted.extend(counted)

    def add_alike(self, names: Sequence[str], status: Status) -> None:
        """One status for every node of ``names`` (none in the map yet)."""
        if names:
            self.add_counted(names, [status] * len(names), [(status, len(names))])

    def status_counts(self) -> Iterable[tuple[Status, int]]:
        """Each distinct status (by identity) of ``node_to_status`` and its number of nodes."""
        if sum(n for _, n in self.counted) == len(self.node_to_status):
            return self.counted
        statuses = self.node_to_status.values()
        nodes = Counter(map(id, statuses))
        distinct = _distinct(statuses, len(nodes))
        return [(distinct[key], n) for key, n in nodes.items()]


class FitError(Exception):
    """No node fits the pod. Its message is upstream's FailedScheduling message:
    ``0/N nodes are available: <PreFilter message, or the Filter reasons counted>.`` then the
    PostFilter message as it is (since 1.30 no period is added after it: preemption's own
    messages bring theirs, or none)."""

    def __init__(self, pod: PodInfo, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        msg = f"0/{self.num_all_nodes} nodes are available:"
        d = self.diagnosis
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            # Nodes rejected alike mostly share one Status: count each Status once, then its reasons.
            histogram: dict[str, int] = {}
            for status, n in d.status_counts():
                for reason in status.reasons:
                    histogram[reason] = histogram.get(reason, 0) + n
            if histogram:
                msg += " " + ", ".join(sorted(f"{n} {r}" for r, n in histogram.items())) + "."
        if d.post_filter_msg:
            msg += f" {d.post_filter_msg}"
        return msg


def _distinct(statuses: Iterable[Status], count: int) -> dict[int, Status]:
    """The first ``count`` distinct statuses among ``statuses`` (by identity): all of them when
    ``count`` is how many there are. The walk ends when the last is found, which for a pod that
    fits nowhere (a status per node of the cluster, a few distinct ones) is early on."""
    found: dict[int, Status] = {}
    if not count:
        return found
    for status in statuses:
        key = id(status)
        if key not in found:
            found[key] = status
            if len(found) == count:
                break
    return found


class CycleError(Exception):
    """Ends a scheduling cycle early; ``status`` says why (an error, a rejection outside Filter, no nodes)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status
