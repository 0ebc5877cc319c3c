"""Soak: the real processes, a failing API server, a leader killed mid-run — is every pod bound once?

Starts ``kubesched sim serve`` (``--nodes`` nodes, fault injection on) and two ``kubesched run``
replicas with leader election (the default configuration: every default plugin, leader election
on, clientConnection qps 50 / burst 100), all as subprocesses on loopback. Then creates
``--pods`` pods over HTTP while the faults fire, SIGKILLs the leader once half of them exist,
and watches until every pod is bound (or ``--timeout``). Faults are then switched off and the
outcome checked:

* none lost: every pod created exists at the end;
* all bound: every pod has ``spec.nodeName``;
* bound once: the server committed exactly one binding per pod (its own count, from
  ``/kubesched/stats``), and no watch saw a pod's ``nodeName`` change;
* no duplicate Scheduled: no pod has more than one ``Scheduled`` event (aggregated count 1), each
  names the node the pod is on, and no unbound pod has one;
* Scheduled for each bound pod: every bound pod has its ``Scheduled`` event, except pods the
  killed leader bound in its last 10 s (events are written after the binding and die with the
  process, as kube-scheduler's would);
* no false failure: no ``FailedScheduling`` event on a bound pod was recorded (``eventTime``,
  or a series' ``lastObservedTime``) at or after the moment the server committed its binding —
  once the pod is bound, nothing the scheduler decides may say that it failed (a bind that
  timed out or lost its answer but did happen, reported as a failure, is caught here);
* failover: after the kill the other replica took the lease (with ``--no-kill``: lease held,
  the leader never changed);
* health: every live replica's ``/healthz`` answered 200 within 1 s, each time it was asked
  (every half second, over HTTPS), from its first answer to the end of the run;
* memory: no leak. The pods are deleted, a second wave of half as many is scheduled (no
  faults) and deleted: its peak RSS stays within the first wave's, and the RSS after deleting
  it within what the first deletion left (CPython keeps freed memory for reuse, so RSS does not
  fall back to the baseline; growth is what a leak shows).

    python -m benchmarks.soak --quick            # 500 nodes, 1000 pods
    python -m benchmarks.soak                    # 5000 nodes, 10000 pods
    python -m benchmarks.soak --faults none --json
    python -m benchmarks.soak --faults my-faults.yaml --seed 3

Exit status: 0 when every check passes, 1 when one fails, 2 when the run could not be set up.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import aiohttp
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.catalogue import default_node, default_pod  # noqa: E402

Obj = dict[str, Any]
MiB = 1024 * 1024
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
PODS = "/api/v1/namespaces/default/pods"
#: A pod the leader bound this many seconds before it was killed may lack its Scheduled event.
EVENT_GRACE = 10.0


class SetupError(RuntimeError):
    """The run could not start (a process did not come up in time)."""


def default_faults(seed: int) -> Obj:
    """The fault mix of a soak: every kind of fault, at rates a client must ride out."""
    writes = ["create", "update", "patch"]
    return {
        "seed": seed,
        "faults": [
            {"kind": "latency", "seconds": 0.002, "jitter": 0.01},
            {"kind": "throttle", "rate": 0.02, "verbs": [*writes, "delete"], "retryAfter": 1},
            {"kind": "error", "rate": 0.01, "code": 503, "verbs": ["get", "list", *writes]},
            {"kind": "error", "rate": 0.005, "code": 500, "phase": "after", "verbs": writes},
            {"kind": "conflict", "rate": 0.03},
            {"kind": "reset", "rate": 0.005, "verbs": ["get", "list", *writes]},
            {"kind": "reset", "rate": 0.01, "phase": "after", "resources": ["pods/binding"]},
            {"kind": "watchDrop", "after": [5, 30]},
            {"kind": "gone", "rate": 0.2},
            {"kind": "stall", "every": 40, "seconds": 3},
        ],
    }


@dataclass
class Settings:
    nodes: int = 5000
    pods: int = 10000
    faults: str = "default"  # "default", "none" or a YAML file
    seed: int = 1
    timeout: float = 1200.0
    config: str | None = None
    concurrency: int = 16
    kill_at: float = 0.5  # 0: never kill the leader
    keep: bool = False


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


@dataclass
class Report:
    nodes: int
    pods: int
    faults: str
    seed: int
    created: int = 0
    bound: int = 0
    seconds_to_all_bound: float | None = None
    pods_per_second: float = 0.0
    leader_failovers: int = 0
    failover_seconds: float | None = None
    replica_restarts: int = 0
    faults_fired: dict[str, int] = field(default_factory=dict)
    binds: int = 0
    binds_per_pod_max: int = 0
    bind_conflicts: int = 0
    scheduled_events_missing: int = 0
    create_retries: int = 0
    rss_baseline_mib: float = 0.0
    rss_peak_mib: float = 0.0
    rss_after_delete_mib: float = 0.0
    rss_second_wave_peak_mib: float = 0.0
    rss_after_second_delete_mib: float = 0.0
    healthz_probes: int = 0
    healthz_max_ms: float = 0.0
    healthz_failures: int = 0
    checks: list[Check] = field(default_factory=list)
    logs: str | None = None

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)


# --- processes -------------------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port on loopback that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_bytes(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class Proc:
    """A subprocess whose output goes to a log file; stopped by its own pid only."""

    def __init__(self, name: str, argv: list[str], logdir: Path) -> None:
        self.name = name
        self.log = logdir / f"{name}.log"
        self._out = open(self.log, "w", encoding="utf-8")  # noqa: SIM115 - closed in stop()
        self.popen = subprocess.Popen(
            argv, stdout=self._out, stderr=subprocess.STDOUT, cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
        self.killed = False
        self.peak = 0

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def sample(self) -> int | None:
        rss = rss_bytes(self.pid) if self.alive() else None
        if rss is not None:
            self.peak = max(self.peak, rss)
        return rss

    def kill(self) -> None:
        self.killed = True
        with contextlib.suppress(ProcessLookupError):
            self.popen.send_signal(signal.SIGKILL)

    def stop(self, grace: float = 10.0) -> None:
        if self.alive():
            with contextlib.suppress(ProcessLookupError):
                self.popen.send_signal(signal.SIGTERM)
            try:
                self.popen.wait(grace)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        self._out.close()

    def tail(self, lines: int = 5) -> str:
        try:
            return "\n".join(self.log.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


# --- the API, riding out faults ----------------------------------------------------------------------


class API:
    """Requests to the server with bounded retries on throttling, 5xx and broken connections."""

    def __init__(self, url: str, token: str | None, ca_pem: str | None, deadline: float) -> None:
        self.url = url
        self.deadline = deadline
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        tls = ssl.create_default_context(cadata=ca_pem) if ca_pem else None
        self.session = aiohttp.ClientSession(
            headers=headers,
            timeout=aiohttp.ClientTimeout(total=30),
            connector=aiohttp.TCPConnector(limit=64, ssl=tls if tls is not None else True),
        )
        self.retries = 0

    async def close(self) -> None:
        await self.session.close()

    async def call(
        self, method: str, path: str, body: Any = None, attempts: int = 10, **params: str
    ) -> tuple[int, Any]:
        """(status, decoded body) of the first answer that is not 429/5xx; after ``attempts``
        or past the deadline, the last one (status 0 when the connection never answered)."""
        last: tuple[int, Any] = (0, None)
        for attempt in range(attempts):
            if time.monotonic() > self.deadline:
                break
            wait = min(2.0, 0.1 * 2**attempt)
            try:
                async with self.session.request(method, self.url + path, json=body, params=params or None) as r:
                    text = await r.text()
                    try:
                        data = json.loads(text) if text else None
                    except ValueError:
                        data = text
                    last = (r.status, data)
                    if r.status != 429 and r.status < 500:
                        return last
                    if r.status == 429:
                        wait = float(r.headers.get("Retry-After", "1"))
            except (aiohttp.ClientError, TimeoutError) as exc:
                last = (0, repr(exc))
            self.retries += 1
            await asyncio.sleep(wait)
        return last


def _parse_time(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def judge(
    rep: Report,
    *,
    expected: int,
    created: set[str],
    pods: dict[str, Obj],
    per_pod: dict[str, Obj],
    events: list[Obj],
    first_seen: dict[str, str],
    rebinds: list[tuple[str, str, str]],
    killed_wall: float | None,
    takeover_wall: float | None = None,
) -> list[Check]:
    """The checks of a finished soak, from what the server shows at the end: ``pods`` (name →
    pod), ``per_pod`` (``/kubesched/stats`` pods), ``events`` (events.k8s.io/v1 items); and what
    the run saw: the pods ``created``, the node ``first_seen`` for each pod, the node changes
    (``rebinds``) and when the leader was killed (wall clock). Fills the binding figures of ``rep``."""
    node_of = {n: (p.get("spec") or {}).get("nodeName") for n, p in pods.items()}
    bound = {n for n, node in node_of.items() if node}
    lost = sorted(created - set(pods))
    unbound = sorted(set(pods) - bound)
    rep.bound = len(bound)
    binds = {k.split("/", 1)[1]: v.get("binds", 0) for k, v in per_pod.items() if k.startswith("default/soak-")}
    rep.binds = sum(binds.values())
    rep.binds_per_pod_max = max(binds.values(), default=0)
    rep.bind_conflicts = sum(v.get("conflicts", 0) for k, v in per_pod.items() if k.startswith("default/soak-"))
    twice = sorted(n for n, c in binds.items() if c > 1)
    not_counted = sorted(n for n in bound if binds.get(n, 0) != 1)
    moved = sorted({n for n, _, _ in rebinds} | {n for n in bound if first_seen.get(n, node_of[n]) != node_of[n]})

    scheduled: dict[str, list[Obj]] = {}
    failed: dict[str, list[Obj]] = {}
    for ev in events:
        name = (ev.get("regarding") or {}).get("name", "")
        if not name.startswith("soak-"):
            continue
        if ev.get("reason") == "Scheduled":
            scheduled.setdefault(name, []).append(ev)
        elif ev.get("reason") == "FailedScheduling":
            failed.setdefault(name, []).append(ev)

    def count(ev: Obj) -> int:
        return int((ev.get("series") or {}).get("count") or ev.get("deprecatedCount") or 1)

    bad_scheduled = []
    missing, excused = [], []
    for name in sorted(bound):
        evs = scheduled.get(name, [])
        total = sum(count(e) for e in evs)
        if total == 0:
            at = (per_pod.get(f"default/{name}") or {}).get("firstBoundAt")
            # Events are written after the binding: those of the last pods the killed
            # leader bound may die with it, as they would with kube-scheduler. Until another
            # replica took the lease, a binding the server committed was the killed leader's
            # (a request it sent before dying, held up by a stall).
            until = max(killed_wall or 0.0, takeover_wall or 0.0)
            if killed_wall is not None and at is not None and killed_wall - EVENT_GRACE <= at <= until:
                excused.append(name)
            else:
                missing.append(name)
        elif total > 1:
            bad_scheduled.append(f"{name}: {total} Scheduled events")
        elif f" to {node_of[name]}" not in (evs[0].get("note") or ""):
            bad_scheduled.append(f"{name}: Scheduled names another node than {node_of[name]}")
    bad_scheduled += [f"{n}: Scheduled but not bound" for n in sorted(set(scheduled) - bound)]
    rep.scheduled_events_missing = len(missing)

    false_failures = []
    for name in sorted(bound & set(failed)):
        at = (per_pod.get(f"default/{name}") or {}).get("firstBoundAt")
        if at is None:
            continue
        for ev in failed[name]:
            times = [
                _parse_time(ev.get("eventTime")),
                _parse_time((ev.get("series") or {}).get("lastObservedTime")),
            ]
            latest = max((t for t in times if t is not None), default=None)
            if latest is not None and latest >= at:
                false_failures.append(f"{name}: {latest - at:+.3f}s after bind: {(ev.get('note') or '')[:120]}")

    def shown(names: list[str]) -> str:
        return ", ".join(names[:5]) + (f" (+{len(names) - 5})" if len(names) > 5 else "")

    checks = [
        Check(
            "none lost",
            not lost and len(created) == expected,
            f"{len(pods)}/{len(created)} created pods exist"
            + (f"; {expected - len(created)} never created" if len(created) < expected else "")
            + (f"; lost: {shown(lost)}" if lost else ""),
        ),
        Check(
            "all bound",
            not unbound and bool(pods),
            f"{len(bound)}/{len(pods)} bound" + (f"; unbound: {shown(unbound)}" if unbound else ""),
        ),
        Check(
            "bound once",
            not twice and not not_counted and not moved,
            f"{rep.binds} bindings for {len(bound)} bound pods"
            + (f"; bound twice: {shown(twice)}" if twice else "")
            + (f"; binding not counted once: {shown(not_counted)}" if not_counted else "")
            + (f"; node changed: {shown(moved)}" if moved else ""),
        ),
        Check(
            "no duplicate Scheduled",
            not bad_scheduled,
            "no pod has two, each names the pod's node, none on an unbound pod"
            if not bad_scheduled
            else f"{len(bad_scheduled)} pod(s): {shown(bad_scheduled)}",
        ),
        Check(
            "Scheduled for each bound pod",
            not missing,
            f"{len(bound) - len(missing) - len(excused)}/{len(bound)} have one"
            + (f"; {len(excused)} bound by the leader within {EVENT_GRACE:.0f} s of its kill" if excused else "")
            + (f"; missing: {shown(missing)}" if missing else ""),
        ),
        Check(
            "no false failure",
            not false_failures,
            f"{sum(len(v) for k, v in failed.items() if k in bound)} FailedScheduling event(s) on bound pods, "
            f"{len(false_failures)} after the bind" + (f": {shown(false_failures)}" if false_failures else ""),
        ),
    ]
    return checks


# --- the run ---------------------------------------------------------------------------------------


class Soak:
    def __init__(self, settings: Settings, progress: Any = None) -> None:
        self.s = settings
        self.progress = progress
        self.report = Report(settings.nodes, settings.pods, settings.faults, settings.seed)
        self.dir = Path(tempfile.mkdtemp(prefix="kubesched-soak-"))
        self.procs: list[Proc] = []
        self.replicas: dict[str, Proc] = {}
        self.holders: list[tuple[float, str]] = []
        self.bound: dict[str, str] = {}
        self.bound_at: dict[str, float] = {}
        self.rebinds: list[tuple[str, str, str]] = []
        self.created: set[str] = set()
        self.t0 = 0.0
        self.deadline = time.monotonic() + settings.timeout
        self.killed_at: float | None = None
        self.killed_name: str | None = None
        self.killed_wall: float | None = None
        self.takeover_wall: float | None = None
        self.replica_seq = 0
        #: RSS of each replica once it has listed the cluster, before any pod exists
        self.baseline: dict[str, int] = {}
        #: each replica's HTTPS port for /healthz
        self.health_ports: dict[str, int] = {}
        self.health_failures: list[str] = []

    # --- set-up ------------------------------------------------------------------------------------
    def _write_inputs(self) -> tuple[Path, Path | None, Path]:
        nodes = self.dir / "nodes.yaml"
        # JSON documents are YAML, and much faster to write and parse.
        nodes.write_text("\n---\n".join(json.dumps(default_node(i)) for i in range(self.s.nodes)) + "\n")
        faults: Path | None
        if self.s.faults == "none":
            faults = None
        elif self.s.faults == "default":
            faults = self.dir / "faults.yaml"
            faults.write_text(yaml.safe_dump(default_faults(self.s.seed), sort_keys=False))
        else:
            faults = Path(self.s.faults)
        if self.s.config:
            config = Path(self.s.config)
        else:
            config = self.dir / "scheduler.yaml"
            config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
        return nodes, faults, config

    def _spawn(self, name: str, argv: list[str]) -> Proc:
        proc = Proc(name, [sys.executable, "-m", "kubesched", *argv], self.dir)
        self.procs.append(proc)
        return proc

    async def _start_server(self, nodes: Path, faults: Path | None) -> tuple[str, str | None, str | None]:
        kubeconfig = self.dir / "kubeconfig"
        argv = ["sim", "serve", "--port", "0", "--address", "127.0.0.1", "--scenario", str(nodes)]
        argv += ["--kubeconfig-out", str(kubeconfig)]
        if faults is not None:
            argv += ["--faults", str(faults)]
        server = self._spawn("apiserver", argv)
        until = time.monotonic() + 180
        while time.monotonic() < until:
            if not server.alive():
                raise SetupError(f"sim serve exited {server.popen.returncode}:\n{server.tail()}")
            for line in server.log.read_text(encoding="utf-8", errors="replace").splitlines():
                if "embedded API server on " in line:
                    url = line.split(" on ", 1)[1].strip()
                    kc = yaml.safe_load(kubeconfig.read_text())
                    user = kc["users"][0].get("user") or {}
                    ca = kc["clusters"][0]["cluster"].get("certificate-authority-data")
                    self.kubeconfig = kubeconfig
                    return url, user.get("token"), base64.b64decode(ca).decode() if ca else None
            await asyncio.sleep(0.2)
        raise SetupError(f"sim serve did not start in 180 s:\n{server.tail()}")

    def _start_replica(self, config: Path, letter: str) -> Proc:
        self.replica_seq += 1
        identity = f"soak-{letter}{self.replica_seq}"
        argv = ["run", "--config", str(config), "--kubeconfig", str(self.kubeconfig)]
        # Each replica its own port for /healthz (two on one machine cannot share 10259).
        port = free_port()
        self.health_ports[identity] = port
        argv += ["--bind-address", "127.0.0.1", "--secure-port", str(port), "--identity", identity]
        proc = self._spawn(identity, argv)
        self.replicas[identity] = proc
        return proc

    # --- background ----------------------------------------------------------------------------------
    async def _watch_lease(self, api: API) -> None:
        while True:
            status, lease = await api.call("GET", LEASE, attempts=1)
            if status == 200 and isinstance(lease, dict):
                holder = (lease.get("spec") or {}).get("holderIdentity") or ""
                if holder and (not self.holders or self.holders[-1][1] != holder):
                    self.holders.append((time.monotonic(), holder))
            await asyncio.sleep(0.5)

    async def _probe_health(self) -> None:
        """Ask every live replica's /healthz twice a second, as a liveness probe would (with a
        5 s timeout): the slowest answer and every failure go in the report."""
        rep = self.report
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE  # each replica's certificate is self-signed
        serving: set[str] = set()
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=insecure)) as session:

            async def probe(identity: str, port: int) -> None:
                t = time.monotonic()
                try:
                    async with session.get(
                        f"https://127.0.0.1:{port}/healthz", timeout=aiohttp.ClientTimeout(total=5)
                    ) as r:
                        await r.read()
                        ok = r.status == 200
                        what = f"{identity}: {r.status}"
                except (aiohttp.ClientError, TimeoutError) as exc:
                    ok, what = False, f"{identity}: {exc!r}"
                proc = self.replicas.get(identity)
                if proc is None or not proc.alive() or proc.killed:
                    return  # a replica that died (or was killed) meanwhile is not judged by this probe
                if identity not in serving:
                    if not ok:
                        return  # still starting: judged from its first answer on
                    serving.add(identity)
                took = time.monotonic() - t
                rep.healthz_probes += 1
                rep.healthz_max_ms = max(rep.healthz_max_ms, round(took * 1000, 1))
                if not ok or took > 1.0:
                    rep.healthz_failures += 1
                    self.health_failures.append(f"{what} after {took:.2f} s")

            while True:
                live = [(i, self.health_ports[i]) for i, p in self.replicas.items() if p.alive() and not p.killed]
                await asyncio.gather(*(probe(i, port) for i, port in live))
                await asyncio.sleep(0.5)

    async def _sample(self) -> None:
        while True:
            for proc in self.procs:
                proc.sample()
            await asyncio.sleep(1.0)

    async def _supervise(self, config: Path) -> None:
        """A replica that exits on its own (it lost its lease, or crashed) is restarted, as its
        Deployment would; the one killed on purpose is not."""
        while True:
            for identity, proc in list(self.replicas.items()):
                if not proc.alive() and not proc.killed and self.report.replica_restarts < 5:
                    self.report.replica_restarts += 1
                    del self.replicas[identity]
                    self._start_replica(config, identity.removeprefix("soak-")[0])
            await asyncio.sleep(1.0)

    async def _watch_pods(self, api: API, label: str) -> None:
        """List then watch the soak's pods; note each one's node, and any change of it."""
        while True:
            status, listed = await api.call("GET", PODS, labelSelector=label)
            if status != 200 or not isinstance(listed, dict):
                await asyncio.sleep(0.5)
                continue
            for pod in listed.get("items") or ():
                self._saw(pod)
            rv = listed["metadata"]["resourceVersion"]
            relist = False
            while not relist:
                params = {"watch": "true", "resourceVersion": rv, "labelSelector": label}
                params.update(allowWatchBookmarks="true", timeoutSeconds="300")
                try:
                    async with api.session.get(
                        api.url + PODS, params=params, timeout=aiohttp.ClientTimeout(total=None, sock_read=60)
                    ) as r:
                        if r.status != 200:
                            relist = True
                            await asyncio.sleep(0.5)
                            continue
                        async for line in r.content:
                            if not line.strip():
                                continue
                            event = json.loads(line)
                            obj = event.get("object") or {}
                            if event.get("type") == "ERROR":
                                relist = True  # 410: the version is too old, list again
                                break
                            rv = (obj.get("metadata") or {}).get("resourceVersion") or rv
                            if event.get("type") in ("ADDED", "MODIFIED"):
                                self._saw(obj)
                except (aiohttp.ClientError, TimeoutError, ValueError):
                    await asyncio.sleep(0.5)

    def _saw(self, pod: Obj) -> None:
        name = pod["metadata"]["name"]
        node = (pod.get("spec") or {}).get("nodeName")
        if not node:
            return
        before = self.bound.get(name)
        if before is None:
            self.bound[name] = node
            self.bound_at[name] = time.monotonic()
        elif before != node:
            self.rebinds.append((name, before, node))

    # --- the load ------------------------------------------------------------------------------------
    async def _create(self, api: API, label: str, on_half: asyncio.Event) -> None:
        queue: asyncio.Queue[int] = asyncio.Queue()
        for i in range(self.s.pods):
            queue.put_nowait(i)
        half = max(1, int(self.s.pods * self.s.kill_at))

        async def worker() -> None:
            while not queue.empty() and time.monotonic() < self.deadline:
                i = queue.get_nowait()
                pod = default_pod("soak", i)
                pod["metadata"]["labels"] = {"soak": label.split("=", 1)[1]}
                status, body = await api.call("POST", PODS, pod)
                # 409 AlreadyExists: an earlier attempt was created but its answer was lost.
                if status in (201, 409):
                    self.created.add(pod["metadata"]["name"])
                    if len(self.created) >= half:
                        on_half.set()

        await asyncio.gather(*(worker() for _ in range(self.s.concurrency)))

    async def _kill_leader(self, on_half: asyncio.Event) -> None:
        await on_half.wait()
        if self.s.kill_at <= 0:
            return
        holder = self.holders[-1][1] if self.holders else None
        proc = self.replicas.get(holder or "")
        if proc is None:
            return
        self.killed_at, self.killed_name, self.killed_wall = time.monotonic(), holder, time.time()
        proc.kill()

    # --- checks --------------------------------------------------------------------------------------
    async def _verify(self, api: API, label: str) -> None:
        rep = self.report
        status, listed = await api.call("GET", PODS, labelSelector=label)
        pods = {p["metadata"]["name"]: p for p in (listed or {}).get("items", [])} if status == 200 else {}
        status, stats = await api.call("GET", "/kubesched/stats")
        per_pod = (stats or {}).get("pods", {}) if status == 200 else {}
        status, events = await api.call("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
        items = (events or {}).get("items", []) if status == 200 else []

        rep.checks.extend(
            judge(
                rep,
                expected=self.s.pods,
                created=self.created,
                pods=pods,
                per_pod=per_pod,
                events=items,
                first_seen=self.bound,
                rebinds=self.rebinds,
                killed_wall=self.killed_wall,
                takeover_wall=self.takeover_wall,
            )
        )

    async def _settled_rss(self, proc: Proc, seconds: int = 15) -> int:
        """The survivor's RSS once it has digested a change: the lowest of the last samples."""
        samples = []
        for _ in range(seconds):
            await asyncio.sleep(1.0)
            rss = proc.sample()
            if rss is not None:
                samples.append(rss)
        return min(samples[-5:]) if samples else 0

    async def _memory_after_delete(self, api: API, label: str) -> None:
        """Delete the pods, then run a second wave (half as many, no faults) and delete it too.

        CPython keeps memory it freed in its own arenas for reuse rather than giving it back to
        the system, so RSS does not fall back to the baseline after a burst even when nothing
        leaks. What a leak would show is growth: the second wave must fit in the memory the
        first one left (its peak within 10% + 16 MiB of the first's), and after deleting it the
        RSS must be no higher than after the first deletion (within 10% + 16 MiB)."""
        rep = self.report
        survivor = next((p for p in self.replicas.values() if p.alive() and self.baseline.get(p.name)), None)
        status, _ = await api.call("DELETE", PODS, labelSelector=label)
        if survivor is None or status != 200:
            rep.checks.append(
                Check(
                    "memory",
                    False,
                    "no surviving scheduler with a baseline"
                    if survivor is None
                    else f"deleting the pods answered {status}",
                )
            )
            return
        after_first = await self._settled_rss(survivor)
        first_peak = survivor.peak
        second = f"{label}-2"
        n = max(1, self.s.pods // 2)
        sem = asyncio.Semaphore(self.s.concurrency)

        async def create(i: int) -> None:
            async with sem:
                pod = default_pod("wave2", i)
                pod["metadata"]["labels"] = {"soak": second.split("=", 1)[1]}
                await api.call("POST", PODS, pod)

        await asyncio.gather(*(create(i) for i in range(n)))
        until = time.monotonic() + 300
        bound = 0
        while time.monotonic() < until:
            status, listed = await api.call("GET", PODS, labelSelector=second)
            items = (listed or {}).get("items", []) if status == 200 else []
            bound = sum(1 for p in items if (p.get("spec") or {}).get("nodeName"))
            if bound >= n:
                break
            await asyncio.sleep(1.0)
        second_peak = survivor.peak
        await api.call("DELETE", PODS, labelSelector=second)
        after_second = await self._settled_rss(survivor)
        base = self.baseline[survivor.name]
        rep.rss_baseline_mib = round(base / MiB, 1)
        rep.rss_peak_mib = round(first_peak / MiB, 1)
        rep.rss_after_delete_mib = round(after_first / MiB, 1)
        rep.rss_second_wave_peak_mib = round(second_peak / MiB, 1)
        rep.rss_after_second_delete_mib = round(after_second / MiB, 1)
        peak_limit = first_peak * 1.1 + 16 * MiB
        end_limit = after_first * 1.1 + 16 * MiB
        rep.checks.append(
            Check(
                "memory",
                bound >= n and second_peak <= peak_limit and 0 < after_second <= end_limit,
                f"baseline {base / MiB:.0f} MiB; first wave peak {first_peak / MiB:.0f}, after delete "
                f"{after_first / MiB:.0f}; second wave ({bound}/{n} bound) peak {second_peak / MiB:.0f} "
                f"(limit {peak_limit / MiB:.0f}), after delete {after_second / MiB:.0f} (limit {end_limit / MiB:.0f})",
            )
        )

    # --- the whole ---------------------------------------------------------------------------------
    async def run(self) -> Report:
        rep = self.report
        nodes, faults, config = self._write_inputs()
        url, token, ca = await self._start_server(nodes, faults)
        api = API(url, token, ca, self.deadline)
        label = f"soak=r{int(time.time())}"
        tasks: list[asyncio.Task[Any]] = []
        try:
            self._start_replica(config, "a")
            self._start_replica(config, "b")
            tasks += [asyncio.create_task(self._watch_lease(api)), asyncio.create_task(self._sample())]
            tasks.append(asyncio.create_task(self._probe_health()))
            until = time.monotonic() + 120
            while not self.holders and time.monotonic() < until:
                if not any(p.alive() for p in self.replicas.values()):
                    raise SetupError("both replicas exited:\n" + "\n".join(p.tail() for p in self.replicas.values()))
                await asyncio.sleep(0.5)
            if not self.holders:
                raise SetupError("no replica took the lease in 120 s")
            await asyncio.sleep(5.0)  # both replicas list the cluster: the baseline is after that
            self.baseline = {i: p.sample() or 0 for i, p in self.replicas.items()}
            tasks.append(asyncio.create_task(self._supervise(config)))
            tasks.append(asyncio.create_task(self._watch_pods(api, label)))
            on_half = asyncio.Event()
            tasks.append(asyncio.create_task(self._kill_leader(on_half)))
            self.t0 = time.monotonic()
            creating = asyncio.create_task(self._create(api, label, on_half))
            bar = self.progress
            if bar is not None:
                created_task = bar.add_task("created", total=self.s.pods)
                bound_task = bar.add_task("bound", total=self.s.pods)
            while time.monotonic() < self.deadline:
                if bar is not None:
                    bar.update(created_task, completed=len(self.created))
                    bar.update(bound_task, completed=len(self.bound))
                if creating.done() and self.created and len(set(self.bound) & self.created) >= len(self.created):
                    break
                await asyncio.sleep(0.5)
            await asyncio.wait_for(asyncio.gather(creating, return_exceptions=True), 30)
            done_bound = [self.bound_at[n] for n in self.created if n in self.bound_at]
            rep.created = len(self.created)
            if done_bound and len(done_bound) == len(self.created) == self.s.pods:
                rep.seconds_to_all_bound = round(max(done_bound) - self.t0, 2)
            if done_bound:
                rep.pods_per_second = round(len(done_bound) / max(1e-6, max(done_bound) - self.t0), 1)
            # Reading the outcome has time of its own, even when binding ran out of it.
            api.deadline = time.monotonic() + 180
            status, state = await api.call("GET", "/kubesched/faults")
            rep.faults_fired = dict((state or {}).get("fired") or {}) if status == 200 else {}
            await api.call("DELETE", "/kubesched/faults")
            rep.create_retries = api.retries
            transitions = self.holders[1:]
            rep.leader_failovers = len(transitions)
            if self.s.kill_at <= 0:
                rep.checks.append(
                    Check(
                        "lease held",
                        not transitions,
                        f"{self.holders[0][1]} held the lease throughout"
                        if not transitions
                        else "the lease changed hands: " + ", ".join(h for _, h in self.holders),
                    )
                )
            elif self.killed_at is not None:
                after = [t for t, h in self.holders if t >= self.killed_at and h != self.killed_name]
                rep.failover_seconds = round(after[0] - self.killed_at, 2) if after else None
                if after and self.killed_wall is not None:
                    self.takeover_wall = self.killed_wall + (after[0] - self.killed_at)
                rep.checks.append(
                    Check(
                        "failover",
                        bool(after),
                        f"{self.killed_name} killed; lease taken over in {rep.failover_seconds} s"
                        if after
                        else f"{self.killed_name} killed; nobody took the lease over",
                    )
                )
            else:
                rep.checks.append(Check("failover", False, "the leader was never killed (no holder known)"))
            await self._verify(api, label)
            await self._memory_after_delete(api, label)
            rep.checks.append(
                Check(
                    "health",
                    rep.healthz_probes > 0 and rep.healthz_failures == 0,
                    f"{rep.healthz_probes} probes, slowest {rep.healthz_max_ms:.0f} ms"
                    + (
                        f"; {rep.healthz_failures} failed, e.g. {self.health_failures[0]}"
                        if self.health_failures
                        else ""
                    ),
                )
            )
        finally:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await api.close()
            for proc in reversed(self.procs):
                proc.stop()
            if self.s.keep or not rep.ok:
                rep.logs = str(self.dir)
            else:
                for f in self.dir.iterdir():
                    f.unlink()
                self.dir.rmdir()
        return rep


# --- output ----------------------------------------------------------------------------------------


def print_report(rep: Report) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"kubesched soak: {rep.nodes} nodes, {rep.pods} pods, faults {rep.faults} (seed {rep.seed})")
    t.add_column("measure")
    t.add_column("value", justify="right", max_width=80, overflow="fold")
    rows = [
        ("pods created", str(rep.created)),
        ("pods bound", str(rep.bound)),
        ("time to all bound", f"{rep.seconds_to_all_bound} s" if rep.seconds_to_all_bound is not None else "never"),
        ("pods/s", f"{rep.pods_per_second:.1f}"),
        ("leader failovers", str(rep.leader_failovers)),
        ("failover after kill", f"{rep.failover_seconds} s" if rep.failover_seconds is not None else "-"),
        ("replica restarts", str(rep.replica_restarts)),
        (
            "/healthz probes (slowest, failed)",
            f"{rep.healthz_probes} ({rep.healthz_max_ms:.0f} ms, {rep.healthz_failures})",
        ),
        ("bindings (max per pod)", f"{rep.binds} ({rep.binds_per_pod_max})"),
        ("binding conflicts", str(rep.bind_conflicts)),
        ("Scheduled events missing", str(rep.scheduled_events_missing)),
        ("client retries", str(rep.create_retries)),
        ("faults fired", ", ".join(f"{k} {v}" for k, v in sorted(rep.faults_fired.items())) or "-"),
        (
            "scheduler RSS MiB (baseline/peak/after delete; wave 2 peak/after delete)",
            f"{rep.rss_baseline_mib:.0f} / {rep.rss_peak_mib:.0f} / {rep.rss_after_delete_mib:.0f}; "
            f"{rep.rss_second_wave_peak_mib:.0f} / {rep.rss_after_second_delete_mib:.0f}",
        ),
    ]
    for k, v in rows:
        t.add_row(k, v)
    console = Console(color_system=None, width=140)
    console.print(t)
    c = Table(title="checks")
    c.add_column("check")
    c.add_column("result")
    c.add_column("detail", overflow="fold")
    for check in rep.checks:
        c.add_row(check.name, "PASS" if check.ok else "FAIL", check.detail)
    console.print(c)
    if rep.logs:
        console.print(f"logs: {rep.logs}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.soak", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, help="nodes (default 5000; 500 with --quick)")
    ap.add_argument("--pods", type=int, help="pods to create (default 10000; 1000 with --quick)")
    ap.add_argument("--quick", action="store_true", help="500 nodes, 1000 pods, 10 minutes at most")
    ap.add_argument("--faults", default="default", help="'default' (the built-in mix), 'none', or a fault YAML file")
    ap.add_argument("--seed", type=int, default=1, help="seed of the default fault mix (default 1)")
    ap.add_argument("--config", help="KubeSchedulerConfiguration of the replicas (default: all defaults)")
    ap.add_argument("--concurrency", type=int, default=16, help="concurrent pod creations (default 16)")
    ap.add_argument("--timeout", type=float, help="seconds for the whole run (default 1200; 600 with --quick)")
    ap.add_argument("--no-kill", action="store_true", help="never kill the leader: then the lease must be held")
    ap.add_argument("--keep", action="store_true", help="keep the logs and inputs (kept anyway when a check fails)")
    ap.add_argument("--json", action="store_true", help="print JSON instead of tables")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    if args.faults not in ("default", "none") and not Path(args.faults).is_file():
        print(f"--faults: {args.faults}: no such file (or say 'default' or 'none')", file=sys.stderr)
        return 2
    settings = Settings(
        nodes=args.nodes or (500 if args.quick else 5000),
        pods=args.pods or (1000 if args.quick else 10000),
        faults=args.faults,
        seed=args.seed,
        timeout=args.timeout or (600.0 if args.quick else 1200.0),
        config=args.config,
        concurrency=args.concurrency,
        kill_at=0.0 if args.no_kill else 0.5,
        keep=args.keep,
    )
    if settings.nodes < 1 or settings.pods < 2 or settings.concurrency < 1:
        print("--nodes must be >= 1, --pods >= 2, --concurrency >= 1", file=sys.stderr)
        return 2
    bar = None
    if not args.no_progress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(
            TextColumn("{task.description:>8}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=True,
        )
    soak = Soak(settings, bar)
    try:
        if bar is not None:
            bar.start()
        try:
            report = asyncio.run(soak.run())
        finally:
            if bar is not None:
                bar.stop()
    except SetupError as exc:
        print(f"soak: {exc}\nlogs: {soak.dir}", file=sys.stderr)
        return 2
    if args.json:
        out = asdict(report)
        out["ok"] = report.ok
        print(json.dumps(out, indent=2))
    else:
        print_report(report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
