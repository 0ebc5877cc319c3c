"""API errors as upstream reports them: a ``Status`` object with a reason and an HTTP code."""

from __future__ import annotations

from kubesched.objects import Obj
from kubesched.sim.apiserver.validation.meta import quote


class APIError(Exception):
    """An error response; :meth:`status` is the ``Status`` body the client decodes."""

    def __init__(self, code: int, reason: str, message: str, details: Obj | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details

    def status(self) -> Obj:
        body: Obj = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if self.details is not None:
            body["details"] = self.details
        return body


def _details(name: str, plural: str, group: str) -> Obj:
    d: Obj = {"name": name, "kind": plural}
    if group:
        d["group"] = group
    return d


def qualified(plural: str, group: str) -> str:
    return f"{plural}.{group}" if group else plural


def not_found(plural: str, group: str, name: str) -> APIError:
    return APIError(404, "NotFound", f'{qualified(plural, group)} "{name}" not found', _details(name, plural, group))


def path_not_found() -> APIError:
    """The 404 for a path that names no resource (nor discovery document)."""
    return APIError(404, "NotFound", "the server could not find the requested resource")


def already_exists(plural: str, group: str, name: str) -> APIError:
    return APIError(
        409, "AlreadyExists", f'{qualified(plural, group)} "{name}" already exists', _details(name, plural, group)
    )


def conflict(plural: str, group: str, name: str, why: str) -> APIError:
    return APIError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(plural, group)} "{name}": {why}',
        _details(name, plural, group),
    )


def invalid(kind: str, group: str, name: str, causes: list[tuple[str, str, str]]) -> APIError:
    """422 with ``causes`` as (field, reason, message) — e.g. ("spec.containers", "FieldValueRequired",
    "Required value"). The message names the object as ``%q`` does, a long name truncated as
    field errors truncate long values (the details keep it whole, once)."""
    summary = ", ".join(f"{f}: {m}" for f, _, m in causes)
    text = f"[{summary}]" if len(causes) > 1 else summary
    details: Obj = {
        "name": name,
        "kind": kind,
        "causes": [{"reason": r, "message": m, "field": f} for f, r, m in causes],
    }
    if group:
        details["group"] = group
    return APIError(422, "Invalid", f"{kind}{'.' + group if group else ''} {quote(name)} is invalid: {text}", details)


def bad_request(message: str) -> APIError:
    return APIError(400, "BadRequest", message)


def forbidden(plural: str, group: str, name: str, why: str) -> APIError:
    return APIError(
        403, "Forbidden", f'{qualified(plural, group)} "{name}" is forbidden: {why}', _details(name, plural, group)
    )


def method_not_allowed(message: str = "the server does not allow this method on the requested resource") -> APIError:
    return APIError(405, "MethodNotAllowed", message)


def unsupported_media_type(content_type: str) -> APIError:
    return APIError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/merge-patch+json, application/strategic-merge-patch+json, application/json-patch+json, application/apply-patch+yaml ({content_type})",
    )


def internal_error() -> APIError:
    """The 500 for a request whose handler failed: kube-apiserver's words when a handler panics
    (its panic recovery), as a Status; what failed is logged, never told to the client."""
    return APIError(500, "InternalError", "This request caused apiserver to panic. Look in the logs for details.")


def expired(message: str) -> APIError:
    return APIError(410, "Expired", message)


#: kube-apiserver's limit on a write request's body (MaxRequestBodyBytes)
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
#: etcd's default --max-request-bytes: a stored object may not be larger
MAX_STORED_OBJECT_BYTES = 1536 * 1024


def request_entity_too_large(message: str) -> APIError:
    """413, as kube-apiserver answers a body over :data:`MAX_REQUEST_BODY_BYTES` ("limit is 3145728")
    and, here, an object etcd would refuse ("etcdserver: request is too large")."""
    return APIError(413, "RequestEntityTooLarge", message)
