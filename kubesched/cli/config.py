"""``kubesched config validate|print|migrate-policy``: check, show or convert a configuration."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kubesched.cli.common import OnError

#: ``validate`` and ``print`` say only the field paths, one a line, and exit 1 (a script reads them).
_PLAIN = OnError(code=1, prefix="")


def cmd_config(args: argparse.Namespace) -> int:
    """``config validate`` (say it is valid) or ``config print`` (the effective configuration as YAML)."""
    from kubesched.config import format_config_yaml, load_config

    path = args.file
    cfg = load_config(path)
    if args.config_command == "validate":
        names = ", ".join(p.scheduler_name for p in cfg.profiles)
        print(f"{path}: valid ({len(cfg.profiles)} profile(s): {names})")
        return 0
    sys.stdout.write(format_config_yaml(cfg))
    return 0


def cmd_config_migrate_policy(args: argparse.Namespace) -> int:
    """``config migrate-policy``: a legacy Policy file → a v1 configuration (YAML), warnings on stderr."""
    import yaml

    from kubesched.config import CONFIG_LIMITS
    from kubesched.config.policy import PolicyError, migrate_policy
    from kubesched.decoding import DecodeError, load_yaml_or_json, read_text

    try:
        policy = load_yaml_or_json(read_text(args.file, CONFIG_LIMITS.max_bytes), CONFIG_LIMITS)
        config, warnings = migrate_policy(policy)
    except OSError as exc:
        print(f"kubesched: {args.file}: cannot read: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except (yaml.YAMLError, DecodeError) as exc:
        print(f"kubesched: {args.file}: not valid JSON or YAML: {exc}", file=sys.stderr)
        return 1
    except PolicyError as exc:
        # Reworded, not reported: the command's error handling prints it.
        raise PolicyError(f"{args.file}: not a scheduler Policy: {exc}") from exc
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


def add_parser(sub: Any) -> None:
    config = sub.add_parser("config", help="validate or print a configuration")
    csub = config.add_subparsers(dest="config_command", required=True)
    v = csub.add_parser("validate", help="check a KubeSchedulerConfiguration; exit 1 with field paths if wrong")
    v.add_argument("file")
    v.set_defaults(func=cmd_config, on_error=_PLAIN)
    p = csub.add_parser("print", help="print the effective configuration (defaults applied, plugins merged)")
    p.add_argument("file", nargs="?", default=None)
    p.set_defaults(func=cmd_config, on_error=_PLAIN)
    m = csub.add_parser(
        "migrate-policy", help="convert a legacy scheduler Policy (JSON/YAML) into a v1 KubeSchedulerConfiguration"
    )
    m.add_argument("file", help="the Policy file")
    m.add_argument("--output", "-o", help="write the configuration here instead of stdout")
    m.set_defaults(func=cmd_config_migrate_policy, on_error=OnError(code=1))
