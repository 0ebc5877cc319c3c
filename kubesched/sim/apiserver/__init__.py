"""The embedded Kubernetes API server: serving, watch, validation, OpenAPI, protobuf, subresources, admission, discovery, tables and the web view."""

from kubesched.sim.apiserver.server import APIServer

__all__ = ["APIServer"]
