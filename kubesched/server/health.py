"""The endpoints of ``kubesched run``: ``/healthz``, ``/livez``, ``/readyz``, ``/metrics``, and
kube-scheduler's debugging pages ``/configz``, ``/flagz`` and ``/statusz`` (:mod:`.zpages`).

This module is the application; :mod:`kubesched.server.serving` serves it (HTTPS with delegated
authentication and authorization on ``--secure-port``, or plain HTTP on ``--port``), since
KubeSchedulerConfiguration v1 has no fields for these (kube-scheduler takes them as flags).
"""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from kubesched.server.metrics import PrometheusObserver
from kubesched.server.zpages import ZPages


class HealthApp:
    """``ready()`` decides /readyz (informers synced); ``problems()`` lists what makes every check
    fail (an informer that can no longer list or watch): /healthz, /livez and /readyz then answer
    500 naming it, so that a liveness probe restarts a scheduler whose view of the cluster froze.
    Otherwise /healthz and /livez answer while the loop runs. ``unready()`` lists what fails
    /readyz alone (503): a resource a plugin watches that the API server does not serve."""

    def __init__(
        self,
        observer: PrometheusObserver,
        ready: Callable[[], bool],
        problems: Callable[[], list[str]] | None = None,
        zpages: ZPages | None = None,
        flagz: bool = True,
        statusz: bool = True,
        unready: Callable[[], list[str]] | None = None,
    ) -> None:
        self.observer = observer
        self.ready = ready
        self.problems = problems
        self.unready = unready
        self.app = web.Application()
        self.app.router.add_get("/healthz", self._ok)
        self.app.router.add_get("/livez", self._ok)
        self.app.router.add_get("/readyz", self._readyz)
        self.app.router.add_get("/metrics", self._metrics)
        if zpages is not None:
            zpages.install(self.app, flagz=flagz, statusz=statusz)

    def paths(self) -> list[str]:
        """The paths served, sorted (what /statusz lists)."""
        return sorted({r.resource.canonical for r in self.app.router.routes() if r.resource is not None})

    def _failed(self, check: str) -> web.Response | None:
        problems = self.problems() if self.problems is not None else []
        if not problems:
            return None
        lines = "".join(f"[-]informer-progress failed: {p}\n" for p in problems)
        return web.Response(status=500, text=f"[+]ping ok\n{lines}{check} check failed\n")

    async def _ok(self, request: web.Request) -> web.Response:
        failed = self._failed(request.path.strip("/"))
        return failed if failed is not None else web.Response(text="ok")

    async def _readyz(self, request: web.Request) -> web.Response:
        failed = self._failed("readyz")
        if failed is not None:
            return failed
        waiting = self.unready() if self.unready is not None else []
        if waiting:
            lines = "".join(f"[-]informer-served failed: {w}\n" for w in waiting)
            return web.Response(status=503, text=f"[+]ping ok\n{lines}readyz check failed\n")
        if self.ready():
            return web.Response(text="ok")
        return web.Response(status=503, text="[-]informer-sync failed: informers not synced yet\nreadyz check failed")

    async def _metrics(self, request: web.Request) -> web.Response:
        body = self.observer.exposition()
        return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})
