"""The network-aware plugins' args (plugins/network-aware), as scheduler-plugins decodes and
defaults them: ``apis/config/v1/defaults_test.go`` (its TopologicalSortArgs and
NetworkOverheadArgs cases), the configuration of ``apis/config/scheme/scheme_test.go`` loading
unchanged (set and empty args; the plugins enabled, as kubesched keeps the args of the plugins a
profile runs), and the errors that name the field."""

from __future__ import annotations

from typing import Any

import network_aware_cases
import pytest
import yaml
from network_aware_cases import network_aware
from pydantic import ValidationError

from kubesched.config import parse_config
from kubesched.config.validation import validate_plugin_args
from kubesched.errors import ConfigurationError
from kubesched.runtime.registry import Registry, default_registry

TopologicalSortArgs = network_aware.TopologicalSortArgs
NetworkOverheadArgs = network_aware.NetworkOverheadArgs


def ts(raw: dict[str, Any]) -> Any:
    return validate_plugin_args(TopologicalSortArgs, raw)


def no(raw: dict[str, Any]) -> Any:
    return validate_plugin_args(NetworkOverheadArgs, raw)


# --- defaults_test.go ---------------------------------------------------------------------------
def test_empty_config_topology_sort_args() -> None:
    assert ts({}).namespaces == ["default"]


def test_set_non_default_topology_sort_args() -> None:
    assert ts({"namespaces": ["n1"]}).namespaces == ["n1"]


def test_empty_config_network_overhead_args() -> None:
    args = no({})
    assert (args.namespaces, args.weights_name, args.network_topology_name) == (
        ["default"],
        "UserDefined",
        "nt-default",
    )


def test_set_non_default_network_overhead_args() -> None:
    args = no({"namespaces": ["n2"], "weightsName": "latency", "networkTopologyName": "nt-latency-costs"})
    assert (args.namespaces, args.weights_name, args.network_topology_name) == (["n2"], "latency", "nt-latency-costs")


def test_null_and_empty_are_the_defaults() -> None:
    """Unset pointers and an empty (or null) list, as upstream's defaulting sees them."""
    args = no({"namespaces": None, "weightsName": None, "networkTopologyName": None})
    assert (args.namespaces, args.weights_name, args.network_topology_name) == (
        ["default"],
        "UserDefined",
        "nt-default",
    )
    assert ts({"namespaces": []}).namespaces == ts({"namespaces": None}).namespaces == ["default"]
    assert no({"weightsName": ""}).weights_name == ""  # a set pointer to "" is kept


# --- scheme_test.go ---------------------------------------------------------------------------------
SCHEME_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: scheduler-plugins
  plugins:
    queueSort:
      enabled: [{name: TopologicalSort}]
      disabled: [{name: "*"}]
    multiPoint:
      enabled: [{name: NetworkOverhead}]
  pluginConfig:
  - name: TopologicalSort
    args:
      namespaces:
      - "networkAware"
  - name: NetworkOverhead
    args:
      namespaces:
      - "networkAware"
      weightsName: "netCosts"
      networkTopologyName: "net-topology-v1"
"""

SCHEME_CONFIG_EMPTY = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: scheduler-plugins
  plugins:
    queueSort:
      enabled: [{name: TopologicalSort}]
      disabled: [{name: "*"}]
    multiPoint:
      enabled: [{name: NetworkOverhead}]
  pluginConfig:
  - name: TopologicalSort
    args:
  - name: NetworkOverhead
    args:
"""


def registry() -> Registry:
    """The in-tree plugins and these two (a copy: the default registry stays as it is)."""
    reg = Registry()
    for entry in default_registry().entries():
        if entry.name not in ("TopologicalSort", "NetworkOverhead"):
            reg.register(entry.cls, entry.name, entry.distribution)
    reg.register(network_aware.TopologicalSort)
    reg.register(network_aware.NetworkOverhead)
    return reg


def test_the_scheme_test_configuration_loads_unchanged() -> None:
    (profile,) = parse_config(yaml.safe_load(SCHEME_CONFIG), registry=registry()).profiles
    assert profile.plugin_args["TopologicalSort"].namespaces == ["networkAware"]
    assert [r.name for r in profile.plugins["queueSort"]] == ["TopologicalSort"]
    for point in ("preFilter", "filter", "score"):
        assert "NetworkOverhead" in [r.name for r in profile.plugins[point]], point
    overhead = profile.plugin_args["NetworkOverhead"]
    assert (overhead.namespaces, overhead.weights_name, overhead.network_topology_name) == (
        ["networkAware"],
        "netCosts",
        "net-topology-v1",
    )


def test_the_scheme_test_configuration_with_empty_args_gets_the_defaults() -> None:
    (profile,) = parse_config(yaml.safe_load(SCHEME_CONFIG_EMPTY), registry=registry()).profiles
    assert profile.plugin_args["TopologicalSort"].namespaces == ["default"]
    overhead = profile.plugin_args["NetworkOverhead"]
    assert (overhead.namespaces, overhead.weights_name, overhead.network_topology_name) == (
        ["default"],
        "UserDefined",
        "nt-default",
    )


# --- errors that name the field ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"namespaces": "default"}, "namespaces"),
        ({"namespaces": [7]}, "namespaces.0"),
        ({"weightsName": 3}, "weightsName"),
        ({"networkTopologyName": ["nt"]}, "networkTopologyName"),
        ({"weightName": "UserDefined"}, "weightName"),
    ],
)
def test_bad_network_overhead_fields_are_named(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as exc:
        no(raw)
    assert [".".join(str(p) for p in e["loc"]) for e in exc.value.errors()] == [field]


def test_an_unknown_field_is_refused_by_name_through_the_configuration() -> None:
    data = yaml.safe_load(SCHEME_CONFIG)
    data["profiles"][0]["pluginConfig"][1]["args"]["networkTopology"] = "nt"
    with pytest.raises(ConfigurationError) as exc:
        parse_config(data, registry=registry())
    assert "pluginConfig[1].args.networkTopology" in str(exc.value), str(exc.value)
    data = yaml.safe_load(SCHEME_CONFIG)
    data["profiles"][0]["pluginConfig"][0]["args"]["namespaces"] = "networkAware"
    with pytest.raises(ConfigurationError) as exc:
        parse_config(data, registry=registry())
    assert "pluginConfig[0].args.namespaces" in str(exc.value), str(exc.value)


def test_the_readme_configuration_loads() -> None:
    """The README's Configuration block, as a user would copy it."""
    readme = (network_aware_cases.PACKAGE / "README.md").read_text()
    blocks = [b.split("```", 1)[0] for b in readme.split("```yaml\n")[1:]]
    (config,) = [yaml.safe_load(b) for b in blocks if "KubeSchedulerConfiguration" in b]
    (profile,) = parse_config(config, registry=registry()).profiles
    assert profile.scheduler_name == "network-aware-scheduler"
    assert [r.name for r in profile.plugins["queueSort"]] == ["TopologicalSort"]
    assert [(r.name, r.weight) for r in profile.plugins["score"] if r.name == "NetworkOverhead"] == [
        ("NetworkOverhead", 5)
    ]
    overhead = profile.plugin_args["NetworkOverhead"]
    assert (overhead.weights_name, overhead.network_topology_name) == ("UserDefined", "nt-default")
