"""scheduler_perf-shaped benchmarks on the in-memory cluster.

Each workload creates its nodes, lets the scheduler place ``init_pods`` (not measured), then
creates ``measure_pods`` at once and measures until every one of them is bound:

* pods/s: measured pods divided by the time from their creation to the last bind;
* p50/p90/p99 of the scheduling-attempt latency (one scheduling cycle) of the measured pods;
* peak RSS of the process (each workload runs in a fresh process);
* the event loop's largest lag while the measured pods are scheduled: how long a bind, a watch
  event, a lease renewal or a health check could have waited for the scheduling loop;
* upstream's throughput floor for the workload (scheduler_perf's ``threshold``) and our pods/s
  divided by it; "-" where upstream sets none.

    python -m benchmarks.run                      # every workload but the slow ones, a table
    python -m benchmarks.run --all                # the slow ones too (15000 nodes: minutes)
    python -m benchmarks.run -w SchedulingBasic/5000Nodes_10000Pods --json
    python -m benchmarks.run --scaling            # SchedulingBasic at 500, 5000, 15000 nodes
    python -m benchmarks.run --compare            # per-node vs batch path, same placements checked
    python -m benchmarks.run --backend http -w SchedulingBasic/5000Nodes_10000Pods   # over HTTP
    python -m benchmarks.run --list
    python -m benchmarks.run --against main -w SchedulingBasic/5000Nodes_10000Pods   # paired: this checkout / main

With --against REV, REV (any git revision) is built in a folder and environment of its own, and
both sides run each workload in turn for --rounds rounds, the side that goes first alternating;
the report gives, per workload, this side's figures divided by REV's (CPU seconds per measured
pod, attempt p50 and p99, pods/s): the median over the rounds and the lowest and highest round.

The node and pod templates follow upstream's scheduler_perf defaults (node: 4 CPU, 32Gi, 110
pods; pod: 100m CPU, 500Mi memory). The default profile (every in-tree default plugin) is used.
"""

from __future__ import annotations

import argparse


def parser() -> argparse.ArgumentParser:
    """The parser of ``python -m benchmarks.run``; its help is this module's docstring."""
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.run", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "-w",
        "--workload",
        action="append",
        help="workload name (repeatable): one of --list, or another size of a case kubesched bench ships; "
        "default: all but the slow ones",
    )
    ap.add_argument("--all", action="store_true", help="every workload, the slow ones too")
    ap.add_argument(
        "--scaling",
        action="store_true",
        help="run SchedulingBasic at 500, 5000 and 15000 nodes and show how time per pod grows",
    )
    ap.add_argument(
        "--compare",
        action="store_true",
        help="run each workload twice in one process, node by node and in batches; check both placed every pod "
        "on the same node and print both speeds (exit 1 when a placement differs)",
    )
    ap.add_argument(
        "--backend",
        choices=("memory", "http"),
        default="memory",
        help="memory: the in-memory cluster; http: the embedded API server over HTTP, the scheduler in a "
        "process of its own (kubesched bench's runner)",
    )
    ap.add_argument(
        "--against",
        metavar="REV",
        help="pair this checkout against git revision REV (built in its own folder and venv), run by run",
    )
    ap.add_argument(
        "--rounds", type=int, default=5, metavar="N", help="with --against: rounds, each side once per round (5)"
    )
    ap.add_argument(
        "--same-env",
        action="store_true",
        help="with --against: run REV's tree in this environment instead of one of its own "
        "(quicker; fair only when the dependencies are the same)",
    )
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--list", action="store_true", help="list workloads")
    ap.add_argument("--no-uvloop", action="store_true", help="use the standard asyncio loop")
    ap.add_argument("--in-process", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--save", metavar="FILE", help="also write the JSON results to FILE")
    return ap


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """The options of ``argv`` (the command line when None); exits 2 on a malformed one."""
    return parser().parse_args(argv)
