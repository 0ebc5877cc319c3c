"""``/metrics/slis``: the health checks' results as metrics, as every 1.37 component serves them
(component-base's ``metrics/prometheus/slis``).

Each time ``/healthz``, ``/livez`` or ``/readyz`` is asked, every check it runs is recorded:
``kubernetes_healthcheck{name,type}`` (a gauge, STABLE) is 1 if the check passed that time and 0
if it failed, ``kubernetes_healthchecks_total{name,type,status}`` (a counter, STABLE) counts the
results by ``status`` (``success``, ``error``). ``type`` is the endpoint (``healthz``, ``livez``,
``readyz``), ``name`` the check as the endpoint's answer names it. Nothing is served before the
first health request, and a ``DELETE`` forgets every result (the handler upstream installs
resets its registry on ``DELETE``).
"""

from __future__ import annotations

from collections import Counter

from kubesched.server.textformat import Family, exposition

SUCCESS, ERROR = "success", "error"
HEALTHCHECK_HELP = "[STABLE] This metric records the result of a single healthcheck."
HEALTHCHECKS_TOTAL_HELP = "[STABLE] This metric records the results of all healthcheck."


class HealthcheckSLIs:
    """The results recorded so far."""

    def __init__(self) -> None:
        self._last: dict[tuple[str, ...], float] = {}
        self._totals: Counter[tuple[str, str, str]] = Counter()

    def observe(self, name: str, check_type: str, passed: bool) -> None:
        """Check ``name`` of endpoint ``check_type`` passed (or failed) just now."""
        self._last[(name, check_type)] = 1.0 if passed else 0.0
        self._totals[(name, check_type, SUCCESS if passed else ERROR)] += 1

    def reset(self) -> None:
        self._last.clear()
        self._totals.clear()

    def exposition(self) -> bytes:
        gauge = Family("kubernetes_healthcheck", "gauge", HEALTHCHECK_HELP, ("name", "type"), dict(self._last))
        total = Family(
            "kubernetes_healthchecks_total",
            "counter",
            HEALTHCHECKS_TOTAL_HELP,
            ("name", "type", "status"),
            {k: float(n) for k, n in self._totals.items()},
        )
        return exposition([gauge, total])
