"""The embedded Kubernetes API server: serving, watch, validation, OpenAPI, protobuf, subresources, admission, discovery, tables and the web view.

:class:`APIServer` is imported on first use: what reads a scenario (validation, OpenAPI field
lists) lives in this package too, and a replay or a simulation that serves nothing should not
pay for importing the HTTP server (aiohttp, TLS) to read its pods.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.sim.apiserver.server import APIServer


def __getattr__(name: str) -> Any:
    if name == "APIServer":
        from kubesched.sim.apiserver.server import APIServer

        return APIServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["APIServer"]
