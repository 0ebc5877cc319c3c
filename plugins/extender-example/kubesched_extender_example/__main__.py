"""``python -m kubesched_extender_example --port 8888``: serve the example extender."""

from __future__ import annotations

import argparse

from kubesched.extender import run_extender

from . import DEFAULT_MAX_POD_NAME_LENGTH, ENV_MAX_POD_NAME_LENGTH, make_app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="kubesched-extender-example", description="Serve the example scheduler extender over HTTP."
    )
    parser.add_argument("--host", default="0.0.0.0", help="address to listen on (default 0.0.0.0)")
    parser.add_argument("--port", type=int, default=8888, help="port to listen on (default 8888)")
    parser.add_argument(
        "--max-pod-name-length",
        type=int,
        default=None,
        help=f"pods with names this long or longer fit no node (default ${ENV_MAX_POD_NAME_LENGTH} "
        f"or {DEFAULT_MAX_POD_NAME_LENGTH})",
    )
    args = parser.parse_args(argv)
    if args.max_pod_name_length is not None and args.max_pod_name_length <= 0:
        parser.error("--max-pod-name-length must be a positive integer")
    try:
        app = make_app(args.max_pod_name_length)
    except ValueError as exc:
        parser.error(str(exc))
    run_extender(app, args.host, args.port)


if __name__ == "__main__":
    main()
