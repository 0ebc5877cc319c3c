"""The two ways to run a workload once: ``memory`` (the in-memory cluster) and ``http`` (the
embedded API server over HTTP, the scheduler in a process of its own): :func:`run_workload`.

Every shipped workload runs by ``kubesched bench``'s runner from its ops (:mod:`.ops`) on either;
a trace replay is a scenario, on the in-memory cluster only (:mod:`.in_process`).

``batch`` picks the scheduler's batch (columnar) or per-node Filter and Score, ``placements``
(when given) receives each bound pod's node as ``namespace/name``.
"""

from __future__ import annotations

from benchmarks.backends.in_process import run_scenario
from benchmarks.backends.ops import run_ops
from benchmarks.catalogue import Workload
from benchmarks.measure import Result


async def run_workload(
    w: Workload, backend: str = "memory", batch: bool = True, placements: dict[str, str] | None = None
) -> Result:
    """Run ``w`` once on ``backend`` and measure it."""
    if w.scenario is None:
        return await run_ops(w, backend, batch, placements)
    if backend != "memory":
        raise ValueError(f"{w.name}: a trace replay runs on the in-memory cluster only (--backend memory)")
    return await run_scenario(w, batch, placements)


__all__ = ["run_ops", "run_scenario", "run_workload"]
