"""The endpoints of ``kubesched run``: ``/healthz``, ``/livez``, ``/readyz``, ``/metrics``,
``/metrics/resources`` (:mod:`.resource_metrics`), ``/metrics/slis`` (:mod:`.slis`), and
kube-scheduler's debugging pages ``/configz``, ``/flagz`` and ``/statusz`` (:mod:`.zpages`).

This module is the application; :mod:`kubesched.server.serving` serves it (HTTPS with delegated
authentication and authorization on ``--secure-port``, or plain HTTP on ``--port``), since
KubeSchedulerConfiguration v1 has no fields for these (kube-scheduler takes them as flags).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from aiohttp import web

from kubesched.server.metrics import PrometheusObserver
from kubesched.server.resource_metrics import resource_exposition
from kubesched.server.slis import HealthcheckSLIs
from kubesched.server.textformat import CONTENT_TYPE
from kubesched.server.zpages import ZPages

#: What a ``DELETE`` of a metrics path answers (upstream's resettable handler).
RESET = "metrics reset\n"


class HealthApp:
    """``ready()`` decides /readyz (informers synced); ``problems()`` lists what makes every check
    fail (an informer that can no longer list or watch): /healthz, /livez and /readyz then answer
    500 naming it, so that a liveness probe restarts a scheduler whose view of the cluster froze.
    Otherwise /healthz and /livez answer while the loop runs. ``unready()`` lists what fails
    /readyz alone (503): a resource a plugin watches that the API server does not serve.

    Every check each of the three runs is recorded for ``/metrics/slis``: ``ping`` (always
    passes), ``informer-progress`` (no ``problems()``), and for /readyz ``informer-served`` (no
    ``unready()``) and ``informer-sync`` (``ready()``). ``/metrics/resources`` serves the requests
    and limits of ``pods()`` once ``leading()`` (before, an empty answer, as upstream's)."""

    def __init__(
        self,
        observer: PrometheusObserver,
        ready: Callable[[], bool],
        problems: Callable[[], list[str]] | None = None,
        zpages: ZPages | None = None,
        flagz: bool = True,
        statusz: bool = True,
        unready: Callable[[], list[str]] | None = None,
        pods: Callable[[], Iterable[Mapping[str, Any]]] | None = None,
        leading: Callable[[], bool] | None = None,
    ) -> None:
        self.observer = observer
        self.ready = ready
        self.problems = problems
        self.unready = unready
        self.pods = pods
        self.leading = leading
        self.slis = HealthcheckSLIs()
        self.app = web.Application()
        self.app.router.add_get("/healthz", self._ok)
        self.app.router.add_get("/livez", self._ok)
        self.app.router.add_get("/readyz", self._readyz)
        self.app.router.add_get("/metrics", self._metrics)
        # Served for any method, a DELETE resetting what they record, as upstream's handlers.
        self.app.router.add_route("*", "/metrics/resources", self._resources)
        self.app.router.add_route("*", "/metrics/slis", self._slis)
        if zpages is not None:
            zpages.install(self.app, flagz=flagz, statusz=statusz)

    def paths(self) -> list[str]:
        """The paths served, sorted (what /statusz lists)."""
        return sorted({r.resource.canonical for r in self.app.router.routes() if r.resource is not None})

    def _problems(self) -> list[str]:
        return self.problems() if self.problems is not None else []

    def _record(self, check_type: str, checks: list[tuple[str, bool]]) -> None:
        for name, passed in checks:
            self.slis.observe(name, check_type, passed)

    def _failed(self, check: str, problems: list[str]) -> web.Response | None:
        if not problems:
            return None
        lines = "".join(f"[-]informer-progress failed: {p}\n" for p in problems)
        return web.Response(status=500, text=f"[+]ping ok\n{lines}{check} check failed\n")

    async def _ok(self, request: web.Request) -> web.Response:
        check = request.path.strip("/")
        problems = self._problems()
        progress = [("informer-progress", not problems)] if self.problems is not None else []
        self._record(check, [("ping", True), *progress])
        failed = self._failed(check, problems)
        return failed if failed is not None else web.Response(text="ok")

    async def _readyz(self, request: web.Request) -> web.Response:
        problems = self._problems()
        waiting = self.unready() if self.unready is not None else []
        ready = self.ready()
        checks = [("ping", True)]
        if self.problems is not None:
            checks.append(("informer-progress", not problems))
        if self.unready is not None:
            checks.append(("informer-served", not waiting))
        checks.append(("informer-sync", ready))
        self._record("readyz", checks)
        failed = self._failed("readyz", problems)
        if failed is not None:
            return failed
        if waiting:
            lines = "".join(f"[-]informer-served failed: {w}\n" for w in waiting)
            return web.Response(status=503, text=f"[+]ping ok\n{lines}readyz check failed\n")
        if ready:
            return web.Response(text="ok")
        return web.Response(status=503, text="[-]informer-sync failed: informers not synced yet\nreadyz check failed")

    async def _metrics(self, request: web.Request) -> web.Response:
        body = self.observer.exposition()
        return web.Response(body=body, headers={"Content-Type": "text/plain; version=0.0.4; charset=utf-8"})

    async def _resources(self, request: web.Request) -> web.Response:
        if self.leading is not None and not self.leading():
            return web.Response()  # not leading (yet): nothing, as upstream answers
        if request.method == "DELETE":
            return web.Response(text=RESET)
        body = resource_exposition(self.pods() if self.pods is not None else ())
        return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})

    async def _slis(self, request: web.Request) -> web.Response:
        if request.method == "DELETE":
            self.slis.reset()
            return web.Response(text=RESET)
        return web.Response(body=self.slis.exposition(), headers={"Content-Type": CONTENT_TYPE})
