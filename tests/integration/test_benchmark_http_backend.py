"""The benchmark runner's HTTP backend works end to end on a tiny workload (its speed is the
benchmark's business, not a test's)."""

from __future__ import annotations

from benchmarks.backends.http import run_http
from benchmarks.catalogue import WORKLOADS, Workload


async def test_a_workload_runs_through_the_embedded_api_server_over_http():
    w = Workload("Tiny/http", nodes=10, init_pods=5, measure_pods=20)
    placements: dict[str, str] = {}
    result = await run_http(w, placements=placements)
    assert result.backend == "http"
    assert (result.scheduled, result.unschedulable, result.measure_pods) == (20, 0, 20)
    # Every pod, init and measured, was bound by the server to one of the nodes.
    assert len(placements) == 25
    assert set(placements.values()) <= {f"node-{i}" for i in range(10)}
    assert result.pods_per_second > 0 and result.attempt_p50_ms > 0
    # Both processes' CPU over the measured window: the scheduler's (the creator in it) and the server's.
    assert result.cpu_ms_per_pod is not None and result.cpu_ms_per_pod > 0
    # (the server's in clock ticks of /proc: a tiny run may cost it less than one)
    assert result.server_cpu_ms_per_pod is not None and result.server_cpu_ms_per_pod >= 0


async def test_a_gang_workload_runs_over_http_one_cycle_per_gang():
    """The API server admits the members' spec.schedulingGroup (GenericWorkload, as the workload
    says), the scheduler watches the PodGroups and places each gang in one group cycle."""
    w = WORKLOADS["GangScheduling/10Nodes_3Gangs"]
    placements: dict[str, str] = {}
    result = await run_http(w, placements=placements)
    assert (result.scheduled, result.unschedulable, result.measure_pods) == (9, 0, 9)
    assert (result.groups, result.group_cycles) == (3, 3)
    assert result.groups_per_second is not None and result.groups_per_second > 0
    assert sorted(placements) == sorted(f"gang-ns-0/measured-{i}" for i in range(9))
    assert set(placements.values()) <= {f"node-{i}" for i in range(10)}
