"""kube-apiserver's ``--max-requests-inflight`` and ``--max-mutating-requests-inflight``: how
many requests may be served at once, read-only ones (get, list) and mutating ones (any other
verb) counted apart. A request over its limit is answered at once with kube-apiserver's plain-text
429 and ``Retry-After: 1`` (:func:`~kubesched.sim.apiserver.connections.too_many_requests`).

As upstream's ``WithMaxInFlightLimit``: long-running requests (watches; a pod's ``log``,
``exec``, ``attach``, ``portforward``, ``proxy``) are not counted; a user in ``system:masters``
is served over the limit; a limit of 0 is no limit. Requests are counted after authentication
(a request without valid credentials is answered 401 whatever the load)."""

from __future__ import annotations

from aiohttp import web

from kubesched.sim.apiserver.authn import UserInfo
from kubesched.sim.apiserver.requests import truthy

#: kube-apiserver's defaults
DEFAULT_MAX_REQUESTS_INFLIGHT = 400
DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT = 200

#: the verbs kube-apiserver does not count as mutating (HEAD is a get)
_READ_ONLY_METHODS = frozenset({"GET", "HEAD"})
#: subresources upstream's BasicLongRunningRequestCheck calls long-running
_LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})
SYSTEM_MASTERS = "system:masters"


class TooManyRequests(Exception):
    """The request's kind is at its limit."""


def long_running(request: web.Request, parts: list[str] | None = None) -> bool:
    """Whether ``request`` is a watch (``?watch=true`` or ``/watch/`` in its path) or on a
    long-running subresource (a proxy path included). ``parts``: its path's segments, when the
    caller has them already."""
    if parts is None:
        parts = [p for p in request.path.split("/") if p]
    if parts[:1] == ["api"]:
        rest = parts[2:]
    elif parts[:1] == ["apis"]:
        rest = parts[3:]
    else:
        return False
    if request.method in _READ_ONLY_METHODS and (truthy(request.query.get("watch")) or rest[:1] == ["watch"]):
        return True
    if rest[:1] == ["proxy"]:
        return True
    if rest[:1] == ["namespaces"] and len(rest) >= 5:
        return rest[4] in _LONG_RUNNING_SUBRESOURCES
    return len(rest) >= 3 and rest[2] in _LONG_RUNNING_SUBRESOURCES


class InFlightLimit:
    """The requests being served, against ``max_requests_inflight`` (read-only) and
    ``max_mutating_requests_inflight`` (0: no limit)."""

    def __init__(
        self,
        max_requests_inflight: int = DEFAULT_MAX_REQUESTS_INFLIGHT,
        max_mutating_requests_inflight: int = DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT,
    ) -> None:
        self.limits = {False: max_requests_inflight, True: max_mutating_requests_inflight}
        #: requests being served now, by whether they mutate
        self.serving = {False: 0, True: 0}

    def enter(self, request: web.Request, user: UserInfo | None, parts: list[str] | None = None) -> bool | None:
        """Count ``request`` in: the kind it is counted as (whether it mutates), to hand to
        :meth:`leave` when it is answered, or None when it is not counted (long-running, no
        limit, or a ``system:masters`` user over the limit). Raises :class:`TooManyRequests`
        when its kind is at its limit. ``parts``: its path's segments, when the caller has them."""
        mutating = request.method not in _READ_ONLY_METHODS
        limit = self.limits[mutating]
        if limit <= 0 or long_running(request, parts):
            return None
        if self.serving[mutating] >= limit:
            if user is None or SYSTEM_MASTERS not in user.groups:
                raise TooManyRequests
            return None  # served, and not counted
        self.serving[mutating] += 1
        return mutating

    def leave(self, counted: bool | None) -> None:
        """A request :meth:`enter` counted as ``counted`` is answered."""
        if counted is not None:
            self.serving[counted] -= 1
