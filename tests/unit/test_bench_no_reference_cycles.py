"""The scheduling path leaves no reference cycles behind.

A busy scheduler freezes what survives once a second and runs a full collection rarely
(GcPacer), so a cycle made per scheduling cycle is memory kept: DRA's allocators, each keeping
searches that referred back to it, grew a 100-node steady state by ~10 MiB a second (to 5.7 GB
in ten minutes). ``kubesched bench`` counts what the collector frees while the measured pods are
scheduled (``cyclic_garbage``); over small runs of every kind of path (DRA's allocator in each of
its modes, pod groups and composite groups, preemption, affinity, spreading, churn) it is zero.
What the path imports on first use (the CEL library, numpy's masked arrays) leaves cycles once a
process: the bench imports it before the window (``import_lazy_modules``), this test relies on it.
"""

from __future__ import annotations

import gc

import pytest

from kubesched.bench.measure import CyclicGarbage
from kubesched.bench.runner import default_subject, run_here
from kubesched.bench.workload import find_workloads

WORKLOADS = [
    "SchedulingWithResourceClaimTemplate/fast",
    "SteadyStateClusterResourceClaimTemplateFirstAvailable/fast",
    "SteadyStateClusterResourceClaimTemplatePartitionable/fast",
    "SteadyStateClusterResourceClaimTemplateConsumableCapacity/fast",
    "SchedulingWithExtendedResource/fast",
    "SchedulingWithResourceClaimTemplateToleration/fast",
    "CPGGangScheduling/10Nodes_3CPGs_6Groups_18Pods",
    "TopologyAwareScheduling/10Nodes_3Gangs",
    "BasicScheduling/10Nodes_3Groups",
    "PreemptionAsync/5Nodes",
    "SchedulingPodAffinity/5Nodes",
    "SchedulingPreferredPodAntiAffinity/5Nodes",
    "TopologySpreading/5Nodes",
    "SchedulingWithMixedChurn/10Nodes",
]


@pytest.mark.parametrize("name", WORKLOADS)
def test_scheduling_leaves_no_reference_cycles(name: str) -> None:
    # What earlier tests in this process froze and let go since is theirs: freed before the run,
    # or a thaw in the window (a GcPacer freeze) would count it as this run's.
    gc.unfreeze()
    gc.collect()
    (workload,) = find_workloads(name)
    results = run_here(workload, default_subject(), timeout=120)
    assert results and all(r.scheduled > 0 for r in results)
    for r in results:
        assert r.cyclic_garbage == 0, (
            f"{r.workload}: the collector freed {r.cyclic_garbage} objects in reference cycles while "
            "the measured pods were scheduled"
        )


def _cycle() -> None:
    a: list[object] = []
    b: list[object] = [a]
    a.append(b)


def test_the_count_sees_cycles_made_in_the_window_even_when_frozen() -> None:
    gc.collect()
    gc.freeze()
    try:
        garbage = CyclicGarbage()
        garbage.start()
        for _ in range(10):
            _cycle()
        gc.freeze()  # as GcPacer does while the scheduler is busy
        for _ in range(5):
            _cycle()
        garbage.stop()
        assert garbage.count == 30
        garbage.start()
        garbage.stop()
        assert garbage.count == 0
        # Nothing frozen meanwhile (no pacing): the young generations are collected at the end.
        garbage.start()
        for _ in range(4):
            _cycle()
        garbage.stop()
        assert garbage.count == 8
    finally:
        gc.unfreeze()
