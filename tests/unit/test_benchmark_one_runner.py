"""``python -m benchmarks.run`` runs every shipped workload on the in-memory cluster by
``kubesched bench``'s runner: both of ``--compare``'s paths reach the scheduler, every pod's
placement is reported, and what is measured is the runner's one window."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from benchmarks.backends import run_workload
from benchmarks.catalogue import workload
from kubesched.bench.ops import OpRunner
from kubesched.bench.scheduler_side import LocalScheduler


@pytest.mark.parametrize("batch", [True, False], ids=["batch", "per-node"])
async def test_each_path_of_compare_is_the_scheduler_s(batch: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[bool] = []
    run = OpRunner.run

    async def spy(self: OpRunner) -> Any:
        assert isinstance(self.sched, LocalScheduler)  # the in-memory cluster: in this process
        seen.append(self.sched.sched.options.batch)
        return await run(self)

    monkeypatch.setattr(OpRunner, "run", spy)
    placements: dict[str, str] = {}
    result = await run_workload(workload("SchedulingBasic/5Nodes"), batch=batch, placements=placements)
    assert seen == [batch]
    w = workload("SchedulingBasic/5Nodes")
    # Every pod the workload made, init and measured, with the node it went to.
    assert len(placements) == w.init_pods + w.measure_pods == result.init_pods + result.measure_pods
    assert set(placements.values()) <= {f"node-{i}" for i in range(w.nodes)}
    assert (result.workload, result.scheduled, result.unschedulable) == ("SchedulingBasic/5Nodes", w.measure_pods, 0)


async def test_a_window_ends_once_its_pods_are_bound_while_churn_goes_on() -> None:
    """PreemptionAsync churns a high-priority pod every 200 ms for the whole run: the window is
    over once its own pods are bound, not when the queue is quiet."""
    w = workload("PreemptionAsync/5Nodes")
    result = await asyncio.wait_for(run_workload(w), 60)
    assert (result.measure_pods, result.scheduled) == (w.measure_pods, w.measure_pods)
    assert result.cpu_ms_per_pod is not None and result.cpu_ms_per_pod > 0
