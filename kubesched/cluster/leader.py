"""Leader election over a ``coordination.k8s.io/v1`` Lease, with client-go's semantics.

Two replicas of the scheduler run; one schedules. The holder of the Lease renews it every
``retry_period``; a renewal that has not succeeded within ``renew_deadline`` costs it the
leadership (it must stop scheduling at once). The others poll the Lease and take it over
once it has not changed for ``lease_duration`` *as they observed it*: like client-go, an
elector times expiry from the moment it last saw the record change on its own clock, never
from the remote ``renewTime``, so clock skew between machines cannot cause two leaders.

Every write carries the ``resourceVersion`` it read (optimistic concurrency): of two
electors racing for the same Lease, the second write is a Conflict and that elector simply
tries again next period. Because ``lease_duration > renew_deadline + retry_period``, a leader
that cannot renew has given up before anyone else may take over.

The Lease is read and written through the small :class:`LeaseClient` protocol, which
:class:`~kubesched.cluster.kube.cluster.KubeCluster` implements over the API (``cluster.leases()``)
and :class:`StoreLeaseClient` over the in-memory :class:`~kubesched.cluster.store.Store`.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, Protocol

from kubesched.cluster.base import ClusterError, NotFound
from kubesched.cluster.store import Store
from kubesched.objects import Obj
from kubesched.tasks import TaskSet

log = logging.getLogger(__name__)


#: client-go's ``JitterFactor`` for the acquire loop: each wait is ``retry_period × [1, 2.2)``.
JITTER_FACTOR = 1.2

OnLost = Callable[[], "Awaitable[None] | None"]


class LeaseClient(Protocol):
    """Reads and writes one kind of object, Leases, as raw JSON dicts."""

    async def get(self, namespace: str, name: str) -> Obj:
        """The Lease; raises :class:`~kubesched.cluster.base.NotFound` when there is none."""

    async def create(self, lease: Obj) -> Obj:
        """Create it; raises :class:`~kubesched.cluster.base.Conflict` when it already exists."""

    async def update(self, lease: Obj) -> Obj:
        """Replace it; raises :class:`~kubesched.cluster.base.Conflict` when
        ``metadata.resourceVersion`` is not the current one."""


class StoreLeaseClient:
    """:class:`LeaseClient` over the in-memory store (the simulator and the tests)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def get(self, namespace: str, name: str) -> Obj:
        return copy.deepcopy(self.store.get("Lease", namespace, name))

    async def create(self, lease: Obj) -> Obj:
        return copy.deepcopy(self.store.create("Lease", lease))

    async def update(self, lease: Obj) -> Obj:
        return copy.deepcopy(self.store.update("Lease", lease, check_version=True))


def micro_time(when: datetime | None = None) -> str:
    """A ``metav1.MicroTime`` as the API serializes it (RFC 3339 with microseconds)."""
    if when is not None:
        return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    # Now (an Event's time, one per pod scheduled): the second's text formatted once per second.
    ns = time.time_ns()
    second, micros = divmod(ns // 1000, 1_000_000)
    if _micro_second[0] != second:
        _micro_second[0] = second
        _micro_second[1] = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{_micro_second[1]}.{micros:06d}Z"


#: The last whole second :func:`micro_time` formatted, and its text.
_micro_second: list[Any] = [None, ""]


def _loop_time() -> float:
    return asyncio.get_running_loop().time()


class LeaderElector:
    """Acquire, hold and release one Lease for ``identity``.

    Typical use::

        elector = LeaderElector(cluster.leases(), identity, "kube-system", "kube-scheduler")
        async with elector.leading(on_lost=scheduler_stop):
            await scheduler.run()

    ``clock`` is a monotonic clock (the event loop's by default, so tests can fast-forward it);
    ``wall_clock`` gives the timestamps written into the Lease, which only humans read.
    """

    def __init__(
        self,
        leases: LeaseClient,
        identity: str,
        namespace: str = "kube-system",
        name: str = "kube-scheduler",
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Callable[[], float] | None = None,
        wall_clock: Callable[[], datetime] | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if not identity:
            raise ValueError("leader election needs a non-empty identity")
        if lease_duration <= renew_deadline:
            raise ValueError(
                f"lease_duration ({lease_duration}) must be greater than renew_deadline ({renew_deadline})"
            )
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError(
                f"renew_deadline ({renew_deadline}) must be greater than retry_period*{JITTER_FACTOR} ({retry_period})"
            )
        self.leases = leases
        self.identity = identity
        self.namespace = namespace
        self.name = name
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.clock = clock or _loop_time
        self.wall_clock = wall_clock or (lambda: datetime.now(UTC))
        self.rng = rng or random.Random()
        #: The Lease spec as last seen, and when (on ``clock``) it was last seen to change.
        self.observed_spec: Obj | None = None
        self.observed_time: float = 0.0
        #: The Lease as last read or written, so the holder can renew without reading first.
        self._lease: Obj | None = None
        self._leading = False
        #: The renewal task (:meth:`start_renewing`); :meth:`stop_renewing` cancels and awaits it.
        self._tasks = TaskSet(f"leader election of {identity}", log)

    # --- state --------------------------------------------------------------------------------
    @property
    def is_leader(self) -> bool:
        """Whether this elector holds the Lease and has not lost it since."""
        return self._leading

    @property
    def leader(self) -> str:
        """The holder as last observed ("" when nobody holds it)."""
        return str((self.observed_spec or {}).get("holderIdentity") or "")

    def _observe(self, lease: Obj, now: float) -> None:
        spec = lease.get("spec") or {}
        if spec != self.observed_spec:
            self.observed_spec = copy.deepcopy(spec)
            self.observed_time = now
        self._lease = lease

    def _record(self, now_wall: str, transitions: int, acquire_time: str | None = None) -> Obj:
        return {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": max(1, int(self.lease_duration)),
            "acquireTime": acquire_time or now_wall,
            "renewTime": now_wall,
            "leaseTransitions": transitions,
        }

    # --- one attempt --------------------------------------------------------------------------
    async def try_acquire_or_renew(self) -> bool:
        """One attempt to take or keep the Lease; ``True`` when this elector holds it now.

        API failures (conflicts included) are "not this time": they are logged, never raised.
        """
        try:
            return await self._try_acquire_or_renew()
        except ClusterError as exc:
            log.info("lease %s/%s: attempt by %s failed: %s", self.namespace, self.name, self.identity, exc)
            return False

    async def _try_acquire_or_renew(self) -> bool:
        now_wall = micro_time(self.wall_clock())
        # The holder renews optimistically from the Lease it last wrote: one request, not two.
        # If anything changed meanwhile the write conflicts and the full path below decides.
        if self._leading and self._lease is not None and self.observed_time + self.lease_duration > self.clock():
            lease = copy.deepcopy(self._lease)
            spec = lease.get("spec") or {}
            lease["spec"] = self._record(now_wall, int(spec.get("leaseTransitions") or 0), spec.get("acquireTime"))
            try:
                written = await self.leases.update(lease)
            except ClusterError as exc:
                log.debug("lease %s/%s: fast renewal failed (%s); re-reading", self.namespace, self.name, exc)
            else:
                self._observe(written, self.clock())
                return True

        try:
            current = await self.leases.get(self.namespace, self.name)
        except NotFound:
            lease = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._record(now_wall, 0),
            }
            created = await self.leases.create(lease)
            self._observe(created, self.clock())
            return True

        self._observe(current, self.clock())
        spec = current.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or 0)
        if holder and holder != self.identity and self.observed_time + duration > self.clock():
            return False  # held by another, and not yet expired as we have seen it

        transitions = int(spec.get("leaseTransitions") or 0)
        if holder == self.identity:
            record = self._record(now_wall, transitions, spec.get("acquireTime"))
        else:
            record = self._record(now_wall, transitions + 1)
        lease = copy.deepcopy(current)
        lease["spec"] = record
        written = await self.leases.update(lease)
        self._observe(written, self.clock())
        return True

    async def _attempt(self, budget: float) -> bool:
        """One attempt bounded by ``budget`` seconds (a hung request is a failed attempt)."""
        try:
            async with asyncio.timeout(budget):
                return await self.try_acquire_or_renew()
        except TimeoutError:
            log.info("lease %s/%s: attempt by %s timed out", self.namespace, self.name, self.identity)
            return False

    # --- acquire / renew / release ------------------------------------------------------------
    async def acquire(self) -> None:
        """Return once this elector is the leader; retry every jittered ``retry_period``."""
        announced = ""
        while True:
            if await self._attempt(self.renew_deadline):
                self._leading = True
                log.info("lease %s/%s: %s is now the leader", self.namespace, self.name, self.identity)
                return
            if self.leader and self.leader != announced:
                announced = self.leader
                log.info("lease %s/%s: %s waits; the leader is %s", self.namespace, self.name, self.identity, announced)
            await asyncio.sleep(self.retry_period * (1.0 + self.rng.random() * JITTER_FACTOR))

    async def renew_until_lost(self) -> None:
        """Renew every ``retry_period``; return when a renewal has failed for ``renew_deadline``."""
        while self._leading:
            await asyncio.sleep(self.retry_period)
            deadline = self.clock() + self.renew_deadline
            while True:
                remaining = deadline - self.clock()
                if remaining <= 0:
                    self._leading = False
                    log.warning(
                        "lease %s/%s: %s could not renew within %ss: leadership lost",
                        self.namespace,
                        self.name,
                        self.identity,
                        self.renew_deadline,
                    )
                    return
                if await self._attempt(remaining):
                    break
                await asyncio.sleep(min(self.retry_period, max(0.0, deadline - self.clock())))

    async def run(self, on_lost: OnLost | None = None) -> None:
        """Acquire, then renew until leadership is lost; then call ``on_lost`` and return."""
        await self.acquire()
        await self.renew_until_lost()
        await _call(on_lost)

    def start_renewing(self, on_lost: OnLost | None = None) -> asyncio.Task[None]:
        """Renew in a background task this elector owns; ``on_lost`` is called when it is lost.

        A renewal task that dies of a bug counts as lost leadership: nothing renews any more.
        """
        if not self._leading:
            raise RuntimeError("start_renewing() before acquire()")
        if any(not task.done() for task in self._tasks):
            raise RuntimeError("already renewing")

        async def renew() -> None:
            try:
                await self.renew_until_lost()
            except Exception:  # a renewal that died of a bug is lost leadership (logged)
                self._leading = False
                log.exception("lease %s/%s: the renewal task of %s crashed", self.namespace, self.name, self.identity)
            await _call(on_lost)

        return self._tasks.spawn(renew(), name=f"lease-renew {self.identity}")

    async def stop_renewing(self) -> None:
        """Cancel the renewal task, if one runs, and wait until it has ended."""
        await self._tasks.cancel()

    async def release(self) -> bool:
        """Give the Lease up (clean shutdown) so another replica takes over at once.

        As client-go's ReleaseOnCancel: empty holder, ``leaseDurationSeconds: 1``. Returns
        ``False`` when this elector was not the leader or the write failed.
        """
        await self.stop_renewing()
        if not self._leading or self._lease is None:
            return False
        self._leading = False
        now_wall = micro_time(self.wall_clock())
        lease = copy.deepcopy(self._lease)
        lease["spec"] = {
            "holderIdentity": "",
            "leaseDurationSeconds": 1,
            "acquireTime": now_wall,
            "renewTime": now_wall,
            "leaseTransitions": int((lease.get("spec") or {}).get("leaseTransitions") or 0),
        }
        try:
            async with asyncio.timeout(self.renew_deadline):
                written = await self.leases.update(lease)
        except (ClusterError, TimeoutError) as exc:
            log.warning("lease %s/%s: %s could not release: %s", self.namespace, self.name, self.identity, exc)
            return False
        self._observe(written, self.clock())
        log.info("lease %s/%s: released by %s", self.namespace, self.name, self.identity)
        return True

    @asynccontextmanager
    async def leading(self, on_lost: OnLost | None = None) -> AsyncIterator[LeaderElector]:
        """Acquire, renew in the background while the body runs, release on exit."""
        await self.acquire()
        self.start_renewing(on_lost)
        try:
            yield self
        finally:
            await self.release()


async def _call(fn: OnLost | None) -> None:
    if fn is None:
        return
    try:
        result = fn()
        if inspect.isawaitable(result):
            await result
    except Exception:  # the caller's callback: its bug is logged, the elector goes on
        log.exception("the on_lost callback of leader election failed")


__all__ = ["JITTER_FACTOR", "LeaderElector", "LeaseClient", "StoreLeaseClient", "micro_time"]
