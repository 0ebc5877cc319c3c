"""Peaks: place a pod where the node's predicted power rises least (upstream's
``pkg/trimaran/peaks``).

Each node has a power model, ``power = k0 + k1 * e^(k2 * x)`` with ``x`` its CPU utilisation in
percent (the args' ``nodePowerModel``, else the JSON file the environment variable
``NODE_POWER_MODEL`` names; a node without one has all three constants 0). With ``x`` the node's
measured CPU utilisation (the first ``AVG`` or ``Latest`` CPU metric) and ``p`` that plus the
pod's CPU request, both percent of ``status.capacity``:

* Score (raw): the rise in power, ``k1 * (e^(k2 * p) - e^(k2 * x))``, times 10^15, truncated to
  an integer (held to int64's range); 0 when ``p`` exceeds 100, and for a node without metrics
  or without a CPU metric;
* NormalizeScore: the smallest rise scores 100 and the largest 0, linearly between
  (``100 - trunc(100 * (s - min) / (max - min))``); every node 100 when all are equal, unless
  all are 0, which stay 0.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from kubesched import (
    MAX_NODE_SCORE,
    MIN_NODE_SCORE,
    CycleState,
    Handle,
    KubeschedError,
    NodeInfo,
    NodeScore,
    PodInfo,
    Status,
)

from .args import PeaksArgs, PowerModel
from .metrics import AVERAGE, CPU, LATEST, Metric
from .resourcestats import node_amount, resource_requested
from .sources import Collector, make_source

NAME = "Peaks"
#: The environment variable naming the power models' file, when the args give none.
NODE_POWER_MODEL_ENV = "NODE_POWER_MODEL"
#: The raw score is the rise in power times this (upstream's ``math.Pow(10, 15)``).
SCORE_SCALE = 1e15
_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)
NO_MODEL = PowerModel()


class PowerModelError(KubeschedError, ValueError):
    """The power models cannot be read (the file, the node and the field, and why)."""


def read_power_models(path: str) -> dict[str, PowerModel]:
    """The power models of the JSON file at ``path``: ``{"node": {"k0": .., "k1": .., "k2": ..}}``."""
    where = f"{NODE_POWER_MODEL_ENV}={path}"
    if not path:
        raise PowerModelError(
            f"nodePowerModel: not given, and {NODE_POWER_MODEL_ENV} names no file: give nodePowerModel, "
            f"or set {NODE_POWER_MODEL_ENV} to a JSON file of each node's k0, k1 and k2"
        )
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise PowerModelError(f"nodePowerModel: not given, and {where} cannot be read: {exc}") from None
    except ValueError as exc:
        raise PowerModelError(f"{where}: not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise PowerModelError(f"{where}: must be an object of node names to power models, got {type(data).__name__}")
    models = {}
    for node, model in data.items():
        if not isinstance(model, dict):
            raise PowerModelError(f"{where}: {node}: must be an object of k0, k1 and k2, got {model!r}")
        try:
            models[node] = PowerModel.model_validate(model)
        except ValidationError as exc:
            err = exc.errors()[0]
            field = ".".join(str(p) for p in err["loc"])
            raise PowerModelError(f"{where}: {node}.{field}: {err['msg']}") from None
    return models


def power_models(args: PeaksArgs) -> dict[str, PowerModel]:
    """The args' models when they give any, else those of the file ``$NODE_POWER_MODEL``."""
    if args.node_power_model:
        return dict(args.node_power_model)
    return read_power_models(os.environ.get(NODE_POWER_MODEL_ENV, ""))


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def power_jump(current: float, predicted: float, model: PowerModel) -> float:
    """The rise in power from ``current`` to ``predicted`` utilisation (percent)."""
    return model.k1 * (_exp(model.k2 * predicted) - _exp(model.k2 * current))


def raw_score(jump: float) -> int:
    """``jump`` scaled and truncated to an integer, held to int64's range (0 for NaN)."""
    if math.isnan(jump):
        return 0
    scaled = jump * SCORE_SCALE
    if scaled >= _INT64_MAX:
        return _INT64_MAX
    if scaled <= _INT64_MIN:
        return _INT64_MIN
    return int(scaled)


def normalized(values: Sequence[int]) -> list[int]:
    """Raw scores to 0..100, the smallest rise first (see the module's description)."""
    if not values:
        return []
    low, high = min(values), max(values)
    if low == 0 and high == 0:
        return list(values)
    if low == high:
        return [MAX_NODE_SCORE] * len(values)
    return [MAX_NODE_SCORE - int(MAX_NODE_SCORE * float(v - low) / float(high - low)) for v in values]


def cpu_utilisation(metrics: list[Metric]) -> float | None:
    """The first ``AVG`` or ``Latest`` CPU metric, percent; ``None`` without one."""
    for m in metrics:
        if m.type == CPU and m.operator in (AVERAGE, LATEST):
            return m.value
    return None


class Peaks:
    """Score and NormalizeScore: the least rise in predicted power first (see the module's
    description); PreScore reads the load source when a read is due."""

    name = NAME
    Args = PeaksArgs

    def __init__(
        self, args: PeaksArgs | None = None, handle: Handle | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.args = args if args is not None else PeaksArgs.model_validate({})
        self.handle = handle
        self.models: Mapping[str, PowerModel] = power_models(self.args)
        self.collector = Collector(make_source(self.args.spec, handle, clock), handle, clock)

    def model_of(self, node: str) -> PowerModel:
        """The node's power model; all constants 0 when it has none."""
        return self.models.get(node, NO_MODEL)

    async def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        """Read the load source when a read is due, before the nodes are scored."""
        await self.collector.refresh()
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        self.collector.poke()
        metrics, _ = self.collector.node_metrics(node)
        if metrics is None or node.node is None:
            return MIN_NODE_SCORE
        current = cpu_utilisation(metrics)
        if current is None:
            return MIN_NODE_SCORE
        capacity = float(node_amount(node.node, "capacity", "cpu"))
        pod_cpu = resource_requested(pod.pod).milli_cpu
        predicted = 100 * (current / 100 * capacity + pod_cpu) / capacity if capacity != 0 else 0.0
        if predicted > 100:
            return MIN_NODE_SCORE
        return raw_score(power_jump(current, predicted, self.model_of(node.name)))

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        for entry, value in zip(scores, normalized([s.score for s in scores]), strict=True):
            entry.score = value
        return None
