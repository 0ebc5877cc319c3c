"""Who may talk to the embedded API server, and what its TokenReview and SubjectAccessReview answer.

Authentication is by bearer token only. ``kubesched sim serve`` makes one admin token at start
(user ``kubesched-admin`` in ``system:masters``) and may read more users from a token file in
kube-apiserver's ``--token-auth-file`` format (``token,user,uid[,"group1,group2"]``). The embedded
server has no RBAC of its own: every authenticated user may use its API. What it answers to a
SubjectAccessReview (for components that delegate authorization to it, as ``kubesched run``
does) is a fixed policy taken from upstream's bootstrap roles:

* ``system:masters`` may do anything;
* ``system:monitoring`` may ``get`` /metrics, /metrics/slis and the health paths (with subpaths);
* everyone (``system:authenticated`` and ``system:unauthenticated``) may ``get`` /healthz,
  /livez, /readyz, /version and /version/ (upstream's ``system:public-info-viewer``);
* anything else is denied.
"""

from __future__ import annotations

import csv
import hmac
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.errors import ConfigurationError
from kubesched.objects import Obj
from kubesched.sim.apiserver.errors import APIError, bad_request, invalid
from kubesched.sim.apiserver.validation.decode import check_decodable

ADMIN_USER = "kubesched-admin"
MASTERS = "system:masters"
MONITORING = "system:monitoring"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"

#: Paths answered without a token, as kube-apiserver answers them to anonymous requests, with
#: their subpaths: health, version, and the web view's files (they hold no data; the page asks
#: for the token before it reads anything).
OPEN_PATHS = ("/healthz", "/livez", "/readyz", "/version", "/ui")
#: the web view's page, open by itself only (its subpaths are the whole API)
OPEN_ROOT = "/"

_MONITORING_URLS = ("/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*")
_PUBLIC_INFO_URLS = ("/healthz", "/version", "/version/", "/livez", "/readyz")


class TokenFileError(ConfigurationError):
    """A token file that cannot be read or parsed; the message names the file and the line."""


@dataclass(frozen=True)
class UserInfo:
    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()

    def to_json(self) -> Obj:
        out: Obj = {"username": self.username}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        return out


def generate_token() -> str:
    """A fresh random bearer token (256 bits)."""
    return secrets.token_urlsafe(32)


def read_token_file(path: str | Path) -> dict[str, UserInfo]:
    """Users from a kube-apiserver token file: one ``token,user,uid[,"group1,group2"]`` a line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TokenFileError(f"token file {path}: cannot read: {exc.strerror or exc}") from exc
    users: dict[str, UserInfo] = {}
    for lineno, record in enumerate(csv.reader(text.splitlines()), start=1):
        if not record or (len(record) == 1 and not record[0].strip()):
            continue
        if len(record) < 3:
            raise TokenFileError(
                f"token file {path}, line {lineno}: must have at least 3 columns (token, user name, user uid), "
                f"found {len(record)}"
            )
        token, name, uid = (f.strip() for f in record[:3])
        if not token or not name:
            raise TokenFileError(f"token file {path}, line {lineno}: the token and the user name must not be empty")
        if token in users:
            raise TokenFileError(f"token file {path}, line {lineno}: duplicate token")
        groups = tuple(g.strip() for g in record[3].split(",") if g.strip()) if len(record) > 3 else ()
        users[token] = UserInfo(name, uid, groups)
    return users


class Authenticator:
    """Bearer tokens → users. Without any token it is disabled: every request is let through."""

    def __init__(self, tokens: Mapping[str, UserInfo] | None = None) -> None:
        self._tokens = dict(tokens or {})

    @classmethod
    def with_admin(cls, token: str, others: Mapping[str, UserInfo] | None = None) -> Authenticator:
        """``token`` for ``kubesched-admin`` in ``system:masters``, plus ``others``."""
        return cls({**(others or {}), token: UserInfo(ADMIN_USER, ADMIN_USER, (MASTERS,))})

    @property
    def enabled(self) -> bool:
        return bool(self._tokens)

    def authenticate(self, token: str) -> UserInfo | None:
        """The user of ``token`` (with ``system:authenticated`` added, as upstream adds it), or None."""
        found: UserInfo | None = None
        for known, user in self._tokens.items():
            # Compare every token in constant time: the answer must not leak how much matched.
            if hmac.compare_digest(known.encode(), token.encode()):
                found = user
        if found is None:
            return None
        if AUTHENTICATED in found.groups:
            return found
        return UserInfo(found.username, found.uid, (*found.groups, AUTHENTICATED))

    def check(self, path: str, authorization: str | None) -> UserInfo | None:
        """Authenticate one request; raises the 401 kube-apiserver answers when it cannot.

        ``path`` is the canonical path the router serves (:mod:`kubesched.sim.apiserver.paths`).
        Health and version paths are open to anyone; with authentication disabled, so is everything."""
        if not self.enabled:
            return None
        token = _bearer(authorization)
        user = self.authenticate(token) if token else None
        if user is not None:
            return user
        if path == OPEN_ROOT or any(path == p or path.startswith(p + "/") for p in OPEN_PATHS):
            return None
        raise APIError(401, "Unauthorized", "Unauthorized")


def _bearer(authorization: str | None) -> str:
    if not authorization:
        return ""
    scheme, _, value = authorization.strip().partition(" ")
    return value.strip() if scheme.lower() == "bearer" else ""


# --- the review APIs -----------------------------------------------------------------------------


def _review_body(body: Any, kind: str, group_version: str) -> Obj:
    """The review the body holds, decoded as kube-apiserver decodes it into its Go type: a field
    of another type (``spec.groups: 5``) is the decoder's 400, before the review is looked at."""
    if not isinstance(body, dict) or body.get("kind") not in (None, kind):
        raise bad_request(f"not a {kind}: the object provided is unrecognized")
    if body.get("apiVersion") not in (None, group_version):
        raise bad_request(
            f"the API version in the data ({body.get('apiVersion')}) does not match the expected API version "
            f"({group_version})"
        )
    group, version = group_version.split("/")
    check_decodable(kind, group, version, body)
    return body


def token_review(authn: Authenticator, body: Any) -> Obj:
    """Answer a ``authentication.k8s.io/v1`` TokenReview (the request body), as kube-apiserver does."""
    body = _review_body(body, "TokenReview", "authentication.k8s.io/v1")
    spec = dict(body.get("spec") or {})
    token = spec.get("token")
    if not isinstance(token, str) or not token:
        raise bad_request("token is required for TokenReview in authentication")
    user = authn.authenticate(token)
    status: Obj = {"user": {}}
    if user is not None:
        status = {"authenticated": True, "user": user.to_json()}
        if spec.get("audiences"):
            status["audiences"] = list(spec["audiences"])
    else:
        status["error"] = "invalid bearer token"
    return _response("TokenReview", "authentication.k8s.io/v1", body, spec, status)


def subject_access_review(body: Any) -> Obj:
    """Answer a ``authorization.k8s.io/v1`` SubjectAccessReview with the policy in this module's docstring."""
    body = _review_body(body, "SubjectAccessReview", "authorization.k8s.io/v1")
    spec = dict(body.get("spec") or {})
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    causes: list[tuple[str, str, str]] = []
    if (resource is None) == (non_resource is None):
        causes.append(
            (
                "spec",
                "FieldValueInvalid",
                "Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified",
            )
        )
    groups = spec.get("groups") or []
    if not spec.get("user") and not groups:
        causes.append(
            ("spec.user", "FieldValueInvalid", 'Invalid value: "": at least one of user or group must be specified')
        )
    if causes:
        raise invalid("SubjectAccessReview", "authorization.k8s.io", "", causes)
    allowed, reason = authorize(set(groups), non_resource)
    status: Obj = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return _response("SubjectAccessReview", "authorization.k8s.io/v1", body, spec, status)


def authorize(groups: set[str], non_resource: Obj | None) -> tuple[bool, str]:
    """(allowed, reason) for a subject in ``groups``; ``non_resource`` None means a resource request."""
    if MASTERS in groups:
        return True, ""
    if not isinstance(non_resource, dict) or non_resource.get("verb") != "get":
        return False, ""
    path = str(non_resource.get("path") or "")
    if MONITORING in groups and _url_match(path, _MONITORING_URLS):
        return True, _rbac_reason(MONITORING, MONITORING)
    everyone = groups & {AUTHENTICATED, UNAUTHENTICATED}
    if everyone and _url_match(path, _PUBLIC_INFO_URLS):
        return True, _rbac_reason("system:public-info-viewer", sorted(everyone)[0])
    return False, ""


def _url_match(path: str, rules: Iterable[str]) -> bool:
    return any(path == r or (r.endswith("*") and path.startswith(r[:-1])) for r in rules)


def _rbac_reason(role: str, group: str) -> str:
    return f'RBAC: allowed by ClusterRoleBinding "{role}" of ClusterRole "{role}" to Group "{group}"'


def _response(kind: str, api_version: str, body: Obj, spec: Obj, status: Obj) -> Obj:
    meta = dict(body.get("metadata") or {})
    meta.setdefault("creationTimestamp", None)
    return {"kind": kind, "apiVersion": api_version, "metadata": meta, "spec": spec, "status": status}
