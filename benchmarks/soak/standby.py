"""The soak's standby: a third ``kubesched run`` replica that stays standby the whole run, and
whose memory must stay flat while pods are created, bound by the leader and deleted, cycle
after cycle.

The two replicas of the soak hand their lease over when the leader is killed, so neither is a
standby for long. This one elects on a lease of its own (:data:`LEASE_NAME`), which the soak
holds for a day before the replica starts: it lists and watches every pod the leader binds, as a
real standby does, and never schedules one. After the main checks it watches ``cycles`` waves
of ``pods`` pods each (created, bound by the leader, deleted; faults off); its RSS is read once
each wave is gone. What a replica keeps of pods that are gone shows as growth from wave to wave
(about 10 KiB a pod: a QueuedPodInfo, its heap entry, its PodInfo and the pod); the check allows
2 KiB a pod a wave plus 8 MiB between the first wave and the last, and wants the lease still the
soak's and the replica alive.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import yaml

from benchmarks.catalogue import default_pod
from benchmarks.soak.api import API
from benchmarks.soak.processes import Proc, free_port
from benchmarks.soak.report import Check
from benchmarks.soak.settings import SetupError
from kubesched.cluster.leader import micro_time

MiB = 1024 * 1024
#: The standby's own lease, held by the soak (:data:`HOLDER`) for the whole run.
LEASE_NAME = "kube-scheduler-standby"
HOLDER = "soak-standby-holder"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
PODS = "/api/v1/namespaces/default/pods"
#: What a wave may grow the standby's RSS by, per pod, besides the fixed allowance.
ALLOWED_PER_POD = 2048
ALLOWED_FIXED = 8 * MiB


class Standby:
    """The standby replica of a soak: :meth:`start` it beside the others, run :meth:`waves`
    after the main checks (see the module docstring)."""

    def __init__(self, cycles: int, pods: int, concurrency: int) -> None:
        self.cycles = cycles
        self.pods = pods
        self.concurrency = concurrency
        self.proc: Proc | None = None
        #: The standby's RSS once each wave was deleted and digested, in bytes.
        self.rss: list[int] = []

    async def start(
        self, api: API, config: Path, kubeconfig: Path, spawn: Callable[[str, list[str]], Proc], logdir: Path
    ) -> None:
        """Hold :data:`LEASE_NAME` for the soak, then start the replica electing on it."""
        lease = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": LEASE_NAME, "namespace": "kube-system"},
            "spec": {
                "holderIdentity": HOLDER,
                "leaseDurationSeconds": 86400,
                "acquireTime": micro_time(),
                "renewTime": micro_time(),
            },
        }
        status, body = await api.call("POST", LEASES, lease)
        if status not in (201, 409):
            raise SetupError(f"could not create the standby's lease: {status} {body}")
        cfg: dict[str, Any] = yaml.safe_load(config.read_text()) or {}
        cfg.setdefault("leaderElection", {}).update(resourceName=LEASE_NAME, resourceNamespace="kube-system")
        own = logdir / "standby.yaml"
        own.write_text(yaml.safe_dump(cfg, sort_keys=False))
        argv = ["run", "--config", str(own), "--kubeconfig", str(kubeconfig), "--identity", "soak-standby"]
        argv += ["--bind-address", "127.0.0.1", "--secure-port", str(free_port())]
        self.proc = spawn("soak-standby", argv)

    async def waves(self, api: API, settled_rss: Callable[[Proc], Awaitable[int]]) -> Check:
        """Run the waves and judge the standby's memory (see the module docstring)."""
        proc = self.proc
        if proc is None or not proc.alive():
            return Check("standby memory", False, "the standby replica is not running")
        for wave in range(self.cycles):
            api.deadline = time.monotonic() + 600
            label = f"soak-standby-wave={wave}"
            unbound = await self._wave(api, wave, label)
            if unbound:
                return Check("standby memory", False, f"wave {wave + 1}: {unbound} pod(s) never bound by the leader")
            self.rss.append(await settled_rss(proc))
        status, lease = await api.call("GET", f"{LEASES}/{LEASE_NAME}")
        holder = ((lease or {}).get("spec") or {}).get("holderIdentity") if status == 200 else None
        first, last = self.rss[0], self.rss[-1]
        allowed = first + (self.cycles - 1) * self.pods * ALLOWED_PER_POD + ALLOWED_FIXED
        figures = ", ".join(f"{r / MiB:.0f}" for r in self.rss)
        ok = proc.alive() and holder == HOLDER and last <= allowed
        return Check(
            "standby memory",
            ok,
            f"{self.cycles} waves of {self.pods} pods; RSS after each (MiB): {figures} "
            f"(limit {allowed / MiB:.0f}); lease held by {holder!r}" + ("" if proc.alive() else "; the standby exited"),
        )

    async def _wave(self, api: API, wave: int, label: str) -> int:
        """Create a wave, wait until the leader has bound it, delete it and wait until it is
        gone. Returns how many pods were never bound (0 when all were)."""
        key, value = label.split("=", 1)
        sem = asyncio.Semaphore(self.concurrency)

        async def create(i: int) -> None:
            async with sem:
                pod = default_pod(f"standby{wave}", i)
                pod["metadata"]["labels"] = {key: value}
                await api.call("POST", PODS, pod)

        await asyncio.gather(*(create(i) for i in range(self.pods)))
        unbound = self.pods
        until = time.monotonic() + 300
        while unbound and time.monotonic() < until:
            await asyncio.sleep(1.0)
            status, listed = await api.call("GET", PODS, labelSelector=label)
            items = (listed or {}).get("items", []) if status == 200 else []
            unbound = self.pods - sum(1 for p in items if (p.get("spec") or {}).get("nodeName"))
        await api.call("DELETE", PODS, labelSelector=label)
        until = time.monotonic() + 120
        while time.monotonic() < until:
            status, listed = await api.call("GET", PODS, labelSelector=label)
            if status == 200 and not (listed or {}).get("items"):
                break
            await asyncio.sleep(1.0)
        return unbound
