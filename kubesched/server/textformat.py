"""The Prometheus text format as kube-scheduler's handlers write it, for the endpoints that serve
a few families of their own (``/metrics/resources``, ``/metrics/slis``).

What the Go client does and this module does too: families in name order, a family without
series left out, label names in order within a series and the series ordered by their label
values, and numbers as Go formats them (``1``, ``0.1``, ``1.073741824e+09``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

#: The Content-Type of the text format (as ``/metrics`` answers).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def go_float(value: float) -> str:
    """``value`` as Go's ``strconv.FormatFloat(value, 'g', -1, 64)`` writes it: the shortest
    digits that read back the same, with an exponent below 1e-4 and from 1e6 on."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(float(value))).normalize().as_tuple()
    assert isinstance(exponent, int)
    text = "".join(str(d) for d in digits)
    point = len(text) + exponent  # where the decimal point goes, counted from the first digit
    exp = point - 1
    neg = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{neg}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{neg}0.{'0' * -point}{text}"
    if point >= len(text):
        return f"{neg}{text}{'0' * (point - len(text))}"
    return f"{neg}{text[:point]}.{text[point:]}"


def _label_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


@dataclass
class Family:
    """One family: ``kind`` is ``gauge`` or ``counter``; ``series`` maps label values (in the
    order of ``labels``) to the value."""

    name: str
    kind: str
    documentation: str
    labels: tuple[str, ...]
    series: dict[tuple[str, ...], float] = field(default_factory=dict)

    def lines(self) -> Iterable[str]:
        if not self.series:
            return
        yield f"# HELP {self.name} {_help(self.documentation)}\n"
        yield f"# TYPE {self.name} {self.kind}\n"
        order = sorted(range(len(self.labels)), key=lambda i: self.labels[i])
        rows = sorted((tuple(values[i] for i in order), value) for values, value in self.series.items())
        for values, value in rows:
            pairs = ",".join(f'{self.labels[i]}="{_label_value(v)}"' for i, v in zip(order, values, strict=True))
            yield f"{self.name}{{{pairs}}} {go_float(value)}\n" if pairs else f"{self.name} {go_float(value)}\n"


def exposition(families: Iterable[Family]) -> bytes:
    """The families in name order, those without series left out."""
    by_name: Mapping[str, Family] = {f.name: f for f in families}
    return "".join(line for name in sorted(by_name) for line in by_name[name].lines()).encode()
