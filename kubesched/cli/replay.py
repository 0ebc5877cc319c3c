"""``kubesched replay``: replay a GPU trace with the FGD paper's protocol; the work is in kubesched.research."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kubesched.cli.progress import ProgressBar, wanted


def cmd_replay(args: argparse.Namespace) -> int:
    """Trace replay with the FGD paper's protocol; the work is in kubesched.research."""
    from kubesched.research import ReplayOptions, run_replay
    from kubesched.research.output import curve_csv, format_table, to_json
    from kubesched.research.plot import FULL, ZOOM, write_plot

    options = ReplayOptions(
        nodes=Path(args.nodes),
        pods=Path(args.pods),
        config=Path(args.config),
        seed=args.seed,
        inflate=args.inflate,
        churn=args.churn,
        all_nodes=args.all_nodes,
    )
    # The number of events is known only once the trace is read: the first update says it.
    with ProgressBar("replaying", show=wanted(args.no_progress)) as bar:
        result = run_replay(options, bar.callback)
        if args.plot:
            write_plot(
                Path(args.plot),
                {f"{options.config.stem}, seed {options.seed}": result.curve},
                window=ZOOM if args.zoom else FULL,
            )
    if args.csv:
        Path(args.csv).write_text(curve_csv(result.curve), encoding="utf-8")
    if args.output == "json":
        print(to_json(result))
    elif args.output == "csv":
        print(curve_csv(result.curve), end="")
    else:
        print(format_table(result), end="")
    return 0


def add_parser(sub: Any) -> None:
    rp = sub.add_parser(
        "replay",
        help="replay a GPU trace with the FGD paper's protocol: allocation and fragmentation against arrived load",
    )
    rp.add_argument(
        "--nodes", required=True, help="node list CSV (openb columns: sn, cpu_milli, memory_mib, gpu, model)"
    )
    rp.add_argument(
        "--pods",
        required=True,
        help="pod list CSV (openb columns: name, cpu_milli, memory_mib, num_gpu, gpu_milli, ...)",
    )
    rp.add_argument("--config", required=True, help="KubeSchedulerConfiguration file (e.g. config/gpushare/FGD.yaml)")
    rp.add_argument(
        "--seed", type=int, default=42, help="seed of the pod order, the sampling and the node order (default 42)"
    )
    rp.add_argument(
        "--inflate",
        type=float,
        default=None,
        help="pods arrive until their GPU demand is this many times the cluster's GPU capacity (default 1.3; "
        "0: the workload once)",
    )
    rp.add_argument("--churn", action="store_true", help="replay the trace's own creation and deletion times instead")
    rp.add_argument("--all-nodes", action="store_true", help="keep nodes without GPUs (default: GPU nodes only)")
    rp.add_argument("--output", choices=("table", "json", "csv"), default="table", help="what to print (default table)")
    rp.add_argument("--csv", metavar="FILE", help="also write the curve as CSV to FILE")
    rp.add_argument("--plot", metavar="FILE.svg|FILE.png", help="draw GPU allocation against arrived load into FILE")
    rp.add_argument(
        "--zoom",
        action="store_true",
        help="with --plot: show arrived 80..130 %% and allocation 80..100 %%, where policies part",
    )
    rp.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    rp.set_defaults(func=cmd_replay)
