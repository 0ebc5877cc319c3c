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
  killed leader bound in its last 10 s or whose event its log shows it was still retrying
  (events are written after the binding and die with the process, as kube-scheduler's would); the events are read once every bound pod's is there, or
  30 s after the last binding (a burst's last events trail its bindings);
* no false failure: no ``FailedScheduling`` event on a bound pod was recorded (``eventTime``,
  or a series' ``lastObservedTime``) at or after the moment the server committed its binding —
  once the pod is bound, nothing the scheduler decides may say that it failed (a bind that
  timed out or lost its answer but did happen, reported as a failure, is caught here);
* failover: after the kill the other replica took the lease (with ``--no-kill``: lease held,
  the leader never changed);
* health: every live replica's ``/healthz`` answered 200 within 1 s, each time it was asked
  (every half second, over HTTPS, by a prober process of its own), from its first answer to
  the end of the run;
* health in the burst: within 250 ms, from the first pod created until all were bound;
* health in a relist: within 250 ms (probed every 50 ms) while every replica relists all the
  pods, made to by answering each pod watch 410 until each replica met two;
* no traceback: no process's log holds a ``Traceback (most recent call last)``;
* standby memory: a third replica, kept standby on a lease the soak holds, watches
  ``--standby-cycles`` waves of ``--standby-pods`` pods created, bound by the leader and deleted;
  its RSS after the last wave stays within 2 KiB a pod a wave + 8 MiB of its RSS after the first
  (benchmarks/soak/standby.py);
* memory: no leak. The pods are deleted, a second wave of half as many is scheduled (no
  faults) and deleted: its peak RSS stays within the first wave's, and the RSS after deleting
  it within what the first deletion left (CPython keeps freed memory for reuse, so RSS does not
  fall back to the baseline; growth is what a leak shows).

With ``--gang`` the pods of the main wave are one gang (a PodGroup whose ``gang.minCount`` is
``--pods``; the server and the replicas run with ``GenericWorkload``): none can bind before the
last exists, then all of them bind in the group's cycle, while the lease and ``/healthz`` must
keep up as before.

    python -m benchmarks.soak --quick            # 500 nodes, 1000 pods
    python -m benchmarks.soak                    # 5000 nodes, 10000 pods
    python -m benchmarks.soak --faults none --json
    python -m benchmarks.soak --faults my-faults.yaml --seed 3
    python -m benchmarks.soak --gang --nodes 300 --pods 10000 --faults none --no-kill   # a gang of 10000

Exit status: 0 when every check passes, 1 when one fails, 2 when the run could not be set up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.soak.report import print_report, report_json
from benchmarks.soak.runner import Soak
from benchmarks.soak.settings import Settings, SetupError


def parser() -> argparse.ArgumentParser:
    """The parser of ``python -m benchmarks.soak``; its help is this module's docstring."""
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
    ap.add_argument("--standby-cycles", type=int, default=4, help="waves the standby watches (default 4; 0: none)")
    ap.add_argument("--standby-pods", type=int, help="pods a wave (default: --pods, at most 5000)")
    ap.add_argument(
        "--gang", action="store_true", help="the main wave's pods are one gang of --pods members (GenericWorkload)"
    )
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    return ap


def progress_bar() -> Any:
    """Two bars on stderr (pods created, pods bound), gone when the run ends."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("{task.description:>8}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )


def main(argv: list[str] | None = None) -> int:
    """Run one soak; 0 when every check passes, 1 when one fails, 2 when it could not be set up."""
    args = parser().parse_args(argv)
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
        standby_cycles=args.standby_cycles,
        standby_pods=args.standby_pods or min(args.pods or (1000 if args.quick else 10000), 5000),
        gang=args.gang,
    )
    if settings.nodes < 1 or settings.pods < 2 or settings.concurrency < 1:
        print("--nodes must be >= 1, --pods >= 2, --concurrency >= 1", file=sys.stderr)
        return 2
    bar = None if args.no_progress else progress_bar()
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
        print(json.dumps(report_json(report), indent=2))
    else:
        print_report(report)
    return 0 if report.ok else 1
