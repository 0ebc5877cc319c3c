"""What a run measures: the package's :mod:`kubesched.bench.measure` (one :class:`Result` per
workload run, taken by ``kubesched bench``'s runner, with its instruments: loop lag, percentiles,
CPU, peak RSS) and upstream's floor put into it (:func:`with_floor`)."""

from __future__ import annotations

from kubesched.bench.measure import Floor, Result, with_floor

__all__ = ["Floor", "Result", "with_floor"]
