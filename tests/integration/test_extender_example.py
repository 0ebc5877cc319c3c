"""The example extender package (plugins/extender-example) served over real HTTP on 127.0.0.1
and called through HTTPExtender, as the scheduler calls it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from polling import eventually

from kubesched.config.models import Extender
from kubesched.extender import ExtenderError, HTTPExtender, serve_extender
from kubesched.framework.status import Status
from kubesched.scheduler.extenders import find_nodes_that_pass_extenders, prioritize_with_extenders
from kubesched.testing import as_node_infos, make_node, make_pod, running_scheduler

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "extender-example"
if str(PACKAGE) not in sys.path:
    sys.path.insert(0, str(PACKAGE))

import kubesched_extender_example as example  # noqa: E402


def nodes(*names: str):
    return as_node_infos([make_node(n) for n in names])


@pytest.fixture
async def served():
    """Serve ``make_app(limit)`` and return an HTTPExtender configured as the README says."""
    servers = []
    clients: list[HTTPExtender] = []

    async def start(limit: int | None = None, cache: bool = False, weight: int = 1) -> HTTPExtender:
        srv = await serve_extender(example.make_app(limit))
        servers.append(srv)
        ext = HTTPExtender(
            Extender.model_validate(
                {
                    "urlPrefix": srv.url,
                    "filterVerb": "filter",
                    "prioritizeVerb": "prioritize",
                    "weight": weight,
                    "nodeCacheCapable": cache,
                }
            )
        )
        clients.append(ext)
        return ext

    yield start
    for c in clients:
        await c.close()
    for s in servers:
        await s.close()


@pytest.mark.parametrize(
    ("pod_name", "limit", "fits"),
    [
        ("web", None, True),
        ("abcdefghi", None, True),
        ("abcdefghij", None, False),
        ("a-much-longer-pod-name", 30, True),
        ("a-much-longer-pod-name", 5, False),
    ],
    ids=["short", "nine-chars-under-default", "ten-chars-at-default", "long-under-raised-limit", "long-over-low-limit"],
)
@pytest.mark.parametrize("cache", [False, True], ids=["Nodes", "NodeNames"])
async def test_filter_by_pod_name_length(served, pod_name: str, limit: int | None, fits: bool, cache: bool) -> None:
    ext = await served(limit, cache)
    infos = nodes("n1", "n2")
    feasible, failed, unresolvable = await ext.filter(make_pod(pod_name).info(), infos)
    if fits:
        assert feasible == infos
        assert failed == {}
    else:
        assert feasible == []
        assert set(failed) == {"n1", "n2"}
        want = limit if limit is not None else example.DEFAULT_MAX_POD_NAME_LENGTH
        assert f"names shorter than {want}" in failed["n1"]
        assert pod_name in failed["n1"]
    assert unresolvable == {}


async def test_limit_from_environment(served, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(example.ENV_MAX_POD_NAME_LENGTH, "4")
    ext = await served()
    assert (await ext.filter(make_pod("abc").info(), nodes("n1")))[0] != []
    assert (await ext.filter(make_pod("abcd").info(), nodes("n1")))[0] == []


@pytest.mark.parametrize("value", ["zero", "0", "-3"], ids=["not-a-number", "zero", "negative"])
def test_bad_environment_limit_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(example.ENV_MAX_POD_NAME_LENGTH, value)
    with pytest.raises(ValueError, match=example.ENV_MAX_POD_NAME_LENGTH):
        example.make_app()


@pytest.mark.parametrize(
    ("names", "want"),
    [
        (["n1", "node-22", "n-333"], [("n1", 10), ("node-22", 0), ("n-333", 4)]),
        (["aa", "bb"], [("aa", 10), ("bb", 10)]),
        (["a", "bbbbbbbbbbb"], [("a", 10), ("bbbbbbbbbbb", 0)]),
        (["only"], [("only", 10)]),
    ],
    ids=["linear-rounded-down", "equal-lengths-all-ten", "two-extremes", "single-node"],
)
@pytest.mark.parametrize("cache", [False, True], ids=["Nodes", "NodeNames"])
async def test_prioritize_prefers_short_node_names(served, names: list[str], want: list, cache: bool) -> None:
    ext = await served(cache=cache, weight=2)
    scores, weight = await ext.prioritize(make_pod("p").info(), nodes(*names))
    assert scores == want
    assert weight == 2


async def test_scheduler_loops_over_the_example(served) -> None:
    ext = await served(weight=2)
    infos = nodes("n1", "node-22")
    statuses: dict[str, Status] = {}

    too_long = make_pod("a-very-long-name").info()
    assert await find_nodes_that_pass_extenders([ext], too_long, infos, statuses) == []
    assert set(statuses) == {"n1", "node-22"}
    assert statuses["n1"].is_rejected()

    short = make_pod("web").info()
    assert await find_nodes_that_pass_extenders([ext], short, infos, {}) == infos
    totals = await prioritize_with_extenders([ext], short, infos)
    assert totals == {"n1": [(ext.name, 200)], "node-22": [(ext.name, 0)]}


async def test_a_running_scheduler_consults_the_example(served) -> None:
    ext = await served(weight=5)
    cluster = [make_node(n).capacity(cpu="4", memory="8Gi", pods="10") for n in ("node-22", "n1")]
    pods = [make_pod("web"), make_pod("a-very-long-name")]
    async with running_scheduler(nodes=cluster, pods=pods, extenders=[ext]) as s:
        assert await s.wait_bound("web") == "n1"  # the shorter node name scores higher
        why = await s.wait_unschedulable("a-very-long-name")
        assert why.startswith("0/2 nodes are available: 2 pod name 'a-very-long-name' is 16 characters long")
        record = s.result("web")
        assert record is not None
        assert {node: sorted(by.values()) for node, by in record.extender_prioritize.items()} == {
            "node-22": [0],
            "n1": [500],  # 10 (its best) x weight 5 x 10
        }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_python_dash_m_serves_the_extender() -> None:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "kubesched_extender_example", "--host", "127.0.0.1", "--port", str(port)],
        env={**os.environ, "PYTHONPATH": str(PACKAGE), "EXTENDER_MAX_POD_NAME_LENGTH": "6"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    ext = HTTPExtender(
        Extender.model_validate({"urlPrefix": f"http://127.0.0.1:{port}", "filterVerb": "filter", "httpTimeout": "1s"})
    )
    try:

        async def filtered() -> Any:
            if proc.poll() is not None:
                pytest.fail(f"the extender exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            return await ext.filter(make_pod("abcdef").info(), nodes("n1"))

        feasible, failed, _ = await eventually(
            filtered, "the extender to answer", timeout=10, interval=0.1, ignoring=(ExtenderError,)
        )
        assert feasible == []
        assert "names shorter than 6" in failed["n1"]
    finally:
        await ext.close()
        proc.terminate()
        proc.communicate(timeout=10)
