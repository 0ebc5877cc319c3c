from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client as kube_client
from kubernetes_asyncio import config as kube_config

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.runtime.framework import PluginRef, ProfileSpec
from kubesched.runtime.registry import Registry, default_registry
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import NodeBuilder, PodBuilder


class Recorder:
    """Collects ``(plugin, point, detail)`` calls so tests can assert order."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []

    def __call__(self, plugin: str, point: str, detail: Any = None) -> None:
        self.calls.append((plugin, point, detail))

    def points(self, point: str) -> list[str]:
        return [p for p, pt, _ in self.calls if pt == point]


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def registry_with(*classes: type) -> Registry:
    """The installed plugins plus ``classes`` (test plugins)."""
    reg = Registry()
    for e in default_registry().entries():
        reg.register(e.cls, e.name, e.distribution)
    for cls in classes:
        reg.register(cls)
    return reg


#: The points whose plugins carry a weight (1 unless given).
WEIGHTED = ("score", "placementScore")


def profile(name: str = "default-scheduler", **points: list[Any]) -> ProfileSpec:
    """A profile with PrioritySort and DefaultBinder plus the given points:
    ``profile(filter=["A", "B"], score=[("C", 2)])``."""
    plugins: dict[str, list[PluginRef]] = {
        "queueSort": [PluginRef("PrioritySort")],
        "bind": [PluginRef("DefaultBinder")],
    }
    for point, refs in points.items():
        plugins[point] = [
            PluginRef(r[0], r[1]) if isinstance(r, tuple) else PluginRef(r, 1 if point in WEIGHTED else 0) for r in refs
        ]
    return ProfileSpec(name, plugins)


class Harness:
    """A scheduler over an in-memory cluster, driven step by step."""

    def __init__(self, scheduler: Scheduler, cluster: InMemoryCluster, store: Store) -> None:
        self.scheduler = scheduler
        self.cluster = cluster
        self.store = store

    def add(self, *objs: PodBuilder | NodeBuilder | dict[str, Any]) -> None:
        for o in objs:
            obj = o.obj() if isinstance(o, (PodBuilder, NodeBuilder)) else o
            self.store.create(obj["kind"], obj)

    async def settle(self) -> None:
        await self.cluster.wait_delivered()
        await self.scheduler.wait_for_bindings()
        await self.cluster.wait_delivered()

    async def run_once(self) -> bool:
        """Schedule one pod if any is active; let its binding finish."""
        await self.settle()
        qpi = self.scheduler.queue.pop_nowait()
        if qpi is None:
            return False
        await self.scheduler.schedule_one(qpi)
        await self.settle()
        return True

    async def run_all(self, limit: int = 10_000) -> int:
        n = 0
        while n < limit and await self.run_once():
            n += 1
        return n

    def node_of(self, name: str, namespace: str = "default") -> str | None:
        return self.store.get("Pod", namespace, name)["spec"].get("nodeName")

    def pod(self, name: str, namespace: str = "default") -> dict[str, Any]:
        return self.store.get("Pod", namespace, name)

    def events(self, name: str, namespace: str = "default") -> list[dict[str, Any]]:
        return self.cluster.events_for(self.pod(name, namespace))

    def pod_group_condition(self, name: str, namespace: str = "default") -> dict[str, Any] | None:
        """The PodGroup's ``PodGroupInitiallyScheduled`` condition, if the scheduler wrote one."""
        pg = self.store.get("PodGroup", namespace, name)
        conditions = (pg.get("status") or {}).get("conditions") or ()
        return next((c for c in conditions if c["type"] == "PodGroupInitiallyScheduled"), None)


async def make_harness(
    profiles: Iterable[ProfileSpec],
    registry: Registry | None = None,
    options: SchedulerOptions | None = None,
    objs: Iterable[Any] = (),
    clock: Any = None,
) -> Harness:
    store = Store()
    cluster = InMemoryCluster(store)
    h = Harness(None, cluster, store)  # type: ignore[arg-type]
    h.add(*objs)
    kwargs: dict[str, Any] = {}
    if clock is not None:
        kwargs["clock"] = clock
    sched = Scheduler(
        list(profiles), cluster, options or SchedulerOptions(seed=1, record_results=True), registry, **kwargs
    )
    h.scheduler = sched
    await sched.start()
    await asyncio.sleep(0)
    return h


def _pip(*args: str) -> Any:
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args],
        capture_output=True,
        text=True,
        check=False,
    )


@contextlib.contextmanager
def installed_package(path: Any, distribution: str) -> Any:
    """The plugin package at ``path`` pip-installed for the duration, as a user ships one: a
    regular (not editable) install, built with the setuptools already present (no network), into
    a folder of its own put first on ``sys.path`` and ``PYTHONPATH`` (for the processes tests
    start). The user's own environment is never touched: a ``distribution`` they installed is
    shadowed meanwhile (the first one on the path wins), not uninstalled. The entry-point
    registry is rediscovered on the way in and out."""
    import importlib
    import os
    import shutil
    import sys
    import tempfile

    from kubesched.runtime.registry import reset_default_registry

    target = tempfile.mkdtemp(prefix=f"{distribution}-")
    out = _pip("install", "--no-deps", "--no-build-isolation", "--target", target, str(path))
    assert out.returncode == 0, out.stderr
    old_pythonpath = os.environ.get("PYTHONPATH")
    sys.path.insert(0, target)
    os.environ["PYTHONPATH"] = target + (os.pathsep + old_pythonpath if old_pythonpath else "")
    importlib.invalidate_caches()
    reset_default_registry()
    try:
        yield
    finally:
        if target in sys.path:
            sys.path.remove(target)
        if old_pythonpath is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_pythonpath
        shutil.rmtree(target, ignore_errors=True)
        importlib.invalidate_caches()
        reset_default_registry()


#: The GPU-sharing plugin package of this repository.
GPUSHARE_PACKAGE = Path(__file__).resolve().parents[1] / "plugins" / "gpushare"


@pytest.fixture(scope="module")
def gpushare_installed(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """plugins/gpushare pip-installed for a module's tests (and the processes they start),
    built from a copy: a build writes egg-info into the source folder, and that folder is on
    sys.path for the tests, so it would keep announcing the entry points after uninstall."""
    import shutil

    source = tmp_path_factory.mktemp("gpushare") / "gpushare"
    shutil.copytree(GPUSHARE_PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with installed_package(source, "kubesched-gpushare"):
        yield


@pytest.fixture
def store() -> Store:
    """An empty in-memory cluster store (what :func:`server` serves)."""
    return Store()


@pytest.fixture
async def server(store: Store) -> AsyncIterator[APIServer]:
    """An embedded API server on a free loopback port, over ``store`` (no token asked)."""
    srv = APIServer(store)
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


@pytest.fixture
async def api(server: APIServer, tmp_path: Path) -> AsyncIterator[kube_client.ApiClient]:
    """A kubernetes_asyncio client configured from the kubeconfig the server writes."""
    path = server.write_kubeconfig(tmp_path / "kubeconfig")
    cfg = kube_client.Configuration()
    await kube_config.load_kube_config(config_file=path, client_configuration=cfg)
    async with kube_client.ApiClient(cfg) as api_client:
        yield api_client


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    """Keep each test's outcome on its node (``item.rep_call``), so that a fixture can act on a
    failure (the browser tests keep a screenshot)."""
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)
