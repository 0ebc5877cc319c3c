"""``python -m benchmarks.run``: parse the command line (:mod:`benchmarks.cli`), pick the
workloads (:mod:`benchmarks.catalogue`), run each in a fresh interpreter or, inside that
interpreter, here (:mod:`benchmarks.launch`, :mod:`benchmarks.compare`), and show the results
(:mod:`benchmarks.report`); with ``--against REV``, this checkout and REV in turn, paired
(:mod:`benchmarks.against`).

The pairing and the comparison are imported when asked for: a measured run is a fresh
interpreter whose whole CPU time ``--against`` may compare, and it needs neither.

Exit status: 0 when the runs finished (and, with --compare, every placement matched), 1 when a
comparison's placements differ, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import asdict

from benchmarks.catalogue import SCALING, WORKLOADS, default_names, workload
from benchmarks.cli import parse
from benchmarks.launch import ROOT, run_in_process, run_isolated
from benchmarks.measure import Result
from benchmarks.report import (
    print_against,
    print_comparisons,
    print_json,
    print_scaling,
    print_table,
    print_workloads,
    save_json,
    scaling_rows,
)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    if args.list:
        print_workloads(list(WORKLOADS.values()))
        return 0
    names = selected(args)
    if names is None:
        return 2
    if args.compare:
        return compare(names, args)
    if args.against:
        return against(names, args)
    return measure(names, args)


def selected(args: argparse.Namespace) -> list[str] | None:
    """The workloads to run, those that cannot run here left out (saying why on stderr); None
    (with the reason on stderr) when the options name none sensibly."""
    if args.scaling and (args.workload or args.all):
        print("--scaling runs its own workloads; it does not combine with -w or --all", file=sys.stderr)
        return None
    if args.against and (args.scaling or args.compare or args.in_process):
        print("--against pairs plain runs; it does not combine with --scaling or --compare", file=sys.stderr)
        return None
    if args.rounds < 1:
        print(f"--rounds must be at least 1, not {args.rounds}", file=sys.stderr)
        return None
    names = list(SCALING) if args.scaling else args.workload or default_names(args.all)
    unknown = []
    for n in names:
        try:
            workload(n)
        except KeyError as exc:
            unknown.append(str(exc.args[0]))
    if unknown:
        print(f"unknown workload(s): {'; '.join(unknown)}", file=sys.stderr)
        return None
    runnable = []
    for n in names:
        check = workload(n).unavailable
        why = check() if check is not None else None
        if why:
            print(f"skipping {n}: {why}", file=sys.stderr)
        else:
            runnable.append(n)
    return runnable


def measure(names: list[str], args: argparse.Namespace) -> int:
    """Run each workload once and show the table (or, with --scaling, how time per pod grows)."""
    results: list[Result] = []
    for name in names:
        if args.in_process:
            results.append(run_in_process(name, not args.no_uvloop, args.backend))
        else:
            if not args.json:
                print(f"running {name} ...", file=sys.stderr, flush=True)
            results.append(run_isolated(name, not args.no_uvloop, args.backend))
    payload = [asdict(r) for r in results]
    if args.save:
        save_json(args.save, payload)
    if args.scaling:
        rows = scaling_rows(results)
        if args.json:
            print_json(rows)
        else:
            print_scaling(rows)
        return 0
    if args.json:
        print_json(payload)
    else:
        print_table(results)
    return 0


def compare(names: list[str], args: argparse.Namespace) -> int:
    """Run each workload node by node and in batches; 1 when a placement differs."""
    from benchmarks.compare import compare_in_process, compare_isolated

    rows = []
    for name in names:
        if args.in_process:
            rows.append(compare_in_process(name, not args.no_uvloop, args.backend).to_json())
        else:
            if not args.json:
                print(f"comparing {name} ...", file=sys.stderr, flush=True)
            rows.append(compare_isolated(name, not args.no_uvloop, args.backend))
    if args.save:
        save_json(args.save, rows)
    if args.json:
        print_json(rows)
    else:
        print_comparisons(rows)
    return 0 if all(r["same_placements"] for r in rows) else 1


def against(names: list[str], args: argparse.Namespace) -> int:
    """This checkout against ``args.against``, paired round by round; 2 when REV names no commit."""
    from benchmarks.against import Side, pair, prepare

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    try:
        theirs = prepare(args.against, args.same_env, say)
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    ours = Side("this checkout", ROOT, sys.executable)
    pairings = pair(names, ours, theirs, args.rounds, args.backend, not args.no_uvloop, say)
    rows = [p.to_json() for p in pairings]
    if args.save:
        save_json(args.save, rows)
    if args.json:
        print_json(rows)
    else:
        print_against(rows, theirs.label)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
