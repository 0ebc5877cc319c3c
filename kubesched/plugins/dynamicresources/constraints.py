"""A claim's constraints across its requests, as the search takes and gives back devices:
``matchAttribute`` (every device of the named requests has the same value of the attribute) and
``distinctAttribute`` (each a different one)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.plugins.dynamicresources.pools import Candidate, Pool


def _attribute(cand: Candidate, name: str) -> tuple[str, Any] | None:
    """The device's attribute ``name`` (fully qualified, or short in the driver's domain) as
    (type, value); ("", None) for a value of a type this allocator does not know."""
    attrs = cand.device.get("attributes") or {}
    value = attrs.get(name)
    if value is None:
        domain, sep, short = name.partition("/")
        if not sep or domain != cand.id[0]:
            return None
        value = attrs.get(short)
        if value is None:
            return None
    if isinstance(value, Mapping):
        for k in ("string", "int", "bool", "version"):
            if value.get(k) is not None:
                return (k, value[k])
    return ("", None)


class Constraint:
    def __init__(self, requests: Iterable[str], attribute: str) -> None:
        self.requests = frozenset(requests)
        self.attribute = attribute

    def applies(self, base: str, sub: str) -> bool:
        if not self.requests:
            return True
        return base in self.requests or (bool(sub) and f"{base}/{sub}" in self.requests)

    def may_add(self, base: str, sub: str, cand: Candidate) -> bool:
        """Whether :meth:`add` would accept ``cand`` (no change made)."""
        raise NotImplementedError

    def add(self, base: str, sub: str, cand: Candidate) -> bool:
        raise NotImplementedError

    def remove(self, base: str, sub: str, cand: Candidate) -> None:
        raise NotImplementedError


class MatchAttribute(Constraint):
    """Every device of the named requests has the same value of the attribute."""

    def __init__(self, requests: Iterable[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.value: tuple[str, Any] | None = None
        self.count = 0

    def may_add(self, base: str, sub: str, cand: Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        value = _attribute(cand, self.attribute)
        if value is None:
            return False
        return self.count == 0 or (bool(value[0]) and value == self.value)

    def add(self, base: str, sub: str, cand: Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        value = _attribute(cand, self.attribute)
        if value is None:
            return False
        if self.count == 0:
            self.value, self.count = value, 1
            return True
        if not value[0] or value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, base: str, sub: str, cand: Candidate) -> None:
        if self.applies(base, sub):
            self.count -= 1


class DistinctAttribute(Constraint):
    """Devices of the named requests have different values of the attribute (as upstream, the
    values are remembered per request name)."""

    def __init__(self, requests: Iterable[str], attribute: str) -> None:
        super().__init__(requests, attribute)
        self.values: dict[str, tuple[str, Any]] = {}
        self.count = 0

    def may_add(self, base: str, sub: str, cand: Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        value = _attribute(cand, self.attribute)
        if value is None:
            return False
        return not self.count or (bool(value[0]) and value not in self.values.values())

    def add(self, base: str, sub: str, cand: Candidate) -> bool:
        if not self.applies(base, sub):
            return True
        value = _attribute(cand, self.attribute)
        if value is None:
            return False
        if self.count and (not value[0] or value in self.values.values()):
            return False
        self.values[base] = value
        self.count += 1
        return True

    def remove(self, base: str, sub: str, cand: Candidate) -> None:
        if self.applies(base, sub):
            self.values.pop(base, None)
            self.count -= 1


def matched(constraints: Iterable[Constraint], base: str, sub: str) -> list[tuple[str, tuple[str, Any]]]:
    """The (attribute, value) pairs every further device of this request must have: those of
    the ``matchAttribute`` constraints on it that hold a device already."""
    return [
        (c.attribute, c.value)
        for c in constraints
        if isinstance(c, MatchAttribute) and c.count and c.value is not None and c.applies(base, sub)
    ]


def none_can_match(pool: Pool, fixed: Iterable[tuple[str, tuple[str, Any]]]) -> bool:
    """Whether no device of ``pool`` has one of the values ``fixed`` (see :func:`matched`)
    asks: then ``may_add`` refuses each of them."""
    for attribute, value in fixed:
        if not value[0]:
            return True  # a value of a type not known matches nothing
        values = pool.attribute_values.get(attribute, _UNSEEN)
        if values is _UNSEEN:
            try:
                values = frozenset(_attribute(c, attribute) for row in pool.candidates for c in row)
            except TypeError:  # a malformed value (a list, a map): look device by device
                values = None
            pool.attribute_values[attribute] = values
        if values is not None and value not in values:
            return True
    return False


_UNSEEN: Any = object()
