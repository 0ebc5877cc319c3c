"""One soak run: the API server and two scheduler replicas as processes, the pods created while
the faults fire, the leader killed halfway, then the outcome read and judged, every replica made
to relist all the pods (410) with its /healthz watched, and the logs searched for tracebacks.

Nothing here prints: the run fills a :class:`~benchmarks.soak.report.Report` and
:mod:`benchmarks.soak.report` shows it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from benchmarks.catalogue import default_node, default_pod
from benchmarks.soak.api import API
from benchmarks.soak.checks import TRACEBACK, Obj, Probe, health_during, judge, no_tracebacks
from benchmarks.soak.processes import ROOT, Proc, free_port
from benchmarks.soak.report import Check, Report
from benchmarks.soak.settings import Settings, SetupError, default_faults
from benchmarks.soak.standby import Standby

MiB = 1024 * 1024
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
PODS = "/api/v1/namespaces/default/pods"
POD_GROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups"
#: How long the Scheduled events of the last pods bound may trail their bindings.
EVENT_SETTLE = 30.0
#: The PodGroup of the main wave with ``--gang``.
GANG = "soak-gang"
#: Seconds between two rounds of /healthz probes; during the forced relist, a tenth of that, so
#: that a pause of a few hundred milliseconds cannot fall between two probes.
PROBE_EVERY = 0.5
#: How long the forced relist may take: every replica relists twice (410 on each re-watch).
RELIST_SECONDS = 60.0


class Soak:
    """One soak of ``settings``: :meth:`run` starts the processes, drives the load and the
    faults, and returns the :class:`Report` with every check's verdict. ``progress``, when given,
    is a rich ``Progress`` it keeps up to date (pods created, pods bound)."""

    def __init__(self, settings: Settings, progress: Any = None) -> None:
        self.s = settings
        self.progress = progress
        self.report = Report(settings.nodes, settings.pods, settings.faults, settings.seed)
        self.dir = Path(tempfile.mkdtemp(prefix="kubesched-soak-"))
        self.procs: list[Proc] = []
        self.replicas: dict[str, Proc] = {}
        #: the replica kept standby on a lease of its own (benchmarks/soak/standby.py)
        self.standby: Standby | None = None
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
        #: every /healthz answer of a replica that was serving
        self.probes: list[Probe] = []
        self.probe_every = PROBE_EVERY

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

    def _gates(self) -> list[str]:
        """The feature gates of every process: GenericWorkload for a gang."""
        return ["--feature-gates", "GenericWorkload=true"] if self.s.gang else []

    async def _create_gang(self, api: API) -> None:
        """The PodGroup the main wave's pods belong to, asking for every one of them."""
        group = {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": GANG, "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": self.s.pods}}},
        }
        status, body = await api.call("POST", POD_GROUPS, group)
        if status not in (201, 409):
            raise SetupError(f"creating the PodGroup {GANG}: {status} {body}")

    def _spawn(self, name: str, argv: list[str]) -> Proc:
        proc = Proc(name, [sys.executable, "-m", "kubesched", *argv], self.dir)
        self.procs.append(proc)
        return proc

    async def _start_server(self, nodes: Path, faults: Path | None) -> tuple[str, str | None, str | None]:
        kubeconfig = self.dir / "kubeconfig"
        argv = ["sim", "serve", "--port", "0", "--address", "127.0.0.1", "--scenario", str(nodes)]
        argv += ["--kubeconfig-out", str(kubeconfig), *self._gates()]
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
        argv = ["run", "--config", str(config), "--kubeconfig", str(self.kubeconfig), *self._gates()]
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
        """Have the prober (:mod:`benchmarks.soak.prober`, a process of its own, so that this
        loop's pauses are not counted as a replica's) ask every live replica's /healthz every
        :attr:`probe_every` seconds, as a liveness probe would (with a 5 s timeout), and read its
        answers: each goes in :attr:`probes`, the slowest answer and every failure (not a 200, or
        over 1 s) in the report. A replica is judged from its first 200 on, and only while it
        lives (the one killed on purpose, or one that died, is not)."""
        out = self.dir / "probes.jsonl"
        out.touch()
        prober = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.soak.prober", str(out)], stdin=subprocess.PIPE, text=True, cwd=ROOT
        )
        assert prober.stdin is not None
        told: set[str] = set()
        pace = PROBE_EVERY
        serving: set[str] = set()
        pending = ""
        try:
            with out.open(encoding="utf-8") as answers:
                while True:
                    live = {i for i, p in self.replicas.items() if p.alive() and not p.killed}
                    for identity in sorted(live - told):
                        prober.stdin.write(f"{identity} {self.health_ports[identity]}\n")
                    for identity in sorted(told - live):
                        prober.stdin.write(f"{identity} 0\n")
                    told = live
                    if self.probe_every != pace:
                        pace = self.probe_every
                        prober.stdin.write(f"every {pace}\n")
                    prober.stdin.flush()
                    pending += answers.read()
                    *lines, pending = pending.split("\n")
                    for line in lines:
                        self._judge_probe(json.loads(line), serving)
                    await asyncio.sleep(0.1)
        finally:
            prober.stdin.close()
            try:
                prober.wait(10)
            except subprocess.TimeoutExpired:
                prober.kill()
                prober.wait(5)

    def _judge_probe(self, answer: Obj, serving: set[str]) -> None:
        rep = self.report
        identity, ok, ms = answer["replica"], answer["status"] == 200, float(answer["ms"])
        proc = self.replicas.get(identity)
        if proc is None or not proc.alive() or proc.killed:
            return  # a replica that died (or was killed) meanwhile is not judged by this probe
        if identity not in serving:
            if not ok:
                return  # still starting: judged from its first answer on
            serving.add(identity)
        self.probes.append(Probe(float(answer["at"]), identity, ms, ok))
        rep.healthz_probes += 1
        rep.healthz_max_ms = max(rep.healthz_max_ms, ms)
        if not ok or ms > 1000:
            rep.healthz_failures += 1
            what = f"{identity}: {answer['status'] or answer['error']}"
            self.health_failures.append(f"{what} after {ms / 1000:.2f} s")

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
                if self.s.gang:
                    pod["spec"]["schedulingGroup"] = {"podGroupName": GANG}
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
        items = await self._events_after_binds(api, pods)

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
                killed_log=self._log_of(self.killed_name),
            )
        )

    def _log_of(self, replica: str | None) -> str:
        """What a replica has logged so far ("" for none)."""
        proc = self.replicas.get(replica or "")
        if proc is None or not proc.log.exists():
            return ""
        return proc.log.read_text(encoding="utf-8", errors="replace")

    async def _events_after_binds(self, api: API, pods: dict[str, Obj]) -> list[Obj]:
        """The namespace's events, once every bound pod's Scheduled event is there or
        :data:`EVENT_SETTLE` seconds have passed. A Scheduled event is written after its binding
        (by a client that paces its writes, as kube-scheduler's event broadcaster does), so the
        last pods bound of a burst — a whole gang binds at once — have theirs a little later."""
        bound = {name for name, p in pods.items() if (p.get("spec") or {}).get("nodeName")}
        until = time.monotonic() + EVENT_SETTLE
        while True:
            status, events = await api.call("GET", "/apis/events.k8s.io/v1/namespaces/default/events")
            items: list[Obj] = (events or {}).get("items", []) if status == 200 else []
            seen = {(e.get("regarding") or {}).get("name") for e in items if e.get("reason") == "Scheduled"}
            if bound <= seen or time.monotonic() >= until:
                return items
            await asyncio.sleep(1.0)

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

    async def _force_relist(self, api: API) -> None:
        """Make every live replica relist all the pods, as a 410 on its pod watch does, and judge
        its /healthz meanwhile (probed ten times as often): until each has met the 410 twice
        (a relist done, the next begun), then five seconds more for the last to finish."""
        rep = self.report
        live = [p for p in self.replicas.values() if p.alive() and not p.killed]
        if self.standby is not None and self.standby.proc is not None and self.standby.proc.alive():
            live.append(self.standby.proc)  # its pod watch meets the 410s too
        gone = {"seed": self.s.seed, "faults": [{"kind": "gone", "verbs": ["watch"], "resources": ["pods"]}]}
        status, _ = await api.call("PUT", "/kubesched/faults", gone)
        if status != 200:
            rep.checks.append(Check("health in a relist", False, f"switching 410s on answered {status}"))
            return
        self.probe_every = PROBE_EVERY / 10
        start = time.monotonic()
        await api.call("POST", "/kubesched/faults/drop-watches")
        until = start + RELIST_SECONDS
        fired = 0
        while time.monotonic() < until and fired < 2 * len(live):
            await asyncio.sleep(0.5)
            status, state = await api.call("GET", "/kubesched/faults")
            fired = int(((state or {}).get("fired") or {}).get("gone", 0)) if status == 200 else fired
        await api.call("DELETE", "/kubesched/faults")
        await asyncio.sleep(5.0)
        end = time.monotonic()
        self.probe_every = PROBE_EVERY
        rep.relist_gone = fired
        check = health_during("health in a relist", self.probes, start, end)
        rep.healthz_relist_max_ms = max((p.ms for p in self.probes if start <= p.at <= end), default=0.0)
        if fired < 2 * len(live):
            check = Check(
                check.name, False, f"{fired} 410s for {len(live)} replicas in {RELIST_SECONDS:.0f} s; " + check.detail
            )
        rep.checks.append(check)

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
            if self.s.standby_cycles > 0:
                self.standby = Standby(self.s.standby_cycles, self.s.standby_pods, self.s.concurrency)
                await self.standby.start(api, config, self.kubeconfig, self._spawn, self.dir)
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
            watching = asyncio.create_task(self._watch_pods(api, label))
            tasks.append(watching)
            on_half = asyncio.Event()
            tasks.append(asyncio.create_task(self._kill_leader(on_half)))
            if self.s.gang:
                await self._create_gang(api)
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
            burst_end = time.monotonic()
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
            rep.checks.append(health_during("health in the burst", self.probes, self.t0, burst_end))
            rep.healthz_burst_max_ms = max((p.ms for p in self.probes if self.t0 <= p.at <= burst_end), default=0.0)
            # Its own relists would hammer the server while every watch is answered 410.
            watching.cancel()
            await self._force_relist(api)
            await self._memory_after_delete(api, label)
            if self.standby is not None:
                rep.checks.append(await self.standby.waves(api, self._settled_rss))
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
            # Read once every process has ended: what it printed while stopping counts too.
            logs = {p.name: p.log.read_text(encoding="utf-8", errors="replace") for p in self.procs if p.log.exists()}
            rep.tracebacks = sum(text.count(TRACEBACK) for text in logs.values())
            if rep.checks:
                rep.checks.append(no_tracebacks(logs))
            if self.s.keep or not rep.ok:
                rep.logs = str(self.dir)
            else:
                for f in self.dir.iterdir():
                    f.unlink()
                self.dir.rmdir()
        return rep
