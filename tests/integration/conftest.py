"""Fixtures shared by the tests that talk to the embedded API server over real HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from kubernetes_asyncio import client, config

from kubesched.cluster.store import Store
from kubesched.sim.apiserver import APIServer


@pytest.fixture
async def server() -> AsyncIterator[APIServer]:
    """An embedded API server on a free loopback port, over an empty store (no token asked)."""
    srv = APIServer(Store())
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


@pytest.fixture
async def api(server: APIServer, tmp_path: Path) -> AsyncIterator[client.ApiClient]:
    """A kubernetes_asyncio client configured from the kubeconfig the server writes."""
    path = server.write_kubeconfig(tmp_path / "kubeconfig")
    cfg = client.Configuration()
    await config.load_kube_config(config_file=path, client_configuration=cfg)
    async with client.ApiClient(cfg) as api_client:
        yield api_client
