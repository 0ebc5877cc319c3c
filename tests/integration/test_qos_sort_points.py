"""plugins/qos-sort's QueueSort through kubesched.testing: the order alone, then in a running scheduler."""

from __future__ import annotations

from pathlib import Path

from kubesched.runtime.local_plugins import load_plugin_class
from kubesched.testing import PodBuilder, make_node, make_pod, plugin_framework, running_scheduler

# Loaded from its file, not by putting the package's folder on sys.path: an earlier install there
# leaves egg-info that would announce its entry point to every later test.
SOURCE = Path(__file__).resolve().parents[2] / "plugins" / "qos-sort" / "kubesched_qos_sort" / "__init__.py"
QOSSort = load_plugin_class(f"{SOURCE}:QOSSort")

GUARANTEED = {"cpu": "1", "memory": "1Gi"}


def guaranteed(name: str) -> PodBuilder:
    return make_pod(name).lim(**GUARANTEED)  # requests default to the limits


def test_priority_then_qos_then_creation() -> None:
    pods = [
        make_pod("best-effort").created("2024-01-01T00:00:00Z"),
        make_pod("burstable").req(cpu="1").created("2024-01-01T00:00:05Z"),
        guaranteed("guaranteed-young").created("2024-01-01T00:00:09Z"),
        guaranteed("guaranteed-old").created("2024-01-01T00:00:01Z"),
        make_pod("urgent-best-effort").priority(10).created("2024-01-01T00:00:30Z"),
    ]
    with plugin_framework(QOSSort) as fw:
        assert fw.sort_pods(pods) == [
            "urgent-best-effort",
            "guaranteed-old",
            "guaranteed-young",
            "burstable",
            "best-effort",
        ]
        assert fw.less(guaranteed("g"), make_pod("b"))
        assert not fw.less(make_pod("b"), guaranteed("g"))


def test_equal_pods_leave_in_the_order_they_were_queued() -> None:
    same = [make_pod(n).created("2024-01-01T00:00:00Z") for n in ("first", "second", "third")]
    with plugin_framework(QOSSort) as fw:
        assert fw.sort_pods(same) == ["first", "second", "third"]


async def test_the_scheduler_pops_pods_in_qos_order() -> None:
    pods = [
        make_pod("best-effort").created("2024-01-01T00:00:00Z"),
        make_pod("burstable").req(cpu="1").created("2024-01-01T00:00:01Z"),
        guaranteed("guaranteed").created("2024-01-01T00:00:02Z"),
    ]
    nodes = [make_node("n1").capacity(cpu="8", memory="16Gi", pods="10")]
    async with running_scheduler(plugins=[QOSSort], nodes=nodes, pods=pods, loop=False) as s:
        assert [await s.schedule_next() for _ in range(3)] == ["guaranteed", "burstable", "best-effort"]
        await s.settle()
        assert s.placements() == {"best-effort": "n1", "burstable": "n1", "guaranteed": "n1"}
