"""An experiment freezes what survives as it goes (kubesched.research.collector), and gives it
back at the end; when the collector runs decides nothing: a replay freezing after every pod
gives the curve and summary of one that never freezes."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.research import ReplayOptions, collector, replay
from kubesched.sim.scenario.openb import TRACE_ABSENT, trace_dir

ROOT = Path(__file__).resolve().parents[2]
FGD_CONFIG = ROOT / "config" / "gpushare" / "FGD.yaml"
TRACE = trace_dir()


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    yield
    gc.unfreeze()


def test_survivors_are_frozen_every_few_steps_and_given_back(unfrozen: None) -> None:
    before = gc.get_threshold()
    with collector.FrozenSurvivors(every=2) as survivors:
        assert gc.get_threshold()[0] >= collector.YOUNG_THRESHOLD
        assert survivors.active and gc.get_freeze_count() > 0
        kept: list[Any] = []
        frozen = gc.get_freeze_count()
        survivors.step()
        kept.append([[] for _ in range(100)])  # young, tracked objects
        survivors.step()
        assert gc.get_freeze_count() >= frozen + 100
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_objects_someone_else_froze_stay_frozen(unfrozen: None) -> None:
    gc.freeze()
    theirs = gc.get_freeze_count()
    with collector.FrozenSurvivors(every=1) as survivors:
        assert not survivors.active
        survivors.step()
    assert gc.get_freeze_count() == theirs


def summary_without_time(result: Any) -> dict[str, Any]:
    return {k: v for k, v in result.summary.items() if k not in ("seconds", "podsPerSecond")}


@pytest.mark.skipif(TRACE is None, reason=TRACE_ABSENT)
def test_freezing_decides_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, unfrozen: None, gpushare_installed: None
) -> None:
    assert TRACE is not None
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    nodes.write_text("\n".join((TRACE / "openb_node_list_gpu_node.csv").read_text().splitlines()[:41]) + "\n")
    pods.write_text("\n".join((TRACE / "openb_pod_list_default.csv").read_text().splitlines()[:301]) + "\n")
    options = ReplayOptions(nodes, pods, FGD_CONFIG, seed=7)
    monkeypatch.setattr(collector, "FREEZE_EVERY", 1)
    often = asyncio.run(replay(options))
    monkeypatch.setattr(collector.FrozenSurvivors, "__enter__", lambda self: self)  # never freezes
    never = asyncio.run(replay(options))
    assert often.curve == never.curve
    assert summary_without_time(often) == summary_without_time(never)
    assert summary_without_time(often)["unscheduled"] > 0  # the diagnosis path ran too
