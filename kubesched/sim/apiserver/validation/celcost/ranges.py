"""Cost and size ranges as cel-go computes them: (min, max) pairs of unsigned 64-bit counts
whose sums and products saturate at 2**64-1, a factor applied rounding up."""

from __future__ import annotations

import math
from dataclasses import dataclass

U64 = 2**64 - 1
Range = tuple[int, int]

UNKNOWN: Range = (0, U64)


def add(a: Range, b: Range) -> Range:
    return min(a[0] + b[0], U64), min(a[1] + b[1], U64)


def mul(a: Range, b: Range) -> Range:
    return min(a[0] * b[0], U64), min(a[1] * b[1], U64)


def _factor1(x: int, f: float) -> int:
    xf = float(x)
    if xf > 0 and f > 0 and xf > U64 / f:
        return U64
    c = math.ceil(xf * f)
    return U64 if c >= 2.0**64 else int(c)


def factor(a: Range, f: float) -> Range:
    return _factor1(a[0], f), _factor1(a[1], f)


def union(a: Range, b: Range) -> Range:
    return min(a[0], b[0]), max(a[1], b[1])


@dataclass
class Entry:
    """The sizes of a container literal's keys and values."""

    kind: str
    key: Range
    val: Range

    def union(self, other: Entry | None) -> Entry | None:
        if other is None:
            return None
        return Entry(self.kind, union(self.key, other.key), union(self.val, other.val))
