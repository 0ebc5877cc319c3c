"""Where the experiments of a sweep run: a pool of processes on this machine, or a Dask cluster.

Both engines take the same calls of the same top-level function and hand back each call's
outcome as it completes, a raised exception being the outcome of that call alone: the other
calls go on. The function and its arguments travel by pickle, so the local pool and a cluster
run exactly the same code.

Dask (the ``distributed`` package, ``pip install 'kubesched[distributed]'``) is imported here
only, and only when a cluster address is given.
"""

from __future__ import annotations

import multiprocessing
import os
import uuid
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.errors import ResearchError

INSTALL_HINT = "pip install 'kubesched[distributed]'"
#: How long reaching a Dask scheduler may take before the sweep gives up.
DEFAULT_CONNECT_TIMEOUT = 10.0
#: How long a Dask cluster may take to show its first worker before the sweep gives up.
DEFAULT_WORKER_TIMEOUT = 60.0


#: What starts a Dask worker without its profiler (the configuration ``distributed.worker.profile.enabled``).
PROFILER_OFF = "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False dask worker ..."


def profiles_tasks() -> bool:
    """Run in a Dask worker: whether it samples a profile of the tasks it runs (Dask's default),
    which takes the GIL from an experiment every few milliseconds."""
    import dask

    return bool(dask.config.get("distributed.worker.profile.enabled", True))


class EngineError(ResearchError, RuntimeError):
    """An engine that cannot start: the extra is missing, the scheduler is unreachable, no worker."""


@dataclass(frozen=True)
class Call:
    """One call of the sweep's function: ``key`` names it (in Dask's dashboard too)."""

    key: str
    args: tuple[Any, ...]


class Engine(Protocol):
    #: What the engine is, for the user: "4 local processes", "Dask cluster at tcp://...".
    description: str
    #: What the user should know about the engine before the sweep runs (a setting that slows it).
    notes: list[str]

    def share(self, value: Any) -> Any:
        """``value`` as an argument many calls take: a cluster ships it to its workers once."""

    def run(self, fn: Callable[..., Any], calls: Sequence[Call]) -> Iterator[tuple[int, Any, BaseException | None]]:
        """``(index in calls, result, None)`` or ``(index, None, exception)``, in completion order."""

    def close(self) -> None: ...


def local_cpu_count() -> int:
    """The cores this process may use (its affinity, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


class LocalEngine:
    """A pool of ``workers`` processes on this machine. Started by ``spawn``: a child never
    inherits the threads of the parent (its progress bar) half-way through a lock."""

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            raise EngineError(f"--workers: must be at least 1, not {workers}")
        self.workers = workers or local_cpu_count()
        self.description = f"{self.workers} local process{'es' if self.workers != 1 else ''}"
        self.notes: list[str] = []
        self._pool: ProcessPoolExecutor | None = None

    def share(self, value: Any) -> Any:
        return value

    def run(self, fn: Callable[..., Any], calls: Sequence[Call]) -> Iterator[tuple[int, Any, BaseException | None]]:
        if not calls:
            return
        self._pool = ProcessPoolExecutor(
            max_workers=min(self.workers, len(calls)), mp_context=multiprocessing.get_context("spawn")
        )
        pending: dict[Future[Any], int] = {self._pool.submit(fn, *call.args): i for i, call in enumerate(calls)}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                i = pending.pop(future)
                exc = future.exception()
                yield (i, None, exc) if exc is not None else (i, future.result(), None)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskEngine:
    """A Dask distributed cluster reached by its scheduler's address. The workers must import
    kubesched and the plugin packages the configurations name (the same environment as here);
    the input files are sent to them, so they need no shared file system."""

    def __init__(
        self,
        address: str,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        worker_timeout: float = DEFAULT_WORKER_TIMEOUT,
    ) -> None:
        try:
            from distributed import Client
        except ImportError as exc:
            if exc.name not in (None, "distributed", "dask"):
                raise EngineError(f"Dask distributed could not be imported: {exc}") from None
            raise EngineError(
                f"--address {address}: running on a Dask cluster needs the distributed extra, which is not "
                f"installed: {INSTALL_HINT}"
            ) from None
        try:
            self._client = Client(address, timeout=connect_timeout)
        except (OSError, TimeoutError, ValueError) as exc:
            raise EngineError(f"--address {address}: cannot reach a Dask scheduler there: {exc}") from None
        try:
            self._client.wait_for_workers(1, timeout=worker_timeout)
        except (OSError, TimeoutError) as exc:
            self._client.close()
            raise EngineError(
                f"--address {address}: the Dask scheduler has no worker (none joined in {worker_timeout:g} s): {exc}"
            ) from None
        workers = self._client.scheduler_info().get("workers", {})
        threads = sum(int(w.get("nthreads", 1)) for w in workers.values())
        self.description = f"Dask cluster at {address} ({len(workers)} workers, {threads} threads)"
        self.notes = []
        profiling = sum(map(bool, self._client.run(profiles_tasks).values()))
        if profiling:
            self.notes.append(
                f"{profiling} of {len(workers)} Dask workers sample a profile of every task "
                "(distributed.worker.profile.enabled), which makes the experiments 5-20% slower: start them with "
                f"{PROFILER_OFF}"
            )
        self._futures: list[Any] = []

    def share(self, value: Any) -> Any:
        return self._client.scatter(value, broadcast=False, hash=True)

    def run(self, fn: Callable[..., Any], calls: Sequence[Call]) -> Iterator[tuple[int, Any, BaseException | None]]:
        from distributed import as_completed

        if not calls:
            return
        run_id = uuid.uuid4().hex[:8]
        futures = [self._client.submit(fn, *call.args, key=f"{call.key}-{run_id}", pure=False) for call in calls]
        self._futures = futures
        index = {f.key: i for i, f in enumerate(futures)}
        for future in as_completed(futures):
            i = index[future.key]
            # a worker that died under the call (several times: Dask retries it elsewhere first)
            # fails this call only; the others go on
            try:
                result = future.result()
            except Exception as exc:  # noqa: BLE001 - whatever the experiment raised is its outcome
                yield i, None, exc
            else:
                yield i, result, None
            future.release()

    def close(self) -> None:
        if self._futures:
            self._client.cancel(self._futures)
            self._futures = []
        self._client.close()


def engine_for(address: str | None, workers: int | None) -> Engine:
    """The Dask cluster at ``address``, or else a pool of ``workers`` local processes."""
    if address is not None:
        if workers is not None:
            raise EngineError("--workers: applies to the local pool only; a Dask cluster has its own workers")
        return DaskEngine(address)
    return LocalEngine(workers)


__all__ = [
    "PROFILER_OFF",
    "Call",
    "DaskEngine",
    "Engine",
    "EngineError",
    "LocalEngine",
    "engine_for",
    "local_cpu_count",
    "profiles_tasks",
]
