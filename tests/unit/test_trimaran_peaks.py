"""Peaks (plugins/trimaran) as scheduler-plugins' ``pkg/trimaran/peaks/peaks_test.go``:
``TestPeaksNew`` (the power models from the file ``NODE_POWER_MODEL`` names, and its errors),
``TestPeaksScore`` and ``TestPeaksNormalizeScore`` case for case, through the runtime with the
repository's test kit and a load-watcher answering over real HTTP; the args as scheduler-plugins
writes them, and bad ones refused naming the field."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp import web
from pydantic import ValidationError
from trimaran_cases import PACKAGE, node, pod

from kubesched.config import parse_config
from kubesched.errors import ConfigurationError
from kubesched.runtime.registry import Registry, default_registry
from kubesched.testing import plugin_framework

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_trimaran import Peaks, PeaksArgs, PowerModel, PowerModelError
from kubesched_trimaran.peaks import normalized, power_jump, raw_score

#: upstream's sample power model (``data``)
DATA = {"node-1": {"k0": 471.7412504314313, "k1": -91.50493019588365, "k2": -0.07186049052516228}}


class Watcher:
    def __init__(self) -> None:
        self.body: Any = {}
        self.url = ""


@pytest.fixture
async def watcher() -> AsyncIterator[Watcher]:
    """A load-watcher over real HTTP: ``/watcher`` answers ``body``."""
    w = Watcher()

    async def answer(request: web.Request) -> web.Response:
        return web.Response(text=json.dumps(w.body), content_type="application/json")

    app = web.Application()
    app.router.add_get("/watcher", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    w.url = f"http://127.0.0.1:{runner.addresses[0][1]}"
    try:
        yield w
    finally:
        await runner.cleanup()


@pytest.fixture
def power_model_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``CreateSamplePowerModel``: the sample written where ``NODE_POWER_MODEL`` says."""
    path = tmp_path / "power_model" / "node_power_model"
    path.parent.mkdir()
    path.write_text(json.dumps(DATA))
    monkeypatch.setenv("NODE_POWER_MODEL", str(path))
    return path


def answer(nodes: dict[str, list[dict[str, Any]]] | None) -> dict[str, Any]:
    """A load-watcher answer as it writes it (``NodeMetricsMap`` null: nothing measured)."""
    metrics_map = None if nodes is None else {name: {"metrics": m} for name, m in nodes.items()}
    return {"timestamp": 0, "window": {}, "source": "", "data": {"NodeMetricsMap": metrics_map}}


def cpu(value: float, operator: str = "Latest", kind: str = "CPU") -> dict[str, Any]:
    return {"type": kind, "operator": operator, "value": value}


# --- TestPeaksNew ---------------------------------------------------------------------------------
def test_peaks_new(power_model_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = {"watcherAddress": "http://127.0.0.1:1", "nodePowerModel": {}}
    with plugin_framework(Peaks, args=args) as fw:
        pl = fw.framework.plugins["Peaks"]
        assert isinstance(pl, Peaks)
        assert pl.models == {"node-1": PowerModel.model_validate(DATA["node-1"])}  # from the file
        # a node without a power model: every constant 0
        assert pl.model_of("node-2") == PowerModel(k0=0, k1=0, k2=0)
    # no args: the defaults (upstream's framework hands the plugin nil and it refuses)
    with plugin_framework(Peaks) as fw:
        assert fw.framework.plugins["Peaks"].models["node-1"].k1 == DATA["node-1"]["k1"]

    # NODE_POWER_MODEL naming a path below a file
    monkeypatch.setenv("NODE_POWER_MODEL", f"{power_model_file}/invalid")
    with pytest.raises(PowerModelError) as exc:
        Peaks(PeaksArgs.model_validate(args))
    assert f"nodePowerModel: not given, and NODE_POWER_MODEL={power_model_file}/invalid cannot be read" in str(
        exc.value
    )
    assert "Not a directory" in str(exc.value)

    # a power model of the wrong shape (CreateErroredPowerModel)
    monkeypatch.setenv("NODE_POWER_MODEL", str(power_model_file))
    power_model_file.write_text(json.dumps({"node-1": 10}))
    with pytest.raises(PowerModelError) as exc:
        Peaks(PeaksArgs.model_validate(args))
    assert str(exc.value) == f"NODE_POWER_MODEL={power_model_file}: node-1: must be an object of k0, k1 and k2, got 10"


def test_the_file_is_read_only_without_models_in_the_args(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NODE_POWER_MODEL", str(tmp_path / "absent"))
    pl = Peaks(PeaksArgs.model_validate({"nodePowerModel": {"n": {"k0": 1, "k1": 2, "k2": 0.5}}}))
    assert pl.models == {"n": PowerModel(k0=1, k1=2, k2=0.5)}
    monkeypatch.delenv("NODE_POWER_MODEL")
    with pytest.raises(PowerModelError, match="nodePowerModel: not given, and NODE_POWER_MODEL names no file"):
        Peaks(PeaksArgs())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{", "not JSON"),
        ("[1]", "must be an object of node names to power models, got list"),
        ('{"n": {"k0": 1, "k3": 2}}', "n.k3: Extra inputs are not permitted"),
        ('{"n": {"k1": "1.5"}}', "n.k1: Input should be a valid number"),
    ],
)
def test_a_bad_power_model_file_is_refused_naming_the_node_and_field(
    content: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "models.json"
    path.write_text(content)
    monkeypatch.setenv("NODE_POWER_MODEL", str(path))
    with pytest.raises(PowerModelError) as exc:
        Peaks(PeaksArgs())
    assert str(exc.value).startswith(f"NODE_POWER_MODEL={path}: ") and message in str(exc.value)


def test_a_bad_file_fails_the_profile_naming_the_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NODE_POWER_MODEL", str(tmp_path / "absent.json"))
    with pytest.raises(ConfigurationError) as exc:
        plugin_framework(Peaks)
    assert "plugin 'Peaks' failed to initialize: nodePowerModel: not given" in str(exc.value)


# --- TestPeaksScore -------------------------------------------------------------------------------
def score_to_use() -> int:
    """Upstream's expected score: node-1's rise from 0 to 100%, times 10^15."""
    m = DATA["node-1"]
    return int(m["k1"] * (math.exp(m["k2"] * 100) - math.exp(0)) * 10**15)


POD_WITH_REQUESTS = pod("p", [{"name": "con0", "resources": {"requests": {"cpu": "1", "memory": "2"}}}])
POD_WITH_OVERHEAD = pod("p", overhead={"cpu": "0"})  # testPod3: testPod1's (absent) cpu request
POD_ABOVE_CAPACITY = pod("p", [{"name": "c", "resources": {"limits": {"cpu": "2000m"}}}])  # testPod4


@pytest.mark.parametrize(
    ("test", "p", "nodes", "expected"),
    [
        ("Pod with Requests", POD_WITH_REQUESTS, {"node-1": [cpu(0)]}, score_to_use()),
        ("No CPU metrics found", POD_WITH_REQUESTS, {"node-1": [cpu(0, kind="Memory")]}, 0),
        ("Pod with Overhead", POD_WITH_OVERHEAD, {"node-1": [cpu(0)]}, 0),
        ("Pod with above node resource capacity", POD_ABOVE_CAPACITY, {"node-1": [cpu(100)]}, 0),
        ("No watcher response for node", POD_ABOVE_CAPACITY, {}, 0),
        ("404 resp from watcher", pod("p"), None, 0),
    ],
)
async def test_peaks_score(
    test: str, p: dict[str, Any], nodes: Any, expected: int, watcher: Watcher, power_model_file: Path
) -> None:
    watcher.body = answer(nodes)
    args = {"watcherAddress": watcher.url, "nodePowerModel": {}}
    fw = plugin_framework(Peaks, args=args, nodes=[node("node-1")])
    assert await fw.ascore(p, normalize=False) == {"node-1": expected}, test


def test_the_score_is_the_rise_in_power() -> None:
    model = PowerModel.model_validate(DATA["node-1"])
    assert score_to_use() > 0  # the sample model rises: k1 and k2 negative
    assert raw_score(power_jump(0, 100, model)) == score_to_use()
    assert raw_score(power_jump(40, 40, model)) == 0
    # the sample's rise shrinks as the node gets busier: the busier node is cheaper to add to
    assert power_jump(60, 70, model) < power_jump(10, 20, model)
    # held to int64's range, never an overflow
    assert raw_score(power_jump(0, 100, PowerModel(k1=1, k2=10))) == 2**63 - 1
    assert raw_score(-1e300) == -(2**63)


async def test_the_first_average_or_latest_cpu_metric_counts(watcher: Watcher, power_model_file: Path) -> None:
    watcher.body = answer({"node-1": [cpu(5, "STD"), cpu(50, "AVG"), cpu(0, "Latest")]})
    fw = plugin_framework(Peaks, args={"watcherAddress": watcher.url}, nodes=[node("node-1", cpu="2")])
    model = PowerModel.model_validate(DATA["node-1"])
    # 50% of 2 CPUs plus the pod's 1 CPU: 100%
    assert await fw.ascore(POD_WITH_REQUESTS, normalize=False) == {"node-1": raw_score(power_jump(50, 100, model))}


# --- TestPeaksNormalizeScore ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("test", "raw", "expected"),
    [
        ("Normalize score {minScore, maxScore}", {"node-1": 0, "node-2": 100}, {"node-1": 100, "node-2": 0}),
        ("Normalize score {minScore, minScore}", {"node-1": 0, "node-2": 0}, {"node-1": 0, "node-2": 0}),
        ("Normalize score {maxScore, maxScore}", {"node-1": 100, "node-2": 100}, {"node-1": 100, "node-2": 100}),
    ],
)
def test_peaks_normalize_score(
    test: str, raw: dict[str, int], expected: dict[str, int], power_model_file: Path
) -> None:
    with plugin_framework(Peaks, args={"watcherAddress": "http://127.0.0.1:1"}) as fw:
        outcome = fw.normalize_scores(pod("p"), raw)
        assert outcome.status is None and outcome.totals == expected, test


def test_normalization_is_linear_and_truncates() -> None:
    big = 2**62
    assert normalized([0, 1, 3]) == [100, 67, 0]  # 100 - trunc(33.3)
    assert normalized([-5, -5]) == [100, 100]
    assert normalized([big, -big]) == [0, 100]
    assert normalized([]) == []


async def test_the_least_rise_scores_highest_over_the_loop(watcher: Watcher, power_model_file: Path) -> None:
    """The sample model on two nodes: the busier one (60%) rises less than the idle one."""
    power_model_file.write_text(json.dumps({"node-1": DATA["node-1"], "node-2": DATA["node-1"]}))
    watcher.body = answer({"node-1": [cpu(0)], "node-2": [cpu(60)]})
    fw = plugin_framework(Peaks, args={"watcherAddress": watcher.url}, nodes=[node("node-1"), node("node-2")])
    p = pod("p", [{"name": "c", "resources": {"requests": {"cpu": "200m"}}}])
    assert await fw.ascore(p) == {"node-1": 0, "node-2": 100}


# --- the args -------------------------------------------------------------------------------------
CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: Peaks
  plugins:
    score:
      enabled:
      - name: Peaks
  pluginConfig:
    - name: Peaks
      args:
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: PeaksArgs
        WatcherAddress: http://load-watcher:2020
        NodePowerModel:
          node-1: {k0: 471.7412504314313, k1: -91.50493019588365, k2: -0.07186049052516228}
"""


def registry() -> Registry:
    reg = Registry()
    for entry in default_registry().entries():
        if entry.name != "Peaks":
            reg.register(entry.cls, entry.name, entry.distribution)
    reg.register(Peaks)
    return reg


def test_upstream_example_configuration_loads_unchanged() -> None:
    (profile,) = parse_config(yaml.safe_load(CONFIG), registry=registry()).profiles
    args = profile.plugin_args["Peaks"]
    assert args.watcher_address == "http://load-watcher:2020"
    assert args.node_power_model == {"node-1": PowerModel.model_validate(DATA["node-1"])}
    lower = PeaksArgs.model_validate({"watcherAddress": "http://w:2020", "nodePowerModel": {"n": {"k1": 1}}})
    assert (lower.watcher_address, lower.node_power_model) == ("http://w:2020", {"n": PowerModel(k1=1)})
    assert PeaksArgs().watcher_address is None and PeaksArgs().node_power_model == {}


def test_bad_args_are_refused_naming_the_field() -> None:
    data = yaml.safe_load(CONFIG)
    data["profiles"][0]["pluginConfig"][0]["args"]["NodePowerModel"]["node-1"]["k3"] = 1
    with pytest.raises(ConfigurationError) as exc:
        parse_config(data, registry=registry())
    assert "pluginConfig[0].args.NodePowerModel.node-1.k3: unknown field" in str(exc.value), str(exc.value)
    with pytest.raises(ValidationError, match="watcherAddress: given twice, as watcherAddress and WatcherAddress"):
        PeaksArgs.model_validate({"watcherAddress": "a", "WatcherAddress": "b"})
    with pytest.raises(ValidationError, match="nodePowerModel.n.k0"):
        PeaksArgs.model_validate({"nodePowerModel": {"n": {"k0": "high"}}})
    with pytest.raises(ValidationError, match="metricProvider"):
        PeaksArgs.model_validate({"metricProvider": {"type": "KubernetesMetricsServer"}})  # not a Peaks field
