"""CapacityScheduling (plugins/capacity-scheduling) in a running scheduler over the in-memory
cluster, its ElasticQuotas read from the cluster through the scheduler's informers: scheduler-
plugins' README demo (borrowing up to max, reclaim by preemption), and the package installed
with pip as a user installs it."""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import installed_package
from polling import eventually

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.runtime.registry import Registry, default_registry
from kubesched.scheduler import Scheduler, SchedulerOptions

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "capacity-scheduling"
EXAMPLES = PACKAGE / "examples"
sys.path.insert(0, str(PACKAGE))

from kubesched_capacity_scheduling import CapacityScheduling  # noqa: E402

#: Where the in-memory cluster keeps ElasticQuotas: ``<resource>.<group>``.
QUOTA_KIND = "elasticquotas.scheduling.x-k8s.io"


def registry() -> Registry:
    """The installed plugins plus this checkout's CapacityScheduling (replacing an installed one)."""
    reg = Registry()
    for e in default_registry().entries():
        if e.name != CapacityScheduling.name:
            reg.register(e.cls, e.name, e.distribution)
    reg.register(CapacityScheduling)
    return reg


def documents(name: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d]


class Cluster:
    """The example profile running over an in-memory cluster holding the example nodes."""

    def __init__(self) -> None:
        self.store = Store()
        self.cluster = InMemoryCluster(self.store)
        for obj in documents("cluster.yaml"):
            self.store.create(obj["kind"], obj)
        cfg = load_config(EXAMPLES / "capacity-scheduler.yaml", registry=registry())
        self.scheduler = Scheduler(
            cfg.profiles,
            self.cluster,
            SchedulerOptions(seed=1, pod_initial_backoff=0.05, pod_max_backoff=0.1),
            registry(),
        )
        self.task: asyncio.Task[None] | None = None

    @property
    def plugin(self) -> CapacityScheduling:
        found = self.scheduler.frameworks["capacity-scheduler"].plugins["CapacityScheduling"]
        assert isinstance(found, CapacityScheduling)
        return found

    def apply(self, name: str) -> None:
        for obj in documents(name):
            self.store.create(QUOTA_KIND if obj["kind"] == "ElasticQuota" else obj["kind"], obj)

    def phases(self, namespace: str) -> dict[str, str]:
        """Each pod of the namespace: its node, or "pending"."""
        return {
            p["metadata"]["name"]: p["spec"].get("nodeName") or "pending" for p in self.store.list("Pod", namespace)[0]
        }

    def message(self, namespace: str, name: str) -> str:
        pod = self.store.get("Pod", namespace, name)
        events = self.cluster.events_for(pod)
        return events[-1].get("message", "") if events else ""


@pytest.fixture
async def cluster() -> AsyncIterator[Cluster]:
    c = Cluster()
    c.task = asyncio.create_task(c.scheduler.run())
    await asyncio.sleep(0)
    try:
        yield c
    finally:
        await c.scheduler.stop(grace=2)
        await asyncio.wait_for(c.task, 5)


def bound(phases: dict[str, str]) -> int:
    return sum(1 for v in phases.values() if v != "pending")


async def test_a_namespace_borrows_up_to_its_max(cluster: Cluster) -> None:
    cluster.apply("quotas.yaml")
    cluster.apply("app1.yaml")
    phases = await eventually(
        lambda: cluster.phases("quota1"), "three of app1's pods bound", until=lambda p: bound(p) == 3, timeout=10
    )
    assert phases["app1-3"] == "pending"
    await eventually(
        lambda: cluster.message("quota1", "app1-3"),
        "app1-3 refused by quota1's max",
        until=lambda m: "Pod quota1/app1-3 is rejected in PreFilter because ElasticQuota quota1 is more than Max" in m,
        timeout=10,
    )
    used = cluster.plugin.elastic_quota_infos["quota1"].used
    assert used.milli_cpu == 6000


async def test_a_namespace_within_its_min_reclaims_what_another_borrowed(cluster: Cluster) -> None:
    cluster.apply("quotas.yaml")
    cluster.apply("app1.yaml")
    await eventually(lambda: bound(cluster.phases("quota1")) == 3, "app1 borrows", timeout=10)
    cluster.apply("app2.yaml")
    await eventually(
        lambda: cluster.phases("quota2"), "both of app2's pods bound", until=lambda p: bound(p) == 2, timeout=15
    )
    quota1 = cluster.phases("quota1")
    assert bound(quota1) == 2 and len(quota1) == 3, quota1  # one preempted (deleted), the fourth still refused
    assert "app1-3" in quota1 and quota1["app1-3"] == "pending"
    infos = cluster.plugin.elastic_quota_infos
    assert (infos["quota1"].used.milli_cpu, infos["quota2"].used.milli_cpu) == (4000, 4000)


async def test_a_deleted_quota_lets_its_pending_pods_go(cluster: Cluster) -> None:
    cluster.apply("quotas.yaml")
    cluster.apply("app1.yaml")
    await eventually(lambda: bound(cluster.phases("quota1")) == 3, "app1 borrows", timeout=10)
    cluster.store.delete(QUOTA_KIND, "quota1", "quota1")
    await eventually(
        lambda: cluster.phases("quota1"), "app1-3 bound without its quota", until=lambda p: bound(p) == 4, timeout=10
    )
    assert "quota1" not in cluster.plugin.elastic_quota_infos


async def test_pods_bound_before_the_scheduler_started_count_in_their_quota() -> None:
    c = Cluster()
    c.apply("quotas.yaml")
    for obj in documents("app1.yaml")[:3]:
        obj["spec"]["nodeName"] = "node-0" if obj["metadata"]["name"] != "app1-2" else "node-1"
        c.store.create("Pod", obj)
    c.task = asyncio.create_task(c.scheduler.run())
    try:
        await eventually(lambda: "quota1" in c.plugin.elastic_quota_infos, "quota1 known", timeout=5)
        await eventually(
            lambda: c.plugin.elastic_quota_infos["quota1"].used.milli_cpu,
            "bound pods counted",
            until=lambda v: v == 6000,
        )
    finally:
        await c.scheduler.stop(grace=2)
        await asyncio.wait_for(c.task, 5)


# --- the package, installed ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def capacity_installed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Installed from a copy: a build writes egg-info beside the sources."""
    source = tmp_path_factory.mktemp("capacity") / "capacity-scheduling"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with installed_package(source, "kubesched-capacity-scheduling"):
        yield


def test_the_entry_point_registers_the_plugin_at_its_points(capacity_installed: None) -> None:
    entry = default_registry().get("CapacityScheduling")
    assert entry.distribution == "kubesched-capacity-scheduling"
    assert entry.extension_points == ("preFilter", "postFilter", "reserve")


def test_the_example_profile_enables_it_and_only_it_at_post_filter(capacity_installed: None) -> None:
    cfg = load_config(EXAMPLES / "capacity-scheduler.yaml")
    (profile,) = cfg.profiles
    assert profile.scheduler_name == "capacity-scheduler"
    assert [r.name for r in profile.plugins["postFilter"]] == ["CapacityScheduling"]
    assert "CapacityScheduling" in [r.name for r in profile.plugins["preFilter"]]
    assert "CapacityScheduling" in [r.name for r in profile.plugins["reserve"]]


def test_simulate_shows_borrowing_and_reclaim_in_the_example_scenario(capacity_installed: None) -> None:
    """The example scenario (its own ElasticQuota definition, the quotas, app1 at once and app2
    30 s later), run by ``simulate`` with the example profile."""
    from kubesched.sim.run.simulate import simulate
    from kubesched.sim.scenario.reading import load_scenario

    cfg = load_config(EXAMPLES / "capacity-scheduler.yaml")
    result = asyncio.run(simulate(cfg.profiles, load_scenario(EXAMPLES / "scenario.yaml")))
    pods = {f"{p['namespace']}/{p['name']}": p for p in result.pods}
    assert all(pods[f"quota2/app2-{i}"]["node"] for i in range(2))
    preempted = [k for k, p in pods.items() if "Preempted by pod" in (p.get("message") or "")]
    assert len(preempted) == 1 and preempted[0].startswith("quota1/app1-"), preempted
    assert not pods["quota1/app1-3"]["node"]
    assert sum(1 for k, p in pods.items() if k.startswith("quota1/") and p["node"]) == 2
