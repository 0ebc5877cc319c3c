"""Peaks (plugins/trimaran) in a running scheduler: scheduler-plugins'
``test/integration/peaks_test.go`` (``TestPeaksPlugin``: three idle nodes whose power models
differ, a load-watcher over real HTTP, the power models from the file ``NODE_POWER_MODEL``
names), and the example scenario over the simulator's usage, where Peaks places web-0 on the
busiest node (the sample model rises least there)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from kubesched.testing import running_scheduler

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "trimaran"
SCENARIO = PACKAGE / "examples" / "scenario.yaml"
sys.path.insert(0, str(PACKAGE))

from kubesched_trimaran import Peaks  # noqa: E402

K0, K1, K2 = 471.7412504314313, -91.50493019588365, -0.07186049052516228
#: upstream's three models: the same curve, k1 ten and twenty times larger on node-2 and node-3
MODELS = {
    "node-1": {"k0": K0, "k1": K1, "k2": K2},
    "node-2": {"k0": K0, "k1": -1091.50493019588365, "k2": K2},
    "node-3": {"k0": K0, "k1": -2091.50493019588365, "k2": K2},
}


@pytest.fixture
async def watcher_url() -> AsyncIterator[str]:
    """A load-watcher over real HTTP: every node idle (CPU ``Latest`` 0)."""
    body = {
        "timestamp": 0,
        "window": {},
        "source": "",
        "data": {
            "NodeMetricsMap": {n: {"metrics": [{"type": "CPU", "operator": "Latest", "value": 0}]} for n in MODELS}
        },
    }

    async def answer(request: web.Request) -> web.Response:
        return web.Response(text=json.dumps(body), content_type="application/json")

    app = web.Application()
    app.router.add_get("/watcher", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        yield f"http://127.0.0.1:{runner.addresses[0][1]}"
    finally:
        await runner.cleanup()


def config(args: dict[str, Any]) -> dict[str, Any]:
    """Peaks the only scorer, as upstream's test sets the profile up (PreScore kept for Peaks:
    there it waits for the first read, which upstream makes when the plugin is made)."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "preScore": {"enabled": [{"name": "Peaks"}], "disabled": [{"name": "*"}]},
                    "score": {"enabled": [{"name": "Peaks"}], "disabled": [{"name": "*"}]},
                },
                "pluginConfig": [{"name": "Peaks", "args": args}],
            }
        ],
    }


def node(name: str) -> dict[str, Any]:
    resources = {"pods": "32", "cpu": "2", "memory": "256"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"node": name}},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def pod(name: str, milli_cpu: int) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "containers": [
                {
                    "name": "pause",
                    "image": "registry.k8s.io/pause:3.9",
                    "resources": {"requests": {"cpu": f"{milli_cpu}m", "memory": "50"}},
                }
            ]
        },
    }


async def test_peaks_plugin(watcher_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``TestPeaksPlugin``: pod-1 (300m) goes where the power rises least, node-1; pod-2 (1900m)
    no longer fits there (NodeResourcesFit), and node-2 rises less than node-3."""
    models = tmp_path / "power_model" / "node_power_model"
    models.parent.mkdir()
    models.write_text(json.dumps(MODELS))
    monkeypatch.setenv("NODE_POWER_MODEL", str(models))
    cfg = config({"WatcherAddress": watcher_url, "NodePowerModel": {}})
    async with running_scheduler(config=cfg, plugins=[Peaks], nodes=[node(n) for n in MODELS]) as h:
        h.add(pod("pod-1", 300))
        assert await h.wait_bound("pod-1") == "node-1"
        h.add(pod("pod-2", 1900))
        assert await h.wait_bound("pod-2") == "node-2"


async def test_peaks_over_the_simulator_usage() -> None:
    """The example scenario, one model for all three nodes, no watcher: the load is the
    simulator's usage (worker-a 25%, worker-b 12.5%, worker-c 80%), and web-0's 400m (10%)
    raises the power least on the busiest node, where the curve has flattened."""
    same = {"k0": K0, "k1": K1, "k2": K2}
    cfg = config({"nodePowerModel": {"worker-a": same, "worker-b": same, "worker-c": same}})
    async with running_scheduler(config=cfg, scenario=SCENARIO, plugins=[Peaks]) as h:
        assert await h.wait_bound("web-0") == "worker-c"
