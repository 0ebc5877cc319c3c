"""The two ways to run a workload once: ``memory`` (the in-memory cluster) and ``http`` (the
embedded API server over HTTP, the scheduler in a process of its own): :func:`run_workload`.

Every workload, the trace replays among them, runs by ``kubesched bench``'s runner from the ops
of its shipped case (:mod:`.ops`) on either.

``batch`` picks the scheduler's batch (columnar) or per-node Filter and Score, ``placements``
(when given) receives each bound pod's node as ``namespace/name``.
"""

from __future__ import annotations

from benchmarks.backends.ops import run_ops
from benchmarks.catalogue import Workload
from benchmarks.measure import Result


async def run_workload(
    w: Workload, backend: str = "memory", batch: bool = True, placements: dict[str, str] | None = None
) -> Result:
    """Run ``w`` once on ``backend`` and measure it."""
    return await run_ops(w, backend, batch, placements)


__all__ = ["run_ops", "run_workload"]
