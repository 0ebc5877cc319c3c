"""An experiment leaves nothing of itself alive in the process: a sweep's worker replays hundreds
one after the other, and what one kept (its cluster, store, scheduler — through a plugin's
module-level registry, say) would make every later one pay for it in memory and in the full
collection each experiment starts with."""

from __future__ import annotations

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
