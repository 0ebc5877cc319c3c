"""One experiment: a workload replayed on a cluster with one configuration and one seed.

The pods go through the simulator one at a time (:class:`kubesched.sim.run.stepping.SteppedSimulation`:
the real scheduler loop with the configuration's plugins), each to a decision and its binding
before the next arrives, as the FGD paper's simulator runs them; the cluster is measured after
every one (:mod:`.metrics`) and the samples put on the paper's grid (:mod:`.grid`).
"""

from __future__ import annotations

import asyncio
import hashlib
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.research import gpushare
from kubesched.research.collector import FrozenSurvivors
from kubesched.research.configure import PERCENTAGE_OF_NODES_TO_SCORE, experiment_config
from kubesched.research.errors import ReplayError
from kubesched.research.grid import curve
from kubesched.research.metrics import ClusterGauge, Samples
from kubesched.research.protocol import arrival_events, churn_events, inflated, shuffled
from kubesched.research.trace import MILLI, TracePod, read_nodes, read_pods
from kubesched.sim.run.simulate import SimulationSettings
from kubesched.sim.run.stepping import SteppedSimulation

#: The paper's inflation: pods arrive until their GPU demand is 130 % of the cluster's GPUs.
DEFAULT_INFLATION = 1.3
#: How many of the most frequent reasons a summary lists for pods that got no node.
KEPT_REASONS = 5


@dataclass
class ReplayOptions:
    nodes: Path
    pods: Path
    config: Path
    seed: int = 42
    #: Arrived GPU demand to reach, as a multiple of the cluster's GPU capacity; ``None``: 1.3
    #: (without churn); 0 or less: the workload once, shuffled, nothing drawn.
    inflate: float | None = None
    #: Replay the trace's own creations and deletions instead (no shuffle, no inflation).
    churn: bool = False
    #: Keep nodes without GPUs (the protocol replays on GPU nodes only).
    all_nodes: bool = False


@dataclass
class ReplayResult:
    curve: list[dict[str, Any]]
    summary: dict[str, Any]
    samples: Samples = field(repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"curve": self.curve, "summary": self.summary}


#: The typical pods of the workloads replayed in this process, by the pod list's bytes: a sweep's
#: worker replays the same workload under every configuration and seed.
_TYPICAL: dict[bytes, list[Any]] = {}
_TYPICAL_KEPT = 8


def _typical_pods(path: Path, pods: list[TracePod]) -> list[Any]:
    """The workload's typical pods, built once per pod list in a process (they are immutable)."""
    try:
        key = hashlib.sha256(path.read_bytes()).digest()
    except OSError:
        return gpushare.typical_pods(pods)
    typical = _TYPICAL.get(key)
    if typical is None:
        if len(_TYPICAL) >= _TYPICAL_KEPT:
            _TYPICAL.clear()
        typical = _TYPICAL[key] = gpushare.typical_pods(pods)
    return list(typical)


def _pct(part: float, whole: float) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


async def replay(options: ReplayOptions, progress: Callable[[int, int], None] | None = None) -> ReplayResult:
    """Run one experiment; ``progress(done, total)`` after every event."""
    # From the first object the experiment makes (the workload read) to the last.
    with FrozenSurvivors() as survivors:
        return await _replay(options, progress, survivors)


async def _replay(
    options: ReplayOptions, progress: Callable[[int, int], None] | None, survivors: FrozenSurvivors
) -> ReplayResult:
    gpushare.require()
    if options.churn and options.inflate is not None:
        raise ReplayError("--inflate does not apply to --churn, which replays the trace's own pods at their own times")
    nodes = read_nodes(options.nodes, gpu_only=not options.all_nodes)
    # The pod objects are shared with the next read of the list: they are never changed here
    # (the profile's name goes into new ones below; the simulation copies what it stores).
    pods = read_pods(options.pods, churn=options.churn, shared=True)
    # Typical pods come from the workload as given, before inflation, as in the artifact.
    typical = _typical_pods(options.pods, pods)
    cfg, changed = experiment_config(options.config, typical, options.seed)
    profile = cfg.profiles[0].scheduler_name
    pods = [p.scheduled_by(profile) for p in pods]

    rng = random.Random(options.seed)
    capacity = sum(n.gpus for n in nodes) * MILLI
    ratio: float | None = None
    if options.churn:
        events = churn_events(pods)
    else:
        ratio = DEFAULT_INFLATION if options.inflate is None else options.inflate
        events = arrival_events(inflated(pods, capacity, ratio, rng))
    node_order = shuffled(nodes, rng)

    gauge = ClusterGauge(node_order, gpushare.Fragmentation(typical), gpushare.gpus_taken)
    settings = SimulationSettings(
        parallelism=cfg.model.parallelism,
        percentage_of_nodes_to_score=PERCENTAGE_OF_NODES_TO_SCORE,
        seed=options.seed,
        plugin_results=False,
    )
    created = scheduled = 0
    failed: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    started = time.perf_counter()
    sim = await SteppedSimulation.start(cfg.profiles, [n.obj for n in node_order], settings)
    try:
        for i, event in enumerate(events):
            survivors.step()
            pod = event.pod
            if event.time is not None:
                sim.advance_to(event.time)  # churn: the trace's own seconds
            if event.action == "create":
                created += 1
                gauge.arrive(pod)
                placed = await sim.place(pod.obj)
                if placed.node is not None:
                    scheduled += 1
                    gauge.placed(pod, placed.node, placed.pod)
                else:
                    failed[pod.kind] += 1
                    reasons[placed.message] += 1
            elif await sim.remove(pod.obj["metadata"]["namespace"], pod.name) is not None:
                gauge.removed(pod)
            gauge.record()
            if progress is not None:
                progress(i + 1, len(events))
    finally:
        await sim.close()
    elapsed = time.perf_counter() - started

    points = curve(gauge.samples, capacity, gauge.cpu_capacity_milli, gauge.memory_capacity_mib)
    at_100 = next((p["gpuAllocation"] for p in points if p["arrived"] == 100), None)
    summary: dict[str, Any] = {
        "nodes": len(nodes),
        "gpus": capacity // MILLI,
        "workloadPods": len(pods),
        "pods": created,
        "scheduled": scheduled,
        "unscheduled": created - scheduled,
        "unscheduledByKind": {k: failed.get(k, 0) for k in ("cpu", "sharedGpu", "oneGpu", "multiGpu")},
        "unscheduledReasons": dict(reasons.most_common(KEPT_REASONS)),
        "arrivedGpuMilli": gauge.arrived,
        "arrived": _pct(gauge.arrived, capacity),
        "gpuAllocation": _pct(gauge.used_gpu, capacity),
        "gpuFragmentation": _pct(max(gauge.frag, 0.0), capacity),
        "gpuFragmentationRatio": _pct(max(gauge.frag, 0.0), capacity - gauge.used_gpu),
        "cpuAllocation": _pct(gauge.used_cpu, gauge.cpu_capacity_milli),
        "memoryAllocation": _pct(gauge.used_memory, gauge.memory_capacity_mib),
        "gpuAllocationAt100": at_100,
        **gauge.spread(),
        "typicalPods": len(typical),
        "seed": options.seed,
        "inflate": ratio,
        "churn": options.churn,
        "gpuNodesOnly": not options.all_nodes,
        "config": str(options.config),
        "profile": profile,
        "scorePlugins": {ref.name: ref.weight for ref in cfg.profiles[0].plugins.get("score", [])},
        "configChanged": changed,
        "seconds": round(elapsed, 2),
        "podsPerSecond": round(created / elapsed, 1) if elapsed > 0 else None,
    }
    return ReplayResult(points, summary, gauge.samples)


def run_replay(options: ReplayOptions, progress: Callable[[int, int], None] | None = None) -> ReplayResult:
    """:func:`replay` on a fresh event loop (uvloop where installed)."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency where it builds
        return asyncio.run(replay(options, progress))
    return uvloop.run(replay(options, progress))


__all__ = ["DEFAULT_INFLATION", "ReplayOptions", "ReplayResult", "replay", "run_replay"]
