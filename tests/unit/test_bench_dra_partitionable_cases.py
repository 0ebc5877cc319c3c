"""Upstream scheduler_perf's partitionable-device and consumable-capacity DRA steady states as
kubesched bench ships them (dra.yaml): every small size run through the real runner under the
default profile keeps binding pods for its duration, and the claims it leaves allocated are the
solutions the case is built for (two one-counter devices of one pool, seven devices without the
one that overdraws the memory counter, two 40Gi shares of one device)."""

from __future__ import annotations

import pytest
from test_bench_dra_and_pod_group_cases import run_workload

from kubesched.bench.model import CreatePods, Workload
from kubesched.bench.workload import shipped_workloads
from kubesched.objects import Obj

CASES = [
    "SteadyStateClusterResourceClaimTemplatePartitionable",
    "SteadyStateClusterResourceClaimTemplatePartitionableBacktracking",
    "SteadyStateClusterResourceClaimTemplateConsumableCapacity",
]
SMALL = sorted(n for n, w in shipped_workloads().items() if n.split("/")[0] in CASES and "short" in w.labels)


def _pending(w: Workload) -> int:
    (op,) = [op for op in w.ops if isinstance(op, CreatePods)]
    return op.count


def _results(claims: list[Obj]) -> list[list[Obj]]:
    return [
        c["status"]["allocation"]["devices"]["results"] for c in claims if (c.get("status") or {}).get("allocation")
    ]


def test_the_cases_are_shipped_with_upstreams_sizes() -> None:
    shipped = shipped_workloads()
    sizes = {n: w for n, w in shipped.items() if n.split("/")[0] in CASES}
    assert {w.source for w in sizes.values()} == {"dra.yaml"}
    assert sorted(sizes) == sorted(
        [
            "SteadyStateClusterResourceClaimTemplatePartitionable/fast",
            "SteadyStateClusterResourceClaimTemplatePartitionable/2000pods_100nodes",
            "SteadyStateClusterResourceClaimTemplatePartitionableBacktracking/fast",
            "SteadyStateClusterResourceClaimTemplateConsumableCapacity/fast",
            "SteadyStateClusterResourceClaimTemplateConsumableCapacity/fast_with_DRAPartitionableDevices",
            "SteadyStateClusterResourceClaimTemplateConsumableCapacity/2000pods_100nodes",
        ]
    )
    big = sizes["SteadyStateClusterResourceClaimTemplatePartitionable/2000pods_100nodes"]
    assert (big.nodes, _pending(big)) == (100, 2000)
    assert big.feature_gates["DRAPartitionableDevices"] is True
    wide = sizes["SteadyStateClusterResourceClaimTemplateConsumableCapacity/fast_with_DRAPartitionableDevices"]
    assert wide.feature_gates["DRAConsumableCapacity"] is wide.feature_gates["DRAPartitionableDevices"] is True


@pytest.mark.parametrize("name", SMALL)
async def test_a_small_size_keeps_binding_pods_for_its_duration(name: str) -> None:
    w = shipped_workloads()[name]
    runner = await run_workload(w)
    (result,) = runner.results
    pending = _pending(w)
    assert result.scheduled > 3 * pending and result.unschedulable <= pending
    assert result.seconds >= 2.0
    pods, _ = runner.store.list("Pod", "test")
    assert len(pods) == pending  # the bound ones were deleted, their claims with them
    claims, _ = runner.store.list("ResourceClaim", "test")
    assert len(claims) <= pending


async def test_partitionable_pods_get_the_two_small_devices_the_init_claims_leave() -> None:
    runner = await run_workload(shipped_workloads()["SteadyStateClusterResourceClaimTemplatePartitionable/fast"])
    init, _ = runner.store.list("ResourceClaim", "init")
    held = sorted((r["pool"], r["device"]) for rs in _results(init) for r in rs)
    assert held == sorted((f"resourceslice-{i}", "device-2-counters-1") for i in range(10))
    claims, _ = runner.store.list("ResourceClaim", "test")
    results = _results(claims)
    assert results
    for rs in results:
        assert sorted(r["device"] for r in rs) == ["device-1-counter-3", "device-1-counter-4"]
        assert len({r["pool"] for r in rs}) == 1  # matchAttribute dra.example.com/slice


async def test_backtracking_finds_the_seven_devices_without_the_first() -> None:
    runner = await run_workload(
        shipped_workloads()["SteadyStateClusterResourceClaimTemplatePartitionableBacktracking/fast"]
    )
    claims, _ = runner.store.list("ResourceClaim", "test")
    results = _results(claims)
    assert results
    for rs in results:
        assert sorted(r["device"] for r in rs) == [f"device-{i}" for i in range(2, 9)]


@pytest.mark.parametrize("size", ["fast", "fast_with_DRAPartitionableDevices"])
async def test_consumable_capacity_shares_one_device_in_two_halves(size: str) -> None:
    runner = await run_workload(
        shipped_workloads()[f"SteadyStateClusterResourceClaimTemplateConsumableCapacity/{size}"]
    )
    claims, _ = runner.store.list("ResourceClaim", "test")
    results = _results(claims)
    assert results
    for rs in results:
        assert [(r["request"], r["device"]) for r in rs] == [
            ("req-0", "shareable-device"),
            ("req-1", "shareable-device"),
        ]
        assert [r["consumedCapacity"] for r in rs] == [{"memory": "40Gi"}, {"memory": "40Gi"}]
        assert all(r.get("shareID") for r in rs)
    # The test driver's own devices allow one allocation each: the class leaves them out.
    assert not any(r["pool"] == "scheduler-perf-dra-1" for rs in results for r in rs)
