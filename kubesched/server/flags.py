"""kube-scheduler's command-line flags on ``kubesched run``, so that a manifest written for
kube-scheduler runs unchanged.

The flags that mean something here act as upstream's do: the ``--leader-elect`` family overrides
the configuration file's ``leaderElection`` (upstream honours these flags even with ``--config``),
``--v`` sets the log verbosity, and ``--write-config-to`` writes the effective configuration and
exits. The others kube-scheduler manifests commonly carry are accepted and named in a warning,
never refused.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

log = logging.getLogger("kubesched")

#: Go's strconv.ParseBool, which kube-scheduler's boolean flags use.
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}

#: ``--leader-elect-*`` flag → the LeaderElectionConfiguration field it sets (durations parsed).
LEADER_ELECTION_FLAGS: dict[str, str] = {
    "leader_elect_lease_duration": "leaseDuration",
    "leader_elect_renew_deadline": "renewDeadline",
    "leader_elect_retry_period": "retryPeriod",
    "leader_elect_resource_lock": "resourceLock",
    "leader_elect_resource_name": "resourceName",
    "leader_elect_resource_namespace": "resourceNamespace",
}

#: kube-scheduler flags accepted without effect here: name → whether it takes a value (else a
#: boolean that may be given as ``--flag`` or ``--flag=false``), and why it has no effect.
IGNORED_FLAGS: dict[str, tuple[bool, str]] = {
    "authentication-kubeconfig": (True, "delegated authentication uses the scheduler's own connection"),
    "authorization-kubeconfig": (True, "delegated authorization uses the scheduler's own connection"),
    "authentication-skip-lookup": (False, "no authentication configmap is read"),
    "authentication-tolerate-lookup-failure": (False, "no authentication configmap is read"),
    "client-ca-file": (True, "client certificates are not authenticated; bearer tokens are"),
    "requestheader-client-ca-file": (True, "front-proxy authentication is not supported"),
    "requestheader-allowed-names": (True, "front-proxy authentication is not supported"),
    "requestheader-extra-headers-prefix": (True, "front-proxy authentication is not supported"),
    "requestheader-group-headers": (True, "front-proxy authentication is not supported"),
    "requestheader-username-headers": (True, "front-proxy authentication is not supported"),
    "tls-cipher-suites": (True, "the Python TLS defaults are used"),
    "tls-min-version": (True, "the Python TLS defaults are used"),
    "tls-sni-cert-key": (True, "one serving certificate is used"),
    "permit-port-sharing": (False, "the port is bound once"),
    "permit-address-sharing": (False, "the address is bound once"),
    "profiling": (False, "no pprof endpoints are served"),
    "contention-profiling": (False, "no pprof endpoints are served"),
    "master": (True, "the API server address comes from the kubeconfig"),
    "kube-api-qps": (True, "clientConnection in the configuration sets it"),
    "kube-api-burst": (True, "clientConnection in the configuration sets it"),
    "kube-api-content-type": (True, "clientConnection in the configuration sets it"),
    "lock-object-name": (True, "use --leader-elect-resource-name"),
    "lock-object-namespace": (True, "use --leader-elect-resource-namespace"),
    "pod-max-in-unschedulable-pods-duration": (True, "deprecated upstream; the default 5m applies"),
    "show-hidden-metrics-for-version": (True, "no metrics are hidden"),
    "logging-format": (True, "logs are text"),
    "log-flush-frequency": (True, "logs are not buffered"),
    "log-json-split-stream": (False, "logs are text"),
    "log-text-split-stream": (False, "logs go to stderr"),
    "vmodule": (True, "use --v"),
    "logtostderr": (False, "logs go to stderr"),
    "alsologtostderr": (False, "logs go to stderr"),
    "log-dir": (True, "logs go to stderr"),
    "log-file": (True, "logs go to stderr"),
    "skip-headers": (False, "log lines keep their headers"),
    "stderrthreshold": (True, "logs go to stderr"),
    "one-output": (False, "logs go to stderr"),
    "add-dir-header": (False, "log lines keep their headers"),
    "skip-log-headers": (False, "log lines keep their headers"),
}


def go_bool(text: str) -> bool:
    """A boolean flag's value as kube-scheduler parses it."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {text!r}")


def add_kube_scheduler_flags(parser: argparse.ArgumentParser, duration: Any) -> None:
    """Add kube-scheduler's flags to ``run``'s parser; ``duration`` parses a Go duration."""
    group = parser.add_argument_group(
        "kube-scheduler flags",
        "as in kube-scheduler manifests: the --leader-elect family overrides the file's leaderElection; "
        "--v sets verbosity; --write-config-to writes the effective configuration and exits. Also accepted, "
        "with a warning that they have no effect here: " + ", ".join(f"--{n}" for n in IGNORED_FLAGS),
    )
    group.add_argument(
        "--leader-elect",
        type=go_bool,
        nargs="?",
        const=True,
        metavar="BOOL",
        help="take part in leader election (default: the configuration's leaderElection.leaderElect)",
    )
    group.add_argument("--leader-elect-lease-duration", type=duration, metavar="DURATION")
    group.add_argument("--leader-elect-renew-deadline", type=duration, metavar="DURATION")
    group.add_argument("--leader-elect-retry-period", type=duration, metavar="DURATION")
    group.add_argument("--leader-elect-resource-lock", metavar="KIND", help="only 'leases' is supported")
    group.add_argument("--leader-elect-resource-name", metavar="NAME")
    group.add_argument("--leader-elect-resource-namespace", metavar="NAMESPACE")
    group.add_argument(
        "--v", dest="klog_v", type=int, metavar="LEVEL", help="log verbosity as klog's: 0-1 info, 2+ debug"
    )
    group.add_argument("--write-config-to", metavar="FILE", help="write the effective configuration to FILE and exit")
    for name, (takes_value, _) in IGNORED_FLAGS.items():
        dest = "ignored_" + name.replace("-", "_")
        if takes_value:
            group.add_argument(f"--{name}", dest=dest, help=argparse.SUPPRESS)
        else:
            group.add_argument(f"--{name}", dest=dest, type=go_bool, nargs="?", const=True, help=argparse.SUPPRESS)


def apply_leader_election(model: Any, args: argparse.Namespace) -> list[str]:
    """Override ``model.leaderElection`` with the ``--leader-elect*`` flags given; problems found
    (a resource lock other than leases)."""
    le = model.leaderElection
    if args.leader_elect is not None:
        le.leaderElect = args.leader_elect
    for dest, field in LEADER_ELECTION_FLAGS.items():
        value = getattr(args, dest, None)
        if value is not None:
            setattr(le, field, value)
    if le.resourceLock != "leases":
        return [f"--leader-elect-resource-lock: {le.resourceLock!r} is not supported, only 'leases'"]
    return []


def warn_ignored(args: argparse.Namespace) -> list[str]:
    """Warn about each ignored kube-scheduler flag given; their names."""
    given = []
    for name, (_, why) in IGNORED_FLAGS.items():
        if getattr(args, "ignored_" + name.replace("-", "_"), None) is not None:
            log.warning("--%s is accepted for kube-scheduler compatibility and has no effect: %s", name, why)
            given.append(name)
    return given


def verbosity(args: argparse.Namespace) -> int:
    """The ``-v`` count, or klog's ``--v`` level mapped to it (0-1: info, 2 and up: debug)."""
    if args.klog_v is not None:
        return 0 if args.klog_v < 2 else 1
    return int(args.v)
