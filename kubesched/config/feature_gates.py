"""``--feature-gates``: kube-scheduler's ``Name=true|false,...`` flag.

The gates are kube-scheduler 1.37's, with its defaults (kubesched.framework.features). Gates
kubesched does not know are accepted with a warning (manifests written for kube-scheduler carry
the gates of every component), never refused. A value that is not a boolean, or a locked gate
set away from its default, is refused, naming the gate.
"""

from __future__ import annotations

import logging

from kubesched.errors import ConfigurationError
from kubesched.framework.features import GATES, FeatureGates

log = logging.getLogger(__name__)

#: Gates kubesched knows, with 1.37's defaults (kubesched.framework.features).
KNOWN_GATES: dict[str, bool] = {name: spec.default for name, spec in GATES.items()}


#: What Go's strconv.ParseBool (kube-scheduler's parser) accepts.
_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}


class FeatureGateError(ConfigurationError):
    """A malformed ``--feature-gates`` value."""


def parse_feature_gates(text: str | None) -> FeatureGates:
    """Every known gate's value: 1.37's default, or what ``text`` sets it to. A gate locked to
    its default in 1.37 cannot be set to the other value."""
    gates: dict[str, bool] = {}
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
    try:
        return FeatureGates(gates)
    except ConfigurationError as exc:
        raise FeatureGateError(f"--feature-gates: {exc}") from None
