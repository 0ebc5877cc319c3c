"""The kubernetes_asyncio client's session looks up proxies and netrc only where they may apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.cluster.kube.transport import _environment_matters

SERVER = "https://10.0.0.1:6443"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> pytest.MonkeyPatch:
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    return monkeypatch


@pytest.mark.parametrize(
    "env, want",
    [
        ({}, False),
        ({"HTTPS_PROXY": "http://proxy:3128"}, True),
        ({"https_proxy": "http://proxy:3128", "no_proxy": "10.0.0.1"}, False),
        ({"HTTP_PROXY": "http://proxy:3128"}, False),  # the server speaks https
        ({"ALL_PROXY": "socks5://proxy:1080"}, True),
    ],
    ids=["nothing set", "an https proxy", "a proxy bypassed for the server", "an http proxy only", "all_proxy"],
)
def test_a_proxy_for_the_server_makes_the_environment_matter(clean_env, env, want):
    for name, value in env.items():
        clean_env.setenv(name, value)
    assert _environment_matters(SERVER) is want


def test_a_netrc_file_makes_the_environment_matter(clean_env, tmp_path):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 10.0.0.1 login a password b\n")
    clean_env.setenv("NETRC", str(netrc))
    assert _environment_matters(SERVER) is True


async def test_the_client_session_does_not_trust_the_environment_where_it_cannot_matter(clean_env, server):
    from kubesched.cluster.kube.cluster import KubeCluster

    cluster = KubeCluster(kubeconfig=server.write_kubeconfig(Path(clean_env_dir(clean_env)) / "kc"))
    try:
        api = await cluster._client()
        assert api.rest_client.pool_manager.trust_env is False
        # The session it replaced still owns (and closes) the connections.
        assert cluster._connections is not None and cluster._connections.trust_env is True
        # Whole requests other than GETs go over connections of the transport's own.
        assert cluster.transport._pool is not None
    finally:
        await cluster.stop()
    assert cluster._connections is None and cluster.transport._pool is None


async def test_a_proxy_for_the_server_keeps_every_request_on_the_client_session(clean_env, server):
    from kubesched.cluster.kube.cluster import KubeCluster

    clean_env.setenv("HTTP_PROXY", "http://proxy.invalid:3128")
    clean_env.setenv("NO_PROXY", "")
    cluster = KubeCluster(kubeconfig=server.write_kubeconfig(Path(clean_env_dir(clean_env)) / "kc"))
    try:
        await cluster._client()
        assert cluster.transport._pool is None
    finally:
        await cluster.stop()


def clean_env_dir(_: pytest.MonkeyPatch) -> str:
    import tempfile

    return tempfile.mkdtemp()
