"""Binding conditions (upstream's DRADeviceBindingConditions, beta and on in 1.37; it needs
DRAResourceClaimDeviceStatus).

A device whose ResourceSlice entry lists ``bindingConditions`` is not usable when it is
allocated: something outside the scheduler (an attach controller) must first prepare it and say
so in the claim's ``status.devices[]`` entry for that device (matched by driver, pool and
device), with a condition of each of those types set to ``True``. The allocation result carries
copies of the device's ``bindingConditions`` and ``bindingFailureConditions``; PreBind writes the
allocation (with ``allocationTimestamp``), then waits until every binding condition is True, gives
up at once when a failure condition is True, and gives up after ``bindingTimeout`` (counted from
``allocationTimestamp``). The next attempt's Filter finds such a claim unavailable and PostFilter
deallocates it, so that other devices may be tried.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from kubesched.objects import Obj


class BindingFailed(Exception):
    """A binding failure condition of an allocated device is True."""


def _results(claim: Mapping[str, Any]) -> list[Obj]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    return list((allocation.get("devices") or {}).get("results") or ())


def device_status(claim: Mapping[str, Any], result: Mapping[str, Any]) -> Obj | None:
    """The claim's ``status.devices[]`` entry for one allocated device (the share is not
    compared, as upstream)."""
    for d in (claim.get("status") or {}).get("devices") or ():
        if (d.get("device"), d.get("driver"), d.get("pool")) == (
            result.get("device"),
            result.get("driver"),
            result.get("pool"),
        ):
            return dict(d)
    return None


def _condition(conditions: Iterable[Mapping[str, Any]], kind: str) -> Mapping[str, Any] | None:
    for c in conditions:
        if c.get("type") == kind:
            return c
    return None


def _go_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def claim_ready_for_binding(claim: Mapping[str, Any]) -> bool:
    """Whether every binding condition of every allocated device of ``claim`` is True (so also
    when there are none); :class:`BindingFailed` when a failure condition is True."""
    if (claim.get("status") or {}).get("allocation") is None:
        return False
    name = (claim.get("metadata") or {}).get("name", "")
    for result in _results(claim):
        if not result.get("bindingConditions"):
            continue
        status = device_status(claim, result)
        if status is None:
            return False
        conditions = status.get("conditions") or ()
        for kind in result.get("bindingFailureConditions") or ():
            failed = _condition(conditions, kind)
            if failed is not None and failed.get("status") == "True":
                raise BindingFailed(
                    f"claim {name} binding failed: reason={failed.get('reason', '')}, "
                    f"message={_go_quote(str(failed.get('message', '')))}"
                )
        for kind in result.get("bindingConditions") or ():
            c = _condition(conditions, kind)
            if c is None or c.get("status") != "True":
                return False
    return True


def _timestamp(text: Any) -> datetime | None:
    if not text:
        return None
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def claim_timed_out(claim: Mapping[str, Any], timeout: float, now: datetime | None = None) -> bool:
    """Whether ``timeout`` seconds have passed since the allocation of ``claim`` (its
    ``allocationTimestamp``) while one of its devices has binding conditions."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    at = _timestamp(allocation.get("allocationTimestamp"))
    if at is None:
        return False
    if not any(r.get("bindingConditions") is not None for r in _results(claim)):
        return False
    now = now or datetime.now(UTC)
    return at.timestamp() + timeout < now.timestamp()


def has_binding_conditions(claims: Iterable[Mapping[str, Any]]) -> bool:
    """Whether some allocated device of ``claims`` has binding conditions."""
    return any(r.get("bindingConditions") for c in claims for r in _results(c))


def rfc3339_now() -> str:
    """The time as ``allocationTimestamp`` holds it (metav1.Time: whole seconds, UTC)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


__all__ = [
    "BindingFailed",
    "claim_ready_for_binding",
    "claim_timed_out",
    "device_status",
    "has_binding_conditions",
    "rfc3339_now",
]
