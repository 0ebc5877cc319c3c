"""``kubesched compare``: one trace (or scenario), several configurations, their quality metrics side
by side; the work is in kubesched.research."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kubesched.cli.common import GATES_HELP, event_loop_runner
from kubesched.cli.progress import wanted
from kubesched.errors import ConfigurationError


def cmd_compare(args: argparse.Namespace) -> int:
    """Several configurations replayed on one trace, side by side (kubesched.research.compare)."""
    from kubesched.research import ReplayOptions
    from kubesched.research.compare import run_compare
    from kubesched.research.output import comparison_csv, comparison_json, format_comparison
    from kubesched.research.plot import FULL, ZOOM, write_plot

    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        raise ConfigurationError(f"--seeds: a comma-separated list of integers, not {args.seeds!r}") from None
    if args.scenario:
        return _compare_scenario(args, seeds)
    if args.feature_gates:
        raise ConfigurationError("--feature-gates is for --scenario: trace replays run kube-scheduler's default gates")
    if not (args.nodes and args.pods):
        raise ConfigurationError("compare needs a trace (--nodes and --pods) or a scenario (--scenario)")
    base = ReplayOptions(
        nodes=Path(args.nodes),
        pods=Path(args.pods),
        config=Path(args.config[0]),
        inflate=args.inflate,
        churn=args.churn,
        all_nodes=args.all_nodes,
    )
    # One line per replay rather than a bar: each replay is one step of unknown length.
    say = wanted(args.no_progress)

    def progress(name: str, seed: int) -> None:
        if say:
            print(f"replaying {name}, seed {seed}", file=sys.stderr)

    compared = run_compare(base, [Path(c) for c in args.config], seeds, progress)
    if args.plot:
        title = f"{base.pods.name}, seeds {args.seeds}"
        write_plot(Path(args.plot), {c.name: c.curve for c in compared}, title, ZOOM if args.zoom else FULL)
    if args.output == "json":
        print(comparison_json(compared))
    elif args.output == "csv":
        print(comparison_csv(compared), end="")
    else:
        print(format_comparison(compared), end="")
    return 0


def _compare_scenario(args: argparse.Namespace, seeds: list[int]) -> int:
    from kubesched.research.compare_scenario import compare_scenario
    from kubesched.research.output import (
        format_scenario_comparison,
        scenario_comparison_csv,
        scenario_comparison_json,
    )

    if args.nodes or args.pods or args.churn or args.inflate is not None or args.all_nodes or args.plot:
        raise ConfigurationError(
            "--scenario compares on a scenario: --nodes, --pods, --churn, --inflate, --all-nodes and --plot are for traces"
        )
    from kubesched.config.feature_gates import parse_feature_gates

    gates = parse_feature_gates(args.feature_gates)
    compared = event_loop_runner()(compare_scenario(Path(args.scenario), [Path(c) for c in args.config], seeds, gates))
    if args.output == "json":
        print(scenario_comparison_json(args.scenario, compared))
    elif args.output == "csv":
        print(scenario_comparison_csv(compared), end="")
    else:
        print(format_scenario_comparison(args.scenario, compared), end="")
    return 0


def add_parser(sub: Any) -> None:
    cp = sub.add_parser(
        "compare",
        help="one trace (or scenario), several configurations: their quality metrics side by side",
    )
    cp.add_argument("--nodes", help="node list CSV (openb columns)")
    cp.add_argument("--pods", help="pod list CSV (openb columns)")
    cp.add_argument("--scenario", help="or a simulate scenario (YAML): each configuration runs it once per seed")
    cp.add_argument(
        "--config", required=True, action="append", help="a KubeSchedulerConfiguration file (repeat: one per profile)"
    )
    cp.add_argument("--seeds", default="42", metavar="42,43,...", help="seeds to average over (default 42)")
    cp.add_argument("--inflate", type=float, default=None, help="as for replay (default 1.3)")
    cp.add_argument("--churn", action="store_true", help="replay the trace's own creation and deletion times")
    cp.add_argument("--all-nodes", action="store_true", help="keep nodes without GPUs")
    cp.add_argument("--output", choices=("table", "json", "csv"), default="table")
    cp.add_argument("--plot", metavar="FILE.svg|FILE.png", help="draw each configuration's mean allocation curve")
    cp.add_argument(
        "--zoom",
        action="store_true",
        help="with --plot: show arrived 80..130 %% and allocation 80..100 %%, where policies part",
    )
    cp.add_argument("--no-progress", action="store_true", help="say nothing while replaying")
    cp.add_argument(
        "--feature-gates",
        metavar="A=true,B=false",
        help="with --scenario: " + GATES_HELP + " (e.g. GenericWorkload=true)",
    )
    cp.set_defaults(func=cmd_compare)
