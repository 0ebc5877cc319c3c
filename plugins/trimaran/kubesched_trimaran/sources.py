"""Where the load comes from, and the collector that keeps the latest of it (upstream's
``Collector`` over a load-watcher client).

Three sources, one shape (:class:`~kubesched_trimaran.metrics.WatcherMetrics`):

* :class:`WatcherService` — a load-watcher service (``watcherAddress``): ``GET <address>/watcher``.
* :class:`MetricsAPI` — ``metricProvider.type: KubernetesMetricsServer`` against an API server
  (``kubesched run`` against a real cluster or ``sim serve``): the resource metrics API's
  NodeMetrics (``/apis/metrics.k8s.io/v1beta1/nodes``) read through the scheduler's own
  connection (``handle.cluster.request``), turned into percentages of each node's capacity as
  load-watcher's metrics-server client does (``Latest`` values; no deviation).
* :class:`SimulatedUsage` — the same provider in the in-memory cluster (``simulate``), which has
  no HTTP: each node's NodeMetrics computed as ``sim serve`` computes them
  (the face's ``pod_usage``: a pod's ``kubesched.io/usage`` annotation, else its requests),
  from the pods the scheduler holds on the node. It is live — the pods placed a moment ago are in
  it — so nothing is added for pods in flight.

The polled sources are read at most every :data:`METRICS_UPDATE_INTERVAL_SECONDS`: PreScore waits
for the read when one is due (the first pod waits for the first figures, as upstream's plugin
waits for them when it is made); Score, when PreScore is not enabled, starts it in the background
and scores with what it has. A failed read keeps the previous figures, as upstream.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import aiohttp

from kubesched import (
    GroupVersionResource,
    Handle,
    KubeschedError,
    NodeInfo,
    UsageError,
    milli_value,
    parse_quantity,
    pod_usage,
)

from .args import KUBERNETES_METRICS_SERVER, TrimaranSpec
from .metrics import CPU, FIFTEEN_MINUTES, LATEST, MEMORY, Metric, MetricsError, WatcherMetrics, Window

log = logging.getLogger(__name__)

#: How often the polled sources are read (upstream's ``metricsUpdateIntervalSeconds``).
METRICS_UPDATE_INTERVAL_SECONDS = 30
#: The path of load-watcher's answer.
WATCHER_PATH = "/watcher"
NODE_METRICS_PATH = "/apis/metrics.k8s.io/v1beta1/nodes"
NODES = GroupVersionResource("", "v1", "nodes")
WATCHER_TIMEOUT_SECONDS = 10.0
_FIFTEEN_MINUTES_SECONDS = 15 * 60


class PolledSource(Protocol):
    """A source read now and then, whole."""

    async def fetch(self) -> WatcherMetrics: ...


def _percent(used: int, capacity: int) -> float:
    return 100 * used / capacity if capacity > 0 else math.inf if used > 0 else 0.0


def capacity_of(node: Mapping[str, Any]) -> tuple[int, int]:
    """The node's ``status.capacity`` of cpu (millicores) and memory (bytes); 0 when not given."""
    cap = (node.get("status") or {}).get("capacity") or {}
    cpu = milli_value(cap["cpu"]) if "cpu" in cap else 0
    memory = math.ceil(parse_quantity(cap["memory"])) if "memory" in cap else 0
    return cpu, memory


def latest(cpu_percent: float, memory_percent: float) -> list[Metric]:
    """A metrics-server's figures as load-watcher gives them."""
    return [Metric(CPU, LATEST, cpu_percent), Metric(MEMORY, LATEST, memory_percent)]


def window_ending(now: float) -> Window:
    end = int(now)
    return Window(FIFTEEN_MINUTES, end - _FIFTEEN_MINUTES_SECONDS, end)


class WatcherService:
    """A load-watcher service: its ``/watcher`` answer, as is."""

    def __init__(self, address: str, timeout: float = WATCHER_TIMEOUT_SECONDS) -> None:
        self.url = address.rstrip("/") + WATCHER_PATH
        self.timeout = timeout

    async def fetch(self) -> WatcherMetrics:
        from .metrics import parse_watcher_metrics

        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self.timeout)) as session,
            session.get(self.url, headers={"Content-Type": "application/json"}) as resp,
        ):
            if resp.status != 200:
                raise MetricsError(f"received status code {resp.status} from watcher {self.url}")
            try:
                body = await resp.json(content_type=None)
            except ValueError as exc:
                raise MetricsError(f"watcher {self.url}: not JSON: {exc}") from None
        return parse_watcher_metrics(body)


class MetricsAPI:
    """The resource metrics API's NodeMetrics, through the scheduler's API connection, as
    percentages of the capacity of the nodes the scheduler knows (a node it does not know is
    left out, as load-watcher leaves it out)."""

    def __init__(self, cluster: Any, nodes: Callable[[], list[Mapping[str, Any]]], clock: Callable[[], float]) -> None:
        self.cluster = cluster
        self.nodes = nodes
        self.clock = clock

    async def fetch(self) -> WatcherMetrics:
        body = await self.cluster.request("GET", NODE_METRICS_PATH)
        capacities = {str((n.get("metadata") or {}).get("name")): capacity_of(n) for n in self.nodes()}
        out: dict[str, list[Metric]] = {}
        items = body.get("items") if isinstance(body, Mapping) else None
        if not isinstance(items, list):
            raise MetricsError(f"{NODE_METRICS_PATH}: not a NodeMetricsList (no items)")
        for i, item in enumerate(items):
            name = str(((item or {}).get("metadata") or {}).get("name") or "")
            usage = (item or {}).get("usage") or {}
            if name not in capacities:
                continue
            try:
                cpu = milli_value(usage.get("cpu", 0))
                memory = math.ceil(parse_quantity(usage.get("memory", 0)))
            except ValueError as exc:
                raise MetricsError(f"{NODE_METRICS_PATH}: items[{i}] ({name}).usage: {exc}") from None
            cap_cpu, cap_memory = capacities[name]
            out[name] = latest(_percent(cpu, cap_cpu), _percent(memory, cap_memory))
        now = self.clock()
        return WatcherMetrics(int(now), window_ending(now), KUBERNETES_METRICS_SERVER, out)


class SimulatedUsage:
    """NodeMetrics computed from the pods the scheduler holds on each node, as ``sim serve``
    computes them (see the module's description)."""

    live = True

    def __init__(self) -> None:
        #: Per pod (uid, resourceVersion): its cpu (nanocores) and memory (bytes), or None.
        self._pods: dict[tuple[str, str], tuple[int, int] | None] = {}

    def _pod(self, pod: Any) -> tuple[int, int] | None:
        meta = pod.pod.get("metadata") or {}
        key = (pod.uid, str(meta.get("resourceVersion") or ""))
        if key not in self._pods:
            if len(self._pods) > 100_000:
                self._pods.clear()
            try:
                total = pod_usage(pod.pod, pod.counting).total
                self._pods[key] = (total.get("cpu", 0), total.get("memory", 0))
            except UsageError as exc:
                log.warning("no usage for pod %s: %s", pod.key, exc)
                self._pods[key] = None
        return self._pods[key]

    def metrics_of(self, node: NodeInfo) -> list[Metric] | None:
        """The node's figures; ``None`` when a pod's usage cannot be read (metrics-server leaves
        such a node out) or the node is gone."""
        if node.node is None:
            return None
        nanocores = memory = 0
        for p in node.pods:
            if ((p.pod.get("status") or {}).get("phase")) in ("Succeeded", "Failed"):
                continue
            amounts = self._pod(p)
            if amounts is None:
                return None
            nanocores += amounts[0]
            memory += amounts[1]
        cap_cpu, cap_memory = capacity_of(node.node)
        # load-watcher reads the NodeMetrics' cpu as millicores (rounded up)
        return latest(_percent(math.ceil(nanocores / 1_000_000), cap_cpu), _percent(memory, cap_memory))


def make_source(spec: TrimaranSpec, handle: Handle | None, clock: Callable[[], float]) -> Any:
    """The source the args name, reached through ``handle``; ``None`` without a handle."""
    if spec.watcher_address:
        return WatcherService(spec.watcher_address)
    if handle is None:
        return None
    # args validation leaves KubernetesMetricsServer only
    assert spec.metric_provider.type == KUBERNETES_METRICS_SERVER
    cluster = getattr(handle, "cluster", None)
    if callable(getattr(cluster, "request", None)):
        lister = handle.informer_for(NODES).lister
        return MetricsAPI(cluster, lambda: list(lister.list(None)), clock)
    return SimulatedUsage()


class Collector:
    """The latest figures of a source, read again when :data:`METRICS_UPDATE_INTERVAL_SECONDS`
    have passed since the last read."""

    def __init__(
        self,
        source: Any,
        handle: Handle | None = None,
        clock: Callable[[], float] = time.time,
        interval: float = METRICS_UPDATE_INTERVAL_SECONDS,
    ) -> None:
        self.source = source
        self.handle = handle
        self.clock = clock
        self.interval = interval
        self.metrics = WatcherMetrics()
        self._last_read = -math.inf
        self._lock = asyncio.Lock()

    @property
    def live(self) -> bool:
        """The figures include every pod placed so far (nothing to add for pods in flight)."""
        return isinstance(self.source, SimulatedUsage)

    def set(self, metrics: WatcherMetrics) -> None:
        """Take ``metrics`` as the latest figures (a read done elsewhere, or a test's)."""
        self.metrics = metrics
        self._last_read = self.clock()

    def due(self) -> bool:
        polled = self.source is not None and not self.live
        return polled and self.clock() - self._last_read >= self.interval

    async def refresh(self) -> None:
        """Read the source when a read is due; a failure is logged and the figures kept."""
        async with self._lock:
            if not self.due():
                return
            self._last_read = self.clock()
            try:
                metrics = await self.source.fetch()
            except (KubeschedError, OSError, TimeoutError, aiohttp.ClientError, ValueError) as exc:
                # the API connection's errors are KubeschedErrors (ClusterError)
                log.warning("unable to update metrics: %s", exc)
                return
            self.metrics = metrics
            self._last_read = self.clock()
            log.debug("metrics of %d node(s) from %s", len(metrics.nodes or {}), metrics.source or "load-watcher")

    def poke(self) -> None:
        """Start a read in the background when one is due and none is under way."""
        if self.due() and not self._lock.locked() and self.handle is not None:
            self.handle.run_in_background(self.refresh())

    def node_metrics(self, node: NodeInfo) -> tuple[list[Metric] | None, WatcherMetrics | None]:
        """The node's metrics and the whole answer (``GetNodeMetrics``): ``(None, None)`` when
        nothing was ever read, ``(None, answer)`` for a node the answer does not have."""
        if self.live:
            now = self.clock()
            return self.source.metrics_of(node), WatcherMetrics(int(now), window_ending(now), KUBERNETES_METRICS_SERVER)
        nodes = self.metrics.nodes
        if nodes is None:
            log.debug("metrics not available from the load source")
            return None, None
        found = nodes.get(node.name)
        if found is None:
            log.debug("unable to find metrics for node %s", node.name)
        return found, self.metrics
