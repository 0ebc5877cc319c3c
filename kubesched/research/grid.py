"""The curve on the artifact's grid: arrived GPU demand 0, 1, ..., 130 % of the cluster's GPU
capacity, and at each point the allocation and fragmentation there.

As the artifact's analysis scripts do it (experiments/analysis/merge_alloc_discrete.py,
merge_frag_discrete.py and merge_frag_ratio_discrete.py):

* every sample (one per pod event) gets its arrived share rounded to a whole percent (half to
  even), its allocation rounded to two decimals;
* the value at point ``k`` is the mean over the samples at ``k``; where there are none, the mean
  over the samples within ``k - 1 .. k + 1``; where there are none either, no value (``None``);
* fragmentation is the fragmented milli-GPU as a percent of the GPU capacity (``gpuFragmentation``,
  the paper's "Frag / Total") and as a percent of the idle milli-GPU (``gpuFragmentationRatio``,
  its "Frag Rate"), each sample's ratio rounded to two decimals as the artifact logs it.

CPU and memory allocation (percent of the nodes' allocatable) go through the same averaging.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kubesched.research.metrics import Samples

#: The artifact's grid: arrived demand in whole percent of the cluster's GPU capacity.
POINTS = range(0, 131)
COLUMNS = ("arrived", "gpuAllocation", "gpuFragmentation", "gpuFragmentationRatio", "cpuAllocation", "memoryAllocation")


def _pct(part: float, whole: float) -> float | None:
    return 100.0 * part / whole if whole else None


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _round(value: float | None, digits: int = 2) -> float | None:
    return None if value is None else round(value, digits)


def curve(
    samples: Samples,
    gpu_capacity_milli: int,
    cpu_capacity_milli: int = 0,
    memory_capacity_mib: int = 0,
    points: Sequence[int] = POINTS,
) -> list[dict[str, Any]]:
    """One entry per point of ``points``: ``{"arrived": k, "gpuAllocation": ..., ...}``
    (percentages; ``None`` where the replay has no sample near ``k``)."""
    n = len(samples)
    arrived = [round(_pct(a, gpu_capacity_milli) or 0.0) for a in samples.arrived_gpu_milli]
    rows: dict[str, list[float | None]] = {
        "gpuAllocation": [_round(_pct(u, gpu_capacity_milli)) for u in samples.used_gpu_milli],
        # the artifact logs the amount with two decimals and turns the mean into a percent
        "gpuFragmentation": [round(f, 2) for f in samples.frag_gpu_milli],
        "gpuFragmentationRatio": [_round(_pct(f, i)) for f, i in zip(samples.frag_gpu_milli, samples.idle_gpu_milli)],
        "cpuAllocation": [_round(_pct(c, cpu_capacity_milli)) for c in samples.used_cpu_milli],
        "memoryAllocation": [_round(_pct(m, memory_capacity_mib)) for m in samples.used_memory_mib],
    }
    at: dict[int, list[int]] = {}
    for i, k in enumerate(arrived):
        at.setdefault(k, []).append(i)
    out: list[dict[str, Any]] = []
    for k in points:
        chosen = at.get(k)
        if not chosen:
            chosen = [i for j in (k - 1, k, k + 1) for i in at.get(j, ())]
        entry: dict[str, Any] = {"arrived": k}
        for name, values in rows.items():
            mean = _mean([values[i] for i in chosen]) if chosen and n else None
            if name == "gpuFragmentation":
                mean = _pct(mean, gpu_capacity_milli) if mean is not None else None
            entry[name] = _round(mean)
        out.append(entry)
    return out


__all__ = ["COLUMNS", "POINTS", "curve"]
