"""Consumable capacity (DRAConsumableCapacity, beta and on in 1.37): a device with
``allowMultipleAllocations: true`` is shared by several claims while the sum of what they consume
stays within each of its ``capacity`` entries.

What one request consumes of a capacity, as upstream's allocator computes it:

* the request names no amount: the capacity's ``requestPolicy.default``, else the whole value;
* no ``requestPolicy``: the amount asked;
* ``validRange``: at least ``min``, rounded up to ``min + n*step`` when there is a step;
* ``validValues``: the smallest valid value at or above the amount.

The result must still obey the policy (at most ``max``, a multiple of ``step`` from ``min``, one
of ``validValues``), and a request naming a capacity the device does not have cannot use it.
Range arithmetic is in whole units (upstream's ``Quantity.Value()``, rounded up), or in
thousandths when DRAFractionalCapacityRange is on (beta and on in 1.37) and ``min``, ``max`` or
``step`` is fractional.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from kubesched.framework.resources import QuantityError, parse_quantity

_BINARY = (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10))


class CapacityError(ValueError):
    """A capacity request the device cannot take at all (it names a capacity the device lacks)."""


@dataclass(frozen=True, slots=True)
class Amount:
    """A quantity consumed: its exact value and the text results carry (the request's or the
    policy's own spelling when taken as is, a canonical one when computed)."""

    value: Fraction
    text: str


def amount_of(text: Any) -> Amount:
    value = parse_quantity(str(text))
    return Amount(value, str(text))


def format_amount(value: Fraction) -> str:
    """A computed quantity in canonical form: ``4``, ``2Gi``, ``100m``."""
    if value.denominator == 1:
        n = int(value)
        for suffix, factor in _BINARY:
            if n and n % factor == 0:
                return f"{n // factor}{suffix}"
        return str(n)
    milli = math.ceil(value * 1000)
    return f"{milli // 1000}" if milli % 1000 == 0 else f"{milli}m"


def _q(value: Any) -> Fraction | None:
    if value is None:
        return None
    return parse_quantity(str(value))


def _requests(capacity_requests: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (capacity_requests or {}).get("requests") or {}


def consumed(requested: Any, capacity: Mapping[str, Any], fractional: bool) -> Amount:
    """What a request of ``requested`` (``None``: the request names no amount) consumes of one
    device capacity entry ``{value, requestPolicy}``."""
    policy = capacity.get("requestPolicy")
    if requested is None:
        if policy and policy.get("default") is not None:
            return amount_of(policy["default"])
        return amount_of(capacity.get("value", "0"))
    asked = amount_of(requested)
    if not policy:
        return asked
    valid_range = policy.get("validRange")
    if valid_range and valid_range.get("min") is not None:
        return _round_up_range(asked, valid_range, fractional)
    valid_values = policy.get("validValues")
    if valid_values is not None:
        for v in valid_values:
            if asked.value <= parse_quantity(str(v)):
                return amount_of(v)
        return asked
    return asked


def _scale(valid_range: Mapping[str, Any], fractional: bool) -> int:
    """1 (whole units) or 1000 (thousandths, for a fractional range under DRAFractionalCapacityRange)."""
    if not fractional:
        return 1
    for key in ("min", "max", "step"):
        v = _q(valid_range.get(key))
        if v is not None and v.denominator != 1:
            return 1000
    return 1


def _scaled(value: Fraction, scale: int) -> int:
    return math.ceil(value * scale)


def _round_up_range(asked: Amount, valid_range: Mapping[str, Any], fractional: bool) -> Amount:
    minimum = parse_quantity(str(valid_range["min"]))
    if asked.value < minimum:
        return amount_of(valid_range["min"])
    step = _q(valid_range.get("step"))
    if step is None:
        return asked
    scale = _scale(valid_range, fractional)
    lo, st = _scaled(minimum, scale), _scaled(step, scale)
    added = _scaled(asked.value, scale) - lo
    n = -(-added // st) if st else 0
    value = Fraction(lo + st * n, scale)
    return Amount(value, format_amount(value))


def violates_policy(amount: Amount, policy: Mapping[str, Any] | None, fractional: bool) -> bool:
    if not policy:
        return False
    default = policy.get("default")
    if default is not None and parse_quantity(str(default)) == amount.value:
        return False
    valid_range = policy.get("validRange")
    if valid_range is not None:
        maximum = _q(valid_range.get("max"))
        if maximum is not None and amount.value > maximum:
            return True
        step = _q(valid_range.get("step"))
        if step is not None:
            scale = _scale(valid_range, fractional)
            lo = _scaled(_q(valid_range.get("min")) or Fraction(0), scale)
            st = _scaled(step, scale)
            return bool(st) and (_scaled(amount.value, scale) - lo) % st != 0
        return False
    valid_values = policy.get("validValues")
    if valid_values:
        return all(parse_quantity(str(v)) != amount.value for v in valid_values)
    return False


#: An exact amount: a whole number as an ``int`` (the common case, and adding ints is many times
#: quicker than adding Fractions), any other as a ``Fraction``. Equal values compare and add alike.
Exact = int | Fraction


def exact(value: Exact) -> Exact:
    """``value``, an ``int`` when it is whole."""
    if type(value) is Fraction and value.denominator == 1:
        return value.numerator
    return value


#: What one request asks of each capacity of one device: (name, amount consumed, the device's
#: total), or ``None`` when the request can never fit the device (see :func:`demand`).
Demand = tuple[tuple[str, Exact, Exact], ...] | None


def demand(capacity_requests: Mapping[str, Any] | None, device: Mapping[str, Any], fractional: bool) -> Demand:
    """What the request consumes of each of the device's capacities, with each capacity's total:
    the part of whether it fits (:func:`fits_demand`) that depends on the request and the device
    alone, so that it is worked out once per request and device. ``None``: it never fits (an amount the policy
    refuses, a quantity that does not parse). Raises :class:`CapacityError` when the request
    names a capacity the device does not have."""
    capacities = device.get("capacity") or {}
    requests = _requests(capacity_requests)
    for name in requests:
        if name not in capacities:
            raise CapacityError("some requested capacity has not been defined")
    out = []
    for name, cap in capacities.items():
        if not isinstance(cap, Mapping):
            continue
        try:
            amount = consumed(requests.get(name), cap, fractional)
            total = parse_quantity(str(cap.get("value", "0")))
        except QuantityError:
            return None
        if violates_policy(amount, cap.get("requestPolicy"), fractional):
            return None
        out.append((name, exact(amount.value), exact(total)))
    return tuple(out)


def fits_demand(wanted: Demand, in_use: Mapping[str, Exact] | None, allocating: Mapping[str, Exact] | None) -> bool:
    """Whether a request's :func:`demand` fits beside what allocated claims (``in_use``) and this
    allocation so far (``allocating``) consume of the device."""
    if wanted is None:
        return False
    for name, amount, total in wanted:
        used = amount
        if in_use and (taken := in_use.get(name)):
            used = used + taken
        if allocating and (held := allocating.get(name)):
            used = used + held
        if used > total:
            return False
    return True


def consumption(
    capacity_requests: Mapping[str, Any] | None, device: Mapping[str, Any], fractional: bool
) -> dict[str, Amount]:
    """What the request consumes of each of the device's capacities (``consumedCapacity``)."""
    requests = _requests(capacity_requests)
    out: dict[str, Amount] = {}
    for name, cap in (device.get("capacity") or {}).items():
        if isinstance(cap, Mapping):
            out[name] = consumed(requests.get(name), cap, fractional)
    return out


def add_to(total: dict[str, Exact], amounts: Mapping[str, Exact], sign: int = 1) -> None:
    """Add ``amounts`` (times ``sign``) to ``total``, keeping whole amounts ``int``."""
    for name, value in amounts.items():
        total[name] = exact(total.get(name, 0) + sign * value)
