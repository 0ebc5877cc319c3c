"""What a run measures: the package's :mod:`kubesched.bench.measure` (one :class:`Result` per
workload run, the instruments: loop lag, percentiles, peak RSS), and a catalogue workload's
result (:func:`measured_result`)."""

from __future__ import annotations

from benchmarks.catalogue import Workload
from kubesched.bench.measure import (
    CyclicGarbage,
    Floor,
    LoopLag,
    Result,
    cpu_seconds,
    group_cycles,
    import_lazy_modules,
    make_result,
    peak_rss_mib,
    percentile,
    with_floor,
)

__all__ = [
    "CyclicGarbage",
    "Floor",
    "LoopLag",
    "Result",
    "cpu_seconds",
    "group_cycles",
    "import_lazy_modules",
    "measured_result",
    "peak_rss_mib",
    "percentile",
    "with_floor",
]


def measured_result(
    w: Workload,
    nodes: int,
    measured: int,
    seconds: float,
    durations: list[float],
    unschedulable: int,
    scheduled: int,
    lag: LoopLag,
    backend: str = "memory",
    groups: int = 0,
    group_cycles: int = 0,
    cpu: float | None = None,
    garbage: int | None = 0,
) -> Result:
    """The :class:`Result` of one run of ``w``: ``measured`` pods decided in ``seconds``, the
    scheduling-attempt ``durations`` (seconds) of the measured pods, the loop's ``lag``; with
    ``groups`` (the pod groups the measured pods make up), groups/s over the same time; ``cpu``
    the process's CPU seconds over the same window; ``garbage`` what the collector freed meanwhile."""
    return make_result(
        w.name,
        nodes,
        w.init_pods,
        measured,
        seconds,
        durations,
        unschedulable,
        scheduled,
        lag,
        backend,
        groups,
        group_cycles,
        cpu,
        garbage,
    )
