"""The benchmark runner's HTTP backend works end to end on small workloads (its speed is the
benchmark's business, not a test's): ``kubesched bench``'s runner with the store behind the
embedded API server and the scheduler in a process of its own, its client over HTTP."""

from __future__ import annotations

import os
from pathlib import Path

from benchmarks.backends import run_workload
from benchmarks.catalogue import WORKLOADS, workload


async def test_a_workload_runs_through_the_embedded_api_server_over_http() -> None:
    w = workload("SchedulingBasic/5Nodes")
    placements: dict[str, str] = {}
    result = await run_workload(w, "http", placements=placements)
    memory: dict[str, str] = {}
    await run_workload(w, "memory", placements=memory)
    assert result.backend == "http"
    assert (result.scheduled, result.unschedulable) == (result.measure_pods, 0) and result.measure_pods > 0
    # Every pod, init and measured, was bound by the server, where it went in memory.
    assert placements == memory and len(placements) > result.measure_pods
    assert result.pods_per_second > 0 and result.attempt_p50_ms > 0
    # Both processes' CPU over the measured window: the scheduler's own, and the run's (the
    # API server and the ops) apart; the peak RSS is the scheduler's process's.
    assert result.cpu_ms_per_pod is not None and result.cpu_ms_per_pod > 0
    assert result.server_cpu_ms_per_pod is not None and result.server_cpu_ms_per_pod > 0
    assert 0 < result.peak_rss_mib


async def test_a_gang_workload_runs_over_http_one_cycle_per_gang() -> None:
    """The API server admits the members' spec.schedulingGroup (GenericWorkload, as the workload
    says), the scheduler watches the PodGroups and places each gang in one group cycle."""
    w = WORKLOADS["GangScheduling/10Nodes_3Gangs"]
    placements: dict[str, str] = {}
    result = await run_workload(w, "http", placements=placements)
    assert (result.scheduled, result.unschedulable, result.measure_pods) == (9, 0, 9)
    assert (result.groups, result.group_cycles) == (3, 3)
    assert result.groups_per_second is not None and result.groups_per_second > 0
    measured = {k: v for k, v in placements.items() if k.startswith("gang-ns-0/")}
    assert len(measured) == 9
    assert set(placements.values()) <= {f"node-{i}" for i in range(10)}


async def test_the_scheduler_process_ends_with_the_run() -> None:
    """No scheduler process outlives its run, whatever it measured."""
    before = _children()
    await run_workload(workload("SchedulingBasic/5Nodes"), "http")
    assert _children() <= before


async def test_a_trace_replay_runs_over_http_as_in_memory(small_trace: Path) -> None:
    """The replayTrace op by the same runner over HTTP: the trace's nodes and pods served by the
    API server, each pod bound where the in-memory run binds it."""
    w = workload("OpenbGPU/default")
    placements: dict[str, str] = {}
    result = await run_workload(w, "http", placements=placements)
    memory: dict[str, str] = {}
    await run_workload(w, "memory", placements=memory)
    assert (result.backend, result.nodes, result.measure_pods) == ("http", 2, 5)
    assert (result.scheduled, result.unschedulable) == (3, 2)
    assert placements == memory and placements["default/whole-gpu"] == "gpu-node"


def _children() -> set[int]:
    """This process's live children (Linux: /proc)."""
    me = str(os.getpid())
    out: set[int] = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            out.add(int(pid))
    return out


async def test_a_scheduler_process_stopped_before_it_started_ends_at_once() -> None:
    """A run that fails before its API server listens still ends its scheduler's process."""
    import asyncio

    from kubesched.bench.scheduler_side import SchedulerProcess
    from kubesched.config import load_config
    from kubesched.scheduler import SchedulerOptions

    proc = SchedulerProcess(load_config(None).profiles, SchedulerOptions(), ("Pod", "Node"))
    await asyncio.wait_for(proc.stop(), 15)
    assert proc.exitcode() == 0
    assert proc.pid not in _children()
