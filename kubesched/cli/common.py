"""What several commands share: where the shipped defaults are, the event loop, ``--plugin``,
logging, Go durations as flags, and how a command reports the error that ends it."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The configuration and scenarios shipped inside the package (``kubesched/data``).
DATA_DIR = Path(__file__).resolve().parent.parent / "data"
DEFAULT_CONFIG = "kubesched.yaml"
DEFAULT_SCENARIO = os.path.join("scenarios", "demo.yaml")

PLUGIN_HELP = (
    "load a plugin without packaging it: module:Class, or path/to/file.py:Class (repeatable); "
    "a profile then names it by its class's `name`"
)
GATES_HELP = (
    "kube-scheduler 1.37's feature gates, with its defaults (e.g. GenericWorkload=true for pod groups and gang "
    "scheduling); gates kubesched does not know are accepted with a warning"
)


@dataclass(frozen=True)
class OnError:
    """How a command reports the kubesched error that ends it: ``<prefix><message>`` on stderr and
    ``code``. A command gives its own as ``on_error`` in the parser's defaults, and may set
    ``args.on_error`` when it enters a phase that fails with another code (``run``, once running)."""

    code: int = 2
    prefix: str = "kubesched: "


def fail(message: str, code: int) -> int:
    """Say why a command ends without an error to raise (interrupted, some experiments failed)."""
    print(f"kubesched: {message}", file=sys.stderr)
    return code


def default_path(relative: str) -> Path:
    """``config/<relative>`` of the working directory if present, else the copy shipped inside the package."""
    local = Path("config") / relative
    if local.is_file():
        return local
    return DATA_DIR / relative


def event_loop_runner() -> Any:
    """``uvloop.run`` where uvloop is installed, else ``asyncio.run``."""
    try:
        import uvloop

        return uvloop.run
    except ImportError:  # pragma: no cover - uvloop is a dependency where it builds
        import asyncio  # here, not at the top: ``kubesched --help`` need not load it

        return asyncio.run


def register_local_plugins(args: argparse.Namespace) -> None:
    """Register the ``--plugin`` classes; a class that cannot be loaded raises RegistryError."""
    from kubesched.runtime.local_plugins import register_local_plugins as register

    register(getattr(args, "plugin", None))


def setup_logging(verbosity: int) -> None:
    import logging

    level = logging.WARNING if verbosity < 0 else logging.INFO if verbosity == 0 else logging.DEBUG
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def duration_flag(text: str) -> float:
    """argparse type of a non-negative Go duration (``10s``, ``1m``)."""
    from kubesched.config.models import parse_go_duration

    try:
        seconds = parse_go_duration(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if seconds < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text!r}")
    return seconds
