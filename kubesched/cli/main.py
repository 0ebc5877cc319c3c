"""The ``kubesched`` parser and dispatch: each command lives in its own module of this package.

A command raises what ends it; :func:`main` catches the root of kubesched's errors once and
prints the message with the command's exit code (2 unless the command says otherwise, see
:class:`~kubesched.cli.common.OnError`), never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from kubesched import __version__
from kubesched.cli import bench, compare, config, plugins, replay, run, sim_serve, simulate, sweep
from kubesched.cli.common import OnError
from kubesched.errors import KubeschedError

_DEFAULT_ON_ERROR = OnError()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kubesched", description="The Kubernetes scheduling framework on asyncio.")
    parser.add_argument("--version", action="version", version=f"kubesched {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    # In this order in --help.
    simulate.add_parser(sub)
    replay.add_parser(sub)
    compare.add_parser(sub)
    sweep.add_parser(sub)
    bench.add_parser(sub)
    run.add_parser(sub)
    sim_serve.add_parser(sub)
    plugins.add_parser(sub)
    config.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KubeschedError as exc:
        on_error: OnError = getattr(args, "on_error", _DEFAULT_ON_ERROR)
        print(f"{on_error.prefix}{exc}", file=sys.stderr)
        return on_error.code
    except BrokenPipeError:
        # The reader went away (`kubesched plugins | head`): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


#: ``kube-scheduler --version`` and its forms (pflag's ``--version[=true|raw]``).
_VERSION_FLAGS = {"--version", "--version=true", "--version=raw"}


def kube_scheduler(argv: Sequence[str] | None = None) -> int:
    """The ``kube-scheduler`` command: ``kubesched run`` under kube-scheduler's name, so that a
    kube-scheduler manifest's command runs with only the binary changed."""
    args = list(sys.argv[1:] if argv is None else argv)
    if _VERSION_FLAGS & set(args):
        print(f"kubesched {__version__} (kube-scheduler 1.37)")
        return 0
    return main(["run", *_klog_verbosity(args)])


def _klog_verbosity(args: list[str]) -> list[str]:
    """klog's ``-v=N`` and ``-v N`` as ``--v=N`` (``run``'s own ``-v`` counts)."""
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg.startswith("-v=") and arg[3:].isdigit():
            out.append("--v=" + arg[3:])
        elif arg == "-v" and i + 1 < len(args) and args[i + 1].isdigit():
            out.append("--v=" + args[i + 1])
            i += 1
        else:
            out.append(arg)
        i += 1
    return out


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
