"""kubesched's pytest fixtures, registered through the ``pytest11`` entry point: installing
kubesched makes them available to any project's tests (``-p no:kubesched`` turns them off).

* ``kubesched_builders``: ``make_pod``, ``make_node`` and ``make_pod_group``
  (``kubesched_builders.pod("p").req(cpu="1")``).
* ``kubesched_cluster``: an empty in-memory cluster (:class:`~kubesched.testing.running.MemoryCluster`).
* ``kubesched_framework``: ``kubesched_framework(MyPlugin, nodes=[...])`` →
  :class:`~kubesched.testing.points.PluginFramework` (see :func:`~kubesched.testing.plugin_framework`),
  closed after the test.
* ``kubesched_scheduler``: ``await kubesched_scheduler(plugins=[MyPlugin], nodes=[...], pods=[...])``
  → a running :class:`~kubesched.testing.running.Harness` (see
  :func:`~kubesched.testing.running_scheduler`; ``feature_gates={"GenericWorkload": True}``
  schedules pod groups as groups), stopped after the test; needs pytest-asyncio.
* ``kubesched_sim_serve``: ``kubesched_sim_serve("--scenario", "s.yaml")`` → a ``kubesched sim serve``
  process's ``url``, ``web`` and ``kubeconfig`` (see :func:`~kubesched.testing.sim_serve_process`),
  in the test's ``tmp_path``, terminated after the test.

Every name starts with ``kubesched_``, so a project's own fixtures keep theirs.
"""

from __future__ import annotations

# Only pytest here: the kit is imported when a fixture is used, so that loading this plugin (in
# every pytest run wherever kubesched is installed) costs next to nothing.
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from kubesched.testing.points import PluginFramework
    from kubesched.testing.running import Harness, MemoryCluster


class Builders:
    """The object builders: ``pod(name, namespace="default")``, ``node(name)`` and
    ``pod_group(name, min_count=..., members=[...])``."""

    def __init__(self) -> None:
        from kubesched.testing.builders import make_node, make_pod, make_pod_group

        self.pod = make_pod
        self.node = make_node
        self.pod_group = make_pod_group


@pytest.fixture
def kubesched_builders() -> Builders:
    """``make_pod``, ``make_node`` and ``make_pod_group`` as ``kubesched_builders.pod``,
    ``.node`` and ``.pod_group``."""
    return Builders()


@pytest.fixture
def kubesched_cluster() -> MemoryCluster:
    """An empty in-memory cluster: ``store`` (the objects) and ``cluster`` (what a scheduler watches)."""
    from kubesched.testing.running import MemoryCluster

    return MemoryCluster()


@pytest.fixture
def kubesched_framework() -> Iterator[Callable[..., PluginFramework]]:
    """A factory of :class:`PluginFramework` (the arguments of ``plugin_framework``); each is
    closed after the test."""
    from kubesched.testing.points import plugin_framework

    made: list[PluginFramework] = []

    def make(*plugins: Any, **kwargs: Any) -> PluginFramework:
        fw = plugin_framework(*plugins, **kwargs)
        made.append(fw)
        return fw

    yield make
    for fw in made:
        fw.close()


@pytest.fixture
def kubesched_sim_serve(tmp_path: Path) -> Iterator[Callable[..., dict[str, str]]]:
    """A factory that starts ``kubesched sim serve`` with the arguments given, in a folder of
    ``tmp_path``: ``url``, ``web``, ``kubeconfig``. Every process is stopped after the test."""
    from kubesched.testing.processes import sim_serve_process

    with contextlib.ExitStack() as stack:
        count = 0

        def start(*args: str) -> dict[str, str]:
            nonlocal count
            count += 1
            return stack.enter_context(sim_serve_process(tmp_path / f"sim-serve-{count}", *args))

        yield start


try:
    import pytest_asyncio

    _async_fixture: Any = pytest_asyncio.fixture
except ImportError:  # pragma: no cover - pytest then says an async fixture needs a plugin
    _async_fixture = pytest.fixture


@_async_fixture  # type: ignore[untyped-decorator]
async def kubesched_scheduler() -> AsyncIterator[Callable[..., Awaitable[Harness]]]:
    """A factory of running schedulers (the arguments of ``running_scheduler``):
    ``s = await kubesched_scheduler(plugins=[...], nodes=[...])``; each is stopped after the
    test. Needs pytest-asyncio."""
    from kubesched.testing.running import running_scheduler

    async with contextlib.AsyncExitStack() as stack:

        async def start(**kwargs: Any) -> Harness:
            harness: Harness = await stack.enter_async_context(running_scheduler(**kwargs))
            return harness

        yield start
