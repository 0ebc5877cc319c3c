"""``--feature-gates``: kube-scheduler's ``Name=true|false,...`` flag.

Gates kubesched implements change behaviour; gates it does not know are accepted with a warning
(manifests written for kube-scheduler carry many), never refused. A value that is not a boolean
is refused, naming the gate.
"""

from __future__ import annotations

import logging

from kubesched.errors import ConfigurationError

log = logging.getLogger(__name__)

#: Gates kubesched acts on, with their defaults here.
KNOWN_GATES: dict[str, bool] = {
    # Upstream: beta and on by default since 1.35. Here off unless asked for: it changes which
    # node equally good candidates go to, and the System default spreading makes every pod
    # unsignable anyway.
    "OpportunisticBatching": False,
    # Upstream: beta and on by default since 1.33, as here.
    "SchedulerAsyncPreemption": True,
}


#: What Go's strconv.ParseBool (kube-scheduler's parser) accepts.
_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


class FeatureGateError(ConfigurationError):
    """A malformed ``--feature-gates`` value."""


def parse_feature_gates(text: str | None) -> dict[str, bool]:
    """Every known gate's value: the default, or what ``text`` sets it to."""
    gates = dict(KNOWN_GATES)
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise FeatureGateError(f"--feature-gates: {item!r}: missing bool value for {name or 'a gate'}")
        parsed = _BOOLS.get(value.strip())
        if parsed is None:
            raise FeatureGateError(f"--feature-gates: invalid value of {name}: {value.strip()!r}, err: not a boolean")
        if name not in KNOWN_GATES:
            log.warning("--feature-gates: unrecognized feature gate %s (ignored)", name)
            continue
        gates[name] = parsed
    return gates
