"""Extenders in the engine: the example extender served over real HTTP, the scheduler calling it
after its Filter and Score plugins, a binding extender binding instead of DefaultBinder, and the
results in the simulator's report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from kubesched.config import parse_config
from kubesched.extender import HTTPExtender, make_extender_app, serve_extender
from kubesched.sim.run.simulate import simulate
from kubesched.sim.scenario.reading import parse_scenario
from kubesched.testing import make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "plugins" / "extender-example"))

import kubesched_extender_example as example  # noqa: E402


def config(url: str, **extender: Any) -> Any:
    return parse_config(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "extenders": [{"urlPrefix": url, **extender}],
        }
    )


def scenario(*objs: Any) -> Any:
    return parse_scenario([o.obj() for o in objs])


async def run(cfg: Any, sc: Any) -> dict[str, dict[str, Any]]:
    extenders = [HTTPExtender(e) for e in cfg.model.extenders]
    try:
        result = await simulate(cfg.profiles, sc, extenders=extenders)
    finally:
        for e in extenders:
            await e.close()
    return {p["name"]: p for p in result.pods}


async def test_example_extender_filters_and_prioritizes() -> None:
    server = await serve_extender(example.make_app(max_pod_name_length=10), "127.0.0.1")
    try:
        cfg = config(server.url, filterVerb="filter", prioritizeVerb="prioritize", weight=5)
        # Identical nodes: only the extender's priority (shorter names) separates them.
        sc = scenario(
            make_node("a"),
            make_node("bbbb"),
            make_node("ccccccc"),
            make_pod("short"),
            make_pod("much-too-long-name"),
        )
        pods = await run(cfg, sc)
    finally:
        await server.close()
    short, long_ = pods["short"], pods["much-too-long-name"]
    assert short["node"] == "a"
    assert short["extenderFilter"]["a"][server.url] == "passed"
    assert short["extenderPrioritize"]["a"][server.url] == 10 * 5 * 10
    assert short["extenderPrioritize"]["ccccccc"][server.url] == 0
    assert long_["node"] is None and long_["phase"] == "Unschedulable"
    assert long_["message"].startswith("0/3 nodes are available: 3 ")
    assert "much-too-long-name" in long_["message"]


async def test_binding_extender_binds_instead_of_default_binder() -> None:
    calls: list[tuple[str, str, str, str]] = []

    def bind(namespace: str, name: str, uid: str, node: str) -> None:
        calls.append((namespace, name, uid, node))

    server = await serve_extender(make_extender_app(bind=bind), "127.0.0.1")
    try:
        cfg = config(server.url, bindVerb="bind")
        pods = await run(cfg, scenario(make_node("n1"), make_pod("p")))
    finally:
        await server.close()
    assert [c[1] for c in calls] == ["p"] and calls[0][3] == "n1"
    # The extender bound it (the scheduler did not), so the store never saw a binding.
    assert pods["p"]["extenderBind"] == {server.url: "success"}
    assert pods["p"]["bind"] == {}


@pytest.mark.parametrize("ignorable", [False, True], ids=["fails-the-attempt", "ignorable-is-skipped"])
async def test_unreachable_filter_extender(ignorable: bool) -> None:
    # Nothing listens on this port: every call fails at once.
    cfg = config("http://127.0.0.1:9", filterVerb="filter", ignorable=ignorable, httpTimeout="1s")
    pods = await run(cfg, scenario(make_node("n1"), make_node("n2"), make_pod("p")))
    if ignorable:
        assert pods["p"]["phase"] == "Scheduled"
    else:
        assert pods["p"]["phase"] == "Error"
        assert "filter" in pods["p"]["message"]


async def test_managed_resources_limit_calls_to_interested_pods() -> None:
    seen: list[str] = []

    def filter_fn(pod: dict[str, Any], nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        seen.append(pod["metadata"]["name"])
        return nodes

    server = await serve_extender(make_extender_app(filter=filter_fn), "127.0.0.1")
    try:
        cfg = config(server.url, filterVerb="filter", managedResources=[{"name": "example.com/foo"}])
        sc = scenario(
            make_node("n1").alloc(**{"example.com/foo": "4"}),
            make_node("n2").alloc(**{"example.com/foo": "4"}),
            make_pod("plain"),
            make_pod("wants-foo").container(requests={"example.com/foo": "1"}),
        )
        pods = await run(cfg, sc)
    finally:
        await server.close()
    assert seen == ["wants-foo"]
    assert pods["plain"]["phase"] == pods["wants-foo"]["phase"] == "Scheduled"


async def test_preempting_extender_narrows_the_candidates() -> None:
    seen: list[list[str]] = []

    def preempt(pod: dict[str, Any], victims: dict[str, Any]) -> dict[str, Any]:
        seen.append(sorted(victims))
        return {node: v for node, v in victims.items() if node != "n1"}  # never preempt on n1

    server = await serve_extender(make_extender_app(preempt=preempt), "127.0.0.1")
    try:
        cfg = config(server.url, preemptVerb="preempt")
        low = [make_pod(f"low-{n}").priority(0).req(cpu="3").node(n) for n in ("n1", "n2")]
        sc = scenario(
            make_node("n1").capacity(cpu="4", memory="8Gi", pods="10"),
            make_node("n2").capacity(cpu="4", memory="8Gi", pods="10"),
            *low,
            make_pod("urgent").priority(100).req(cpu="3"),
        )
        extenders = [HTTPExtender(e) for e in cfg.model.extenders]
        try:
            result = await simulate(cfg.profiles, sc, extenders=extenders)
        finally:
            for e in extenders:
                await e.close()
    finally:
        await server.close()
    assert seen and seen[0] == ["n1", "n2"]
    pods = {p["name"]: p for p in result.pods}
    assert pods["urgent"]["node"] == "n2"
    assert result.summary["preempted"] == ["default/low-n2"]
