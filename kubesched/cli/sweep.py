"""``kubesched sweep``: a grid of replays on local processes or a Dask cluster, written as CSV as it
goes; the work is in kubesched.research."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from kubesched.cli.common import fail
from kubesched.cli.progress import ProgressBar, wanted


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def cmd_sweep(args: argparse.Namespace) -> int:
    """A grid of replays on local processes or a Dask cluster; the work is in kubesched.research."""
    from kubesched.research.engines import engine_for
    from kubesched.research.gpushare import require
    from kubesched.research.grid_plot import grid_points, outcome_rows, require_svg, write_grid_plot
    from kubesched.research.sweep import ExperimentOutcome, SweepError, in_grid_order, iter_sweep, make_grid
    from kubesched.research.sweep_output import TABLES, GrowingTable, format_report

    grid = make_grid(
        Path(args.grid) if args.grid else None,
        args.nodes,
        args.pods or (),
        args.config or (),
        args.seeds,
        args.inflate or (),
    )
    plot = Path(args.plot) if args.plot else None
    if plot is not None:
        require_svg(plot)
        if len(grid.inflations) != 1:
            raise SweepError(f"--plot: draws one inflation ratio; this grid has {len(grid.inflations)}")
    files = grid.read_inputs()
    if args.address is None:
        require()  # the local workers replay with this environment's packages
    engine = engine_for(args.address, args.workers)
    experiments = grid.experiments()
    wanted_tables = {"allocation": args.output, "fragmentation": args.frag_output, "summary": args.summary}
    outputs = [(Path(path), GrowingTable(*TABLES[table])) for table, path in wanted_tables.items() if path]
    done: list[ExperimentOutcome] = []
    failed = 0

    def save() -> None:
        for path, table in outputs:
            _write_atomically(path, table.text(experiments))

    print(f"kubesched sweep: {len(experiments)} experiments on {engine.description}", file=sys.stderr)
    for note in engine.notes:
        print(f"kubesched sweep: note: {note}", file=sys.stderr)
    started = time.perf_counter()
    try:
        with ProgressBar("sweep", len(experiments), show=wanted(args.no_progress), failures=True) as bar:
            for outcome in iter_sweep(grid, engine, files):
                done.append(outcome)
                for _, table in outputs:
                    table.add(outcome)
                # every completed experiment is on disk at once: an interrupted sweep keeps them
                save()
                if not outcome.ok:
                    failed += 1
                    bar.print(f"FAILED {outcome.experiment.label}: {outcome.error}")
                    if outcome.detail:
                        bar.print(outcome.detail)
                bar.advance(failed=failed)
    except KeyboardInterrupt:
        save()
        return fail(f"interrupted: {len(done)} of {len(experiments)} experiments done, in {args.output}", 130)
    save()
    ordered = in_grid_order(done, experiments)
    if plot is not None:
        seeds = f"seed {grid.seeds[0]}" if len(grid.seeds) == 1 else f"mean of {len(grid.seeds)} seeds"
        title = f"{seeds}, arrived demand inflated to {grid.inflations[0]:g} x capacity"
        write_grid_plot(plot, grid_points(outcome_rows(ordered)), title)
    print(format_report(ordered, engine.description, time.perf_counter() - started), end="")
    if failed:
        return fail(
            f"{failed} of {len(experiments)} experiments failed (listed above); the others are in {args.output}", 1
        )
    return 0


def add_parser(sub: Any) -> None:
    sp = sub.add_parser(
        "sweep",
        help="replay a grid of workloads x configurations x seeds on local processes or a Dask cluster; one CSV",
        description="Each experiment is one `kubesched replay` (the FGD paper's protocol). Flags given replace the "
        "--grid file's fields.",
    )
    sp.add_argument("--grid", metavar="GRID.yaml", help="the grid as a file: nodes, workloads, configs, seeds, inflate")
    sp.add_argument("--nodes", metavar="NODES.csv", help="node list CSV (openb columns)")
    sp.add_argument(
        "--pods", action="append", metavar="PODS.csv", help="a workload: pod list CSV (repeat; its stem names it)"
    )
    sp.add_argument(
        "--config", action="append", metavar="X.yaml", help="a policy: configuration file (repeat; its stem names it)"
    )
    sp.add_argument("--seeds", metavar="42-51", help="seeds: 42, 42-51 or 42,45,50-52 (default 42)")
    sp.add_argument(
        "--inflate",
        type=float,
        action="append",
        metavar="RATIO",
        help="arrived GPU demand as a multiple of capacity (repeatable; default 1.3)",
    )
    sp.add_argument(
        "--output",
        required=True,
        metavar="FILE.csv",
        help="GPU allocation: workload, policy, tune, seed, total_gpus, 0..130",
    )
    sp.add_argument(
        "--frag-output", metavar="FILE.csv", help="also GPU fragmentation: workload, policy, tune, seed, 0..130"
    )
    sp.add_argument("--summary", metavar="FILE.csv", help="also one row per experiment: status, pods, seconds, error")
    sp.add_argument(
        "--plot",
        metavar="FILE.svg",
        help="also draw each workload's unallocated GPUs at arrived 100%% per policy (mean and range over the seeds)",
    )
    sp.add_argument(
        "--address",
        metavar="tcp://HOST:8786",
        help="run on the Dask cluster of this scheduler (needs pip install 'kubesched[distributed]')",
    )
    sp.add_argument("--workers", type=int, metavar="N", help="local processes (default: this machine's cores)")
    sp.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    sp.set_defaults(func=cmd_sweep)
