"""``kubesched plugins``: the plugins found through the ``kubesched.plugins`` entry points."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def cmd_plugins(args: argparse.Namespace) -> int:
    """List every plugin the registry finds, as a table or JSON."""
    from kubesched.runtime.registry import default_registry

    entries = default_registry().entries()
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


def add_parser(sub: Any) -> None:
    plugins = sub.add_parser("plugins", help="list the plugins found through entry points")
    plugins.add_argument("--output", choices=("table", "json"), default="table")
    plugins.set_defaults(func=cmd_plugins)
