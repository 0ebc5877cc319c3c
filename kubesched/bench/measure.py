"""What a benchmark run measures: one :class:`Result` per measured set of pods, and the instruments.

* pods/s: measured pods divided by the time from their creation until each is decided;
* p50/p90/p99 of the scheduling-attempt latency (one scheduling cycle) while they are scheduled;
* CPU seconds the process spent while they were scheduled (user and system, every thread: the
  scheduler, the cluster it talks to and the benchmark's own bookkeeping) and that per measured
  pod: the figure a noisy machine still compares, where pods/s moves with the neighbours' load;
* peak RSS of the process (each run has a process of its own, so it is that run's);
* the event loop's largest lag while the measured pods are scheduled (:class:`LoopLag`);
* the objects the garbage collector freed meanwhile (:class:`CyclicGarbage`): reference cycles
  the scheduling path left behind, which a busy scheduler keeps until a full collection;
* upstream's floor and our pods/s divided by it (:func:`with_floor`).

``python -m benchmarks.run`` and ``kubesched bench`` both measure with these.
"""

from __future__ import annotations

import asyncio
import gc
import importlib
import os
import resource
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from kubesched.tasks import TaskSet


@dataclass(frozen=True)
class Floor:
    """Upstream's throughput floor: scheduler_perf fails a run whose pods/s falls below it."""

    pods_per_second: float
    #: The upstream test case the threshold belongs to ("SchedulingPodAntiAffinity/5000Nodes_2000Pods").
    upstream: str


@dataclass
class Result:
    workload: str
    nodes: int
    init_pods: int
    measure_pods: int
    pods_per_second: float
    seconds: float
    unschedulable: int
    attempt_p50_ms: float
    attempt_p90_ms: float
    attempt_p99_ms: float
    peak_rss_mib: float
    scheduled: int
    loop_lag_max_ms: float = 0.0
    python: str = field(default_factory=lambda: sys.version.split()[0])
    loop: str = ""
    #: ``memory`` (the in-memory cluster) or ``http`` (the embedded API server over HTTP).
    backend: str = "memory"
    #: Upstream's floor (pods/s), our pods/s divided by it, and the upstream case it is from.
    floor_pods_per_second: float | None = None
    floor_ratio: float | None = None
    floor_source: str | None = None
    #: Pod groups the measured pods belong to (0: none), and how many were decided per second.
    groups: int = 0
    groups_per_second: float | None = None
    #: Pod-group cycles the scheduler ran (one per group when every group fits at its first try).
    group_cycles: int = 0
    #: CPU seconds of the whole process while the measured pods were scheduled, and that in
    #: milliseconds per measured pod (None when the run did not measure it).
    cpu_seconds: float = 0.0
    cpu_ms_per_pod: float | None = None
    #: Over HTTP with the API server in a process of its own: that process's CPU milliseconds per
    #: measured pod over the same window (None elsewhere).
    server_cpu_ms_per_pod: float | None = None
    #: Objects in reference cycles the scheduling left behind while the measured pods were
    #: scheduled (see :class:`CyclicGarbage`); 0 where it makes none, None where not counted.
    cyclic_garbage: int | None = 0


def with_floor(result: Result, floor: Floor | None) -> Result:
    """``result`` with upstream's floor and our ratio to it filled in (left None without a floor)."""
    if floor is not None:
        result.floor_pods_per_second = floor.pods_per_second
        result.floor_ratio = round(result.pods_per_second / floor.pods_per_second, 2)
        result.floor_source = floor.upstream
    return result


def percentile(values: list[float], p: float) -> float:
    """The nearest-rank ``p``-th percentile of ``values`` (0.0 when there are none)."""
    if not values:
        return 0.0
    s = sorted(values)
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))
    return s[k]


def cpu_seconds() -> float:
    """The CPU time this process has spent so far (user and system, every thread), in seconds;
    the difference of two readings is what a measured window cost."""
    return time.process_time()


def peak_rss_mib() -> float:
    """This process's peak resident set so far, in MiB (Linux reports ``ru_maxrss`` in KiB)."""
    rss_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(rss_kib / 1024, 1)


class LoopLag:
    """A neighbour on the loop that wants to run every millisecond: how late it gets to."""

    def __init__(self) -> None:
        self.max = 0.0
        self._task: asyncio.Task[None] | None = None
        self._tasks = TaskSet("loop lag")

    def start(self, tasks: TaskSet | None = None) -> None:
        """Watch, until :meth:`stop`, as a task of ``tasks`` (the run's, which awaits it when the
        run ends) or else of this watch's own set."""
        owner = tasks if tasks is not None else self._tasks
        self._task = owner.spawn(self._watch(), name="loop lag")

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(0.001)
            self.max = max(self.max, loop.time() - t - 0.001)


def group_cycles(sched: Any) -> int:
    """How many pod-group cycles ``sched`` (a Scheduler) has run (0 without GenericWorkload)."""
    cycle = getattr(sched, "group_cycle", None)
    return sum(cycle.outcomes.values()) if cycle is not None else 0


def import_lazy_modules(dra: bool) -> None:
    """Import what the scheduling path imports on first use, before a measured window: the
    import leaves reference cycles of its own once a process (the CEL library at DRA's first
    expression, numpy's masked arrays at the first ``numpy.unique``), which
    :class:`CyclicGarbage` would otherwise count as the scheduling's; and its time is set-up."""
    from kubesched.plugins.dynamicresources.cel import LAZY_CEL

    importlib.import_module("numpy.ma")
    if dra:
        importlib.import_module(LAZY_CEL)


#: Set (to anything but "") for a run whose process CPU is compared with another's
#: (``--against`` sets it for both sides): :class:`CyclicGarbage` counts nothing. Its closing
#: collection walks every object the scheduler froze during the window — the harness's own CPU,
#: some 2-4% of a 5000-node workload's whole-process CPU per pod, which a revision that measures
#: no window (and counts no cycles) does not spend.
NO_CYCLE_COUNT = "KUBESCHED_BENCH_NO_CYCLE_COUNT"


class CyclicGarbage:
    """The objects the collector frees from :meth:`start` to :meth:`stop`: reference cycles.

    The scheduling path is meant to make none (:class:`~kubesched.scheduler.gc_pacing.GcPacer`
    counts on it: a busy scheduler freezes what survives once a second, so a cycle left behind is
    kept until a full collection, which it runs rarely). Start it right after ``gc.freeze()``, so
    that what it counts is the window's own. :meth:`stop` ends with a collection of the young
    generations; when something froze objects meanwhile (GcPacer), with a full one over what it
    thaws (so a run that paces the collector must free its set-up's garbage before the freeze)."""

    def __init__(self) -> None:
        #: What was freed; None when not counted (:data:`NO_CYCLE_COUNT`).
        self.count: int | None = 0
        self._on = False
        self._frozen = 0
        self._counting = not os.environ.get(NO_CYCLE_COUNT)

    def start(self) -> None:
        if not self._counting:
            self.count = None
            return
        self.count = 0
        self._frozen = gc.get_freeze_count()
        if not self._on:
            gc.callbacks.append(self._collected)
            self._on = True

    def stop(self) -> None:
        if not self._on:
            return
        if gc.get_freeze_count() > self._frozen:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
        else:
            gc.collect(1)
        gc.callbacks.remove(self._collected)
        self._on = False

    def _collected(self, phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and self.count is not None:
            self.count += info.get("collected", 0)


def make_result(
    name: str,
    nodes: int,
    init_pods: int,
    measured: int,
    seconds: float,
    durations: list[float],
    unschedulable: int,
    scheduled: int,
    lag: LoopLag | float,
    backend: str = "memory",
    groups: int = 0,
    group_cycles: int = 0,
    cpu: float | None = None,
    garbage: int | None = 0,
) -> Result:
    """The :class:`Result` of one measured set: ``measured`` pods decided in ``seconds``, the
    scheduling-attempt ``durations`` (seconds) meanwhile, the loop's ``lag`` (its watch, or
    its longest in seconds); with ``groups``
    (the pod groups the measured pods make up), groups/s over the same time; with ``cpu`` (the
    CPU seconds the window cost, see :func:`cpu_seconds`), that per measured pod; ``garbage``:
    what :class:`CyclicGarbage` counted over the window."""
    seconds = max(seconds, 1e-9)
    return Result(
        workload=name,
        nodes=nodes,
        init_pods=init_pods,
        measure_pods=measured,
        pods_per_second=round(measured / seconds, 1),
        seconds=round(seconds, 3),
        unschedulable=unschedulable,
        attempt_p50_ms=round(percentile(durations, 50) * 1000, 3),
        attempt_p90_ms=round(percentile(durations, 90) * 1000, 3),
        attempt_p99_ms=round(percentile(durations, 99) * 1000, 3),
        peak_rss_mib=peak_rss_mib(),
        scheduled=scheduled,
        loop_lag_max_ms=round((lag if isinstance(lag, float) else lag.max) * 1000, 1),
        backend=backend,
        groups=groups,
        groups_per_second=round(groups / seconds, 3) if groups else None,
        group_cycles=group_cycles,
        cpu_seconds=round(cpu, 3) if cpu is not None else 0.0,
        cpu_ms_per_pod=round(cpu * 1000 / measured, 4) if cpu is not None and measured else None,
        cyclic_garbage=garbage,
    )
