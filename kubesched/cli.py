"""``kubesched`` command line: ``simulate``, ``plugins``, ``config validate|print``."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kubesched import __version__

DATA_DIR = Path(__file__).resolve().parent / "data"
DEFAULT_CONFIG = "kubesched.yaml"
DEFAULT_SCENARIO = os.path.join("scenarios", "demo.yaml")


def _default_path(relative: str) -> Path:
    """``config/<relative>`` of the working directory if present, else the copy shipped inside the package."""
    local = Path("config") / relative
    if local.is_file():
        return local
    return DATA_DIR / relative


def _event_loop_runner() -> Any:
    try:
        import uvloop

        return uvloop.run
    except ImportError:  # pragma: no cover - uvloop is a dependency where it builds
        return asyncio.run


def _fail(message: str, code: int = 2) -> int:
    print(f"kubesched: {message}", file=sys.stderr)
    return code


# --- simulate -------------------------------------------------------------------------------------


def cmd_simulate(args: argparse.Namespace) -> int:
    from kubesched.config import ConfigError, load_config
    from kubesched.framework.registry import RegistryError
    from kubesched.sim.scenario import ScenarioError, load_scenario
    from kubesched.sim.simulate import SimulationSettings, format_table, simulate

    config_path = Path(args.config) if args.config else _default_path(DEFAULT_CONFIG)
    scenario_path = Path(args.scenario) if args.scenario else _default_path(DEFAULT_SCENARIO)
    try:
        cfg = load_config(config_path)
        scenario = load_scenario(scenario_path)
    except (ConfigError, ScenarioError, RegistryError) as exc:
        return _fail(str(exc))
    model = cfg.model
    settings = SimulationSettings(
        parallelism=model.parallelism,
        percentage_of_nodes_to_score=model.percentageOfNodesToScore,
        pod_initial_backoff=float(model.podInitialBackoffSeconds),
        pod_max_backoff=float(model.podMaxBackoffSeconds),
        seed=args.seed,
    )
    show_progress = not args.no_progress and sys.stderr.isatty() and len(scenario.pending_pods) >= 50
    progress_cb = None
    bar: Any = None
    if show_progress:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(
            TextColumn("scheduling"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=True,
            console=None,
        )
        task = bar.add_task("pods", total=len(scenario.pending_pods))

        def progress_cb(done: int, total: int) -> None:
            bar.update(task, completed=done)

        bar.start()
    try:
        result = _event_loop_runner()(simulate(cfg.profiles, scenario, settings, progress_cb))
    finally:
        if bar is not None:
            bar.stop()
    if args.output == "json":
        json.dump(result.to_json(), sys.stdout, indent=2, sort_keys=False)
        sys.stdout.write("\n")
    else:
        width = None
        try:
            width = os.get_terminal_size().columns
        except OSError:
            pass
        sys.stdout.write(format_table(result, width))
    return 0


# --- plugins --------------------------------------------------------------------------------------


def cmd_plugins(args: argparse.Namespace) -> int:
    from kubesched.framework.registry import RegistryError, default_registry

    try:
        entries = default_registry().entries()
    except RegistryError as exc:
        return _fail(str(exc))
    rows: list[dict[str, Any]] = [
        {
            "name": e.name,
            "extensionPoints": list(e.extension_points),
            "distribution": e.distribution,
            "class": f"{e.cls.__module__}:{e.cls.__qualname__}",
        }
        for e in entries
    ]
    if args.output == "json":
        json.dump(rows, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Plugins (entry-point group kubesched.plugins)")
    table.add_column("name")
    table.add_column("extension points", overflow="fold")
    table.add_column("distribution")
    for r in rows:
        table.add_row(r["name"], ", ".join(r["extensionPoints"]), r["distribution"])
    Console(color_system=None, width=140).print(table)
    return 0


# --- config ---------------------------------------------------------------------------------------


def cmd_config(args: argparse.Namespace) -> int:
    from kubesched.config import ConfigError, format_config_yaml, load_config
    from kubesched.framework.registry import RegistryError

    path = args.file
    try:
        cfg = load_config(path)
    except (ConfigError, RegistryError) as exc:
        print(str(exc), file=sys.stderr)
        return 1
    if args.config_command == "validate":
        names = ", ".join(p.scheduler_name for p in cfg.profiles)
        print(f"{path}: valid ({len(cfg.profiles)} profile(s): {names})")
        return 0
    sys.stdout.write(format_config_yaml(cfg))
    return 0


# --- entry point ----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kubesched", description="The Kubernetes scheduling framework on asyncio.")
    parser.add_argument("--version", action="version", version=f"kubesched {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    sim = sub.add_parser("simulate", help="schedule a scenario on an in-memory cluster and report the results")
    sim.add_argument("--config", help="KubeSchedulerConfiguration file (default: config/kubesched.yaml)")
    sim.add_argument("--scenario", help="scenario YAML of Nodes, Pods, ... (default: config/scenarios/demo.yaml)")
    sim.add_argument("--output", choices=("table", "json"), default="table")
    sim.add_argument("--seed", type=int, default=0, help="seed for tie-breaking between equal nodes (default 0)")
    sim.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    sim.set_defaults(func=cmd_simulate)

    plugins = sub.add_parser("plugins", help="list the plugins found through entry points")
    plugins.add_argument("--output", choices=("table", "json"), default="table")
    plugins.set_defaults(func=cmd_plugins)

    config = sub.add_parser("config", help="validate or print a configuration")
    csub = config.add_subparsers(dest="config_command", required=True)
    v = csub.add_parser("validate", help="check a KubeSchedulerConfiguration; exit 1 with field paths if wrong")
    v.add_argument("file")
    v.set_defaults(func=cmd_config)
    p = csub.add_parser("print", help="print the effective configuration (defaults applied, plugins merged)")
    p.add_argument("file", nargs="?", default=None)
    p.set_defaults(func=cmd_config)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:
        # The reader went away (`kubesched plugins | head`): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
