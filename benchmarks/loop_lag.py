"""How long a scheduler replica's event loop stalls in a 410 relist and in a burst it only watches.

Starts ``kubesched sim serve`` (a process of its own) with ``--nodes`` nodes and ``--pods`` pods
(``--bound`` of them on nodes), runs a scheduler in this process against it as ``kubesched run``
does before it leads (informers synced, what they listed frozen, no scheduling loop), and
measures the largest lag of a 10 ms ticker on its loop: what a /healthz request could wait.

* ``--relists N``: N times, every pod watch answered 410 (the fault injector's ``gone``) until
  the replica relisted the pods;
* ``--burst N``: N pods created by another process while the replica watches (``--leader``: it
  schedules them too, at the client's default qps).

    python -m benchmarks.loop_lag --pods 16000 --relists 3
    python -m benchmarks.loop_lag --pods 0 --relists 0 --burst 10000
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import aiohttp

from benchmarks.catalogue import default_node, default_pod
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.config import load_config
from kubesched.scheduler import Scheduler, SchedulerOptions

PODS = "/api/v1/namespaces/default/pods"


class Ticker:
    """A neighbour on the loop that wants to run every 10 ms: the most it was kept waiting."""

    def __init__(self) -> None:
        self.max = 0.0

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(0.01)
            self.max = max(self.max, loop.time() - t - 0.01)


def _scenario(path: Path, nodes: int, pods: int, bound: float) -> None:
    docs = [json.dumps(default_node(i)) for i in range(nodes)]
    for i in range(pods):
        pod = default_pod("pre", i)
        if i < pods * bound:
            pod["spec"]["nodeName"] = f"node-{i % nodes}"
        docs.append(json.dumps(pod))
    path.write_text("\n---\n".join(docs) + "\n")


async def _create(url: str, n: int) -> None:
    """``n`` pods, 16 at a time (run in a process of its own: its work is not the replica's)."""
    sem = asyncio.Semaphore(16)
    async with aiohttp.ClientSession() as session:

        async def one(i: int) -> None:
            async with sem, session.post(url + PODS, json=default_pod("burst", i)) as r:
                await r.read()

        await asyncio.gather(*(one(i) for i in range(n)))


async def measure(args: argparse.Namespace, url: str, kubeconfig: Path) -> None:
    cluster = KubeCluster(kubeconfig=str(kubeconfig))
    sched = Scheduler(load_config(None).profiles, cluster, SchedulerOptions(seed=1, gc_pacing=True))
    sched.set_leading(args.leader)
    await sched.start()
    gc.freeze()  # as kubesched run does once synced
    print(f"synced: {len(sched.cache.nodes)} nodes, {sched.cache.pod_count()} pods cached")
    tick = Ticker()
    ticker = asyncio.create_task(tick.run())
    loop_task = asyncio.create_task(sched.run(start=False)) if args.leader else None
    try:
        async with aiohttp.ClientSession() as session:
            for i in range(args.relists):
                await asyncio.sleep(1.0)
                tick.max = 0.0
                lists = cluster.informer_stats()["Pod"]["lists"]
                gone = {"faults": [{"kind": "gone", "verbs": ["watch"], "resources": ["pods"]}]}
                async with session.put(url + "/kubesched/faults", json=gone) as r:
                    r.raise_for_status()
                async with session.post(url + "/kubesched/faults/drop-watches") as r:
                    r.raise_for_status()
                t = time.monotonic()
                while cluster.informer_stats()["Pod"]["lists"] == lists:
                    await asyncio.sleep(0.01)
                async with session.delete(url + "/kubesched/faults") as r:
                    r.raise_for_status()
                await asyncio.sleep(2.0)  # the relist's deliveries
                print(
                    f"relist {i + 1}: listed after {time.monotonic() - t - 2:.2f} s; largest loop lag {tick.max * 1000:.0f} ms"
                )
        if args.burst:
            await asyncio.sleep(1.0)
            tick.max = 0.0
            t = time.monotonic()
            maker = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "benchmarks.loop_lag", "--create", str(args.burst), "--url", url
            )
            await maker.wait()
            while args.leader and sched.stats.scheduled < args.burst:
                await asyncio.sleep(0.2)
            await asyncio.sleep(3.0)  # the last watch events
            what = f"{sched.stats.scheduled} scheduled" if args.leader else "watched"
            print(
                f"burst of {args.burst}: {what} in {time.monotonic() - t - 3:.1f} s; largest loop lag {tick.max * 1000:.0f} ms"
            )
    finally:
        ticker.cancel()
        if loop_task is not None:
            await sched.stop()
            loop_task.cancel()
            await asyncio.gather(loop_task, return_exceptions=True)
        await cluster.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.loop_lag", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--nodes", type=int, default=2000)
    ap.add_argument("--pods", type=int, default=16000, help="pods in the cluster at the start")
    ap.add_argument("--bound", type=float, default=0.9, help="the share of them on nodes (the rest pending)")
    ap.add_argument("--relists", type=int, default=3)
    ap.add_argument("--burst", type=int, default=0)
    ap.add_argument("--leader", action="store_true", help="schedule the burst too")
    ap.add_argument("--create", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--url", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.create is not None:
        asyncio.run(_create(args.url, args.create))
        return 0
    with tempfile.TemporaryDirectory(prefix="kubesched-looplag-") as tmp:
        d = Path(tmp)
        _scenario(d / "scenario.yaml", args.nodes, args.pods, args.bound)
        log = d / "server.log"
        argv_ = ["sim", "serve", "--port", "0", "--address", "127.0.0.1", "--insecure"]
        argv_ += ["--scenario", str(d / "scenario.yaml"), "--kubeconfig-out", str(d / "kubeconfig")]
        with open(log, "w", encoding="utf-8") as out:
            server = subprocess.Popen([sys.executable, "-m", "kubesched", *argv_], stdout=out, stderr=subprocess.STDOUT)
        try:
            until = time.monotonic() + 300
            while "embedded API server on " not in log.read_text(encoding="utf-8"):
                if server.poll() is not None or time.monotonic() > until:
                    print(log.read_text(encoding="utf-8"), file=sys.stderr)
                    return 2
                time.sleep(0.2)
            url = log.read_text(encoding="utf-8").split("embedded API server on ", 1)[1].split()[0]
            asyncio.run(measure(args, url, d / "kubeconfig"))
        finally:
            server.terminate()
            server.wait(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
