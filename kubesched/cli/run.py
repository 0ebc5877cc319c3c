"""``kubesched run``: schedule pods in a cluster, as kube-scheduler does (its flags included).

Without ``--config`` it runs kube-scheduler's default configuration, so that the command line
of a kube-scheduler manifest (kubeadm's, say) runs unchanged; the ``kube-scheduler`` command
(:func:`kubesched.cli.main.kube_scheduler`) is this command under upstream's name."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kubesched.cli.common import (
    GATES_HELP,
    PLUGIN_HELP,
    OnError,
    duration_flag,
    event_loop_runner,
    register_local_plugins,
    setup_logging,
)
from kubesched.errors import ConfigurationError

if TYPE_CHECKING:
    from kubesched.framework.features import FeatureGates
    from kubesched.server.app import RunOptions

#: Once the scheduler runs, a failure is a fault while running (the cluster, an extender, serving),
#: which exits 1 as it always has; what is refused before that exits 2.
_WHILE_RUNNING = OnError(code=1)


def cmd_run(args: argparse.Namespace) -> int:
    """Load and check everything first (failures exit 2), then schedule until stopped (failures exit 1)."""
    from kubesched.config import format_config_yaml, load_config
    from kubesched.config.feature_gates import parse_feature_gates
    from kubesched.server import flags as kflags
    from kubesched.server.app import run

    register_local_plugins(args)
    gate_text, zpages = kflags.split_zpages_gates(args.feature_gates)
    gates = parse_feature_gates(gate_text)
    cfg = load_config(args.config, feature_gates=gates)
    problems = kflags.apply_leader_election(cfg.model, args)
    if problems:
        raise ConfigurationError("; ".join(problems))
    kflags.apply_client_flags(cfg.model, args)
    if args.kubeconfig and not args.config:
        # What upstream does with --kubeconfig without --config (and what /configz then shows).
        cfg.model.clientConnection.kubeconfig = args.kubeconfig
    setup_logging(kflags.verbosity(args))
    kubeconfig = args.kubeconfig or cfg.model.clientConnection.kubeconfig or os.environ.get("KUBECONFIG") or None
    kflags.warn_ignored(args, kubeconfig)
    if args.write_config_to:
        try:
            Path(args.write_config_to).write_text(format_config_yaml(cfg))
        except OSError as exc:
            raise ConfigurationError(
                f"--write-config-to: {args.write_config_to}: cannot write: {exc.strerror or exc}"
            ) from exc
        return 0
    opts = run_options(args, gates, zpages)
    args.on_error = _WHILE_RUNNING
    return int(event_loop_runner()(run(cfg, opts)))


def run_options(args: argparse.Namespace, gates: FeatureGates, zpages: dict[str, bool]) -> RunOptions:
    """What the command line asks of the running scheduler (the configuration aside)."""
    from kubesched.server import flags as kflags
    from kubesched.server.app import RunOptions
    from kubesched.server.serving import DelegationOptions, ServingOptions

    return RunOptions(
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
        max_unschedulable_duration=args.pod_max_in_unschedulable_pods_duration,
        flags=kflags.flag_values(args.parser, args, duration_flag),
        flagz=zpages["ComponentFlagz"],
        statusz=zpages["ComponentStatusz"],
    )


def add_parser(sub: Any) -> None:
    run_p = sub.add_parser("run", help="schedule pods in a cluster (kubeconfig or in-cluster)")
    run_p.add_argument(
        "--config",
        help="KubeSchedulerConfiguration file (default: kube-scheduler's default configuration, as upstream "
        "runs without --config)",
    )
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
        "--authentication-kubeconfig",
        metavar="FILE",
        help="where TokenReviews go; they go through the scheduler's own connection, so this acts when it names "
        "that kubeconfig (as kubeadm's manifest does) and is warned about otherwise",
    )
    serving.add_argument(
        "--authorization-kubeconfig",
        metavar="FILE",
        help="where SubjectAccessReviews go; as --authentication-kubeconfig",
    )
    serving.add_argument(
        "--authentication-token-webhook-cache-ttl",
        type=duration_flag,
        default=10.0,
        metavar="DURATION",
        help="how long TokenReview answers are cached (default 10s)",
    )
    serving.add_argument(
        "--authorization-webhook-cache-authorized-ttl",
        type=duration_flag,
        default=10.0,
        metavar="DURATION",
        help="how long 'allowed' SubjectAccessReview answers are cached (default 10s)",
    )
    serving.add_argument(
        "--authorization-webhook-cache-unauthorized-ttl",
        type=duration_flag,
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
    run_p.add_argument("--feature-gates", metavar="A=true,B=false", help=GATES_HELP)
    run_p.add_argument("--plugin", action="append", metavar="MODULE:CLASS", help=PLUGIN_HELP)
    run_p.add_argument("-v", action="count", default=0, help="more logging")
    from kubesched.server.flags import add_kube_scheduler_flags

    add_kube_scheduler_flags(run_p, duration_flag)
    run_p.set_defaults(func=cmd_run, parser=run_p)
