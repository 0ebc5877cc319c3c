"""A source cluster that does not serve resource.k8s.io/v1 (older than 1.34, or DRA off): its
404 on those lists means nothing to copy, not a failed import. No server here can answer 404 for
a whole API group, so the source is a stand-in that does."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.sim.importer import IMPORTED, OPTIONAL, Importer


class WithoutDRA:
    """Lists every kind but the resource.k8s.io ones, which it answers 404."""

    def __init__(self, missing: str = "/apis/resource.k8s.io/") -> None:
        self.missing = missing
        self.asked: list[str] = []

    async def request(self, method: str, path: str, query: Any = None) -> dict[str, Any]:
        self.asked.append(path)
        if path.startswith(self.missing):
            raise NotFound(f"GET {path}: the server could not find the requested resource")
        items = (
            [{"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1"}}}] if path == "/api/v1/nodes" else []
        )
        return {"metadata": {"resourceVersion": "7"}, "items": items}


def test_kinds_the_source_does_not_serve_are_skipped() -> None:
    importer = Importer(Store(), "unused-kubeconfig")
    importer.source = WithoutDRA()  # type: ignore[assignment]
    asyncio.run(importer.run_once())
    assert importer.unserved == {k for k in OPTIONAL if IMPORTED[k][0].startswith("/apis/resource.k8s.io/")}
    assert [n["metadata"]["name"] for n in importer.store.list("Node")[0]] == ["n1"]


def test_a_missing_core_kind_still_fails_the_import() -> None:
    importer = Importer(Store(), "unused-kubeconfig")
    importer.source = WithoutDRA(missing="/api/v1/nodes")  # type: ignore[assignment]
    with pytest.raises(NotFound):
        asyncio.run(importer.run_once())
