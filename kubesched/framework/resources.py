"""Kubernetes resource quantities and the :class:`Resource` totals the scheduler adds up.

Quantities are parsed once (and memoised: a cluster repeats the same few strings) into
integers: CPU in millicores, everything else in base units (bytes, counts), rounded up as
upstream's ``MilliValue()``/``Value()`` do.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction
from functools import lru_cache
from typing import Any

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

#: Requests assumed for a container that sets none, used only by scoring (upstream's
#: ``DefaultMilliCPURequest`` and ``DefaultMemoryRequest``) so that many empty pods on one node
#: still look busy to the scorers.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$")


#: The largest decimal exponent accepted (``1e100``); amounts that large fit no int64 anyway.
MAX_EXPONENT = 100


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity."""


@lru_cache(maxsize=4096)
def parse_quantity(value: str | int | float) -> Fraction:
    """Parse ``"100m"``, ``"1.5Gi"``, ``"2"``, ``"1e3"`` into an exact fraction of base units."""
    if isinstance(value, bool):
        raise QuantityError(f"quantity must be a string or a number, not {value!r}")
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        return Fraction(str(value))
    text = str(value).strip()
    m = _QUANTITY.match(text)
    if not m:
        raise QuantityError(
            f"quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {value!r}"
        )
    number, exponent, suffix = m.groups()
    base = Fraction(number)
    if exponent:
        power = int(exponent[1:])
        if abs(power) > MAX_EXPONENT:
            # Far beyond any int64 amount; computing 10**power exactly would take minutes.
            raise QuantityError(f"quantity {value!r} is out of range: the exponent must be within ±{MAX_EXPONENT}")
        return base * Fraction(10) ** power
    if suffix in _BINARY:
        return base * _BINARY[suffix]
    return base * _DECIMAL[suffix or ""]


def milli_value(value: str | int | float) -> int:
    """The quantity in thousandths, rounded up (how CPU is counted)."""
    return math.ceil(parse_quantity(value) * 1000)


def int_value(value: str | int | float) -> int:
    """The quantity in whole base units, rounded up (bytes, counts)."""
    return math.ceil(parse_quantity(value))


@lru_cache(maxsize=4096, typed=True)  # typed: True is no quantity, 1 is
def quantity_of(name: str, value: str | int | float | None) -> int:
    """The integer the scheduler keeps for resource ``name``: millicores for CPU, units else.

    ``null`` is a zero quantity, as the API server decodes it."""
    if value is None:
        return 0
    return milli_value(value) if name == CPU else int_value(value)


def format_quantity(name: str, amount: int) -> str:
    """A readable quantity for tables: ``1500m``, ``2Gi``, ``3``."""
    if name == CPU:
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if name in (MEMORY, EPHEMERAL_STORAGE):
        for suffix, factor in (("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
            if amount and amount % factor == 0:
                return f"{amount // factor}{suffix}"
    return str(amount)


class Resource:
    """A bag of resource amounts: the four named ones as attributes, the rest in ``scalar``.

    The same shape as upstream's ``framework.Resource``; integers only, so adding and comparing
    totals never allocates.
    """

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "allowed_pod_number", "scalar")

    def __init__(
        self,
        milli_cpu: int = 0,
        memory: int = 0,
        ephemeral_storage: int = 0,
        allowed_pod_number: int = 0,
        scalar: dict[str, int] | None = None,
    ) -> None:
        self.milli_cpu = milli_cpu
        self.memory = memory
        self.ephemeral_storage = ephemeral_storage
        self.allowed_pod_number = allowed_pod_number
        self.scalar: dict[str, int] = scalar if scalar is not None else {}

    @classmethod
    def from_list(cls, resources: Mapping[str, Any] | None) -> Resource:
        r = cls()
        if resources:
            r.add_list(resources)
        return r

    def add_list(self, resources: Mapping[str, Any]) -> None:
        for name, value in resources.items():
            self.add(name, quantity_of(name, value))

    def add(self, name: str, amount: int) -> None:
        if name == CPU:
            self.milli_cpu += amount
        elif name == MEMORY:
            self.memory += amount
        elif name == EPHEMERAL_STORAGE:
            self.ephemeral_storage += amount
        elif name == PODS:
            self.allowed_pod_number += amount
        else:
            self.scalar[name] = self.scalar.get(name, 0) + amount

    def get(self, name: str) -> int:
        if name == CPU:
            return self.milli_cpu
        if name == MEMORY:
            return self.memory
        if name == EPHEMERAL_STORAGE:
            return self.ephemeral_storage
        if name == PODS:
            return self.allowed_pod_number
        return self.scalar.get(name, 0)

    def set(self, name: str, amount: int) -> None:
        if name == CPU:
            self.milli_cpu = amount
        elif name == MEMORY:
            self.memory = amount
        elif name == EPHEMERAL_STORAGE:
            self.ephemeral_storage = amount
        elif name == PODS:
            self.allowed_pod_number = amount
        else:
            self.scalar[name] = amount

    def add_resource(self, other: Resource, sign: int = 1) -> None:
        self.milli_cpu += sign * other.milli_cpu
        self.memory += sign * other.memory
        self.ephemeral_storage += sign * other.ephemeral_storage
        self.allowed_pod_number += sign * other.allowed_pod_number
        if other.scalar:
            s = self.scalar
            for k, v in other.scalar.items():
                s[k] = s.get(k, 0) + sign * v

    def max_with(self, other: Resource) -> None:
        """Raise each amount to ``other``'s where it is larger (init containers)."""
        self.milli_cpu = max(self.milli_cpu, other.milli_cpu)
        self.memory = max(self.memory, other.memory)
        self.ephemeral_storage = max(self.ephemeral_storage, other.ephemeral_storage)
        self.allowed_pod_number = max(self.allowed_pod_number, other.allowed_pod_number)
        for k, v in other.scalar.items():
            if v > self.scalar.get(k, 0):
                self.scalar[k] = v

    def names(self) -> list[str]:
        """Resource names with a non-zero amount (the four named ones first)."""
        out = [
            n
            for n, v in (
                (CPU, self.milli_cpu),
                (MEMORY, self.memory),
                (EPHEMERAL_STORAGE, self.ephemeral_storage),
                (PODS, self.allowed_pod_number),
            )
            if v
        ]
        out.extend(k for k, v in self.scalar.items() if v)
        return out

    def clone(self) -> Resource:
        return Resource(
            self.milli_cpu,
            self.memory,
            self.ephemeral_storage,
            self.allowed_pod_number,
            dict(self.scalar) if self.scalar else {},
        )

    def to_dict(self) -> dict[str, int]:
        d = {CPU: self.milli_cpu, MEMORY: self.memory}
        if self.ephemeral_storage:
            d[EPHEMERAL_STORAGE] = self.ephemeral_storage
        if self.allowed_pod_number:
            d[PODS] = self.allowed_pod_number
        d.update(self.scalar)
        return d

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        return (
            self.milli_cpu == other.milli_cpu
            and self.memory == other.memory
            and self.ephemeral_storage == other.ephemeral_storage
            and self.allowed_pod_number == other.allowed_pod_number
            and {k: v for k, v in self.scalar.items() if v} == {k: v for k, v in other.scalar.items() if v}
        )

    def __repr__(self) -> str:
        return f"Resource({self.to_dict()})"


def is_extended_resource(name: str) -> bool:
    """Extended resources: fully-qualified names outside ``kubernetes.io/`` (e.g. ``nvidia.com/gpu``)."""
    if name.startswith("requests."):
        return False
    if "/" not in name:
        return False
    return not (name.startswith("kubernetes.io/") or ".kubernetes.io/" in name.split("/", 1)[0] + "/")


def is_hugepages(name: str) -> bool:
    return name.startswith("hugepages-")
