"""The Trimaran plugins' args (plugins/trimaran), as scheduler-plugins decodes and defaults them:
``apis/config/v1/defaults_test.go`` (``TestSchedulingDefaults``' Trimaran cases), the
configuration of ``apis/config/scheme/scheme_test.go`` loading unchanged, ``collector_test.go``'s
``TestNewCollectorSpecs`` (an invalid provider type), and the errors that name the field."""

from __future__ import annotations

import sys
from typing import Any

import pytest
import yaml
from pydantic import ValidationError
from trimaran_cases import PACKAGE

from kubesched.config import parse_config
from kubesched.config.validation import validate_plugin_args
from kubesched.errors import ConfigurationError
from kubesched.runtime.registry import Registry, default_registry

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_trimaran import (
    LoadVariationRiskBalancing,
    LoadVariationRiskBalancingArgs,
    LowRiskOverCommitment,
    LowRiskOverCommitmentArgs,
    TargetLoadPacking,
    TargetLoadPackingArgs,
)


def tlp(raw: dict[str, Any]) -> TargetLoadPackingArgs:
    return validate_plugin_args(TargetLoadPackingArgs, raw)


def lvrb(raw: dict[str, Any]) -> LoadVariationRiskBalancingArgs:
    return validate_plugin_args(LoadVariationRiskBalancingArgs, raw)


def lroc(raw: dict[str, Any]) -> LowRiskOverCommitmentArgs:
    return validate_plugin_args(LowRiskOverCommitmentArgs, raw)


# --- defaults_test.go ---------------------------------------------------------------------------
def test_empty_config_target_load_packing_args() -> None:
    args = tlp({})
    assert args.metric_provider.type == "KubernetesMetricsServer"
    assert args.watcher_address is None
    assert args.default_requests == {"cpu": "1000m"} and args.requests_milli_cores == 1000
    assert args.default_requests_multiplier == "1.5" and args.requests_multiplier == 1.5
    assert args.target_utilization == 40


def test_set_non_default_target_load_packing_args() -> None:
    args = tlp(
        {
            "watcherAddress": "http://localhost:2020",
            "defaultRequests": {"cpu": "100m"},
            "defaultRequestsMultiplier": "2.5",
            "targetUtilization": 50,
        }
    )
    assert args.metric_provider.type == ""  # a watcher address given: no provider defaulted
    assert args.watcher_address == "http://localhost:2020"
    assert args.requests_milli_cores == 100 and args.requests_multiplier == 2.5
    assert args.target_utilization == 50


def test_target_utilization_of_zero_or_below_is_the_default() -> None:
    assert tlp({"targetUtilization": 0}).target_utilization == 40
    assert tlp({"targetUtilization": -3}).target_utilization == 40


def test_empty_config_load_variation_risk_balancing_args() -> None:
    args = lvrb({})
    assert args.metric_provider.type == "KubernetesMetricsServer"
    assert (args.safe_variance_margin, args.safe_variance_sensitivity) == (1.0, 1.0)


def test_set_non_default_load_variation_risk_balancing_args() -> None:
    args = lvrb({"safeVarianceMargin": 2.0, "safeVarianceSensitivity": 2.0})
    assert args.metric_provider.type == "KubernetesMetricsServer"
    assert (args.safe_variance_margin, args.safe_variance_sensitivity) == (2.0, 2.0)


def test_bad_load_variation_risk_balancing_args_become_the_defaults() -> None:
    """``TestNew`` of loadvariationriskbalancing_test.go: a negative margin or sensitivity."""
    args = lvrb({"safeVarianceMargin": -5, "safeVarianceSensitivity": -1})
    assert (args.safe_variance_margin, args.safe_variance_sensitivity) == (1.0, 1.0)


def test_empty_config_low_risk_over_commitment_args() -> None:
    args = lroc({})
    assert args.metric_provider.type == "KubernetesMetricsServer"
    assert args.smoothing_window_size == 5
    assert args.risk_limit_weights == {"cpu": 0.5, "memory": 0.5}


def test_set_non_default_low_risk_over_commitment_args() -> None:
    args = lroc({"smoothingWindowSize": 10, "riskLimitWeights": {"cpu": 0.2, "memory": 0.8}})
    assert args.smoothing_window_size == 10
    assert args.risk_limit_weights == {"cpu": 0.2, "memory": 0.8}


def test_set_out_of_range_low_risk_over_commitment_args() -> None:
    args = lroc({"smoothingWindowSize": 10, "riskLimitWeights": {"cpu": -1, "memory": 2}})
    assert args.risk_limit_weights == {"cpu": 0.5, "memory": 0.5}


def test_bad_low_risk_over_commitment_args_become_the_defaults() -> None:
    """``TestLowRiskOverCommitment_New``: a negative window, no weights; a weight of one
    resource only keeps the other's default."""
    args = lroc({"smoothingWindowSize": -5, "riskLimitWeights": None})
    assert args.smoothing_window_size == 5 and args.risk_limit_weights == {"cpu": 0.5, "memory": 0.5}
    assert lroc({"riskLimitWeights": {"cpu": 0.1}}).weights() == {"cpu": 0.1, "memory": 0.5}


def test_insecure_skip_verify_defaults_to_true_for_prometheus_only() -> None:
    prom = tlp({"metricProvider": {"type": "Prometheus"}, "watcherAddress": "http://w:2020"})
    assert prom.metric_provider.insecure_skip_verify is True
    assert tlp({}).metric_provider.insecure_skip_verify is None
    given = tlp({"metricProvider": {"type": "Prometheus", "insecureSkipVerify": False}, "watcherAddress": "http://w"})
    assert given.metric_provider.insecure_skip_verify is False


# --- scheme_test.go: the configuration loads unchanged ----------------------------------------------
SCHEME_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: scheduler-plugins
  plugins:
    multiPoint:
      enabled:
      - name: TargetLoadPacking
      - name: LoadVariationRiskBalancing
      - name: LowRiskOverCommitment
  pluginConfig:
  - name: TargetLoadPacking
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: TargetLoadPackingArgs
      defaultRequests:
        cpu: "1"
      defaultRequestsMultiplier: "1.8"
      metricProvider:
        address: http://prometheus-k8s.monitoring.svc.cluster.local:9090
        insecureSkipVerify: false
        token: ""
        type: Prometheus
      targetUtilization: 60
      watcherAddress: http://deadbeef:2020
  - name: LoadVariationRiskBalancing
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: LoadVariationRiskBalancingArgs
      metricProvider:
        address: http://prometheus-k8s.monitoring.svc.cluster.local:9090
        insecureSkipVerify: false
        token: ""
        type: Prometheus
      safeVarianceMargin: 1
      safeVarianceSensitivity: 1
      watcherAddress: http://deadbeef:2020
  - name: LowRiskOverCommitment
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: LowRiskOverCommitmentArgs
      metricProvider:
        address: http://prometheus-k8s.monitoring.svc.cluster.local:9090
        insecureSkipVerify: false
        token: ""
        type: Prometheus
      riskLimitWeights:
        cpu: 0.5
        memory: 0.5
      smoothingWindowSize: 5
      watcherAddress: http://deadbeef:2020
"""


def registry() -> Registry:
    """The in-tree plugins and these three (a copy: the default registry stays as it is)."""
    reg = Registry()
    for entry in default_registry().entries():
        if entry.name not in ("TargetLoadPacking", "LoadVariationRiskBalancing", "LowRiskOverCommitment"):
            reg.register(entry.cls, entry.name, entry.distribution)
    for cls in (TargetLoadPacking, LoadVariationRiskBalancing, LowRiskOverCommitment):
        reg.register(cls)
    return reg


def test_the_scheme_test_configuration_loads_unchanged() -> None:
    (profile,) = parse_config(yaml.safe_load(SCHEME_CONFIG), registry=registry()).profiles
    args = profile.plugin_args
    t = args["TargetLoadPacking"]
    assert (t.metric_provider.type, t.metric_provider.address) == (
        "Prometheus",
        "http://prometheus-k8s.monitoring.svc.cluster.local:9090",
    )
    assert (t.watcher_address, t.target_utilization, t.requests_milli_cores, t.requests_multiplier) == (
        "http://deadbeef:2020",
        60,
        1000,
        1.8,
    )
    assert args["LoadVariationRiskBalancing"].safe_variance_margin == 1.0
    lr = args["LowRiskOverCommitment"]
    assert (lr.smoothing_window_size, lr.risk_limit_weights) == (5, {"cpu": 0.5, "memory": 0.5})
    assert "score" in profile.plugins and "TargetLoadPacking" in [r.name for r in profile.plugins["score"]]


# --- errors that name the field ---------------------------------------------------------------------
def message(exc: pytest.ExceptionInfo[ValidationError]) -> str:
    return str(exc.value)


def test_invalid_metric_provider_type() -> None:
    """``TestNewCollectorSpecs``: no watcher address and an empty type (here: the address given
    empty, so that the type is not defaulted), or a type that is none of the three."""
    with pytest.raises(ValidationError) as exc:
        tlp({"watcherAddress": "", "metricProvider": {"type": ""}})
    assert "metricProvider.type: invalid MetricProvider.Type, got ''" in message(exc)
    with pytest.raises(ValidationError) as exc:
        lvrb({"metricProvider": {"type": "Datadog"}})
    assert "invalid MetricProvider.Type, got 'Datadog'" in message(exc)
    assert "KubernetesMetricsServer, Prometheus, SignalFx" in message(exc)


@pytest.mark.parametrize("kind", ["Prometheus", "SignalFx"])
def test_a_provider_without_its_client_is_refused_without_a_watcher(kind: str) -> None:
    with pytest.raises(ValidationError) as exc:
        lroc({"metricProvider": {"type": kind, "address": "http://p:9090"}})
    assert f"metricProvider.type: {kind} is not supported here" in message(exc)
    assert "watcherAddress" in message(exc)


def test_bad_target_load_packing_fields_are_named() -> None:
    with pytest.raises(ValidationError) as exc:
        tlp({"defaultRequestsMultiplier": "one and a half"})
    assert "defaultRequestsMultiplier: unable to parse 'one and a half' as a number" in message(exc)
    with pytest.raises(ValidationError) as exc:
        tlp({"defaultRequestsMultiplier": 1.5})  # a string in the API, as upstream decodes it
    assert "default_requests_multiplier" in message(exc) or "defaultRequestsMultiplier" in message(exc)
    with pytest.raises(ValidationError) as exc:
        tlp({"defaultRequests": {"cpu": "lots"}})
    assert "defaultRequests[cpu]" in message(exc)
    with pytest.raises(ValidationError) as exc:
        tlp({"targetUtilization": 120})
    assert "targetUtilization: must be a percentage of at most 100, got 120" in message(exc)


def test_an_unknown_field_is_refused_by_name_through_the_configuration() -> None:
    data = yaml.safe_load(SCHEME_CONFIG)
    data["profiles"][0]["pluginConfig"][0]["args"]["targetUtilisation"] = 50
    with pytest.raises(ConfigurationError) as exc:
        parse_config(data, registry=registry())
    assert "pluginConfig[0].args.targetUtilisation" in str(exc.value), str(exc.value)
