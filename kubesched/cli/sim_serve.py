"""``kubesched sim serve``: serve an in-memory cluster as a Kubernetes API, and maybe the scheduler too."""

from __future__ import annotations

import argparse
import ipaddress
import os
import sys
from typing import TYPE_CHECKING, Any

from kubesched.cli.common import GATES_HELP, PLUGIN_HELP, event_loop_runner, register_local_plugins, setup_logging
from kubesched.errors import ConfigurationError

if TYPE_CHECKING:
    from kubesched.sim.scenario.timeline import Horizon
    from kubesched.sim.serve_options import SimServeOptions


def _is_loopback(address: str) -> bool:
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def cmd_sim_serve(args: argparse.Namespace) -> int:
    """Check the flags and read the inputs, then serve until stopped; sim serve's own exit code."""
    from kubesched.config import load_config
    from kubesched.sim.apiserver.authn import read_token_file
    from kubesched.sim.scenario.reading import load_scenario

    options = serve_options(args)
    cfg = None
    users = {}
    register_local_plugins(args)
    # Under the options' gates: the scenario's pods are admitted as the API server would admit them.
    scenario = load_scenario(args.scenario, options.feature_gates) if args.scenario else None
    for warning in scenario.warnings if scenario is not None else ():
        print(f"kubesched: warning: {warning}", file=sys.stderr)
    if args.with_scheduler:
        cfg = load_config(args.config if args.config else None, feature_gates=options.feature_gates)
        for warning in unserved_scheduler_names(scenario, cfg, args.config):
            print(f"kubesched: warning: {warning}", file=sys.stderr)
    if args.token_auth_file:
        users = read_token_file(args.token_auth_file)
    setup_logging(args.v)
    from kubesched.sim.serve import sim_serve

    return int(event_loop_runner()(sim_serve(options, scenario, cfg, users)))


#: The flags that are not options of the server, and what becomes of each: read here into the
#: other inputs of ``sim_serve``, or process-wide.
NOT_OPTIONS = {
    "scenario": "read into the scenario sim_serve serves",
    "with_scheduler": "a scheduler configuration for sim_serve",
    "config": "read into that scheduler configuration",
    "token_auth_file": "read into the users sim_serve's API server knows",
    "plugin": "registered for the whole process",
    "v": "the process's logging",
}


def serve_options(args: argparse.Namespace) -> SimServeOptions:
    """The server's options from the parsed flags, each checked (the error names the flag), and
    the files they name read (``--faults``); the one place flags become options."""
    from kubesched.config.feature_gates import parse_feature_gates
    from kubesched.sim.serve_options import SimServeOptions

    if args.token is not None and not args.token.strip():
        raise ConfigurationError("--token: must not be empty")
    if args.insecure:
        if not _is_loopback(args.address):
            raise ConfigurationError(
                f"--insecure: serves without authentication, so only on a loopback address, not {args.address}"
            )
        if args.token or args.token_auth_file:
            raise ConfigurationError("--insecure: asks for no token; drop --token and --token-auth-file")
    if os.path.islink(args.kubeconfig_out):
        # It will hold the admin token: written through a link, it would land wherever the link points.
        raise ConfigurationError(f"--kubeconfig-out: {args.kubeconfig_out} is a symbolic link; give the file itself")
    until = _time_flags(args)
    gates = parse_feature_gates(args.feature_gates)
    faults = None
    if args.faults:
        from kubesched.sim.apiserver.faults import FaultConfigError
        from kubesched.sim.apiserver.faults import load_config as load_faults

        try:
            faults = load_faults(args.faults)
        except FaultConfigError as exc:
            # Reworded, not reported: the message names the file, this names the flag.
            raise FaultConfigError(f"--faults {exc}") from exc
    defaults = SimServeOptions()
    return SimServeOptions(
        address=args.address,
        port=args.port,
        kubeconfig_out=args.kubeconfig_out,
        token=args.token,
        insecure=args.insecure,
        feature_gates=gates,
        # The flags' defaults are the server's own (the parser does not import the server to show --help).
        max_requests_inflight=(
            defaults.max_requests_inflight if args.max_requests_inflight is None else args.max_requests_inflight
        ),
        max_mutating_requests_inflight=(
            defaults.max_mutating_requests_inflight
            if args.max_mutating_requests_inflight is None
            else args.max_mutating_requests_inflight
        ),
        pod_termination=args.pod_termination,
        faults=faults,
        speed=args.speed,
        until=until,
        import_from=args.import_from,
        selector=args.selector,
        import_context=args.import_context,
        sync=args.sync,
        record=args.record,
        scheduler_port=args.scheduler_port,
    )


def _time_flags(args: argparse.Namespace) -> Horizon | None:
    """Check ``--speed``, ``--until`` and ``--record`` (which needs ``--import-from``); the
    horizon ``--until`` sets, if any."""
    from kubesched.sim.scenario.steps import TimelineError, seconds
    from kubesched.sim.scenario.timeline import Horizon

    if not args.speed > 0:
        raise ConfigurationError(f"--speed: Invalid value: {args.speed}: must be above 0")
    until = None
    if args.until is not None:
        try:
            until = Horizon(seconds(args.until, "--until"), "--until")
        except TimelineError as exc:
            raise ConfigurationError(str(exc)) from None
    if args.record:
        if not args.import_from:
            raise ConfigurationError("--record: records a live cluster: give it with --import-from (and --sync)")
        folder = os.path.dirname(os.path.abspath(args.record))
        if not os.path.isdir(folder):
            raise ConfigurationError(f"--record: {folder} is not a directory")
    return until


def unserved_scheduler_names(scenario: Any, cfg: Any, config_flag: str | None) -> list[str]:
    """A warning per ``schedulerName`` the scenario's pending pods name that no profile runs:
    those pods would stay pending without a word (kube-scheduler leaves other schedulers' pods
    alone), so say so, and how to run a profile for them."""
    if scenario is None:
        return []
    served = {p.scheduler_name for p in cfg.profiles}
    counts: dict[str, int] = {}
    for pod in scenario.pending_pods:
        name = (pod.get("spec") or {}).get("schedulerName") or "default-scheduler"
        if name not in served:
            counts[name] = counts.get(name, 0) + 1
    hint = (
        "the configuration given with --config has no such profile"
        if config_flag
        else "without --config the scheduler runs the built-in default profile only; "
        "e.g. --config config/kubesched.yaml has the profiles `simulate` uses"
    )
    return [
        f"{n} pod(s) of the scenario name schedulerName {name!r}, which no profile of this scheduler runs: they "
        f"stay pending, left for another scheduler ({hint})"
        for name, n in sorted(counts.items())
    ]


def add_parser(sub: Any) -> None:
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
        help="where to write the kubeconfig (it holds the admin token: mode 0600, never through a symbolic "
        "link); the web view's link is written beside it, as FILE.weblink",
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
        "--import-context", metavar="CONTEXT", help="with --import-from: the kubeconfig's context to use"
    )
    serve.add_argument(
        "--record",
        metavar="FILE",
        help="with --import-from (and --sync): write what the live cluster does — its nodes and pods at the start, "
        "then pods and nodes appearing and going, at their times — to FILE as a scenario in time when the server "
        "stops (simulate --scenario FILE and compare --scenario FILE replay it)",
    )
    serve.add_argument(
        "--speed",
        type=float,
        default=1.0,
        help="simulated time runs this many times as fast as the wall clock (Steps, pod lifetimes); default 1",
    )
    serve.add_argument(
        "--until",
        metavar="DURATION",
        help="stop the server when simulated time reaches this (90s, 10m); default: serve until stopped",
    )
    serve.add_argument(
        "--scheduler-port",
        type=int,
        default=0,
        help="HTTPS port of the scheduler's health and metrics (0: any free one)",
    )
    serve.add_argument(
        "--feature-gates",
        metavar="A=true,B=false",
        help=GATES_HELP + "; they shape the API server and the controllers too (GenericWorkload serves PodGroups, "
        "WorkloadWithJob gives Jobs their PodGroup)",
    )
    serve.add_argument(
        "--plugin", action="append", metavar="MODULE:CLASS", help=PLUGIN_HELP + " (with --with-scheduler)"
    )
    serve.add_argument(
        "--max-requests-inflight",
        type=int,
        default=None,
        help="read-only requests (get, list) served at once, as kube-apiserver's flag; more are answered 429 "
        "with Retry-After: 1 (watches are not counted, nor users in system:masters); 0: no limit; "
        "default 400, kube-apiserver's",
    )
    serve.add_argument(
        "--max-mutating-requests-inflight",
        type=int,
        default=None,
        help="mutating requests (create, update, patch, delete) served at once, as kube-apiserver's flag; "
        "0: no limit; default 200, kube-apiserver's",
    )
    serve.add_argument(
        "--pod-termination",
        choices=("immediate", "graceful"),
        default="immediate",
        help="how a deleted pod on a node ends: immediate (default; removed at once, as if its kubelet stopped it that moment) "
        "or graceful (Terminating for its grace period of simulated time, holding its node, as on a cluster with kubelets)",
    )
    serve.add_argument("-v", action="count", default=0, help="more logging")
    serve.set_defaults(func=cmd_sim_serve)
