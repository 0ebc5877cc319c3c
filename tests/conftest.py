from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes_asyncio import client as kube_client
from kubernetes_asyncio import config as kube_config

import kubesched
from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer

# The harness the tests share is the one kubesched.testing ships (tests import it from here too).
from kubesched.testing import pytest_plugin as kubesched_fixtures
from kubesched.testing.running import Harness, Recorder, make_harness, profile, registry_with

__all__ = ["Harness", "Recorder", "make_harness", "profile", "registry_with"]


def pytest_sessionstart(session: pytest.Session) -> None:
    """Byte-compile kubesched's own sources once, when Python is told not to write bytecode
    (``PYTHONDONTWRITEBYTECODE``): the suite starts several hundred Python processes (``simulate``,
    ``sim serve``, ``run``, kubectl's servers), and each would otherwise compile every module it
    imports anew, about 0.2 s of CPU a start. Sources that did not change are skipped."""
    if sys.dont_write_bytecode:
        import compileall

        compileall.compile_dir(Path(kubesched.__file__).parent, quiet=2)


def pytest_configure(config: pytest.Config) -> None:
    """kubesched's fixtures (kubesched_framework, kubesched_scheduler, ...), as an installed
    kubesched gives them through its pytest11 entry point: registered here when that entry point
    did not (a checkout on PYTHONPATH, an install older than the entry point)."""
    if not config.pluginmanager.is_registered(kubesched_fixtures):
        config.pluginmanager.register(kubesched_fixtures, "kubesched")


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


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
def small_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A trace of two nodes and five pods in the openb format (tests/small_trace.py), found
    through KUBESCHED_TRACES; its folder."""
    from tests.small_trace import write_small_trace

    monkeypatch.setenv("KUBESCHED_TRACES", str(tmp_path))
    return write_small_trace(tmp_path)


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


def compare_metrics(scenario: Any, *configs: Any) -> dict[str, dict[str, Any]]:
    """``kubesched compare --output json`` over ``scenario`` with ``configs``, as a user runs it
    (a process of its own, so an installed plugin package is found by its entry points): each
    configuration's metrics by its profile name. A failing command fails the test with its
    stderr."""
    import json
    import subprocess
    import sys

    argv = [sys.executable, "-m", "kubesched", "compare", "--no-progress", "--output", "json"]
    argv += ["--scenario", str(scenario)]
    for config in configs:
        argv += ["--config", str(config)]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    return {c["name"]: c["metrics"] for c in json.loads(out.stdout)["configurations"]}
