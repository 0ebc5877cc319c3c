"""``kubesched`` command line: ``simulate``, ``replay``, ``compare``, ``sweep``, ``plugins``, ``config validate|print``."""

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


_PLUGIN_HELP = (
    "load a plugin without packaging it: module:Class, or path/to/file.py:Class (repeatable); "
    "a profile then names it by its class's `name`"
)


def _local_plugins(args: argparse.Namespace) -> str | None:
    """Register ``--plugin`` classes; an error message, or None."""
    from kubesched.runtime.local_plugins import register_local_plugins
    from kubesched.runtime.registry import RegistryError

    try:
        register_local_plugins(getattr(args, "plugin", None))
    except RegistryError as exc:
        return str(exc)
    return None


def _fail(message: str, code: int = 2) -> int:
    print(f"kubesched: {message}", file=sys.stderr)
    return code


# --- simulate -------------------------------------------------------------------------------------


def cmd_simulate(args: argparse.Namespace) -> int:
    from kubesched.config import ConfigError, load_config
    from kubesched.config.feature_gates import FeatureGateError, parse_feature_gates
    from kubesched.runtime.registry import RegistryError
    from kubesched.sim.run.simulate import SimulationSettings, format_table, only_pods, simulate
    from kubesched.sim.scenario.reading import ScenarioError, load_scenario

    config_path = Path(args.config) if args.config else _default_path(DEFAULT_CONFIG)
    scenario_path = Path(args.scenario) if args.scenario else _default_path(DEFAULT_SCENARIO)
    if (problem := _local_plugins(args)) is not None:
        return _fail(problem)
    try:
        cfg = load_config(config_path)
        scenario = load_scenario(scenario_path)
    except (ConfigError, ScenarioError, RegistryError) as exc:
        return _fail(str(exc))
    for warning in scenario.warnings:
        print(f"kubesched: warning: {warning}", file=sys.stderr)
    try:
        gates = parse_feature_gates(args.feature_gates)
    except FeatureGateError as exc:
        return _fail(str(exc))
    model = cfg.model
    settings = SimulationSettings(
        parallelism=model.parallelism,
        percentage_of_nodes_to_score=model.percentageOfNodesToScore,
        pod_initial_backoff=float(model.podInitialBackoffSeconds),
        pod_max_backoff=float(model.podMaxBackoffSeconds),
        seed=args.seed,
        # The table shows outcomes only; the per-node plugin maps are for --output json.
        plugin_results=args.output == "json" and not args.outcomes_only,
        opportunistic_batching=gates["OpportunisticBatching"],
        async_preemption=gates["SchedulerAsyncPreemption"],
    )
    show_progress = not args.no_progress and sys.stderr.isatty() and len(scenario.pending_pods) >= 50
    progress_cb = None
    bar: Any = None
    if show_progress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(
            TextColumn("scheduling"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=True,
            # On stderr, so that `simulate --output json > out.json` still shows it.
            console=Console(stderr=True),
        )
        task = bar.add_task("pods", total=len(scenario.pending_pods))

        def progress_cb(done: int, total: int) -> None:
            bar.update(task, completed=done)

        bar.start()
    from kubesched.extender import ExtenderError, HTTPExtender

    try:
        extender_specs = list(model.extenders or [])
        for spec in extender_specs:
            HTTPExtender(spec)  # refuse a broken tlsConfig before anything runs
    except ExtenderError as exc:
        return _fail(f"extenders: {exc}")

    async def run_simulation() -> Any:
        extenders = [HTTPExtender(spec) for spec in extender_specs]
        try:
            return await simulate(cfg.profiles, scenario, settings, progress_cb, extenders)
        finally:
            for ext in extenders:
                await ext.close()

    try:
        result = _event_loop_runner()(run_simulation())
    finally:
        if bar is not None:
            bar.stop()
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


# --- plugins --------------------------------------------------------------------------------------


def cmd_plugins(args: argparse.Namespace) -> int:
    from kubesched.runtime.registry import RegistryError, default_registry

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
    from kubesched.runtime.registry import RegistryError

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


def cmd_config_migrate_policy(args: argparse.Namespace) -> int:
    """``config migrate-policy``: a legacy Policy file → a v1 configuration (YAML), warnings on stderr."""
    import yaml

    from kubesched.config.policy import PolicyError, migrate_policy

    try:
        with open(args.file, encoding="utf-8") as fh:
            policy = yaml.safe_load(fh)  # JSON, as Policy files usually are, is YAML too
        config, warnings = migrate_policy(policy)
    except OSError as exc:
        print(f"kubesched: {args.file}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except yaml.YAMLError as exc:
        print(f"kubesched: {args.file}: not valid JSON or YAML: {exc}", file=sys.stderr)
        return 1
    except PolicyError as exc:
        print(f"kubesched: {args.file}: not a scheduler Policy: {exc}", file=sys.stderr)
        return 1
    text = yaml.safe_dump(config, sort_keys=False, default_flow_style=False, allow_unicode=True)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            print(f"kubesched: {args.output}: cannot write: {exc.strerror or exc}", file=sys.stderr)
            return 1
    else:
        sys.stdout.write(text)
    return 0


# --- run ------------------------------------------------------------------------------------------


def _setup_logging(verbosity: int) -> None:
    import logging

    level = logging.WARNING if verbosity < 0 else logging.INFO if verbosity == 0 else logging.DEBUG
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def cmd_run(args: argparse.Namespace) -> int:
    from kubesched.config import ConfigError, load_config
    from kubesched.config.feature_gates import FeatureGateError, parse_feature_gates
    from kubesched.runtime.registry import RegistryError
    from kubesched.server.app import RunOptions, run

    if (problem := _local_plugins(args)) is not None:
        return _fail(problem)
    try:
        cfg = load_config(args.config)
        gates = parse_feature_gates(args.feature_gates)
    except (ConfigError, RegistryError, FeatureGateError) as exc:
        return _fail(str(exc))
    from kubesched.server import flags as kflags
    from kubesched.server.serving import DelegationOptions, ServingError, ServingOptions

    problems = kflags.apply_leader_election(cfg.model, args)
    if problems:
        return _fail("; ".join(problems))
    _setup_logging(kflags.verbosity(args))
    kflags.warn_ignored(args)
    if args.write_config_to:
        from kubesched.config import format_config_yaml

        try:
            Path(args.write_config_to).write_text(format_config_yaml(cfg))
        except OSError as exc:
            return _fail(f"--write-config-to: {args.write_config_to}: cannot write: {exc.strerror or exc}")
        return 0
    opts = RunOptions(
        kubeconfig=args.kubeconfig,
        context=args.context,
        serving=ServingOptions(
            bind_address=args.bind_address,
            # Upstream's meaning of 0 for both: not served.
            secure_port=args.secure_port or None,
            port=args.port or None,
            tls_cert_file=args.tls_cert_file,
            tls_private_key_file=args.tls_private_key_file,
            delegation=DelegationOptions(
                token_cache_ttl=args.authentication_token_webhook_cache_ttl,
                allow_cache_ttl=args.authorization_webhook_cache_authorized_ttl,
                deny_cache_ttl=args.authorization_webhook_cache_unauthorized_ttl,
                always_allow_paths=tuple(
                    p.strip() for p in args.authorization_always_allow_paths.split(",") if p.strip()
                ),
            ),
        ),
        record_results=args.record_results,
        identity=args.identity,
        feature_gates=gates,
    )
    from kubesched.cluster.base import ClusterError
    from kubesched.extender import ExtenderError

    try:
        return int(_event_loop_runner()(run(cfg, opts)))
    except (ClusterError, ExtenderError, ServingError) as exc:
        return _fail(str(exc), 1)


def _duration_flag(text: str) -> float:
    """argparse type of a non-negative Go duration (``10s``, ``1m``)."""
    from kubesched.config.models import parse_go_duration

    try:
        seconds = parse_go_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return seconds


# --- sim serve ------------------------------------------------------------------------------------


def _is_loopback(address: str) -> bool:
    import ipaddress

    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def cmd_sim_serve(args: argparse.Namespace) -> int:
    from kubesched.config import ConfigError, load_config
    from kubesched.config.feature_gates import FeatureGateError, parse_feature_gates
    from kubesched.runtime.registry import RegistryError
    from kubesched.sim.apiserver.authn import TokenFileError, read_token_file
    from kubesched.sim.scenario.reading import ScenarioError, load_scenario

    cfg = None
    users = {}
    if args.token is not None and not args.token.strip():
        return _fail("--token: must not be empty")
    if args.insecure:
        if not _is_loopback(args.address):
            return _fail(
                f"--insecure: serves without authentication, so only on a loopback address, not {args.address}"
            )
        if args.token or args.token_auth_file:
            return _fail("--insecure: asks for no token; drop --token and --token-auth-file")
    if (problem := _local_plugins(args)) is not None:
        return _fail(problem)
    try:
        scenario = load_scenario(args.scenario) if args.scenario else None
        for warning in scenario.warnings if scenario is not None else ():
            print(f"kubesched: warning: {warning}", file=sys.stderr)
        if args.with_scheduler:
            cfg = load_config(args.config) if args.config else load_config(None)
        if args.token_auth_file:
            users = read_token_file(args.token_auth_file)
        args.gates = parse_feature_gates(args.feature_gates)
    except (ConfigError, ScenarioError, RegistryError, TokenFileError, FeatureGateError) as exc:
        return _fail(str(exc))
    if args.faults:
        from kubesched.sim.apiserver.faults import FaultConfigError
        from kubesched.sim.apiserver.faults import load_config as load_faults

        try:
            args.fault_config = load_faults(args.faults)
        except FaultConfigError as exc:
            return _fail(f"--faults {exc}")
    _setup_logging(args.v)
    from kubesched.sim.serve import sim_serve

    return int(_event_loop_runner()(sim_serve(args, scenario, cfg, users)))


# --- entry point ----------------------------------------------------------------------------------


_GATES_HELP = (
    "kube-scheduler's feature gates; kubesched acts on OpportunisticBatching (default false) and "
    "accepts the others with a warning"
)


# --- replay ---------------------------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    """Trace replay with the FGD paper's protocol; the work is in kubesched.research."""
    from kubesched.research import ReplayError, ReplayOptions, run_replay
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
    bar: Any = None
    progress_cb = None
    if not args.no_progress and sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(
            TextColumn("replaying"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=True,
            console=Console(stderr=True),
        )
        task = bar.add_task("pods", total=None)

        def progress_cb(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        bar.start()
    try:
        result = run_replay(options, progress_cb)
        if args.plot:
            write_plot(
                Path(args.plot),
                {f"{options.config.stem}, seed {options.seed}": result.curve},
                window=ZOOM if args.zoom else FULL,
            )
    except ReplayError as exc:
        return _fail(str(exc))
    finally:
        if bar is not None:
            bar.stop()
    if args.csv:
        Path(args.csv).write_text(curve_csv(result.curve), encoding="utf-8")
    if args.output == "json":
        print(to_json(result))
    elif args.output == "csv":
        print(curve_csv(result.curve), end="")
    else:
        print(format_table(result), end="")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """Several configurations replayed on one trace, side by side (kubesched.research.compare)."""
    from kubesched.research import ReplayError, ReplayOptions
    from kubesched.research.compare import run_compare
    from kubesched.research.output import comparison_csv, comparison_json, format_comparison
    from kubesched.research.plot import FULL, ZOOM, write_plot

    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        return _fail(f"--seeds: a comma-separated list of integers, not {args.seeds!r}")
    if args.scenario:
        return _compare_scenario(args, seeds)
    if not (args.nodes and args.pods):
        return _fail("compare needs a trace (--nodes and --pods) or a scenario (--scenario)")
    base = ReplayOptions(
        nodes=Path(args.nodes),
        pods=Path(args.pods),
        config=Path(args.config[0]),
        inflate=args.inflate,
        churn=args.churn,
        all_nodes=args.all_nodes,
    )

    def progress(name: str, seed: int) -> None:
        if not args.no_progress and sys.stderr.isatty():
            print(f"replaying {name}, seed {seed}", file=sys.stderr)

    try:
        compared = run_compare(base, [Path(c) for c in args.config], seeds, progress)
        if args.plot:
            title = f"{base.pods.name}, seeds {args.seeds}"
            write_plot(Path(args.plot), {c.name: c.curve for c in compared}, title, ZOOM if args.zoom else FULL)
    except ReplayError as exc:
        return _fail(str(exc))
    if args.output == "json":
        print(comparison_json(compared))
    elif args.output == "csv":
        print(comparison_csv(compared), end="")
    else:
        print(format_comparison(compared), end="")
    return 0


def _compare_scenario(args: argparse.Namespace, seeds: list[int]) -> int:
    from kubesched.research import ReplayError
    from kubesched.research.compare_scenario import compare_scenario
    from kubesched.research.output import (
        format_scenario_comparison,
        scenario_comparison_csv,
        scenario_comparison_json,
    )

    if args.nodes or args.pods or args.churn or args.inflate is not None or args.all_nodes or args.plot:
        return _fail(
            "--scenario compares on a scenario: --nodes, --pods, --churn, --inflate, --all-nodes and --plot are for traces"
        )
    try:
        compared = _event_loop_runner()(compare_scenario(Path(args.scenario), [Path(c) for c in args.config], seeds))
    except ReplayError as exc:
        return _fail(str(exc))
    if args.output == "json":
        print(scenario_comparison_json(args.scenario, compared))
    elif args.output == "csv":
        print(scenario_comparison_csv(compared), end="")
    else:
        print(format_scenario_comparison(args.scenario, compared), end="")
    return 0


def _add_replay_parser(sub: Any) -> None:
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
    cp.set_defaults(func=cmd_compare)


# --- sweep ----------------------------------------------------------------------------------------


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.partial")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def cmd_sweep(args: argparse.Namespace) -> int:
    """A grid of replays on local processes or a Dask cluster; the work is in kubesched.research."""
    import time

    from kubesched.research import ReplayError
    from kubesched.research.engines import EngineError, engine_for
    from kubesched.research.gpushare import require
    from kubesched.research.sweep import ExperimentOutcome, SweepError, in_grid_order, iter_sweep, make_grid
    from kubesched.research.sweep_output import allocation_csv, format_report, fragmentation_csv, summary_csv

    try:
        grid = make_grid(
            Path(args.grid) if args.grid else None,
            args.nodes,
            args.pods or (),
            args.config or (),
            args.seeds,
            args.inflate or (),
        )
        files = grid.read_inputs()
        if args.address is None:
            require()  # the local workers replay with this environment's packages
        engine = engine_for(args.address, args.workers)
    except (SweepError, EngineError, ReplayError) as exc:
        return _fail(str(exc))
    experiments = grid.experiments()
    outputs = [(Path(args.output), allocation_csv)]
    if args.frag_output:
        outputs.append((Path(args.frag_output), fragmentation_csv))
    if args.summary:
        outputs.append((Path(args.summary), summary_csv))
    done: list[ExperimentOutcome] = []

    def save() -> None:
        ordered = in_grid_order(done, experiments)
        for path, render in outputs:
            _write_atomically(path, render(ordered))

    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    err = Console(stderr=True)
    print(f"kubesched sweep: {len(experiments)} experiments on {engine.description}", file=sys.stderr)
    bar = Progress(
        TextColumn("sweep"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        transient=True,
        console=err,
        disable=args.no_progress or not sys.stderr.isatty(),
    )
    task = bar.add_task("experiments", total=len(experiments), failed=0)
    started = time.perf_counter()
    try:
        with bar:
            for outcome in iter_sweep(grid, engine, files):
                done.append(outcome)
                # every completed experiment is on disk at once: an interrupted sweep keeps them
                save()
                if not outcome.ok:
                    bar.console.print(f"FAILED {outcome.experiment.label}: {outcome.error}", markup=False)
                    if outcome.detail:
                        bar.console.print(outcome.detail, markup=False)
                bar.update(task, advance=1, failed=sum(1 for o in done if not o.ok))
    except KeyboardInterrupt:
        save()
        return _fail(f"interrupted: {len(done)} of {len(experiments)} experiments done, in {args.output}", 130)
    except (SweepError, EngineError, ReplayError) as exc:
        return _fail(str(exc))
    save()
    ordered = in_grid_order(done, experiments)
    print(format_report(ordered, engine.description, time.perf_counter() - started), end="")
    failed = sum(1 for o in done if not o.ok)
    if failed:
        return _fail(
            f"{failed} of {len(experiments)} experiments failed (listed above); the others are in {args.output}", 1
        )
    return 0


def _add_sweep_parser(sub: Any) -> None:
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
        "--address",
        metavar="tcp://HOST:8786",
        help="run on the Dask cluster of this scheduler (needs pip install 'kubesched[distributed]')",
    )
    sp.add_argument("--workers", type=int, metavar="N", help="local processes (default: this machine's cores)")
    sp.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    sp.set_defaults(func=cmd_sweep)


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
    sim.add_argument("--feature-gates", metavar="A=true,B=false", help=_GATES_HELP)
    sim.add_argument("--plugin", action="append", metavar="MODULE:CLASS", help=_PLUGIN_HELP)
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
    _add_replay_parser(sub)
    _add_sweep_parser(sub)

    run_p = sub.add_parser("run", help="schedule pods in a cluster (kubeconfig or in-cluster)")
    run_p.add_argument("--config", required=True, help="KubeSchedulerConfiguration file")
    run_p.add_argument(
        "--kubeconfig", help="kubeconfig (default: clientConnection.kubeconfig, $KUBECONFIG, in-cluster)"
    )
    run_p.add_argument("--context", help="kubeconfig context")
    run_p.add_argument(
        "--bind-address", default="0.0.0.0", help="address of the secure (and insecure) port (default 0.0.0.0)"
    )
    serving = run_p.add_argument_group(
        "secure serving",
        "/healthz, /readyz, /livez and /metrics over HTTPS, as kube-scheduler serves them: bearer tokens checked "
        "by TokenReview, requests authorized by SubjectAccessReview against the cluster",
    )
    serving.add_argument(
        "--secure-port", type=int, default=10259, help="HTTPS port (default 10259; 0: no HTTPS at all)"
    )
    serving.add_argument(
        "--tls-cert-file",
        help="serving certificate (PEM, may include intermediates); default: a self-signed one made in memory at "
        "start for localhost and 127.0.0.1",
    )
    serving.add_argument("--tls-private-key-file", help="the key of --tls-cert-file (PEM)")
    serving.add_argument(
        "--authentication-token-webhook-cache-ttl",
        type=_duration_flag,
        default=10.0,
        metavar="DURATION",
        help="how long TokenReview answers are cached (default 10s)",
    )
    serving.add_argument(
        "--authorization-webhook-cache-authorized-ttl",
        type=_duration_flag,
        default=10.0,
        metavar="DURATION",
        help="how long 'allowed' SubjectAccessReview answers are cached (default 10s)",
    )
    serving.add_argument(
        "--authorization-webhook-cache-unauthorized-ttl",
        type=_duration_flag,
        default=10.0,
        metavar="DURATION",
        help="how long 'denied' SubjectAccessReview answers are cached (default 10s)",
    )
    serving.add_argument(
        "--authorization-always-allow-paths",
        default="/healthz,/readyz,/livez",
        metavar="PATHS",
        help="comma-separated paths served without authorization; a trailing * matches a prefix "
        "(default /healthz,/readyz,/livez)",
    )
    serving.add_argument(
        "--port",
        type=int,
        default=0,
        help="INSECURE: also serve plain HTTP on this port, with no authentication at all (default 0: off); "
        "for local runs only, e.g. --secure-port 0 --port 10251",
    )
    run_p.add_argument(
        "--record-results",
        action="store_true",
        help="write each pod's per-plugin results as kubesched.io/*-result annotations",
    )
    run_p.add_argument("--identity", help="leader-election identity (default: hostname_pid)")
    run_p.add_argument("--feature-gates", metavar="A=true,B=false", help=_GATES_HELP)
    run_p.add_argument("--plugin", action="append", metavar="MODULE:CLASS", help=_PLUGIN_HELP)
    run_p.add_argument("-v", action="count", default=0, help="more logging")
    from kubesched.server.flags import add_kube_scheduler_flags

    add_kube_scheduler_flags(run_p, _duration_flag)
    run_p.set_defaults(func=cmd_run)

    sim_p = sub.add_parser("sim", help="the embedded simulated cluster")
    sim_sub = sim_p.add_subparsers(dest="sim_command", required=True)
    serve = sim_sub.add_parser("serve", help="serve an in-memory cluster as a Kubernetes API (kubectl works)")
    serve.add_argument("--scenario", help="scenario YAML to load first (nodes, pods, ...)")
    serve.add_argument(
        "--faults",
        metavar="FILE",
        help="fault injection rules (YAML: seed, faults) applied from the start; switch them at run time "
        "with GET/PUT/DELETE /kubesched/faults",
    )
    serve.add_argument("--address", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080, help="API server port (0: any)")
    serve.add_argument(
        "--kubeconfig-out",
        default="kubesched-sim.kubeconfig",
        help="where to write the kubeconfig (it holds the admin token: created mode 0600)",
    )
    serve.add_argument(
        "--token",
        help="bearer token of the admin user kubesched-admin (system:masters); default: a random one, "
        "written into the kubeconfig. Every request but /healthz, /livez, /readyz, /version needs a token",
    )
    serve.add_argument(
        "--insecure",
        action="store_true",
        help="plain HTTP without authentication (loopback addresses only): for load probes and tools "
        "that speak plain HTTP",
    )
    serve.add_argument(
        "--token-auth-file",
        help='more users, as kube-apiserver\'s token file: token,user,uid[,"group1,group2"] a line',
    )
    serve.add_argument(
        "--with-scheduler",
        action="store_true",
        help="also run the scheduler in this process, over HTTP through the real cluster backend",
    )
    serve.add_argument("--config", help="KubeSchedulerConfiguration for --with-scheduler (default: built-in defaults)")
    serve.add_argument(
        "--import-from",
        metavar="KUBECONFIG",
        help="copy a live cluster first: namespaces, priority classes, storage, PodDisruptionBudgets, nodes and "
        "pods (bound ones as bound, pending ones pending)",
    )
    serve.add_argument("--selector", default="", help="with --import-from: only the nodes and pods with these labels")
    serve.add_argument("--sync", action="store_true", help="with --import-from: keep following the live cluster")
    serve.add_argument(
        "--scheduler-port",
        type=int,
        default=0,
        help="HTTPS port of the scheduler's health and metrics (0: any free one)",
    )
    serve.add_argument("--feature-gates", metavar="A=true,B=false", help=_GATES_HELP + " (with --with-scheduler)")
    serve.add_argument(
        "--plugin", action="append", metavar="MODULE:CLASS", help=_PLUGIN_HELP + " (with --with-scheduler)"
    )
    serve.add_argument("-v", action="count", default=0, help="more logging")
    serve.set_defaults(func=cmd_sim_serve)

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
    m = csub.add_parser(
        "migrate-policy", help="convert a legacy scheduler Policy (JSON/YAML) into a v1 KubeSchedulerConfiguration"
    )
    m.add_argument("file", help="the Policy file")
    m.add_argument("--output", "-o", help="write the configuration here instead of stdout")
    m.set_defaults(func=cmd_config_migrate_policy)
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
