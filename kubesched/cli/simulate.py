"""``kubesched simulate``: schedule a scenario on an in-memory cluster and report the results."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubesched.cli.common import (
    DEFAULT_CONFIG,
    DEFAULT_SCENARIO,
    GATES_HELP,
    PLUGIN_HELP,
    default_path,
    event_loop_runner,
    register_local_plugins,
)
from kubesched.cli.progress import ProgressBar, wanted
from kubesched.errors import ConfigurationError

#: Fewer pending pods than this finish before a bar would be worth drawing.
_BAR_FROM_PODS = 50


def cmd_simulate(args: argparse.Namespace) -> int:
    """Load the configuration and the scenario, schedule its pods, print the table (or JSON); 0 when it ran."""
    from kubesched.config import load_config
    from kubesched.config.feature_gates import parse_feature_gates
    from kubesched.extender import ExtenderError, HTTPExtender
    from kubesched.sim.run.report import format_table, only_pods
    from kubesched.sim.run.simulate import SimulationSettings, simulate
    from kubesched.sim.scenario.reading import load_scenario
    from kubesched.sim.scenario.steps import TimelineError, seconds

    try:
        until = None if args.until is None else seconds(args.until, "--until")
    except TimelineError as exc:
        raise ConfigurationError(str(exc)) from None
    config_path = Path(args.config) if args.config else default_path(DEFAULT_CONFIG)
    scenario_path = Path(args.scenario) if args.scenario else default_path(DEFAULT_SCENARIO)
    register_local_plugins(args)
    gates = parse_feature_gates(args.feature_gates)
    cfg = load_config(config_path, feature_gates=gates)
    scenario = load_scenario(scenario_path, gates)
    for warning in scenario.warnings:
        print(f"kubesched: warning: {warning}", file=sys.stderr)
    note = ignored_groups_note(scenario, gates)
    if note:
        print(f"kubesched: note: {note}", file=sys.stderr)
    model = cfg.model
    settings = SimulationSettings(
        parallelism=model.parallelism,
        percentage_of_nodes_to_score=model.percentageOfNodesToScore,
        pod_initial_backoff=float(model.podInitialBackoffSeconds),
        pod_max_backoff=float(model.podMaxBackoffSeconds),
        seed=args.seed,
        # The table shows outcomes only; the per-node plugin maps are for --output json.
        plugin_results=args.output == "json" and not args.outcomes_only,
        feature_gates=gates,
        until=until,
        pod_termination=args.pod_termination,
    )
    extender_specs = list(model.extenders or [])
    try:
        for spec in extender_specs:
            HTTPExtender(spec)  # refuse a broken tlsConfig before anything runs
    except ExtenderError as exc:
        # Reworded, not reported: the error names the extender, this says where it is configured.
        raise ConfigurationError(f"extenders: {exc}") from exc

    async def run_simulation(
        progress: Callable[[int, int], None] | None, clock_progress: Callable[[float, float], None] | None
    ) -> Any:
        extenders = [HTTPExtender(spec) for spec in extender_specs]
        try:
            return await simulate(cfg.profiles, scenario, settings, progress, extenders, clock_progress)
        finally:
            for ext in extenders:
                await ext.close()

    if timed(scenario):
        # A scenario in time: the bar follows simulated seconds up to the horizon.
        with ProgressBar("simulated seconds", None, show=wanted(args.no_progress)) as bar:
            clock_bar = (lambda now, horizon: bar.update(int(now), max(1, int(horizon)))) if bar.shown else None
            result = event_loop_runner()(run_simulation(None, clock_bar))
    else:
        show = wanted(args.no_progress) and len(scenario.pending_pods) >= _BAR_FROM_PODS
        with ProgressBar("scheduling", len(scenario.pending_pods), show=show) as bar:
            result = event_loop_runner()(run_simulation(bar.callback, None))
    for problem in result.summary.get("stepProblems") or ():
        print(
            f"kubesched: note: step {problem['step']} at {problem['at']:g}s: {problem['action']} {problem['object']} "
            f"refused: {problem['reason']}",
            file=sys.stderr,
        )
    if result.summary.get("stopped"):
        print(f"kubesched: note: {result.summary['stopped']}", file=sys.stderr)
    if args.only:
        result.pods = only_pods(result.pods, args.only)
    if args.output == "json":
        # Per-node results grow with pods x nodes: indent small reports for reading, keep big ones compact.
        indent = 2 if len(result.pods) * max(1, len(result.nodes)) <= 100_000 else None
        json.dump(result.to_json(), sys.stdout, indent=indent, separators=None if indent else (",", ":"))
        sys.stdout.write("\n")
    else:
        width = None
        try:
            width = os.get_terminal_size().columns
        except OSError:
            pass
        sys.stdout.write(format_table(result, width))
    return 0


def timed(scenario: Any) -> bool:
    """Whether the scenario has time in it: steps, or a lifetime on a pod or a pod template."""
    from kubesched.sim.scenario.steps import LIFETIME

    def lives(obj: dict[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        template = ((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}
        return LIFETIME in (meta.get("annotations") or {}) or LIFETIME in (template.get("annotations") or {})

    return bool(scenario.steps) or any(lives(o) for o in [*scenario.pods, *scenario.others])


def ignored_groups_note(scenario: Any, gates: Any) -> str | None:
    """What to say when the scenario has PodGroups that the scheduler will not act on because
    GenericWorkload is off (kube-scheduler 1.37's default); ``None`` otherwise."""
    groups = sum(1 for obj in scenario.others if obj.get("kind") == "PodGroup")
    if not groups or gates.enabled("GenericWorkload"):
        return None
    return (
        f"the scenario has {groups} PodGroup(s) but the feature gate GenericWorkload is off: the groups are "
        "ignored and their pods scheduled one by one (run with --feature-gates GenericWorkload=true)"
    )


def add_parser(sub: Any) -> None:
    sim = sub.add_parser("simulate", help="schedule a scenario on an in-memory cluster and report the results")
    sim.add_argument("--config", help="KubeSchedulerConfiguration file (default: config/kubesched.yaml)")
    sim.add_argument("--scenario", help="scenario YAML of Nodes, Pods, ... (default: config/scenarios/demo.yaml)")
    sim.add_argument("--output", choices=("table", "json"), default="table")
    sim.add_argument("--seed", type=int, default=0, help="seed for tie-breaking between equal nodes (default 0)")
    sim.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    sim.add_argument(
        "--until",
        metavar="DURATION",
        help="time horizon of a scenario in time (90s, 10m): no step or pod end after it is run. Default: the "
        "last step plus every finite lifetime in turn plus one round of the longest lifetime of a workload that "
        "recreates its pods; the report says where and why it stopped",
    )
    sim.add_argument(
        "--pod-termination",
        choices=("immediate", "graceful"),
        default="immediate",
        help="how a deleted pod on a node ends: immediate (default; removed at once, as if its kubelet stopped it that moment) "
        "or graceful (Terminating for its grace period of simulated time, holding its node, as on a cluster with kubelets)",
    )
    sim.add_argument("--feature-gates", metavar="A=true,B=false", help=GATES_HELP)
    sim.add_argument("--plugin", action="append", metavar="MODULE:CLASS", help=PLUGIN_HELP)
    sim.add_argument(
        "--outcomes-only",
        action="store_true",
        help="with --output json: leave out the per-node plugin results (filter/score maps), which grow with "
        "pods x nodes",
    )
    sim.add_argument(
        "--only",
        choices=("unschedulable", "scheduled", "errors"),
        help="list only these pods (the summary still counts them all)",
    )
    sim.set_defaults(func=cmd_simulate)
