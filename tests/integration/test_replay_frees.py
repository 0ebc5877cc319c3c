"""An experiment leaves nothing of itself alive in the process: a sweep's worker replays hundreds
one after the other, and what one kept (its cluster, store, scheduler — through a plugin's
module-level registry, say) would make every later one pay for it in memory and in the full
collection each experiment starts with."""

from __future__ import annotations

import csv
import gc
import weakref
from pathlib import Path
from typing import Any

import pytest
from test_replay import FGD_CONFIG, write_trace

from kubesched.research import ReplayOptions
from kubesched.research.replay import run_replay
from kubesched.sim.run.stepping import SteppedSimulation


@pytest.mark.parametrize("config", ["FGD.yaml", "BestFit.yaml", "Random.yaml"])
def test_an_experiment_leaves_nothing_alive(
    tmp_path: Path, gpushare_installed: None, monkeypatch: pytest.MonkeyPatch, config: str
) -> None:
    nodes, pods = write_trace(tmp_path)
    made: list[weakref.ref[Any]] = []
    start = SteppedSimulation.start

    async def watched(*args: Any, **kwargs: Any) -> SteppedSimulation:
        sim = await start(*args, **kwargs)
        made.extend(weakref.ref(o) for o in (sim, sim.store, sim.cluster, sim.scheduler))
        return sim

    monkeypatch.setattr(SteppedSimulation, "start", watched)
    for seed in (1, 2):
        result = run_replay(ReplayOptions(nodes, pods, FGD_CONFIG.parent / config, seed=seed))
        assert result.summary["scheduled"] > 0
    del result
    gc.collect()
    assert len(made) == 8
    alive = [type(ref()).__name__ for ref in made if ref() is not None]
    assert not alive, f"still alive after the experiments: {alive}"


def test_a_closed_experiment_leaves_its_pods_to_reference_counting(
    tmp_path: Path, gpushare_installed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a closed simulation held (the cluster's pods, the scheduler's cache, snapshot and
    results) is freed as the experiment ends: the full collection the next experiment starts
    with finds only the few objects of the scheduler's own reference cycles, not its pods'."""
    nodes, _ = write_trace(tmp_path, gpu_nodes=60)
    pods = tmp_path / "many-pods.csv"
    with open(pods, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "creation_time"])
        w.writerows([f"pod-{i:04d}", 2000, 4096, 1, 250 * (1 + i % 4), "", i] for i in range(600))
    closed: list[SteppedSimulation] = []
    close = SteppedSimulation.close

    async def watched(self: SteppedSimulation) -> None:
        await close(self)
        closed.append(self)

    monkeypatch.setattr(SteppedSimulation, "close", watched)
    gc.collect()
    result = run_replay(ReplayOptions(nodes, pods, FGD_CONFIG.parent / "FGD.yaml", seed=1))
    scheduled = result.summary["scheduled"]
    assert scheduled > 300
    (sim,) = closed
    assert sim.store.list("Pod")[0] == [] and sim.scheduler.results == {}
    assert sim.scheduler.cache.nodes == {} and sim.scheduler.snapshot.node_info_list == []
    closed.clear()
    del sim, result
    unreachable = gc.collect()
    # Without the release every pod leaves tens of objects to the collector (each scheduled
    # pod's PodInfo and its lists, cache entry, result, and the stored objects).
    assert unreachable < 5 * scheduled, unreachable
