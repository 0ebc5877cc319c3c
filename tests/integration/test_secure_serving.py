"""Secure by default, over real HTTP and real TLS: `kubesched run` serves HTTPS and delegates
authentication (TokenReview) and authorization (SubjectAccessReview) to the embedded API server,
which itself asks every client for a bearer token."""

from __future__ import annotations

import asyncio
import shutil
import socket
import ssl
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from cryptography import x509
from cryptography.x509.oid import NameOID
from kubernetes_asyncio.client import Configuration
from polling import eventually

from kubesched.cli import main
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.kube.delegated_auth import KubeReviews
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.server.app import RunOptions, run
from kubesched.server.serving import DelegatingAuth, ServingOptions, User, self_signed_certificate
from kubesched.server.serving.auth import AuthorizationFailed, Unauthorized
from kubesched.sim.apiserver.authn import UserInfo, read_token_file
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]
ADMIN = "admin-token-0123456789"
VIEWER = "viewer-token-0123456789"  # authenticated, but no rights beyond public info
PROM = "prom-token-0123456789"  # in system:monitoring: may get /metrics
USERS = {VIEWER: UserInfo("viewer", "u-viewer"), PROM: UserInfo("prometheus", "u-prom", ("system:monitoring",))}

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
  - schedulerName: kubesched
"""

UNAUTHORIZED = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Failure",
    "message": "Unauthorized",
    "reason": "Unauthorized",
    "code": 401,
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def api(tmp_path: Path) -> AsyncIterator[tuple[Store, APIServer, Path]]:
    store = Store()
    srv = APIServer(store, token=ADMIN, users=USERS, tls=True)
    await srv.start()
    try:
        yield store, srv, Path(srv.write_kubeconfig(tmp_path / "kubeconfig"))
    finally:
        await srv.stop()


@asynccontextmanager
async def scheduler(kubeconfig: Path, tmp_path: Path, **options: Any) -> AsyncIterator[asyncio.Task[int]]:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    stop = asyncio.Event()
    opts = RunOptions(kubeconfig=str(kubeconfig), serving=ServingOptions(bind_address="127.0.0.1", **options))
    task = asyncio.create_task(run(load_config(config), opts, stop))
    try:
        yield task
    finally:
        stop.set()
        assert await asyncio.wait_for(task, 30) == 0


def https() -> aiohttp.ClientSession:
    """A client that, like a kubelet probe or Prometheus with insecureSkipVerify, trusts any certificate."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False))


async def get(url: str, token: str | None = None) -> tuple[int, Any]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with https() as s, s.get(url, headers=headers) as r:
        body: Any = await r.json() if r.content_type == "application/json" else await r.text()
        return r.status, body


async def until_serving(url: str, task: asyncio.Task[int]) -> None:
    async def serving() -> bool:
        if task.done():
            task.result()
            raise AssertionError("kubesched run ended before serving")
        try:
            return (await get(url + "/healthz"))[0] == 200
        except aiohttp.ClientError:
            return False

    await eventually(serving, f"{url}/healthz to answer", timeout=15, interval=0.05)


async def ready(url: str) -> bool:
    return (await get(url + "/readyz"))[0] == 200


async def served_certificate(port: int) -> x509.Certificate:
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=ctx)
    try:
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    finally:
        writer.close()
    return x509.load_der_x509_certificate(der)


# --- kubesched run: the secure port ---------------------------------------------------------------


async def test_health_is_open_metrics_need_an_authorized_token(api: Any, tmp_path: Path) -> None:
    store, _, kubeconfig = api
    port = free_port()
    url = f"https://127.0.0.1:{port}"
    store.create("Node", make_node("n1").obj())
    async with scheduler(kubeconfig, tmp_path, secure_port=port) as task:
        await until_serving(url, task)
        store.create("Pod", make_pod("p").scheduler("kubesched").obj())
        await eventually(
            lambda: store.get("Pod", "default", "p")["spec"].get("nodeName") == "n1", "the pod bound", timeout=20
        )

        # Health paths are always allowed, token or not.
        for path in ("/healthz", "/livez"):
            assert await get(url + path) == (200, "ok")
        await eventually(lambda: ready(url), f"{url}/readyz", timeout=5, interval=0.05)
        assert (await get(url + "/readyz"))[0] == 200
        # Authentication comes first, as upstream's filter chain has it: a bad token fails even there.
        assert await get(url + "/readyz", "not-a-token") == (401, UNAUTHORIZED)

        # No token: system:anonymous, whom the cluster's SubjectAccessReview denies.
        status, body = await get(url + "/metrics")
        assert status == 403
        assert body["message"] == 'forbidden: User "system:anonymous" cannot get path "/metrics"'
        assert (body["reason"], body["code"], body["kind"]) == ("Forbidden", 403, "Status")
        # A token the TokenReview rejects: 401.
        assert await get(url + "/metrics", "no-such-token") == (401, UNAUTHORIZED)
        # Authenticated, but the SubjectAccessReview denies.
        status, body = await get(url + "/metrics", VIEWER)
        assert (status, body["message"]) == (403, 'forbidden: User "viewer" cannot get path "/metrics"')
        # Allowed by the SubjectAccessReview (system:monitoring) and by the system:masters shortcut.
        for token in (PROM, ADMIN):
            status, text = await get(url + "/metrics", token)
            assert status == 200, text
            assert 'scheduler_schedule_attempts_total{profile="kubesched",result="scheduled"} 1.0' in text

        # Not a word over plain HTTP on the secure port.
        with pytest.raises(aiohttp.ClientError):
            async with aiohttp.ClientSession() as s, s.get(f"http://127.0.0.1:{port}/healthz") as r:
                await r.read()

        # The certificate made in memory at start, as kube-scheduler makes its own.
        cert = await served_certificate(port)
        cn = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
        assert isinstance(cn, str) and cn.startswith("localhost@")
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
        assert [str(ip) for ip in sans.get_values_for_type(x509.IPAddress)] == ["127.0.0.1"]


async def test_given_certificate_and_key_are_served(api: Any, tmp_path: Path) -> None:
    _, _, kubeconfig = api
    cert_pem, key_pem = self_signed_certificate("kubesched.example", ips=("127.0.0.1",))
    (tmp_path / "tls.crt").write_bytes(cert_pem)
    (tmp_path / "tls.key").write_bytes(key_pem)
    port = free_port()
    options = {"tls_cert_file": str(tmp_path / "tls.crt"), "tls_private_key_file": str(tmp_path / "tls.key")}
    async with scheduler(kubeconfig, tmp_path, secure_port=port, **options) as task:
        await until_serving(f"https://127.0.0.1:{port}", task)
        assert await served_certificate(port) == x509.load_pem_x509_certificate(cert_pem)
        # A client that trusts exactly that certificate verifies the server by its name.
        trusting = ssl.create_default_context(cadata=cert_pem.decode())
        _, writer = await asyncio.open_connection("127.0.0.1", port, ssl=trusting, server_hostname="kubesched.example")
        writer.close()


async def test_insecure_port_serves_everything_without_authentication(api: Any, tmp_path: Path) -> None:
    _, _, kubeconfig = api
    port = free_port()
    async with scheduler(kubeconfig, tmp_path, secure_port=None, port=port) as task:

        async def metrics() -> tuple[int, str]:
            try:
                async with aiohttp.ClientSession() as s, s.get(f"http://127.0.0.1:{port}/metrics") as r:
                    return r.status, await r.text()
            except aiohttp.ClientError:
                assert not task.done()
                raise

        status, text = await eventually(
            metrics, "the insecure port to answer", timeout=15, interval=0.05, ignoring=(aiohttp.ClientError,)
        )
        assert status == 200 and "scheduler_pending_pods" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tls-cert-file", "x.crt"], "--tls-private-key-file: required when"),
        (
            ["--tls-cert-file", "nope.crt", "--tls-private-key-file", "nope.key"],
            "--tls-cert-file: nope.crt: no such file",
        ),
        (["--port", "10259"], "--port: 10259 is also the --secure-port"),
    ],
    ids=["cert-without-key", "missing-files", "same-ports"],
)
def test_bad_serving_flags_are_refused_naming_the_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    kubeconfig = tmp_path / "kubeconfig"
    APIServer(Store()).write_kubeconfig(kubeconfig)  # never contacted: the flags are refused first
    assert main(["run", "--config", str(config), "--kubeconfig", str(kubeconfig), *args]) == 1
    assert message in capsys.readouterr().err


def test_bad_durations_are_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--config", "c.yaml", "--authorization-webhook-cache-authorized-ttl", "10"])
    assert "--authorization-webhook-cache-authorized-ttl" in capsys.readouterr().err


# --- the delegation itself: what is asked, what is cached ---------------------------------------------


async def test_reviews_are_cached_for_their_ttl_and_failures_are_not(api: Any) -> None:
    _, _, kubeconfig = api
    now = [0.0]
    reviews = KubeReviews(KubeCluster(kubeconfig=str(kubeconfig)))
    auth = DelegatingAuth(reviews, clock=lambda: now[0])
    try:
        viewer = await auth.authenticate(f"Bearer {VIEWER}")
        assert viewer == User("viewer", "u-viewer", ("system:authenticated",))
        assert await auth.authenticate(f"Bearer {VIEWER}") == viewer
        assert auth.token_reviews == 1
        for _ in range(2):
            with pytest.raises(Unauthorized):
                await auth.authenticate("Bearer nobody")
        assert auth.token_reviews == 2  # the rejection is cached too
        assert await auth.authenticate(None) == User("system:anonymous", "", ("system:unauthenticated",))
        assert auth.token_reviews == 2

        assert await auth.authorize(viewer, "get", "/metrics") == (False, "")
        assert await auth.authorize(viewer, "get", "/metrics") == (False, "")
        assert await auth.authorize(viewer, "get", "/healthz") == (True, "")  # always allowed: not asked
        assert auth.access_reviews == 1
        prom = await auth.authenticate(f"Bearer {PROM}")
        allowed, reason = await auth.authorize(prom, "get", "/metrics")
        assert allowed and 'ClusterRole "system:monitoring"' in reason
        assert (await auth.authorize(prom, "post", "/metrics"))[0] is False  # the verb counts
        assert auth.access_reviews == 3

        now[0] = 10.0  # every answer has lived its 10 s
        await auth.authenticate(f"Bearer {VIEWER}")
        await auth.authorize(viewer, "get", "/metrics")
        assert (auth.token_reviews, auth.access_reviews) == (4, 4)
    finally:
        await reviews.close()

    # A cluster that cannot be reached: neither yes nor no, so nothing is cached.
    down = KubeReviews(KubeCluster.from_configuration(Configuration(host="http://127.0.0.1:9")))
    auth = DelegatingAuth(down)
    try:
        for _ in range(2):
            with pytest.raises(Unauthorized):
                await auth.authenticate("Bearer anything")
            with pytest.raises(AuthorizationFailed):  # answered 500 by the secure port
                await auth.authorize(User("someone"), "get", "/metrics")
        assert (auth.token_reviews, auth.access_reviews) == (2, 2)
        assert await auth.authorize(User("root", groups=("system:masters",)), "get", "/metrics") == (True, "")
    finally:
        await down.close()


# --- the embedded API server asks for its token ------------------------------------------------------


async def test_api_server_refuses_requests_without_its_token(api: Any, tmp_path: Path) -> None:
    _, srv, kubeconfig = api
    assert stat.S_IMODE(kubeconfig.stat().st_mode) == 0o600
    shared = tmp_path / "shared"
    shared.write_text("")
    shared.chmod(0o644)
    srv.write_kubeconfig(shared)  # the token does not stay readable by others through an overwrite
    assert stat.S_IMODE(shared.stat().st_mode) == 0o600
    assert yaml.safe_load(kubeconfig.read_text())["users"][0]["user"] == {"token": ADMIN}

    async def call(method: str, path: str, token: str | None, body: Any = None) -> tuple[int, Any]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with https() as s, s.request(method, srv.url + path, json=body, headers=headers) as r:
            return r.status, await r.json() if r.content_type == "application/json" else await r.text()

    assert await call("GET", "/api/v1/nodes", None) == (401, UNAUTHORIZED)
    assert await call("GET", "/api/v1/nodes", "wrong") == (401, UNAUTHORIZED)
    assert await call("GET", "/healthz", None) == (200, "ok")
    assert (await call("GET", "/version", None))[0] == 200
    for token in (ADMIN, VIEWER):
        assert (await call("GET", "/api/v1/nodes", token))[0] == 200

    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": PROM}}
    status, body = await call("POST", "/apis/authentication.k8s.io/v1/tokenreviews", ADMIN, review)
    assert status == 201
    assert body["status"] == {
        "authenticated": True,
        "user": {"username": "prometheus", "uid": "u-prom", "groups": ["system:monitoring", "system:authenticated"]},
    }
    review["spec"] = {"token": "nobody"}
    _, body = await call("POST", "/apis/authentication.k8s.io/v1/tokenreviews", ADMIN, review)
    assert body["status"] == {"user": {}, "error": "invalid bearer token"}
    review["spec"] = {}
    status, body = await call("POST", "/apis/authentication.k8s.io/v1/tokenreviews", ADMIN, review)
    assert (status, body["message"]) == (400, "token is required for TokenReview in authentication")

    sar = {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {}}
    status, body = await call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", ADMIN, sar)
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'SubjectAccessReview.authorization.k8s.io "" is invalid: [spec: Invalid value: null: exactly one of '
        'nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one '
        "of user or group must be specified]"
    )
    sar["spec"] = {"user": "u", "groups": ["system:masters"], "resourceAttributes": {"verb": "delete", "resource": "x"}}
    status, body = await call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", ADMIN, sar)
    assert (status, body["status"]) == (201, {"allowed": True})
    sar["spec"] = {
        "user": "u",
        "groups": ["system:authenticated"],
        "nonResourceAttributes": {"verb": "get", "path": "/metrics"},
    }
    _, body = await call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", ADMIN, sar)
    assert body["status"] == {"allowed": False}
    status, _ = await call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", None, sar)
    assert status == 401  # the reviews need a token like everything else


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
async def test_kubectl_works_with_the_emitted_kubeconfig_and_not_with_another_token(api: Any, tmp_path: Path) -> None:
    store, _, kubeconfig = api
    store.create("Node", make_node("n1").obj())

    def kubectl(config: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                "kubectl",
                "--kubeconfig",
                str(config),
                "--cache-dir",
                str(tmp_path / "cache"),
                "get",
                "nodes",
                "-o",
                "name",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )

    ok = await asyncio.to_thread(kubectl, kubeconfig)
    assert (ok.returncode, ok.stdout.strip()) == (0, "node/n1"), ok.stderr
    doc = yaml.safe_load(kubeconfig.read_text())
    doc["users"][0]["user"] = {"token": "not-the-token"}
    wrong = tmp_path / "wrong"
    wrong.write_text(yaml.safe_dump(doc))
    refused = await asyncio.to_thread(kubectl, wrong)
    assert refused.returncode != 0
    assert "You must be logged in to the server (Unauthorized)" in refused.stderr


def test_token_file_errors_name_the_file_and_line(tmp_path: Path) -> None:
    good = tmp_path / "tokens.csv"
    good.write_text('t1,alice,u1\n\nt2,bob,u2,"system:monitoring,team"\n')
    assert read_token_file(good) == {
        "t1": UserInfo("alice", "u1"),
        "t2": UserInfo("bob", "u2", ("system:monitoring", "team")),
    }
    bad = tmp_path / "bad.csv"
    bad.write_text("t1,alice,u1\nt2,bob\n")
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "sim", "serve", "--port", "0", "--token-auth-file", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert out.returncode == 2
    assert f"token file {bad}, line 2: must have at least 3 columns (token, user name, user uid), found 2" in out.stderr
