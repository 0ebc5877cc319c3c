"""The cluster protocol over a real Kubernetes API server.

:class:`KubeCluster` composes the parts of :mod:`kubesched.cluster.kube`: a
:class:`~kubesched.cluster.kube.transport.Transport` (configuration, credentials, rate limit),
the :class:`~kubesched.cluster.kube.informer.Informers` that deliver the cluster's objects, the
:class:`~kubesched.cluster.kube.events.EventRecorder`, and the Lease client leader election
uses (:mod:`~kubesched.cluster.kube.leases`). The writes the scheduler makes (bind, status
patches, deletions, object updates) are here. The side writes (a pod's condition, nominated
node and annotations) are retried as kube-scheduler's ``PatchPodStatus`` retries
(:func:`kubesched.cluster.retry.on_error`); events as client-go's event broadcaster does.

The cluster owns the tasks it runs, the informers': :meth:`KubeCluster.stop` cancels them and
waits for them to end. Failures leave this package only as the exceptions of
:mod:`kubesched.cluster.base`.
"""

from __future__ import annotations

import logging
import socket
from typing import Any

import aiohttp
from kubernetes_asyncio.client import ApiClient, Configuration

from kubesched.cluster.base import WATCHED_KINDS, ClusterError, EventHandler, NotFound
from kubesched.cluster.kinds import named_resource
from kubesched.cluster.kube.events import EventRecorder
from kubesched.cluster.kube.informer import INFORMER_STALL_SECONDS, Informers
from kubesched.cluster.kube.leases import KubeLeases
from kubesched.cluster.kube.paths import RESOURCES, ResourcePath, ns_path, resource_for
from kubesched.cluster.kube.transport import Transport
from kubesched.cluster.retry import on_error
from kubesched.cluster.store import CLUSTER_SCOPED
from kubesched.framework.informers import GroupVersionResource
from kubesched.objects import Obj
from kubesched.tasks import TaskSet

log = logging.getLogger(__name__)


class KubeCluster:
    """:class:`~kubesched.cluster.base.Cluster` over a Kubernetes API server.

    Nothing connects until the first request (:meth:`start`, a write, or a lease call).
    """

    def __init__(
        self,
        kubeconfig: str | None = None,
        context: str | None = None,
        *,
        qps: float = 50.0,
        burst: int = 100,
        configuration: Configuration | None = None,
        request_timeout: float = 30.0,
        min_watch_timeout: float = 300.0,
        backoff_initial: float = 0.5,
        backoff_cap: float = 30.0,
        hostname: str | None = None,
        user_agent: str = "kubesched",
        stall_seconds: float = INFORMER_STALL_SECONDS,
        keep_from_collector: bool = False,
        watched_kinds: tuple[str, ...] = WATCHED_KINDS,
        connections: int | None = None,
    ) -> None:
        self.transport = Transport(
            kubeconfig,
            context,
            qps=qps,
            burst=burst,
            configuration=configuration,
            request_timeout=request_timeout,
            user_agent=user_agent,
            connections=connections,
        )
        self.hostname = hostname or socket.gethostname()
        #: Every task this cluster runs (one per informer); :meth:`stop` cancels and awaits them.
        self._tasks = TaskSet("kube cluster", log)
        self._informers = Informers(
            self.transport,
            self._tasks,
            min_watch_timeout=min_watch_timeout,
            backoff_initial=backoff_initial,
            backoff_cap=backoff_cap,
            stall_seconds=stall_seconds,
            keep_from_collector=keep_from_collector,
            kinds=watched_kinds,
        )
        self._events_sender: Transport | None = None
        self._events = EventRecorder(self._event_client, self.hostname)

    @classmethod
    def from_configuration(cls, configuration: Configuration, **kwargs: Any) -> KubeCluster:
        """A cluster over an existing kubernetes_asyncio ``Configuration`` (tests, embedding)."""
        return cls(configuration=configuration, **kwargs)

    # --- the transport ------------------------------------------------------------------------
    @property
    def requests(self) -> int:
        """Requests sent through the scheduler's client (not the events' nor the leases')."""
        return self.transport.requests

    @property
    def retries(self) -> int:
        """Requests sent again because the server said Retry-After."""
        return self.transport.retries

    @property
    def _connections(self) -> aiohttp.ClientSession | None:
        """The session that owns the transport's connections (diagnostics and tests)."""
        return self.transport.session

    async def _client(self) -> ApiClient:
        """The transport's client, made now if it was not (diagnostics and tests)."""
        return await self.transport.client()

    async def open(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | aiohttp.ClientTimeout | None = None,
    ) -> aiohttp.ClientResponse:
        """One raw request, its response unread (see :meth:`Transport.open`)."""
        return await self.transport.open(
            method, path, query=query, body=body, content_type=content_type, timeout=timeout
        )

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: list[tuple[str, str]] | None = None,
        body: Any = None,
        content_type: str = "application/json",
        timeout: float | None = None,
    ) -> Obj:
        """One raw request, its JSON response decoded once (see :meth:`Transport.request`)."""
        return await self.transport.request(
            method, path, query=query, body=body, content_type=content_type, timeout=timeout
        )

    # --- informers ----------------------------------------------------------------------------
    def watch_resources(self, gvrs: list[GroupVersionResource]) -> None:
        """List and watch these resources too (plugins' informers), from :meth:`start` on, with
        the informers' relists, backoff and health checks: a built-in one as its Kind, any
        other as ``<plural>.<version>.<group>`` from ``/apis/<group>/<version>/<plural>``.
        Those watched already change nothing. A resource the server does not serve (its CRD not
        installed yet) counts as synced with no objects and is listed again now and then
        (``informer_stats()[kind]["served"]`` says which)."""
        if self._informers:
            raise RuntimeError("KubeCluster.watch_resources() called after start()")
        self._informers.add_resources(resource_for(gvr) for gvr in gvrs)

    async def start(self, handler: EventHandler) -> None:
        if self._informers:
            raise RuntimeError("KubeCluster.start() called twice")
        await self.transport.connect()
        await self._informers.start(handler)

    def health_problems(self) -> list[str]:
        """What keeps this cluster's view from being current: one line per informer that has
        failed to list or watch for longer than ``stall_seconds`` (empty when all is well)."""
        return self._informers.health_problems()

    def readiness_problems(self) -> list[str]:
        """What keeps this cluster's view from being complete without its being stuck: one line
        per resource a plugin watches that the server does not serve (its CRD not installed),
        as upstream's scheduler is not ready until its dynamic informers have synced. Scheduling
        goes on meanwhile, those objects counted as none; /readyz says so, /livez does not."""
        return self._informers.not_served()

    def listed(self, kind: str) -> list[Obj]:
        """The objects of ``kind`` as the informers hold them now (``/metrics/resources`` reads
        every pod of the cluster this way)."""
        return self._informers.listed(kind)

    def informer_stats(self) -> dict[str, dict[str, Any]]:
        """Per kind: lists and watches made, objects known, last resourceVersion, whether the
        server serves it (diagnostics)."""
        return self._informers.stats()

    async def stop(self) -> None:
        """Cancel the informers and wait for them to end, then close every client."""
        await self._tasks.cancel()
        self._informers.clear()
        await self.transport.close()
        self._events_sender = None

    # --- writes -------------------------------------------------------------------------------
    async def bind(self, pod: Obj, node_name: str) -> None:
        meta = pod["metadata"]
        ns = meta.get("namespace") or "default"
        binding: Obj = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": meta["name"], "namespace": ns},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
        }
        if meta.get("uid"):
            binding["metadata"]["uid"] = meta["uid"]
        await self.request("POST", ns_path("v1", ns, "pods", meta["name"], "binding"), body=binding)

    async def get_pod(self, namespace: str, name: str) -> Obj:
        return await self.request("GET", ns_path("v1", namespace, "pods", name))

    async def record_event(
        self, regarding: Obj, event_type: str, reason: str, action: str, message: str, reporting_controller: str
    ) -> None:
        await self._events.record(regarding, event_type, reason, action, message, reporting_controller)

    @property
    def event_retry_interval(self) -> float:
        """The first wait before an event write is tried again (doubling after, up to a cap)."""
        return self._events.retry_interval

    @event_retry_interval.setter
    def event_retry_interval(self, seconds: float) -> None:
        self._events.retry_interval = seconds

    async def update_pod_condition(self, pod: Obj, condition: Obj, nominated_node_name: str | None = None) -> None:
        meta = pod["metadata"]
        status: Obj = {"conditions": [condition]}
        if nominated_node_name is not None:
            status["nominatedNodeName"] = nominated_node_name or None
        patch: Obj = {"status": status}
        path = ns_path("v1", meta.get("namespace") or "default", "pods", meta["name"], "status")
        try:
            await self._patch(path, patch, "application/strategic-merge-patch+json")
        except NotFound:
            pass  # the pod was deleted meanwhile: nothing to report on

    async def patch_pod_annotations(self, pod: Obj, annotations: dict[str, str]) -> None:
        meta = pod["metadata"]
        path = ns_path("v1", meta.get("namespace") or "default", "pods", meta["name"])
        try:
            await self._patch(path, {"metadata": {"annotations": annotations}}, "application/merge-patch+json")
        except NotFound:
            pass

    async def delete_pod(self, pod: Obj) -> None:
        meta = pod["metadata"]
        await self.request("DELETE", ns_path("v1", meta.get("namespace") or "default", "pods", meta["name"]))

    async def set_nominated_node_name(self, pod: Obj, node_name: str) -> None:
        meta = pod["metadata"]
        path = ns_path("v1", meta.get("namespace") or "default", "pods", meta["name"], "status")
        try:
            await self._patch(
                path, {"status": {"nominatedNodeName": node_name or None}}, "application/merge-patch+json"
            )
        except NotFound:
            pass

    async def _patch(self, path: str, patch: Obj, content_type: str) -> None:
        """A side write: one patch (no resourceVersion, so applying it twice is applying it
        once), retried on a transient failure or a conflict as kube-scheduler's
        ``PatchPodStatus`` is (client-go's DefaultBackoff: 4 tries within about 0.3 s), and
        bounded in time; what still fails is raised."""
        await on_error(lambda: self.request("PATCH", path, body=patch, content_type=content_type))

    @staticmethod
    def _resource(kind: str) -> ResourcePath:
        """Where ``kind`` lives: a kind this backend watches, another built-in Kind, or any
        resource by ``<plural>.<version>.<group>`` (a CRD's, as its informer delivers it)."""
        res = RESOURCES.get(kind)
        if res is not None:
            return res
        gvr = named_resource(kind)
        if gvr is None:
            raise ClusterError(
                f"kind {kind!r} is not known to this backend: name a built-in Kind or a resource as "
                "<plural>.<version>.<group> (an informer's gvr.event_resource)",
                0,
            )
        return resource_for(gvr)

    @staticmethod
    def _namespace(kind: str, res: ResourcePath, namespace: str | None) -> str | None:
        """The namespace a path names: none for a cluster-scoped built-in, the object's own for
        a custom resource (whose scope only its CRD knows), ``default`` for a namespaced one."""
        if res.custom:
            return namespace or None
        return None if kind in CLUSTER_SCOPED else (namespace or "default")

    async def update_object(self, kind: str, obj: Obj, subresource: str | None = None) -> Obj:
        res = self._resource(kind)
        meta = obj["metadata"]
        path = res.object_path(self._namespace(kind, res, meta.get("namespace")), meta["name"])
        return await self.request("PUT", f"{path}/{subresource}" if subresource else path, body=obj)

    async def create_object(self, kind: str, obj: Obj) -> Obj:
        res = self._resource(kind)
        ns = self._namespace(kind, res, (obj.get("metadata") or {}).get("namespace"))
        if ns is None:
            return await self.request("POST", res.path, body=obj)
        return await self.request("POST", ns_path(res.api_version, ns, res.path.rsplit("/", 1)[1]), body=obj)

    async def delete_object(self, kind: str, namespace: str | None, name: str) -> None:
        res = self._resource(kind)
        await self.request("DELETE", res.object_path(self._namespace(kind, res, namespace), name))

    # --- clients of their own -----------------------------------------------------------------
    def leases(self, renew_deadline: float | None = None) -> KubeLeases:
        """The :class:`~kubesched.cluster.leader.LeaseClient` of this cluster, on a client of its own.

        As upstream gives leader election its own client, renewals never wait behind the
        scheduler's binds and events: their own connection pool, their own rate limit (same qps
        and burst), and a request timeout of max(1 s, renew_deadline / 2), so that one hung
        request cannot use up the whole renew deadline. Closed by :meth:`stop`."""
        timeout = self.transport.request_timeout if renew_deadline is None else max(1.0, renew_deadline / 2)
        return KubeLeases(self.transport.sibling("leader-election", request_timeout=timeout))

    def _event_client(self) -> Transport:
        """Events go through a client of their own, as upstream's event client: writing them
        never halves the rate of binds. Made on first use, so that it shares the configuration
        the scheduler's client loaded."""
        if self._events_sender is None:
            self._events_sender = self.transport.sibling("events")
        return self._events_sender


__all__ = ["KubeCluster"]
