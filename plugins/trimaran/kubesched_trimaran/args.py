"""``pluginConfig`` args: scheduler-plugins' ``TargetLoadPackingArgs``,
``LoadVariationRiskBalancingArgs``, ``LowRiskOverCommitmentArgs`` and ``PeaksArgs``
(``kubescheduler.config.k8s.io/v1``), field for field, with upstream's defaulting
(``apis/config/v1/defaults.go``):

* every one: ``metricProvider`` (``type``, ``address``, ``token``, ``insecureSkipVerify``) and
  ``watcherAddress``; without a ``watcherAddress`` and without a type, the type is
  ``KubernetesMetricsServer``; ``insecureSkipVerify`` defaults to true for ``Prometheus``;
* TargetLoadPacking: ``defaultRequests`` ``{cpu: 1000m}``, ``defaultRequestsMultiplier``
  ``"1.5"`` (a string, parsed as a number), ``targetUtilization`` 40 (0 or below: 40);
* LoadVariationRiskBalancing: ``safeVarianceMargin`` and ``safeVarianceSensitivity`` 1 (below 0:
  1);
* LowRiskOverCommitment: ``smoothingWindowSize`` 5 (0 or below: 5), ``riskLimitWeights``
  ``{cpu: 0.5, memory: 0.5}`` when none is given, a weight outside [0, 1] replaced by 0.5;
* Peaks: ``watcherAddress`` and ``nodePowerModel`` only (no ``metricProvider``), no defaults;
  upstream's Go names ``WatcherAddress`` and ``NodePowerModel`` are read as well (its v1 type's
  JSON tags are malformed, so those are the keys its own example uses).

Refused, naming the field: a ``metricProvider.type`` that is none of the three when no
``watcherAddress`` is given (upstream's ``invalid MetricProvider.Type``), a
``defaultRequestsMultiplier`` that is not a number, a ``defaultRequests`` quantity that cannot be
read, a ``targetUtilization`` above 100; and, here only, ``Prometheus`` and ``SignalFx`` without a
``watcherAddress`` (see :data:`UNSUPPORTED_PROVIDER`).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictStr,
    field_validator,
    model_validator,
)

from kubesched import milli_value

KUBERNETES_METRICS_SERVER = "KubernetesMetricsServer"
PROMETHEUS = "Prometheus"
SIGNALFX = "SignalFx"
PROVIDER_TYPES = (KUBERNETES_METRICS_SERVER, PROMETHEUS, SIGNALFX)

DEFAULT_REQUESTS_MILLI_CORES = 1000
DEFAULT_REQUESTS_MULTIPLIER = "1.5"
DEFAULT_TARGET_UTILIZATION_PERCENT = 40
DEFAULT_SAFE_VARIANCE_MARGIN = 1.0
DEFAULT_SAFE_VARIANCE_SENSITIVITY = 1.0
DEFAULT_SMOOTHING_WINDOW_SIZE = 5
DEFAULT_RISK_LIMIT_WEIGHT = 0.5

#: Why a provider other than the metrics API is refused without a watcher service.
UNSUPPORTED_PROVIDER = (
    "is not supported here: load-watcher's {kind} client is not built in; run load-watcher as a service "
    "and give its address as watcherAddress, or use KubernetesMetricsServer"
)


class MetricProviderSpec(BaseModel):
    """Where load-watcher reads the measurements (``MetricProviderSpec``)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: StrictStr = ""
    address: StrictStr | None = None
    token: StrictStr | None = None
    insecure_skip_verify: bool | None = Field(None, alias="insecureSkipVerify")


class TrimaranSpec(BaseModel):
    """The fields every Trimaran plugin's args share (``TrimaranSpec``, inlined)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    metric_provider: MetricProviderSpec = Field(
        default_factory=lambda: MetricProviderSpec.model_validate({}), alias="metricProvider"
    )
    #: A load-watcher service (``http://host:2020``): its ``/watcher`` answer is read.
    watcher_address: StrictStr | None = Field(None, alias="watcherAddress")

    @model_validator(mode="after")
    def _trimaran_defaults(self) -> TrimaranSpec:
        provider = self.metric_provider
        if self.watcher_address is None and not provider.type:
            provider.type = KUBERNETES_METRICS_SERVER
        if provider.type == PROMETHEUS and provider.insecure_skip_verify is None:
            provider.insecure_skip_verify = True
        if not self.watcher_address:
            if provider.type not in PROVIDER_TYPES:
                raise ValueError(
                    f"metricProvider.type: invalid MetricProvider.Type, got {provider.type!r}: "
                    f"one of {', '.join(PROVIDER_TYPES)} (or give watcherAddress)"
                )
            if provider.type != KUBERNETES_METRICS_SERVER:
                raise ValueError(
                    f"metricProvider.type: {provider.type} " + UNSUPPORTED_PROVIDER.format(kind=provider.type)
                )
        return self


def _quantity(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"defaultRequests[{name}]: must be a quantity such as 500m, got {value!r}")
    try:
        return milli_value(value)
    except ValueError as exc:
        raise ValueError(f"defaultRequests[{name}]: {exc}") from None


class TargetLoadPackingArgs(TrimaranSpec):
    default_requests: dict[str, Any] = Field(
        default_factory=lambda: {"cpu": f"{DEFAULT_REQUESTS_MILLI_CORES}m"}, alias="defaultRequests"
    )
    default_requests_multiplier: StrictStr = Field(DEFAULT_REQUESTS_MULTIPLIER, alias="defaultRequestsMultiplier")
    target_utilization: int = Field(DEFAULT_TARGET_UTILIZATION_PERCENT, alias="targetUtilization")

    @field_validator("default_requests")
    @classmethod
    def _requests(cls, v: dict[str, Any]) -> dict[str, Any]:
        for name, value in v.items():
            _quantity(name, value)
        return v

    @field_validator("default_requests_multiplier")
    @classmethod
    def _multiplier(cls, v: str) -> str:
        try:
            if v != v.strip() or "_" in v:  # as Go's strconv.ParseFloat: no blanks, no separators
                raise ValueError(v)
            float(v)
        except ValueError:
            raise ValueError(f"defaultRequestsMultiplier: unable to parse {v!r} as a number") from None
        return v

    @field_validator("target_utilization")
    @classmethod
    def _target(cls, v: int) -> int:
        if v <= 0:
            return DEFAULT_TARGET_UTILIZATION_PERCENT
        if v > 100:
            raise ValueError(f"targetUtilization: must be a percentage of at most 100, got {v}")
        return v

    @property
    def requests_milli_cores(self) -> int:
        """What a container without CPU requests or limits is predicted to use (``cpu`` of
        ``defaultRequests``; 0 when it gives none, as upstream reads it)."""
        value = self.default_requests.get("cpu")
        return 0 if value is None else _quantity("cpu", value)

    @property
    def requests_multiplier(self) -> float:
        return float(self.default_requests_multiplier)


class LoadVariationRiskBalancingArgs(TrimaranSpec):
    safe_variance_margin: float = Field(DEFAULT_SAFE_VARIANCE_MARGIN, alias="safeVarianceMargin")
    safe_variance_sensitivity: float = Field(DEFAULT_SAFE_VARIANCE_SENSITIVITY, alias="safeVarianceSensitivity")

    @field_validator("safe_variance_margin")
    @classmethod
    def _margin(cls, v: float) -> float:
        return DEFAULT_SAFE_VARIANCE_MARGIN if v < 0 else _finite("safeVarianceMargin", v)

    @field_validator("safe_variance_sensitivity")
    @classmethod
    def _sensitivity(cls, v: float) -> float:
        return DEFAULT_SAFE_VARIANCE_SENSITIVITY if v < 0 else _finite("safeVarianceSensitivity", v)


def _finite(name: str, v: float) -> float:
    if not math.isfinite(v):
        raise ValueError(f"{name}: must be a finite number, got {v}")
    return v


def _default_weights() -> dict[str, float]:
    return {"cpu": DEFAULT_RISK_LIMIT_WEIGHT, "memory": DEFAULT_RISK_LIMIT_WEIGHT}


class LowRiskOverCommitmentArgs(TrimaranSpec):
    smoothing_window_size: int = Field(DEFAULT_SMOOTHING_WINDOW_SIZE, alias="smoothingWindowSize")
    risk_limit_weights: dict[str, float] = Field(default_factory=_default_weights, alias="riskLimitWeights")

    @field_validator("smoothing_window_size")
    @classmethod
    def _window(cls, v: int) -> int:
        return DEFAULT_SMOOTHING_WINDOW_SIZE if v <= 0 else v

    @field_validator("risk_limit_weights", mode="before")
    @classmethod
    def _no_weights(cls, v: Any) -> Any:
        return _default_weights() if v is None or v == {} else v

    @field_validator("risk_limit_weights")
    @classmethod
    def _weights(cls, v: dict[str, float]) -> dict[str, float]:
        return {r: (DEFAULT_RISK_LIMIT_WEIGHT if not 0 <= w <= 1 else w) for r, w in v.items()}

    def weights(self) -> dict[str, float]:
        """The weight of each resource's limit risk: cpu and memory 0.5 unless given."""
        return {**_default_weights(), **self.risk_limit_weights}


class PowerModel(BaseModel):
    """A node's power model (``PowerModel``): ``power = k0 + k1 * e^(k2 * utilisation)``, the
    utilisation in percent; a missing constant is 0."""

    model_config = ConfigDict(extra="forbid")

    k0: StrictFloat = 0.0
    k1: StrictFloat = 0.0
    k2: StrictFloat = 0.0

    @field_validator("k0", "k1", "k2")
    @classmethod
    def _constant(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError(f"must be a finite number, got {v}")
        return v


class PeaksArgs(BaseModel):
    """Peaks' args (``PeaksArgs``): a load-watcher service and the power model of each node by
    name; an empty ``nodePowerModel`` means the JSON file ``$NODE_POWER_MODEL`` names (read when
    the plugin is made, see :mod:`.peaks`)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    #: A load-watcher service (``http://host:2020``); without one, the metrics API as for the
    #: other plugins (upstream refuses: ``invalid MetricProvider.Type, got``).
    watcher_address: StrictStr | None = Field(
        None, validation_alias=AliasChoices("watcherAddress", "WatcherAddress", "watcher_address")
    )
    node_power_model: dict[str, PowerModel] = Field(
        default_factory=dict, validation_alias=AliasChoices("nodePowerModel", "NodePowerModel", "node_power_model")
    )

    @model_validator(mode="before")
    @classmethod
    def _one_spelling(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for names in (("watcherAddress", "WatcherAddress"), ("nodePowerModel", "NodePowerModel")):
                if all(n in data for n in names):
                    raise ValueError(f"{names[0]}: given twice, as {names[0]} and {names[1]}: give one")
        return data

    @property
    def spec(self) -> TrimaranSpec:
        """The load source as the other plugins' args name it."""
        return TrimaranSpec.model_validate({"watcherAddress": self.watcher_address} if self.watcher_address else {})
