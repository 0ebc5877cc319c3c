"""What the plugins score from: load-watcher's ``WatcherMetrics``, as its ``/watcher`` endpoint
answers in JSON.

.. code-block:: json

    {"timestamp": 1556987522, "source": "Prometheus",
     "window": {"duration": "15m", "start": 1556984522, "end": 1556985422},
     "data": {"NodeMetricsMap": {"node-1": {"metrics": [
         {"name": "...", "type": "CPU", "operator": "AVG", "rollup": "", "value": 20},
         {"name": "...", "type": "CPU", "operator": "STD", "value": 5}]}}}}

Each value is a percentage of the node's capacity; ``operator`` says which statistic it is over
the window (``AVG``, ``STD``, ``Latest``, or empty in load-watcher's older answers); ``type`` is
``CPU`` or ``Memory``. A metrics-server reports the latest figure only (``Latest``, no ``STD``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kubesched import KubeschedError

CPU = "CPU"
MEMORY = "Memory"
AVERAGE = "AVG"
STD = "STD"
LATEST = "Latest"
FIFTEEN_MINUTES = "15m"


class MetricsError(KubeschedError, ValueError):
    """An answer of a load source that cannot be read (the field and why)."""


@dataclass(frozen=True)
class Metric:
    type: str
    operator: str
    value: float
    name: str = ""
    rollup: str = ""


@dataclass(frozen=True)
class Window:
    duration: str = ""
    start: int = 0
    end: int = 0


@dataclass
class WatcherMetrics:
    """One answer: every node's metrics over one window."""

    timestamp: int = 0
    window: Window = field(default_factory=Window)
    source: str = ""
    #: Node name -> its metrics; ``None`` when nothing was ever read (upstream's nil map).
    nodes: dict[str, list[Metric]] | None = None


def resource_data(metrics: list[Metric], resource_type: str) -> tuple[float, float, bool]:
    """The average and standard deviation of ``resource_type`` among ``metrics``, and whether
    any metric of that type is there (``GetResourceData``): an ``AVG`` wins over a ``Latest``
    or operator-less value (load-watcher's older answers), the standard deviation is 0 when not
    reported."""
    avg = std = 0.0
    avg_found = valid = False
    for m in metrics:
        if m.type != resource_type:
            continue
        if m.operator == AVERAGE:
            avg, avg_found = m.value, True
        elif m.operator == STD:
            std = m.value
        elif m.operator in ("", LATEST) and not avg_found:
            avg = m.value
        valid = True
    return avg, std, valid


def _number(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise MetricsError(f"{path}: must be a number, got {value!r}")
    return float(value)


def _integer(value: Any, path: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetricsError(f"{path}: must be an integer, got {value!r}")
    return value


def _string(value: Any, path: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MetricsError(f"{path}: must be a string, got {value!r}")
    return value


def _mapping(value: Any, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise MetricsError(f"{path}: must be an object, got {type(value).__name__}")
    return value


def parse_watcher_metrics(body: Any) -> WatcherMetrics:
    """A ``/watcher`` answer (decoded JSON) read; raises :class:`MetricsError` naming the field."""
    top = _mapping(body, "watcher metrics")
    win = _mapping(top.get("window"), "window")
    window = Window(
        _string(win.get("duration"), "window.duration"),
        _integer(win.get("start"), "window.start"),
        _integer(win.get("end"), "window.end"),
    )
    data = _mapping(top.get("data"), "data")
    nodes: dict[str, list[Metric]] = {}
    for name, node in _mapping(data.get("NodeMetricsMap"), "data.NodeMetricsMap").items():
        path = f"data.NodeMetricsMap[{name}]"
        items = _mapping(node, path).get("metrics") or []
        if not isinstance(items, list):
            raise MetricsError(f"{path}.metrics: must be a list")
        metrics = []
        for i, item in enumerate(items):
            at = f"{path}.metrics[{i}]"
            m = _mapping(item, at)
            metrics.append(
                Metric(
                    type=_string(m.get("type"), f"{at}.type"),
                    operator=_string(m.get("operator"), f"{at}.operator"),
                    value=_number(m.get("value", 0), f"{at}.value"),
                    name=_string(m.get("name"), f"{at}.name"),
                    rollup=_string(m.get("rollup"), f"{at}.rollup"),
                )
            )
        nodes[str(name)] = metrics
    return WatcherMetrics(
        timestamp=_integer(top.get("timestamp"), "timestamp"),
        window=window,
        source=_string(top.get("source"), "source"),
        nodes=nodes,
    )


def to_json(metrics: WatcherMetrics) -> dict[str, Any]:
    """``metrics`` as load-watcher writes them (what :func:`parse_watcher_metrics` reads)."""
    return {
        "timestamp": metrics.timestamp,
        "window": {"duration": metrics.window.duration, "start": metrics.window.start, "end": metrics.window.end},
        "source": metrics.source,
        "data": {
            "NodeMetricsMap": {
                node: {
                    "metrics": [
                        {"name": m.name, "type": m.type, "operator": m.operator, "rollup": m.rollup, "value": m.value}
                        for m in items
                    ]
                }
                for node, items in (metrics.nodes or {}).items()
            }
        },
    }
