"""Node and pod lists in the openb CSV columns, read for a replay.

Any CSV with these columns works, the trace's own files (``openb_node_list_*.csv``,
``openb_pod_list_*.csv``) among them:

* nodes: ``sn`` (name), ``cpu_milli``, ``memory_mib``, ``gpu`` (count), ``model`` (optional);
* pods: ``name``, ``cpu_milli``, ``memory_mib``, ``num_gpu``, ``gpu_milli`` (per GPU; above 1000
  counts as 1000, as the artifact reads it), ``gpu_spec`` (optional, ``A|B``), and for churn
  ``creation_time`` and ``deletion_time`` (seconds; a pod without a deletion time stays).

Every value is checked before anything runs; a bad one is refused naming the file, the row (as
a spreadsheet numbers it: the header is row 1) and the column. The Kubernetes objects themselves
are built by :mod:`kubesched.sim.scenario.openb`, as ``simulate`` builds them from the trace.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import marshal
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kubesched.objects import Obj
from kubesched.research.errors import ReplayError
from kubesched.sim.scenario.openb import TraceError, node_objects, timed_pod_objects

NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu")
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
CHURN_COLUMNS = ("creation_time",)
MILLI = 1000


@dataclass(frozen=True)
class TraceNode:
    name: str
    cpu_milli: int
    memory_mib: int
    gpus: int
    model: str
    obj: Obj


@dataclass(frozen=True)
class TracePod:
    """One pod of the workload: what it asks (``gpu_milli`` per GPU, 0 without GPUs) and when
    it came and went in the trace (``None`` where the file does not say)."""

    name: str
    cpu_milli: int
    memory_mib: int
    gpu_count: int
    gpu_milli: int
    created: int | None
    deleted: int | None
    obj: Obj

    @property
    def total_gpu_milli(self) -> int:
        return self.gpu_count * self.gpu_milli

    @property
    def kind(self) -> str:
        """``cpu``, ``sharedGpu`` (part of one GPU), ``oneGpu`` or ``multiGpu`` (whole GPUs)."""
        if self.gpu_count == 0:
            return "cpu"
        if self.gpu_milli < MILLI:
            return "sharedGpu"
        return "oneGpu" if self.gpu_count == 1 else "multiGpu"

    def scheduled_by(self, scheduler_name: str) -> TracePod:
        """The same pod asking for ``scheduler_name`` (a new object; this one's is unchanged)."""
        obj = {**self.obj, "spec": {**self.obj["spec"], "schedulerName": scheduler_name}}
        return TracePod(
            self.name, self.cpu_milli, self.memory_mib, self.gpu_count, self.gpu_milli, self.created, self.deleted, obj
        )

    def renamed(self, name: str) -> TracePod:
        """The same pod under another name (a sample drawn again from the workload)."""
        meta = {**self.obj["metadata"], "name": name}
        return TracePod(
            name,
            self.cpu_milli,
            self.memory_mib,
            self.gpu_count,
            self.gpu_milli,
            None,
            None,
            {**self.obj, "metadata": meta},
        )


def _rows(path: Path, required: tuple[str, ...], what: str) -> Iterator[tuple[int, dict[str, str]]]:
    if not path.is_file():
        raise ReplayError(f"{path}: no such file")
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            missing = [c for c in required if c not in header]
            if missing:
                raise ReplayError(
                    f"{path}: no column {missing[0]!r} in the header (a {what} list has the columns "
                    f"{', '.join(required)}; found: {', '.join(header) or 'none'})"
                )
            for i, row in enumerate(reader):
                if None in row:
                    raise ReplayError(f"{path}: row {i + 2}: more cells than the header has columns")
                yield i + 2, row
    except UnicodeDecodeError as exc:
        raise ReplayError(f"{path}: not UTF-8 text: byte {exc.start} cannot be decoded") from None
    except csv.Error as exc:
        raise ReplayError(f"{path}: not a CSV file: {exc}") from None


def _number(path: Path, line: int, row: dict[str, str], column: str, *, empty: int | None = None) -> int:
    raw = row.get(column)
    text = (raw or "").strip()
    if text == "":
        if empty is not None:
            return empty
        raise ReplayError(f"{path}: row {line}, column {column!r}: empty (a number is needed)")
    try:
        value = float(text)
    except ValueError:
        raise ReplayError(f"{path}: row {line}, column {column!r}: not a number: {text!r}") from None
    if value != value or value in (float("inf"), float("-inf")) or value != int(value):
        raise ReplayError(f"{path}: row {line}, column {column!r}: not a whole number: {text!r}")
    if value < 0:
        raise ReplayError(f"{path}: row {line}, column {column!r}: must not be negative: {text!r}")
    return int(value)


def _unique_name(path: Path, line: int, row: dict[str, str], column: str, what: str, seen: dict[str, int]) -> str:
    """The row's name in ``column``: not empty, and not on an earlier row (``seen``: name → row)."""
    name = (row.get(column) or "").strip()
    if not name:
        raise ReplayError(f"{path}: row {line}, column {column!r}: empty {what} name")
    if name in seen:
        raise ReplayError(
            f"{path}: row {line}, column {column!r}: {what} {name!r} is listed twice (first at row {seen[name]})"
        )
    seen[name] = line
    return name


def read_nodes(path: Path, *, gpu_only: bool = True) -> list[TraceNode]:
    """The nodes of ``path``, in file order; with ``gpu_only`` those with at least one GPU."""
    seen: dict[str, int] = {}
    rows: list[tuple[str, int, int, int, str]] = []
    for line, row in _rows(path, NODE_COLUMNS, "node"):
        name = _unique_name(path, line, row, "sn", "node", seen)
        cpu = _number(path, line, row, "cpu_milli")
        memory = _number(path, line, row, "memory_mib")
        gpus = _number(path, line, row, "gpu", empty=0)
        rows.append((name, cpu, memory, gpus, (row.get("model") or "").strip()))
    try:
        objs = node_objects(path)
    except TraceError as exc:
        raise ReplayError(f"{path}: {exc}") from None
    nodes = [TraceNode(name, cpu, mem, gpus, model, obj) for (name, cpu, mem, gpus, model), obj in zip(rows, objs)]
    if gpu_only:
        nodes = [n for n in nodes if n.gpus > 0]
    if not nodes:
        raise ReplayError(f"{path}: no {'GPU ' if gpu_only else ''}nodes to replay on")
    return nodes


#: Pod lists read in this process, by their bytes and whether churn's columns were required: a
#: sweep's worker replays one workload under every configuration and seed, and parsing it cost
#: as much as a tenth of a second each time. What is kept is handed out only to a caller that
#: says it changes nothing (``shared``); any other read gets its own copies of the pod objects.
_PODS: dict[tuple[bytes, bool], list[TracePod]] = {}
_PODS_KEPT = 4


def read_pods(path: Path, *, churn: bool = False, shared: bool = False) -> list[TracePod]:
    """The pods of ``path`` in file order (churn needs ``creation_time`` on every row).

    ``shared``: the caller changes none of the pod objects (it makes new ones where it needs a
    change, as :meth:`TracePod.scheduled_by`): they may be those kept for the next read, which
    spares copying them all."""
    try:
        key = (hashlib.sha256(path.read_bytes()).digest(), churn)
    except OSError:
        return _read_pods(path, churn=churn)  # says what is wrong with the path
    kept = _PODS.get(key)
    if kept is None:
        kept = _read_pods(path, churn=churn)  # a list refused is refused again next time
        if len(_PODS) >= _PODS_KEPT:
            _PODS.clear()
        _PODS[key] = kept
    if shared:
        return list(kept)
    return [
        TracePod(p.name, p.cpu_milli, p.memory_mib, p.gpu_count, p.gpu_milli, p.created, p.deleted, _copy(p.obj))
        for p in kept
    ]


def _copy(obj: Obj) -> Obj:
    """A deep copy of a pod object as the trace builds one (dicts, lists, strings, numbers):
    ``marshal`` at version 2 copies such a tree without sharing any part, in C."""
    try:
        copied: Obj = marshal.loads(marshal.dumps(obj, 2))
    except ValueError:  # something marshal cannot write: the general copy
        return copy.deepcopy(obj)
    return copied


def _read_pods(path: Path, *, churn: bool = False) -> list[TracePod]:
    required = POD_COLUMNS + (CHURN_COLUMNS if churn else ())
    seen: dict[str, int] = {}
    rows: list[tuple[str, int, int, int, int, int | None, int | None]] = []
    for line, row in _rows(path, required, "pod"):
        name = _unique_name(path, line, row, "name", "pod", seen)
        cpu = _number(path, line, row, "cpu_milli")
        memory = _number(path, line, row, "memory_mib")
        count = _number(path, line, row, "num_gpu", empty=0)
        milli = min(_number(path, line, row, "gpu_milli", empty=0), MILLI)
        if count == 0:
            milli = 0
        elif milli == 0:
            raise ReplayError(
                f"{path}: row {line}, column 'gpu_milli': 0 with num_gpu {count}: a pod with GPUs asks for 1..1000 milli-GPU of each"
            )
        elif count > 1 and milli < MILLI:
            raise ReplayError(
                f"{path}: row {line}, column 'gpu_milli': {milli} with num_gpu {count}: a pod sharing a GPU asks for one GPU; "
                "several GPUs are whole (1000)"
            )
        created = deleted = None
        if "creation_time" in row:
            created = _number(path, line, row, "creation_time", empty=None if churn else -1)
            created = None if created < 0 else created
        if (row.get("deletion_time") or "").strip():
            deleted = _number(path, line, row, "deletion_time")
        rows.append((name, cpu, memory, count, milli, created, deleted))
    if not rows:
        raise ReplayError(f"{path}: no pods to replay")
    try:
        objs = {pod["metadata"]["name"]: pod for _, _, pod in timed_pod_objects(path)}
    except TraceError as exc:
        raise ReplayError(f"{path}: {exc}") from None
    return [TracePod(*fields, objs[fields[0]]) for fields in rows]


__all__ = ["MILLI", "TraceNode", "TracePod", "read_nodes", "read_pods"]
