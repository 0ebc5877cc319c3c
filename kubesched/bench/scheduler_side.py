"""The scheduler a benchmark run measures, as the run sees it: :class:`LocalScheduler` (in the
run's own process, on the in-memory cluster) and :class:`SchedulerProcess` (a process of its own,
the client of the run's API server over HTTP, as ``kubesched run`` beside a cluster).

The run asks the same of either: whether the scheduler is idle, where pods wait in its queue,
whether its informers have seen the writes made so far, and a measured window's figures — the
attempts' durations, the loop's lag, the cyclic garbage, the CPU and the pod-group cycles, each
taken in the scheduler's process. The run's own process (the workload's ops, and over HTTP the API
server) is measured apart (:attr:`WindowFigures.cpu` is the scheduler's alone).
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import signal
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from kubesched.bench.errors import WorkloadError
from kubesched.bench.measure import CyclicGarbage, LoopLag, cpu_seconds, group_cycles, import_lazy_modules, peak_rss_mib
from kubesched.runtime.framework import ProfileSpec
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.tasks import TaskSet

#: The scheduler client's rate limit over HTTP: high enough never to be the bottleneck
#: (``clientConnection.qps`` is the operator's choice; the default would measure the limit).
CLIENT_QPS = 100_000.0
#: The longest a request to the scheduler's process may take (it answers between two cycles).
ANSWER_TIMEOUT = 120.0


@dataclass
class WindowFigures:
    """What a measured window cost the scheduler, taken in its process."""

    durations: list[float]
    lag_max: float
    garbage: int | None
    cpu: float
    group_cycles: int
    peak_rss_mib: float


class _Measured:
    """A scheduler's side of the measured windows, in the scheduler's process."""

    def __init__(self, sched: Scheduler) -> None:
        self.sched = sched
        self._lag: LoopLag | None = None
        self._garbage: CyclicGarbage | None = None
        self._cpu0 = 0.0
        self._cycles0 = 0

    def idle(self) -> bool:
        return not self.sched.queue.has_active() and self.sched.in_flight() == 0

    def where(self, uids: list[str]) -> list[str | None]:
        return [self.sched.queue.where(uid) for uid in uids]

    def open_window(self, dra: bool) -> None:
        # As `kubesched run` does once its informers have synced: what exists now lives on, and
        # the collector no longer scans it. Set-up's own garbage is freed first, so that the
        # window's (CyclicGarbage) is what the scheduling left.
        import_lazy_modules(dra=dra)
        gc.collect()
        gc.freeze()
        self.sched.stats.attempt_durations.clear()
        self._lag = LoopLag()
        self._garbage = CyclicGarbage()
        self._cpu0 = cpu_seconds()
        self._cycles0 = group_cycles(self.sched)
        self._garbage.start()

    def start_lag(self, tasks: TaskSet | None = None) -> None:
        """The lag is watched from when the window's first pods are in the queue (creating
        thousands of pods in one go is the benchmark's own doing)."""
        if self._lag is not None:
            self._lag.start(tasks)

    def close_window(self) -> WindowFigures:
        lag, garbage = self._lag, self._garbage
        assert lag is not None and garbage is not None, "no window open"
        cpu = cpu_seconds() - self._cpu0
        lag.stop()
        garbage.stop()
        self._lag = self._garbage = None
        return WindowFigures(
            list(self.sched.stats.attempt_durations),
            lag.max,
            garbage.count,
            cpu,
            group_cycles(self.sched) - self._cycles0,
            peak_rss_mib(),
        )


class LocalScheduler:
    """The scheduler in the run's own process (the in-memory cluster): asked directly."""

    #: Whether the scheduler has a process of its own.
    apart = False

    def __init__(self, sched: Scheduler) -> None:
        self.sched = sched
        self._measured = _Measured(sched)
        self._runner: asyncio.Task[None] | None = None
        self._tasks: TaskSet | None = None

    async def start(self, tasks: TaskSet) -> None:
        self._tasks = tasks
        self._runner = tasks.spawn(self.sched.run(), name="scheduling loop")
        await asyncio.sleep(0)

    def failure(self) -> str | None:
        """Why the scheduler stopped, when it has (None while it runs)."""
        if self._runner is not None and self._runner.done():
            return repr(self._runner.exception())
        return None

    async def idle(self) -> bool:
        return self._measured.idle()

    async def where(self, uids: list[str]) -> list[str | None]:
        return self._measured.where(uids)

    async def open_window(self, dra: bool) -> None:
        self._measured.open_window(dra)

    async def start_lag(self) -> None:
        self._measured.start_lag(self._tasks)

    async def close_window(self) -> WindowFigures:
        return self._measured.close_window()

    async def stop(self) -> None:
        await self.sched.stop()
        if self._runner is not None:
            self._runner.cancel()
            await asyncio.gather(self._runner, return_exceptions=True)


class SchedulerProcess:
    """The scheduler in a process of its own, forked when this is made (before the run's API
    server listens) and started by :meth:`start` with the kubeconfig of that server: its
    informers list and watch, it binds and reports over HTTP. The run asks it over a pipe."""

    apart = True

    def __init__(self, profiles: list[ProfileSpec], options: SchedulerOptions, watched_kinds: tuple[str, ...]) -> None:
        self._conn, child = multiprocessing.Pipe()
        # A plain fork (a run of `kubesched bench` is itself a daemonic child, which
        # multiprocessing forbids to have children of its own).
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's side, measured by the run
            code = 1
            try:
                self._conn.close()
                _child(child, profiles, options, watched_kinds)
                code = 0
            except BaseException:  # noqa: BLE001 - the run learns it from the closed pipe
                traceback.print_exc()
            finally:
                os._exit(code)
        child.close()
        self.pid = pid
        self._exitcode: int | None = None
        self._lock = asyncio.Lock()
        self._failure: str | None = None

    def exitcode(self) -> int | None:
        """The process's exit code once it has ended (None while it runs)."""
        if self._exitcode is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self._exitcode = os.waitstatus_to_exitcode(status)
        return self._exitcode

    async def start(self, kubeconfig: str) -> None:
        await self._ask("start", kubeconfig)

    def failure(self) -> str | None:
        if self._failure is None and self.exitcode() is not None:
            self._failure = f"the scheduler's process ended (exit code {self._exitcode})"
        return self._failure

    async def idle(self) -> bool:
        return bool(await self._ask("idle"))

    async def where(self, uids: list[str]) -> list[str | None]:
        return list(await self._ask("where", uids))

    async def informer_versions(self) -> dict[str, int]:
        """Per kind the scheduler watches, the resourceVersion its informer has seen."""
        return dict(await self._ask("informers"))

    async def open_window(self, dra: bool) -> None:
        await self._ask("open", dra)

    async def start_lag(self) -> None:
        await self._ask("lag")

    async def close_window(self) -> WindowFigures:
        figures: WindowFigures = await self._ask("close")
        return figures

    async def stop(self) -> None:
        try:
            if self.exitcode() is None:
                await self._ask("stop")
        except WorkloadError:
            if self.exitcode() is None:
                raise
            # Ended meanwhile (it was never started, say): nothing left to stop.
        finally:
            self._conn.close()
            loop = asyncio.get_running_loop()
            deadline = loop.time() + 10.0
            while self.exitcode() is None and loop.time() < deadline:
                await asyncio.sleep(0.01)
            if self.exitcode() is None:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                self._exitcode = -signal.SIGKILL

    async def _ask(self, what: str, arg: Any = None) -> Any:
        """Send a request and wait for its answer, without holding the run's loop (the API
        server the scheduler talks to runs on it)."""
        async with self._lock:
            if self.failure() is not None:
                raise WorkloadError(f"the scheduler stopped: {self._failure}")
            self._conn.send((what, arg))
            loop = asyncio.get_running_loop()
            ready = loop.create_future()
            fd = self._conn.fileno()

            def answered() -> None:
                if not ready.done():
                    ready.set_result(None)

            loop.add_reader(fd, answered)
            try:
                deadline = loop.time() + ANSWER_TIMEOUT
                while not ready.done():
                    # The process may die without a word: look at it every second.
                    await asyncio.wait([ready], timeout=1.0)
                    if not ready.done() and (self.exitcode() is not None or loop.time() > deadline):
                        self.failure()
                        self._failure = self._failure or f"no answer to {what!r} in {ANSWER_TIMEOUT:g} s"
                        raise WorkloadError(f"the scheduler stopped: {self._failure}")
            finally:
                loop.remove_reader(fd)
            kind, payload = self._conn.recv()
        if kind == "failed":
            self._failure = str(payload)
            raise WorkloadError(f"the scheduler stopped: {payload}")
        return payload


def _child(conn: Connection, profiles: list[ProfileSpec], options: SchedulerOptions, watched: tuple[str, ...]) -> None:
    """The scheduler's process: wait for the kubeconfig, then schedule and answer until told to
    stop (or until the run's end closes the pipe). Its caller ends the process (``os._exit``:
    nothing of the parent's — its atexit hooks, its loop — runs here)."""
    try:
        what, kubeconfig = conn.recv()
    except EOFError:
        return
    if what != "start":
        conn.send(("ok", None))  # stopped before it started
        return
    try:
        import uvloop

        run: Any = uvloop.run
    except ImportError:  # pragma: no cover - uvloop is a dependency where it builds
        run = asyncio.run
    try:
        run(_serve(conn, profiles, options, watched, kubeconfig))
    finally:
        conn.close()


async def _serve(
    conn: Connection, profiles: list[ProfileSpec], options: SchedulerOptions, watched: tuple[str, ...], kubeconfig: str
) -> None:
    from kubesched.cluster.kube.cluster import KubeCluster

    cluster = KubeCluster(kubeconfig=kubeconfig, qps=CLIENT_QPS, burst=int(CLIENT_QPS), watched_kinds=watched)
    tasks = TaskSet("benchmark scheduler")
    async with tasks:
        try:
            sched = Scheduler(profiles, cluster, options)
            runner = tasks.spawn(sched.run(), name="scheduling loop")
        except Exception:  # noqa: BLE001 - told to the run, which raises it
            conn.send(("failed", traceback.format_exc()))
            await cluster.stop()
            return
        measured = _Measured(sched)
        loop = asyncio.get_running_loop()
        requests: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

        def readable() -> None:
            try:
                requests.put_nowait(conn.recv())
            except EOFError:
                loop.remove_reader(conn.fileno())
                requests.put_nowait(("stop", None))

        loop.add_reader(conn.fileno(), readable)
        conn.send(("ok", None))  # the answer to "start"
        try:
            while True:
                what, arg = await requests.get()
                if runner.done() and what != "stop":
                    conn.send(("failed", repr(runner.exception())))
                    continue
                if what == "stop":
                    break
                try:
                    answer = _answer(what, arg, measured, cluster, tasks)
                except Exception:  # noqa: BLE001 - told to the run, which raises it
                    conn.send(("failed", traceback.format_exc()))
                    continue
                conn.send(("ok", answer))
        finally:
            if not conn.closed:
                loop.remove_reader(conn.fileno())
            await sched.stop()
            runner.cancel()
            await asyncio.gather(runner, return_exceptions=True)
            await cluster.stop()
    if not conn.closed:
        try:
            conn.send(("ok", None))  # the answer to "stop"
        except OSError:
            pass


def _answer(what: str, arg: Any, measured: _Measured, cluster: Any, tasks: TaskSet) -> Any:
    if what == "idle":
        return measured.idle()
    if what == "where":
        return measured.where(arg)
    if what == "informers":
        return {kind: int(s["resourceVersion"] or 0) for kind, s in cluster.informer_stats().items()}
    if what == "open":
        measured.open_window(bool(arg))
        return None
    if what == "lag":
        measured.start_lag(tasks)
        return None
    if what == "close":
        return measured.close_window()
    raise ValueError(f"unknown request {what!r}")


__all__ = ["CLIENT_QPS", "LocalScheduler", "SchedulerProcess", "WindowFigures"]
