"""kube-scheduler 1.37's command-line flags on ``kubesched run`` (and the ``kube-scheduler``
command), so that a manifest written for kube-scheduler runs unchanged.

Every flag kube-scheduler 1.37 accepts is accepted, and each one either acts as upstream's does,
or is named at start in a warning that says why it has no effect here:

* the ``--leader-elect`` family overrides the configuration's ``leaderElection`` (upstream
  honours these flags with or without ``--config``);
* without ``--config``, the deprecated client flags ``--kube-api-qps`` and ``--kube-api-burst``
  set ``clientConnection`` (the rate limit of every request to the API server), as upstream's
  do; with ``--config``, upstream ignores them, and so does this, saying so;
* ``--pod-max-in-unschedulable-pods-duration`` sets how long a pod may stay unschedulable
  before it is retried anyway, with or without ``--config``, as upstream;
* ``--v`` sets the log verbosity, ``--write-config-to`` writes the effective configuration and
  exits, ``--version`` prints the version;
* ``--authentication-kubeconfig`` and ``--authorization-kubeconfig`` act when they name the
  scheduler's own kubeconfig (as kubeadm's manifest does): the secure port's TokenReviews and
  SubjectAccessReviews go through that connection. Naming another file is warned about.

The serving, authentication and authorization flags themselves are defined in
:mod:`kubesched.cli.run`; the rest are here.
"""

from __future__ import annotations

import argparse
import logging
import os
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

_NO_PPROF = "no /debug/pprof endpoints are served (there is no Go runtime to profile)"
_LOGS = "logs are klog-style text lines on stderr, written as they happen"
_FRONT_PROXY = "front-proxy (request header) authentication is not supported; bearer tokens are reviewed"

#: kube-scheduler flags accepted without effect here: name → whether it takes a value (else a
#: boolean that may be given as ``--flag`` or ``--flag=false``), and why it has no effect.
IGNORED_FLAGS: dict[str, tuple[bool, str]] = {
    # authentication / authorization
    "authentication-skip-lookup": (False, "no extension-apiserver-authentication configmap is read"),
    "authentication-tolerate-lookup-failure": (False, "no extension-apiserver-authentication configmap is read"),
    "client-ca-file": (True, "client certificates are not authenticated; bearer tokens are reviewed"),
    "requestheader-client-ca-file": (True, _FRONT_PROXY),
    "requestheader-allowed-names": (True, _FRONT_PROXY),
    "requestheader-extra-headers-prefix": (True, _FRONT_PROXY),
    "requestheader-group-headers": (True, _FRONT_PROXY),
    "requestheader-uid-headers": (True, _FRONT_PROXY),
    "requestheader-username-headers": (True, _FRONT_PROXY),
    # secure serving
    "cert-dir": (True, "the self-signed serving certificate is kept in memory, never written to a directory"),
    "http2-max-streams-per-connection": (True, "the endpoints are served over HTTP/1.1"),
    "disable-http2-serving": (False, "the endpoints are served over HTTP/1.1 already"),
    "permit-address-sharing": (False, "the address is bound once, without SO_REUSEADDR sharing"),
    "permit-port-sharing": (False, "the port is bound once, without SO_REUSEPORT sharing"),
    "tls-cipher-suites": (True, "Python's TLS defaults choose the cipher suites"),
    "tls-min-version": (True, "the minimum TLS version is 1.2, upstream's default"),
    "tls-sni-cert-key": (True, "one serving certificate is used for every server name"),
    # deprecated
    "profiling": (False, _NO_PPROF),
    "contention-profiling": (False, _NO_PPROF),
    "kube-api-content-type": (True, "requests to the API server are sent as JSON"),
    "lock-object-name": (True, "kube-scheduler 1.37 no longer applies it either; use --leader-elect-resource-name"),
    "lock-object-namespace": (
        True,
        "kube-scheduler 1.37 no longer applies it either; use --leader-elect-resource-namespace",
    ),
    "master": (True, "the API server address comes from the kubeconfig"),
    # feature gates and versions
    "emulated-version": (True, "kubesched emulates kube-scheduler 1.37 only"),
    # metrics
    "allow-metric-labels": (True, "no label values are restricted"),
    "allow-metric-labels-manifest": (True, "no label values are restricted"),
    "disabled-metrics": (True, "every metric family is served"),
    "show-hidden-metrics-for-version": (True, "no metrics are hidden"),
    # logs
    "logging-format": (True, _LOGS),
    "log-flush-frequency": (True, _LOGS),
    "log-json-info-buffer-size": (True, _LOGS),
    "log-json-split-stream": (False, _LOGS),
    "log-text-info-buffer-size": (True, _LOGS),
    "log-text-split-stream": (False, _LOGS),
    "vmodule": (True, "verbosity is set for the whole program, with --v"),
    # klog's flags, gone from kube-scheduler since 1.26, still found in old manifests
    "logtostderr": (False, _LOGS),
    "alsologtostderr": (False, _LOGS),
    "log-dir": (True, _LOGS),
    "log-file": (True, _LOGS),
    "log-file-max-size": (True, _LOGS),
    "skip-headers": (False, "log lines keep their headers"),
    "skip-log-headers": (False, "log lines keep their headers"),
    "add-dir-header": (False, "log lines keep their headers"),
    "stderrthreshold": (True, _LOGS),
    "one-output": (False, _LOGS),
}

#: Deprecated client flags upstream applies only without ``--config``: name → configuration field.
CLIENT_FLAGS: dict[str, str] = {"kube-api-qps": "qps", "kube-api-burst": "burst"}


def go_bool(text: str) -> bool:
    """A boolean flag's value as kube-scheduler parses it."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise argparse.ArgumentTypeError(f"invalid boolean value {text!r}")


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid integer {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {text}")
    return value


def add_kube_scheduler_flags(parser: argparse.ArgumentParser, duration: Any) -> None:
    """Add kube-scheduler's flags to ``run``'s parser; ``duration`` parses a Go duration."""
    group = parser.add_argument_group(
        "kube-scheduler flags",
        "as kube-scheduler 1.37 has them: the --leader-elect family overrides the configuration's "
        "leaderElection; without --config, --kube-api-qps and --kube-api-burst set clientConnection; "
        "--pod-max-in-unschedulable-pods-duration, --v, --write-config-to and --version act. Also accepted, "
        "with a warning saying why they have no effect here: " + ", ".join(f"--{n}" for n in IGNORED_FLAGS),
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
        "--kube-api-qps",
        type=_positive_float,
        metavar="QPS",
        help="without --config: requests per second to the API server (clientConnection.qps, default 50)",
    )
    group.add_argument(
        "--kube-api-burst",
        type=_positive_int,
        metavar="N",
        help="without --config: burst of requests to the API server (clientConnection.burst, default 100)",
    )
    group.add_argument(
        "--pod-max-in-unschedulable-pods-duration",
        type=duration,
        metavar="DURATION",
        help="the longest a pod stays unschedulable before it is retried anyway (default 5m)",
    )
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


def apply_client_flags(model: Any, args: argparse.Namespace) -> list[str]:
    """Without ``--config``, set ``clientConnection`` from ``--kube-api-qps``/``--kube-api-burst``
    as upstream does; with it, leave the file's values. The flags given and not applied."""
    ignored = []
    for flag, field in CLIENT_FLAGS.items():
        value = getattr(args, flag.replace("-", "_"), None)
        if value is None:
            continue
        if getattr(args, "config", None):
            ignored.append(flag)
        else:
            setattr(model.clientConnection, field, value)
    return ignored


def warn_ignored(args: argparse.Namespace, kubeconfig: str | None = None) -> list[str]:
    """Warn about each kube-scheduler flag given that has no effect here; their names.

    ``kubeconfig`` is the kubeconfig the scheduler connects with: the delegation kubeconfigs
    act when they name it (the reviews go through that connection) and are warned about else.
    """
    given = []
    for name, (_, why) in IGNORED_FLAGS.items():
        if getattr(args, "ignored_" + name.replace("-", "_"), None) is not None:
            _warn(name, why)
            given.append(name)
    if getattr(args, "config", None):
        for flag in CLIENT_FLAGS:
            if getattr(args, flag.replace("-", "_"), None) is not None:
                _warn(flag, "kube-scheduler ignores it when --config is given; clientConnection in the file applies")
                given.append(flag)
    for flag in ("authentication-kubeconfig", "authorization-kubeconfig"):
        path = getattr(args, flag.replace("-", "_"), None)
        if path and not _same_file(path, kubeconfig):
            what = "TokenReviews" if flag.startswith("authentication") else "SubjectAccessReviews"
            _warn(
                flag,
                f"the secure port's {what} go through the scheduler's own connection "
                f"({kubeconfig or 'in-cluster'}), not {path}",
            )
            given.append(flag)
    return given


def _warn(flag: str, why: str) -> None:
    log.warning("--%s is accepted for kube-scheduler compatibility and has no effect here: %s", flag, why)


def _same_file(a: str, b: str | None) -> bool:
    if not b:
        return False
    pa, pb = os.path.expanduser(a), os.path.expanduser(b)
    try:
        return os.path.samefile(pa, pb)
    except OSError:
        return os.path.abspath(pa) == os.path.abspath(pb)


def verbosity(args: argparse.Namespace) -> int:
    """The ``-v`` count, or klog's ``--v`` level mapped to it (0-1: info, 2 and up: debug)."""
    if args.klog_v is not None:
        return 0 if args.klog_v < 2 else 1
    return int(args.v)


def go_duration(seconds: float) -> str:
    """``seconds`` as Go's time.Duration prints it: ``10s``, ``5m0s``, ``1h0m0s``, ``1.5s``."""
    if seconds == 0:
        return "0s"
    sign = "-" if seconds < 0 else ""
    total = abs(seconds)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{secs:.9f}".rstrip("0").rstrip(".") + "s"
    if hours:
        return f"{sign}{int(hours)}h{int(minutes)}m{text}"
    if minutes:
        return f"{sign}{int(minutes)}m{text}"
    return sign + text


def parser_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """Every argument of ``parser`` (its groups' included), in the order they were added.

    argparse has no public way to list them (``add_argument`` returns each action, but nothing
    gives them back), so this reads the parser's ``_actions``: the one place in kubesched that
    does, allowed by name in ``tests/unit/test_no_private_reach.py``."""
    return list(parser._actions)


def flag_values(parser: argparse.ArgumentParser, args: argparse.Namespace, duration: Any) -> dict[str, str]:
    """Every long flag of ``parser`` with its value in ``args``, as /flagz lists them: booleans
    as ``true``/``false``, durations (flags parsed by ``duration``) as Go prints them, unset
    values as the empty string, lists joined with commas in brackets."""
    values: dict[str, str] = {}
    for action in parser_actions(parser):
        longs = [o for o in action.option_strings if o.startswith("--")]
        if not longs or action.dest == "help":
            continue
        value = getattr(args, action.dest, None)
        name = longs[0][2:]
        if value is None:
            values[name] = ""
        elif isinstance(value, bool):
            values[name] = "true" if value else "false"
        elif action.type is duration and isinstance(value, (int, float)):
            values[name] = go_duration(float(value))
        elif isinstance(value, (list, tuple)):
            values[name] = "[" + ",".join(str(v) for v in value) + "]"
        else:
            values[name] = str(value)
    return values
