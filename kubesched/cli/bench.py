"""``kubesched bench``: how fast is my plugin? Workloads in upstream scheduler_perf's format, run
on the in-memory cluster under your configuration and plugins, measured as ``python -m
benchmarks.run`` measures (pods/s, attempt latency p50/p90/p99, peak RSS, the loop's largest lag).

    kubesched bench                                     # SchedulingBasic/500Nodes, default profile
    kubesched bench --plugin my_plugins/gpu_first.py:GpuFirst    # yours on the default profile, and the default
    kubesched bench TopologySpreading/5000Nodes --config my.yaml --profile my-scheduler
    kubesched bench my-workloads.yaml --config my.yaml --json
    kubesched bench --list
    kubesched bench --label integration-test,short      # upstream's label filter over every shipped workload
    kubesched bench --backend http                      # the scheduler over HTTP to the embedded API server

With ``--config`` or ``--plugin`` the same workload also runs under the default profile and the
table shows both, with a row of ratios (yours / default); ``--no-compare-default`` runs yours only.
Each run has a process of its own (forked), so its peak RSS is its own; ``--repeat N`` runs
each profile N times, taking turns, and shows the run of median pods/s.
"""

from __future__ import annotations

import argparse
import importlib
import json
from dataclasses import asdict
from typing import Any

from kubesched.cli.common import PLUGIN_HELP
from kubesched.cli.progress import ProgressBar, wanted

BASELINE = "default"


def cmd_bench(args: argparse.Namespace) -> int:
    from kubesched.bench.workload import DEFAULT_WORKLOAD, find_workloads, select_labelled, shipped_workloads

    if args.list:
        listed = list(shipped_workloads().values())
        _print_list(select_labelled(listed, args.label) if args.label is not None else listed)
        return 0
    if args.label is not None:
        # As upstream's label filter: over the named workloads, or every shipped one.
        named = [w for spec in args.workload for w in find_workloads(spec)] or list(shipped_workloads().values())
        workloads = select_labelled(named, args.label)
        if not workloads:
            raise _usage(f"--label {args.label}: no workload has these labels (see kubesched bench --list)")
    else:
        workloads = [w for spec in (args.workload or [DEFAULT_WORKLOAD]) for w in find_workloads(spec)]
    subjects = _subjects(args)
    if args.repeat < 1:
        raise _usage(f"--repeat must be at least 1, got {args.repeat}")
    rows: list[tuple[str, Any]] = []
    for w in workloads:
        # The profiles take turns, so that a busy minute of the machine falls on both.
        runs: dict[str, list[list[Any]]] = {label: [] for label, _ in subjects}
        for _ in range(args.repeat):
            for label, subject in subjects:
                runs[label].append(_run(w, label, subject, args))
        for label, _ in subjects:
            rows.extend((label, r) for r in _median_run(runs[label]))
    baseline = BASELINE if len(subjects) > 1 else None
    if args.json:
        print(json.dumps(_json_rows(rows, baseline), indent=2))
    else:
        from kubesched.bench.report import print_profiles

        where = "in-memory cluster" if args.backend == "memory" else "over HTTP"
        print_profiles(rows, baseline, f"kubesched bench ({where})")
    return 0


def _subjects(args: argparse.Namespace) -> list[tuple[str, Any]]:
    """(label, Subject) of each profile to measure: yours, then the default's when compared."""
    from kubesched.bench.runner import PLUGIN_PROFILE, Subject, default_subject

    plugins = _register_plugins(args.plugin or [])
    if args.config is None and args.profile is not None:
        raise _usage("--profile names a profile of --config; give --config too")
    if args.config is None and not plugins:
        return [(BASELINE, default_subject())]
    if args.config is not None:
        mine = Subject("", config_path=args.config, profile=args.profile)
        _, name = mine.load()  # refused here, before anything runs, when it does not load
        mine = Subject(name, config_path=args.config, profile=name)
    else:
        mine = Subject(PLUGIN_PROFILE, plugins=tuple(plugins))
        mine.load()
    subjects = [(mine.label, mine)]
    if args.compare_default is not False:
        subjects.append((BASELINE, default_subject()))
    return subjects


def _register_plugins(specs: list[str]) -> list[str]:
    """Register each ``--plugin``: ``module:Class``, ``file.py:Class``, or a module (every
    plugin class defined in it, one with a ``name``); the names registered."""
    from kubesched.runtime.local_plugins import register_local_plugins
    from kubesched.runtime.registry import RegistryError

    expanded: list[str] = []
    for spec in specs:
        if ":" in spec:
            expanded.append(spec)
            continue
        try:
            module = importlib.import_module(spec)
        except Exception as exc:  # any import failure is reported with the flag
            raise RegistryError(f"--plugin {spec!r}: cannot import: {type(exc).__name__}: {exc}") from exc
        found = [
            f"{spec}:{name}"
            for name, obj in vars(module).items()
            if isinstance(obj, type)
            and obj.__module__ == module.__name__
            and isinstance(getattr(obj, "name", None), str)
        ]
        if not found:
            raise RegistryError(f"--plugin {spec!r}: the module defines no plugin class (a class with a `name`)")
        expanded.extend(found)
    return register_local_plugins(expanded)


def _run(w: Any, label: str, subject: Any, args: argparse.Namespace) -> list[Any]:
    from kubesched.bench.runner import run_profile

    bar = _LazyBar(ProgressBar(f"{w.name} ({label})", show=wanted(args.no_progress)))
    try:
        return run_profile(w, subject, bar if bar.shown else None, timeout=args.timeout, backend=args.backend)
    finally:
        bar.close()


def _median_run(runs: list[list[Any]]) -> list[Any]:
    """Of one profile's runs of a workload, the one of median pods/s (its first measured set's)."""
    ranked = sorted(runs, key=lambda results: results[0].pods_per_second if results else 0.0)
    return ranked[(len(ranked) - 1) // 2]


class _LazyBar:
    """A progress bar drawn from the first report on: the run's process is forked before any
    thread of the bar starts."""

    def __init__(self, bar: ProgressBar) -> None:
        self.bar = bar
        self.shown = bar.shown
        self._open = False

    def __call__(self, done: int, total: int) -> None:
        if not self._open:
            self.bar.__enter__()
            self._open = True
        self.bar.update(done, total)

    def close(self) -> None:
        if self._open:
            self.bar.__exit__(None, None, None)


def _json_rows(rows: list[tuple[str, Any]], baseline: str | None) -> list[dict[str, Any]]:
    base = {r.workload: r for label, r in rows if label == baseline}
    out = []
    for label, r in rows:
        row: dict[str, Any] = {"profile": label, **asdict(r)}
        b = base.get(r.workload)
        if b is not None and label != baseline:
            row["vs_default"] = {
                key: round(getattr(r, key) / getattr(b, key), 3) if getattr(b, key) else None
                for key in ("pods_per_second", "attempt_p50_ms", "attempt_p90_ms", "attempt_p99_ms", "peak_rss_mib")
            }
        out.append(row)
    return out


def _print_list(workloads: list[Any]) -> None:
    for w in workloads:
        floor = f" threshold={w.threshold:g}" if w.threshold is not None else ""
        labels = f" [{', '.join(w.labels)}]" if w.labels else ""
        print(
            f"{w.name:40s} nodes={w.nodes} init={w.init_pods} measured={w.measured_pods}{floor}{labels}  ({w.source})"
        )


def _usage(message: str) -> Exception:
    from kubesched.errors import ConfigurationError

    return ConfigurationError(message)


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "bench",
        help="how fast is my plugin? scheduler_perf-style workloads under your configuration, beside the default",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "workload",
        nargs="*",
        metavar="WORKLOAD_FILE_OR_NAME",
        help="a workload file in scheduler_perf's format (all its workloads, or FILE.yaml:Case/name), or a shipped "
        "workload's name (see --list; a case's name runs all its sizes); default: SchedulingBasic/500Nodes",
    )
    p.add_argument("--config", metavar="FILE", help="your KubeSchedulerConfiguration")
    p.add_argument(
        "--plugin",
        action="append",
        metavar="MODULE[:CLASS]",
        help=PLUGIN_HELP + "; a module alone registers every plugin class in it; without --config the plugins are "
        "enabled (multiPoint) on the default profile, as profile kubesched-bench",
    )
    p.add_argument("--profile", metavar="NAME", help="the profile of --config to measure (needed when it has several)")
    p.add_argument(
        "--compare-default",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also run each workload under the default profile and show both with their ratio "
        "(on by default with --config or --plugin)",
    )
    p.add_argument(
        "--repeat",
        type=int,
        default=1,
        metavar="N",
        help="run each workload N times per profile, the profiles taking turns, and show each profile's run of "
        "median pods/s (a shared machine's noise)",
    )
    p.add_argument(
        "--label",
        metavar="FILTER",
        help="run the workloads with these labels, as upstream's -perf-scheduling-label-filter: comma-separated, "
        "label or +label must be present, -label absent (e.g. performance,-short; integration-test,short); "
        "over the named workloads, or every shipped one; with --list, list them",
    )
    p.add_argument("--list", action="store_true", help="list the shipped workloads")
    p.add_argument("--json", action="store_true", help="print JSON rows instead of the table")
    p.add_argument(
        "--backend",
        choices=("memory", "http"),
        default="memory",
        help="memory: the scheduler on the in-memory cluster (default); http: the workload's cluster served by the "
        "embedded API server on loopback, the scheduler in a process of its own, its client over HTTP as "
        "`kubesched run` is a cluster's (watches, binds, events); CPU ms/pod is the scheduler's process's",
    )
    p.add_argument("--timeout", type=float, default=600.0, help="seconds a run may take (default 600)")
    p.add_argument("--no-progress", action="store_true", help="draw no progress bar")
    p.set_defaults(func=cmd_bench)
