"""``pluginConfig`` args: scheduler-plugins' ``TopologicalSortArgs`` and ``NetworkOverheadArgs``
(``kubescheduler.config.k8s.io/v1``), field for field, defaulted as upstream's v1 defaults:

* ``namespaces``: where the AppGroup (and the NetworkTopology) is looked for, in this order; an
  empty or absent list becomes ``["default"]``;
* ``weightsName`` (NetworkOverhead): which named set of weights of the NetworkTopology gives the
  costs; default ``UserDefined`` (``NetperfCosts`` names the set the netperf controller writes,
  which is kept sorted and is not sorted again);
* ``networkTopologyName`` (NetworkOverhead): the NetworkTopology object; default ``nt-default``.

Upstream validates nothing more; decoding is strict, so an unknown field or a value of the
wrong type is refused, naming the field.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationInfo, field_validator

DEFAULT_NAMESPACE = "default"
DEFAULT_WEIGHTS_NAME = "UserDefined"
DEFAULT_NETWORK_TOPOLOGY_NAME = "nt-default"
#: The weights the netperf controller measures (``NetworkTopologyNetperfCosts``): stored sorted.
NETPERF_COSTS = "NetperfCosts"


def _default_namespaces(v: list[str]) -> list[str]:
    return list(v) if v else [DEFAULT_NAMESPACE]


def _null_is_empty(v: object) -> object:
    return [] if v is None else v


class TopologicalSortArgs(BaseModel):
    """The args of TopologicalSort, defaults applied (see the module doc)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    namespaces: list[StrictStr] = Field(default_factory=lambda: [DEFAULT_NAMESPACE])

    @field_validator("namespaces", mode="before")
    @classmethod
    def _null_namespaces(cls, v: object) -> object:
        return _null_is_empty(v)

    @field_validator("namespaces", mode="after")
    @classmethod
    def _namespaces(cls, v: list[str]) -> list[str]:
        return _default_namespaces(v)


class NetworkOverheadArgs(BaseModel):
    """The args of NetworkOverhead, defaults applied (see the module doc)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    namespaces: list[StrictStr] = Field(default_factory=lambda: [DEFAULT_NAMESPACE])
    weights_name: StrictStr = Field(DEFAULT_WEIGHTS_NAME, alias="weightsName")
    network_topology_name: StrictStr = Field(DEFAULT_NETWORK_TOPOLOGY_NAME, alias="networkTopologyName")

    @field_validator("namespaces", mode="before")
    @classmethod
    def _null_namespaces(cls, v: object) -> object:
        return _null_is_empty(v)

    @field_validator("namespaces", mode="after")
    @classmethod
    def _namespaces(cls, v: list[str]) -> list[str]:
        return _default_namespaces(v)

    @field_validator("weights_name", "network_topology_name", mode="before")
    @classmethod
    def _null_is_default(cls, v: object, info: ValidationInfo) -> object:
        # a null pointer upstream: the default
        if v is None:
            return DEFAULT_WEIGHTS_NAME if info.field_name == "weights_name" else DEFAULT_NETWORK_TOPOLOGY_NAME
        return v
