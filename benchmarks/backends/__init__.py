"""The two ways to run a workload once: ``memory`` (the in-memory cluster) and ``http`` (the
embedded API server over HTTP): :func:`run_workload`.

On ``memory`` every shipped workload runs by ``kubesched bench``'s runner from its ops
(:mod:`.ops`), a trace replay as a scenario (:mod:`.in_process`). On ``http`` the API server
has a process of its own (:mod:`.http`); a shipped case of a shape that backend does not build
(steady states, barriers, deletes, claims allocated before: :attr:`Workload.by_ops`) runs by
``kubesched bench``'s runner, its server in the run's own process.

``batch`` picks the scheduler's batch (columnar) or per-node Filter and Score, ``placements``
(when given) receives each bound pod's node as ``namespace/name``.
"""

from __future__ import annotations

from benchmarks.backends.http import run_http
from benchmarks.backends.in_process import run_memory
from benchmarks.backends.ops import run_ops
from benchmarks.catalogue import Workload
from benchmarks.measure import Result


async def run_workload(
    w: Workload, backend: str = "memory", batch: bool = True, placements: dict[str, str] | None = None
) -> Result:
    """Run ``w`` once on ``backend`` and measure it."""
    if backend == "memory":
        return await run_memory(w, batch, placements)
    if w.by_ops:
        return await run_ops(w, backend, batch, placements)
    return await run_http(w, batch, placements)


__all__ = ["run_http", "run_memory", "run_ops", "run_workload"]
