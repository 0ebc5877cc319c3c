"""Outcomes of extension points: :class:`Code` and :class:`Status`.

Plugins report outcomes as values, never as exceptions. The codes and their meaning follow
kube-scheduler exactly, so a reason written here reads the same as upstream's:

* ``SUCCESS`` — the plugin is satisfied. ``None`` is accepted everywhere as a cheaper Success
  (Filter runs thousands of times per pod, and allocating a Status per node would show).
* ``ERROR`` — an internal error; the attempt fails and the pod is retried with backoff.
* ``UNSCHEDULABLE`` — the pod does not fit, but preemption (PostFilter) might help.
* ``UNSCHEDULABLE_AND_UNRESOLVABLE`` — the pod does not fit and preemption cannot help.
* ``WAIT`` — Permit only: hold the pod until it is allowed, rejected or times out.
* ``SKIP`` — PreFilter/PreScore: this plugin's Filter/Score need not run for this pod;
  Bind: this plugin does not bind this pod, try the next one.
* ``PENDING`` — the pod waits for something outside the scheduler (e.g. a PreEnqueue gate).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from enum import IntEnum
from typing import Any


class Code(IntEnum):
    """Status codes, numbered as upstream's ``framework.Code``."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def upstream_name(self) -> str:
        return _UPSTREAM_NAMES[self]


_UPSTREAM_NAMES = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}


class Status:
    """The result of running a plugin: a code, human-readable reasons, and who said it.

    ``plugin`` is filled in by the runtime with the name of the plugin that returned a
    non-success status, so a caller never has to guess who rejected a pod.
    """

    __slots__ = ("code", "reasons", "plugin", "error")

    def __init__(
        self,
        code: Code = Code.SUCCESS,
        *reasons: str,
        plugin: str = "",
        error: BaseException | None = None,
    ) -> None:
        self.code = code
        self.reasons: list[str] = list(reasons)
        self.plugin = plugin
        self.error = error

    # --- constructors -------------------------------------------------------------------------
    @classmethod
    def success(cls) -> Status:
        return cls(Code.SUCCESS)

    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, *reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)

    @classmethod
    def skip(cls) -> Status:
        return cls(Code.SKIP)

    @classmethod
    def wait(cls, *reasons: str) -> Status:
        return cls(Code.WAIT, *reasons)

    @classmethod
    def as_error(cls, err: BaseException | str, plugin: str = "") -> Status:
        """An ERROR status from an exception (or a message), keeping the exception."""
        if isinstance(err, BaseException):
            return cls(Code.ERROR, str(err) or type(err).__name__, plugin=plugin, error=err)
        return cls(Code.ERROR, err, plugin=plugin)

    # --- predicates ----------------------------------------------------------------------------
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    def is_wait(self) -> bool:
        return self.code is Code.WAIT

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending: the pod does not fit now."""
        return self.code in _REJECTED

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        if not self.plugin:
            self.plugin = plugin
        return self

    def __eq__(self, other: object) -> bool:
        if other is None:
            return self.code is Code.SUCCESS
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, tuple(self.reasons)))

    def __repr__(self) -> str:
        who = f" plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({self.code.upstream_name}, {self.reasons!r}{who})"


_REJECTED = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})


class StatusTable:
    """Statuses of many nodes as a small table and each node's row in it: what a bulk Filter
    form (``filter_statuses``) may return instead of a list when nodes rejected alike share
    one Status. ``index`` holds one row number per node (an integer array); the table is
    read-only. It reads as the list it stands for (length, items, iteration), and the runtime
    counts the nodes of each row without a walk over them."""

    __slots__ = ("index", "table")

    def __init__(self, table: Sequence[Status | None], index: Any) -> None:
        self.table = table
        self.index = index

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, i: int) -> Status | None:
        return self.table[int(self.index[i])]

    def __iter__(self) -> Iterator[Status | None]:
        return map(self.table.__getitem__, self.index.tolist())
