"""Several configurations on one trace, side by side: which profile suits this workload.

Each configuration is replayed (:func:`kubesched.research.replay.replay`) with every seed, one
experiment after another, and the quality metrics are averaged over the seeds: GPU allocation
when arrived demand reaches 100 % and at the end, fragmentation, CPU and memory allocation, pods
that found no node by kind, and how the pods spread over the GPU nodes. The curves are averaged
point by point for the plot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kubesched.research.errors import ReplayError
from kubesched.research.grid import COLUMNS
from kubesched.research.replay import ReplayOptions, ReplayResult, replay

#: The metrics of the table, from each replay's summary, in order.
METRICS = (
    "gpuAllocationAt100",
    "gpuAllocation",
    "gpuFragmentation",
    "gpuFragmentationRatio",
    "cpuAllocation",
    "memoryAllocation",
    "unscheduled",
    "gpuNodesUsed",
    "gpuNodesFull",
    "nodeGpuAllocationStdev",
)
KINDS = ("cpu", "sharedGpu", "oneGpu", "multiGpu")
#: What the JSON keeps of each seed's replay.
PER_SEED = ("seed", "gpuAllocationAt100", "gpuAllocation", "gpuFragmentation", "pods", "unscheduled", "seconds")


@dataclass
class Compared:
    """One configuration: its name (the file's stem, made unique), the seeds' summaries, the
    metrics averaged over them, and the mean curve."""

    name: str
    config: Path
    summaries: list[dict[str, Any]]
    metrics: dict[str, Any]
    curve: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "config": str(self.config),
            "seeds": [s["seed"] for s in self.summaries],
            "metrics": self.metrics,
            "perSeed": [{k: s.get(k) for k in PER_SEED} for s in self.summaries],
            "curve": self.curve,
        }


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(sum(kept) / len(kept), 2) if kept else None


def _names(configs: Sequence[Path]) -> list[str]:
    names: list[str] = []
    for path in configs:
        name = path.stem
        if name in names:
            name = str(path)
        names.append(name)
    return names


def summarize(results: Sequence[ReplayResult]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The metrics and the curve of several seeds of one configuration, averaged."""
    summaries = [r.summary for r in results]
    metrics: dict[str, Any] = {m: _mean([s.get(m) for s in summaries]) for m in METRICS}
    metrics["unscheduledByKind"] = {k: _mean([s["unscheduledByKind"].get(k, 0) for s in summaries]) for k in KINDS}
    metrics["seconds"] = _mean([s["seconds"] for s in summaries])
    curve = []
    for points in zip(*(r.curve for r in results)):
        entry: dict[str, Any] = {"arrived": points[0]["arrived"]}
        for column in COLUMNS[1:]:
            entry[column] = _mean([p.get(column) for p in points])
        curve.append(entry)
    return metrics, curve


async def compare(
    base: ReplayOptions,
    configs: Sequence[Path],
    seeds: Sequence[int],
    progress: Callable[[str, int], None] | None = None,
) -> list[Compared]:
    """Replay ``base`` with each configuration and seed; ``progress(name, seed)`` before each."""
    if not configs:
        raise ReplayError("compare needs at least one configuration")
    if not seeds:
        raise ReplayError("compare needs at least one seed")
    out: list[Compared] = []
    for name, config in zip(_names(configs), configs):
        results = []
        for seed in seeds:
            if progress is not None:
                progress(name, seed)
            results.append(await replay(replace(base, config=config, seed=seed)))
        metrics, curve = summarize(results)
        out.append(Compared(name, config, [r.summary for r in results], metrics, curve))
    return out


def run_compare(
    base: ReplayOptions,
    configs: Sequence[Path],
    seeds: Sequence[int],
    progress: Callable[[str, int], None] | None = None,
) -> list[Compared]:
    """:func:`compare` on a fresh event loop (uvloop where installed)."""
    import asyncio

    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency where it builds
        return asyncio.run(compare(base, configs, seeds, progress))
    return uvloop.run(compare(base, configs, seeds, progress))


__all__ = ["KINDS", "METRICS", "Compared", "compare", "run_compare", "summarize"]
