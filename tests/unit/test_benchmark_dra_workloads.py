"""The DRA and pod-level-resources benchmark workloads (benchmarks/dra.py) at a small size: their
objects load as a scenario and the scheduler places their pods as 1.37 would, so that a benchmark
figure measures scheduling, not pods that fail for a broken template."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from benchmarks import dra
from benchmarks.catalogue import WORKLOADS
from kubesched.config import load_config
from kubesched.sim.run.simulate import simulate
from kubesched.sim.scenario.reading import parse_scenario

Obj = dict[str, Any]


def _run(nodes: int, objects: list[Obj], init: list[Obj], pods: list[Obj]) -> dict[str, str]:
    namespaces = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}} for n in ("init", "test")]
    docs = [*namespaces, *(dra.dra_node(i) for i in range(nodes)), *objects, *init, *pods]
    result = asyncio.run(simulate(load_config(None).profiles, parse_scenario(docs)))
    return {f"{p['namespace']}/{p['name']}": p["phase"] for p in result.pods}


def _pods(make: Callable[[str, int], Obj], n: int, prefix: str = "p") -> list[Obj]:
    return [make(prefix, i) for i in range(n)]


@pytest.mark.parametrize(
    ("objects", "init", "pods", "scheduled"),
    [
        # Two nodes of two devices: four classes back example.com/gpu-0..3, one pod each.
        (dra.extended_resource_objects(2, 2, 4), [], _pods(dra.extended_resource_pod("test"), 4), 4),
        # Every device tainted NoSchedule by a DeviceTaintRule; the claims tolerate it.
        (dra.device_taints_objects(2, 2), [], _pods(dra.claim_template_pod("test"), 4), 4),
        # Two pools: an init pod takes each pool's preallocated device; one two-device claim per
        # pool fits on what is left (after backtracking), the third pod none.
        (
            dra.partitionable_objects(2),
            _pods(dra.claim_template_pod("init"), 2, "i"),
            _pods(dra.claim_template_pod("test"), 3),
            4,
        ),
        # Two pools of two shareable 80Gi devices: four 20Gi claims share them.
        (dra.consumable_capacity_objects(2), [], _pods(dra.claim_template_pod("test"), 4), 4),
        # The first alternative matches no device, the second does.
        (dra.prioritized_list_objects(2, 2), [], _pods(dra.claim_template_pod("test"), 4), 4),
    ],
    ids=["extended resources", "device taints", "partitionable devices", "consumable capacity", "prioritized list"],
)
def test_the_dra_workloads_place_their_pods(
    objects: Callable[[], list[Obj]], init: list[Obj], pods: list[Obj], scheduled: int
) -> None:
    phases = _run(2, objects(), init, pods)
    assert sorted(phases.values()).count("Scheduled") == scheduled, phases


def test_a_device_taint_rule_keeps_the_devices_from_pods_that_do_not_tolerate_it() -> None:
    objects = [o for o in dra.device_taints_objects(2, 2)() if o["kind"] != "ResourceClaimTemplate"]
    intolerant = dra.claim_template("test", [{"name": "req-0", "exactly": {"deviceClassName": "test-class"}}])
    phases = _run(2, [*objects, intolerant], [], _pods(dra.claim_template_pod("test"), 1))
    assert list(phases.values()) == ["Unschedulable"]


def test_pod_level_requests_are_what_the_node_counts() -> None:
    """Forty-one 100m pods at pod level do not fit a 4-CPU node: the fortieth fills it."""
    node = dra.dra_node(0)
    pods = _pods(dra.pod_level_resources_pod, 41)
    result = asyncio.run(simulate(load_config(None).profiles, parse_scenario([node, *pods])))
    phases = [p["phase"] for p in result.pods]
    assert phases.count("Scheduled") == 40 and phases.count("Unschedulable") == 1


def test_the_workloads_are_in_the_catalogue() -> None:
    names = {"PodLevelResources/5000Nodes", *(n for n in WORKLOADS if n.startswith("DRA/"))}
    assert len(names) == 6 and names <= set(WORKLOADS)
    assert all(WORKLOADS[n].objects is not None for n in names if n.startswith("DRA/"))
