"""The two ways to run a workload once: ``memory`` (the in-memory cluster, :mod:`.in_process`)
and ``http`` (the embedded API server over HTTP, :mod:`.http`).

Each backend is a coroutine function ``run(w, batch=True, placements=None) -> Result``: ``batch``
picks the scheduler's batch (columnar) or per-node Filter and Score, ``placements`` (when given)
receives each bound pod's node as ``namespace/name``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from benchmarks.backends.http import run_http
from benchmarks.backends.in_process import run_memory
from benchmarks.measure import Result

#: A backend: runs a workload once and measures it.
Backend = Callable[..., Coroutine[Any, Any, Result]]

BACKENDS: dict[str, Backend] = {"memory": run_memory, "http": run_http}


def runner_for(backend: str) -> Backend:
    """The coroutine function that runs a workload once on ``backend`` (``memory`` or ``http``)."""
    return BACKENDS[backend]


__all__ = ["BACKENDS", "Backend", "run_http", "run_memory", "runner_for"]
