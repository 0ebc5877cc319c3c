"""Delegated authentication and authorization of the secure port, as kube-scheduler's.

Authentication: a bearer token is checked with a TokenReview; a request without one is
``system:anonymous`` (group ``system:unauthenticated``); a token the review rejects, or a review
that fails, is answered 401. Authenticated users get the group ``system:authenticated``.

Authorization, the first that allows wins: the groups in ``always_allow_groups``
(``system:masters``); the paths in ``always_allow_paths`` (``/healthz``, ``/readyz``, ``/livez``;
an entry ending in ``*`` is a prefix); else a SubjectAccessReview of the non-resource request
(verb = the lowercased HTTP method, path = the URL path). Denied: 403 with kube-scheduler's words,
e.g. ``forbidden: User "system:anonymous" cannot get path "/metrics"``; a review that fails: 500.
Without a cluster to ask (no :class:`Reviewer`), tokens are ignored (every request is anonymous)
and whatever the two lists do not allow is forbidden, as upstream without its kubeconfigs.

Answers are cached as upstream caches them: token reviews (either way) for
``token_cache_ttl``, allowed and denied access reviews for ``allow_cache_ttl`` and
``deny_cache_ttl``, 10 s each by default; failures are not cached. Tokens are cached by their
SHA-256, never in the clear.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from kubesched.objects import Obj

log = logging.getLogger(__name__)


#: Entries per cache: enough for every scraper and prober, bounded against token spraying.
CACHE_SIZE = 4096


class Reviewer(Protocol):
    """The cluster side: each returns the ``status`` of the review, or raises on failure."""

    async def token_review(self, token: str) -> Obj: ...

    async def subject_access_review(self, spec: Obj) -> Obj: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class User:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


ANONYMOUS = User("system:anonymous", "", ("system:unauthenticated",))


@dataclass
class DelegationOptions:
    """kube-scheduler's defaults; the flags of ``kubesched run`` carry upstream's names."""

    #: --authentication-token-webhook-cache-ttl
    token_cache_ttl: float = 10.0
    #: --authorization-webhook-cache-authorized-ttl
    allow_cache_ttl: float = 10.0
    #: --authorization-webhook-cache-unauthorized-ttl
    deny_cache_ttl: float = 10.0
    #: --authorization-always-allow-paths
    always_allow_paths: tuple[str, ...] = ("/healthz", "/readyz", "/livez")
    #: not a flag upstream either
    always_allow_groups: tuple[str, ...] = ("system:masters",)


class _TTLCache:
    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._items: OrderedDict[Any, tuple[float, Any]] = OrderedDict()

    def get(self, key: Any) -> Any:
        hit = self._items.get(key)
        if hit is None:
            return None
        expires, value = hit
        if self._clock() >= expires:
            del self._items[key]
            return None
        self._items.move_to_end(key)
        return value

    def put(self, key: Any, value: Any, ttl: float) -> None:
        if ttl <= 0:
            return
        self._items[key] = (self._clock() + ttl, value)
        self._items.move_to_end(key)
        while len(self._items) > CACHE_SIZE:
            self._items.popitem(last=False)


class Unauthorized(Exception):
    """The request's credentials were rejected, or could not be checked."""


class AuthorizationFailed(Exception):
    """The access review itself failed: neither allowed nor denied."""


@dataclass
class DelegatingAuth:
    reviewer: Reviewer | None
    options: DelegationOptions = field(default_factory=DelegationOptions)
    clock: Callable[[], float] = time.monotonic
    #: review calls made (cache misses), for tests and debugging
    token_reviews: int = 0
    access_reviews: int = 0

    def __post_init__(self) -> None:
        self._tokens = _TTLCache(self.clock)
        self._access = _TTLCache(self.clock)

    async def authenticate(self, authorization: str | None) -> User:
        """The user of a request with this ``Authorization`` header; raises :class:`Unauthorized`."""
        token = _bearer(authorization)
        if not token or self.reviewer is None:
            return ANONYMOUS
        key = hashlib.sha256(token.encode()).digest()
        cached = self._tokens.get(key)
        if cached is None:
            self.token_reviews += 1
            try:
                status = await self.reviewer.token_review(token)
            except Exception as exc:  # the review failed: neither yes nor no, and not cached
                log.warning("token review failed: %s", exc)
                raise Unauthorized(str(exc)) from exc
            cached = _user_of(status)
            self._tokens.put(key, cached, self.options.token_cache_ttl)
        if cached is False:
            raise Unauthorized("invalid bearer token")
        assert isinstance(cached, User)
        return cached

    async def authorize(self, user: User, verb: str, path: str) -> tuple[bool, str]:
        """(allowed, reason) for ``verb`` on the non-resource ``path``; raises :class:`AuthorizationFailed`."""
        if set(user.groups) & set(self.options.always_allow_groups):
            return True, ""
        if _path_allowed(path, self.options.always_allow_paths):
            return True, ""
        if self.reviewer is None:
            return False, ""
        key = (user, verb, path)
        cached = self._access.get(key)
        if cached is not None:
            return cached  # type: ignore[no-any-return]
        spec: Obj = {"nonResourceAttributes": {"path": path, "verb": verb}, "user": user.name}
        if user.uid:
            spec["uid"] = user.uid
        if user.groups:
            spec["groups"] = list(user.groups)
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        self.access_reviews += 1
        try:
            status = await self.reviewer.subject_access_review(spec)
        except Exception as exc:
            log.warning("subject access review failed: %s", exc)
            raise AuthorizationFailed(str(exc)) from exc
        allowed = status.get("allowed") is True and status.get("denied") is not True
        answer = (allowed, str(status.get("reason") or ""))
        self._access.put(key, answer, self.options.allow_cache_ttl if allowed else self.options.deny_cache_ttl)
        return answer

    def middleware(self) -> Middleware:
        """An aiohttp middleware checking every request that arrived over TLS (the secure port);
        requests on a plain-HTTP listener (the insecure ``--port``) pass unchecked."""

        @web.middleware
        async def check(request: web.Request, handler: Handler) -> web.StreamResponse:
            transport = request.transport
            if transport is None or transport.get_extra_info("ssl_object") is None:
                return await handler(request)
            try:
                user = await self.authenticate(request.headers.get("Authorization"))
            except Unauthorized:
                return _status(401, "Unauthorized", "Unauthorized")
            verb = request.method.lower()
            try:
                allowed, reason = await self.authorize(user, verb, request.path)
            except AuthorizationFailed as exc:
                return _status(500, "InternalError", f"Internal error occurred: {exc}")
            if not allowed:
                message = f"forbidden: User {json.dumps(user.name)} cannot {verb} path {json.dumps(request.path)}"
                return _status(403, "Forbidden", f"{message}: {reason}" if reason else message, details={})
            return await handler(request)

        return check


def _bearer(authorization: str | None) -> str:
    if not authorization:
        return ""
    scheme, _, value = authorization.strip().partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


def _user_of(status: Obj) -> User | bool:
    """The user a TokenReview status names, or False when it did not authenticate."""
    info = status.get("user") or {}
    if status.get("authenticated") is not True or not isinstance(info, dict) or not info.get("username"):
        return False
    groups = tuple(str(g) for g in info.get("groups") or ())
    if info["username"] != ANONYMOUS.name and "system:authenticated" not in groups:
        groups += ("system:authenticated",)
    extra = tuple(sorted((str(k), tuple(str(x) for x in v)) for k, v in (info.get("extra") or {}).items()))
    return User(str(info["username"]), str(info.get("uid") or ""), groups, extra)


def _path_allowed(path: str, patterns: tuple[str, ...]) -> bool:
    for pattern in patterns:
        p = pattern if pattern.startswith("/") else "/" + pattern
        if p.endswith("*"):
            if path.startswith(p[:-1]):
                return True
        elif path == p:
            return True
    return False


def _status(code: int, reason: str, message: str, details: Obj | None = None) -> web.Response:
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message}
    body["reason"] = reason
    if details is not None:
        body["details"] = details
    body["code"] = code
    return web.json_response(body, status=code)
