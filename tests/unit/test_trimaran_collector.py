"""Where the Trimaran plugins' load comes from (plugins/trimaran): scheduler-plugins'
``pkg/trimaran/collector_test.go`` against a load-watcher answer served over real HTTP
(``TestGetAllMetrics``, ``TestUpdateMetrics``, ``TestGetNodeMetrics``,
``TestGetNodeMetricsNilForNode``), a failed read keeping the figures, and the in-memory
cluster's usage as NodeMetrics would report it."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from trimaran_cases import PACKAGE, node, node_info, pod

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_trimaran import Collector, Metric, SimulatedUsage, WatcherService, parse_watcher_metrics
from kubesched_trimaran.metrics import MetricsError, to_json

WATCHER_RESPONSE: dict[str, Any] = {
    "timestamp": 0,
    "window": {"duration": "", "start": 0, "end": 0},
    "source": "",
    "data": {
        "NodeMetricsMap": {
            "node-1": {
                "metrics": [
                    {"type": "CPU", "operator": "AVG", "value": 80},
                    {"type": "CPU", "operator": "STD", "value": 16},
                    {"type": "Memory", "operator": "AVG", "value": 25},
                    {"type": "Memory", "operator": "STD", "value": 6.25},
                ]
            }
        }
    },
}
EXPECTED = [
    Metric("CPU", "AVG", 80),
    Metric("CPU", "STD", 16),
    Metric("Memory", "AVG", 25),
    Metric("Memory", "STD", 6.25),
]


class Watcher:
    def __init__(self) -> None:
        self.body: Any = WATCHER_RESPONSE
        self.status = 200
        self.paths: list[str] = []
        self.url = ""


@pytest.fixture
async def watcher() -> AsyncIterator[Watcher]:
    w = Watcher()

    async def answer(request: web.Request) -> web.Response:
        w.paths.append(request.path)
        return web.Response(status=w.status, text=json.dumps(w.body), content_type="application/json")

    app = web.Application()
    app.router.add_get("/watcher", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    w.url = f"http://127.0.0.1:{port}"
    try:
        yield w
    finally:
        await runner.cleanup()


async def test_get_all_and_node_metrics(watcher: Watcher) -> None:
    collector = Collector(WatcherService(watcher.url))
    assert collector.node_metrics(node_info(node("node-1"))) == (None, None)  # never read
    await collector.refresh()
    assert watcher.paths == ["/watcher"]
    assert collector.metrics.nodes == {"node-1": EXPECTED}
    metrics, whole = collector.node_metrics(node_info(node("node-1")))
    assert metrics == EXPECTED and whole is collector.metrics
    assert to_json(collector.metrics)["data"]["NodeMetricsMap"]["node-1"]["metrics"][3]["value"] == 6.25
    await collector.refresh()  # not due again yet
    assert watcher.paths == ["/watcher"]


async def test_get_node_metrics_nil_for_node(watcher: Watcher) -> None:
    watcher.body = {"window": {}, "data": {"NodeMetricsMap": {}}}
    collector = Collector(WatcherService(watcher.url + "/"))
    await collector.refresh()
    metrics, whole = collector.node_metrics(node_info(node("node-1")))
    assert metrics is None and whole is not None and whole.nodes == {}


async def test_a_failed_read_keeps_the_figures(watcher: Watcher) -> None:
    now = [0.0]
    collector = Collector(WatcherService(watcher.url), clock=lambda: now[0])
    await collector.refresh()
    watcher.status = 500
    now[0] = 31.0
    await collector.refresh()
    assert len(watcher.paths) == 2
    assert collector.metrics.nodes == {"node-1": EXPECTED}
    watcher.status, watcher.body = 200, {"data": {"NodeMetricsMap": {"node-1": {"metrics": [{"value": "high"}]}}}}
    now[0] = 62.0
    await collector.refresh()  # unreadable: kept too
    assert collector.metrics.nodes == {"node-1": EXPECTED}


def test_an_unreadable_answer_names_the_field() -> None:
    with pytest.raises(MetricsError, match=r"data.NodeMetricsMap\[n\].metrics\[0\].value: must be a number"):
        parse_watcher_metrics({"data": {"NodeMetricsMap": {"n": {"metrics": [{"value": "x"}]}}}})
    with pytest.raises(MetricsError, match=r"window.end: must be an integer"):
        parse_watcher_metrics({"window": {"end": "soon"}})


def test_the_in_memory_usage_as_node_metrics() -> None:
    """Each pod's ``kubesched.io/usage``, else its requests, summed over the node's pods, as a
    percentage of its capacity (cpu in millicores, as load-watcher reads it)."""
    source = SimulatedUsage()
    annotated = pod("a", [{"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}])
    annotated["metadata"]["annotations"] = {"kubesched.io/usage": json.dumps({"cpu": "1500m", "memory": "1Gi"})}
    requests_only = pod("b", [{"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}])
    done = pod("c", [{"name": "c", "resources": {"requests": {"cpu": "1"}}}])
    done["status"] = {"phase": "Succeeded"}
    info = node_info(node("n", cpu="4", memory="8Gi"), [annotated, requests_only, done])
    assert source.metrics_of(info) == [Metric("CPU", "Latest", 50.0), Metric("Memory", "Latest", 25.0)]
    broken = pod("d", [{"name": "c"}])
    broken["metadata"]["annotations"] = {"kubesched.io/usage": "{"}
    assert source.metrics_of(node_info(node("m"), [broken])) is None  # left out, as metrics-server would
    collector = Collector(source)
    assert collector.live and not collector.due()
    metrics, whole = collector.node_metrics(info)
    assert metrics is not None and metrics[0].value == 50.0 and whole is not None
