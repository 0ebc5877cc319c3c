"""A cluster trace as a workload's ``replayTrace`` op makes it: the trace's nodes and pods as
objects (:func:`trace_objects`), how many of each (:func:`trace_counts`), and why it cannot run
here (:func:`trace_missing`).

One trace so far, ``openb`` (the Alibaba GPU cluster trace of 2023, read by
:mod:`kubesched.sim.scenario.openb` as ``kubesched simulate`` reads it): ``pods`` names one of its
pod lists (``openb_pod_list_<pods>.csv``: ``default``, ``gpuspec33``, ``multigpu50`` ...),
``nodes`` one of its node lists (``openb_node_list_<nodes>.csv``: ``all_node``, ``gpu_node``).
The trace is not shipped: it is found where :func:`kubesched.sim.scenario.openb.trace_dir` looks.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Protocol

from kubesched.bench.errors import WorkloadError
from kubesched.errors import KubeschedError
from kubesched.objects import Obj

#: The traces a replayTrace op reads.
TRACES = ("openb",)


class TraceLists(Protocol):
    """What of a trace a replay takes (a :class:`kubesched.bench.model.ReplayTrace` op)."""

    @property
    def nodes(self) -> str: ...
    @property
    def pods(self) -> str: ...
    @property
    def node_limit(self) -> int | None: ...
    @property
    def pod_limit(self) -> int | None: ...


def _files(nodes: str, pods: str) -> tuple[Path, Path] | None:
    """The trace's node and pod list files, or None when the trace is not here."""
    from kubesched.sim.scenario.openb import trace_dir

    d = trace_dir()
    if d is None:
        return None
    return d / f"openb_node_list_{nodes}.csv", d / f"openb_pod_list_{pods}.csv"


def trace_missing(op: TraceLists) -> str | None:
    """Why ``op`` cannot run here (the trace, or one of its lists, is not here), or None."""
    from kubesched.sim.scenario.openb import TRACE_ABSENT

    files = _files(op.nodes, op.pods)
    if files is None:
        return TRACE_ABSENT
    for f in files:
        if not f.is_file():
            return f"{f}: no such trace file"
    return None


def trace_counts(trace: str, nodes: str, pods: str, node_limit: int | None, pod_limit: int | None) -> tuple[int, int]:
    """How many nodes and pods a replay of ``trace``'s lists makes (their rows, at most the
    limits); (0, 0) when the trace or a list is not here. Rows are counted, not read: each row
    is one object (a row the trace's reader refuses fails the run, naming the row)."""
    files = _files(nodes, pods)
    if trace not in TRACES or files is None or not all(f.is_file() for f in files):
        return 0, 0
    counted = [_rows(f) if limit is None else min(_rows(f), limit) for f, limit in zip(files, (node_limit, pod_limit))]
    return counted[0], counted[1]


@functools.cache
def _rows(path: Path) -> int:
    """The data rows of the CSV file at ``path`` (its header aside), counted once."""
    with open(path, "rb") as f:
        return max(0, sum(1 for line in f if line.strip()) - 1)


def trace_objects(op: TraceLists, scheduler_name: str, where: str) -> tuple[list[Obj], list[Obj]]:
    """The nodes and the pods (in order of creation, for ``scheduler_name``) of ``op``'s trace:
    fresh objects the caller may keep. A WorkloadError (``where``: the op) when the trace is not
    here or a row of it is refused."""
    from kubesched.sim.scenario.openb import load_openb

    missing = trace_missing(op)
    if missing is not None:
        raise WorkloadError(f"{where}: {missing}")
    try:
        scenario = load_openb(
            pods=op.pods,
            nodes=op.nodes,
            node_limit=op.node_limit,
            pod_limit=op.pod_limit,
            scheduler_name=scheduler_name,
        )
    except KubeschedError as exc:
        raise WorkloadError(f"{where}: {exc}") from None
    return scenario.nodes, scenario.pending_pods
