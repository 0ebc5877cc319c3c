"""An out-of-tree plugin package, installed with pip, found by entry point, enabled by name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conftest import installed_package

from kubesched.framework.types import QueuedPodInfo
from kubesched.runtime.registry import default_registry, reset_default_registry
from kubesched.testing import make_pod

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "qos-sort"

CONFIG = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"queueSort": {"enabled": [{"name": "QOSSort"}], "disabled": [{"name": "*"}]}},
        },
        {
            "schedulerName": "batch",
            "plugins": {"queueSort": {"enabled": [{"name": "QOSSort"}], "disabled": [{"name": "*"}]}},
        },
    ],
}


@pytest.fixture(scope="module")
def qos_sort_installed():
    with installed_package(PACKAGE, "kubesched-qos-sort"):
        yield


def test_config_naming_an_uninstalled_plugin_is_refused() -> None:
    from kubesched.config import ConfigError, parse_config

    reset_default_registry()
    if "QOSSort" in default_registry():
        pytest.skip("QOSSort is installed in this environment")
    with pytest.raises(ConfigError, match="QOSSort"):
        parse_config(CONFIG)


def test_entry_point_registers_the_plugin(qos_sort_installed: None) -> None:
    entry = default_registry().get("QOSSort")
    assert entry.distribution == "kubesched-qos-sort"
    assert entry.extension_points == ("queueSort",)


def test_cli_lists_it_with_its_distribution(qos_sort_installed: None) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "plugins", "--output", "json"], capture_output=True, text=True, check=True
    )
    import json

    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["QOSSort"]["distribution"] == "kubesched-qos-sort"
    assert rows["PrioritySort"]["distribution"] == "kubesched"


def test_config_enables_it_by_name_and_it_orders_the_queue(qos_sort_installed: None) -> None:
    from kubesched.backend.queue import SchedulingQueue
    from kubesched.config import parse_config
    from kubesched.runtime.framework import Framework

    cfg = parse_config(CONFIG)
    assert [r.name for r in cfg.profiles[0].plugins["queueSort"]] == ["QOSSort"]
    frameworks = {p.scheduler_name: Framework(p, default_registry()) for p in cfg.profiles}
    clock = iter(range(100, 200))
    queue = SchedulingQueue(frameworks, clock=lambda: float(next(clock)))
    pods = [
        make_pod("besteffort-old").created("2024-01-01T00:00:00Z"),
        make_pod("burstable").req(cpu="100m").created("2024-01-01T00:00:05Z"),
        make_pod("guaranteed-new").lim(cpu="1", memory="1Gi").created("2024-01-01T00:00:09Z"),
        make_pod("guaranteed-old").lim(cpu="1", memory="1Gi").created("2024-01-01T00:00:01Z"),
        make_pod("high-priority-besteffort").priority(10).created("2024-01-01T00:00:09Z"),
        make_pod("batch-burstable").scheduler("batch").req(cpu="1").created("2024-01-01T00:00:02Z"),
    ]
    for p in pods:
        queue.add(p.info())
    order = []
    while (qpi := queue.pop_nowait()) is not None:
        assert isinstance(qpi, QueuedPodInfo)
        order.append(qpi.pod_info.name)
    assert order == [
        "high-priority-besteffort",
        "guaranteed-old",
        "guaranteed-new",
        "batch-burstable",
        "burstable",
        "besteffort-old",
    ]
