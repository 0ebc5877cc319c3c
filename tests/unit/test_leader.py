"""Lease leader election on the fake loop clock: who leads, when it changes hands, and that two
electors never lead at once."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from kubesched.cluster.base import ClusterError
from kubesched.cluster.leader import LeaderElector, StoreLeaseClient
from kubesched.cluster.store import Store

NS, NAME = "kube-system", "kube-scheduler"


class FlakyLeases(StoreLeaseClient):
    """The store's lease client with a switchable outage and optional request latency."""

    def __init__(self, store: Store, latency: float = 0.0, rng: random.Random | None = None) -> None:
        super().__init__(store)
        self.down = False
        self.latency = latency
        self.rng = rng or random.Random(0)
        self.calls = 0

    async def _io(self) -> None:
        self.calls += 1
        if self.latency:
            await asyncio.sleep(self.rng.random() * self.latency)
        else:
            await asyncio.sleep(0)
        if self.down:
            raise ClusterError("connection refused", 503)

    async def get(self, namespace: str, name: str) -> dict[str, Any]:
        await self._io()
        return await super().get(namespace, name)

    async def create(self, lease: dict[str, Any]) -> dict[str, Any]:
        await self._io()
        return await super().create(lease)

    async def update(self, lease: dict[str, Any]) -> dict[str, Any]:
        await self._io()
        return await super().update(lease)


def elector(leases: StoreLeaseClient, identity: str, **kw: Any) -> LeaderElector:
    return LeaderElector(leases, identity, NS, NAME, rng=random.Random(identity), **kw)


def now() -> float:
    return asyncio.get_running_loop().time()


def lease_spec(store: Store) -> dict[str, Any]:
    return store.get("Lease", NS, NAME)["spec"]


@pytest.mark.looptime
async def test_first_acquires_and_creates_the_lease_second_waits() -> None:
    store = Store()
    a, b = elector(StoreLeaseClient(store), "a"), elector(StoreLeaseClient(store), "b")
    await a.acquire()
    assert a.is_leader
    spec = lease_spec(store)
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"], spec["leaseTransitions"]) == ("a", 15, 0)
    renewing = a.start_renewing()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(b.acquire(), timeout=120)
    assert not b.is_leader and b.leader == "a"
    assert lease_spec(store)["holderIdentity"] == "a"
    assert not renewing.done()
    await a.stop_renewing()


@pytest.mark.looptime
@pytest.mark.parametrize(
    ("lease_duration", "b_starts_at"),
    [(15.0, 0.0), (30.0, 0.0), (15.0, 10.0)],
    ids=["15s-watched-from-start", "30s-watched-from-start", "15s-first-seen-10s-later"],
)
async def test_takeover_only_after_lease_duration_as_observed_locally(
    lease_duration: float, b_starts_at: float
) -> None:
    store = Store()
    a = elector(StoreLeaseClient(store), "a", lease_duration=lease_duration)
    b = elector(StoreLeaseClient(store), "b", lease_duration=lease_duration)
    t0 = now()
    await a.acquire()  # and then never renews: a crashed leader
    await asyncio.sleep(b_starts_at)
    await b.acquire()
    took = now() - t0
    # Expiry counts from when b first saw the record, on b's clock; b polls every 2s-4.4s.
    assert took >= b_starts_at + lease_duration
    assert took <= b_starts_at + lease_duration + 2.0 * 2.2
    spec = lease_spec(store)
    assert (spec["holderIdentity"], spec["leaseTransitions"]) == ("b", 1)


@pytest.mark.looptime
async def test_remote_renew_time_is_ignored() -> None:
    store = Store()
    store.create(
        "Lease",
        {
            "metadata": {"name": NAME, "namespace": NS},
            "spec": {
                "holderIdentity": "gone",
                "leaseDurationSeconds": 15,
                "renewTime": "2001-01-01T00:00:00.000000Z",
                "leaseTransitions": 4,
            },
        },
    )
    b = elector(StoreLeaseClient(store), "b")
    t0 = now()
    await b.acquire()
    assert now() - t0 >= 15.0  # an ancient renewTime does not make the lease expired on sight
    assert lease_spec(store)["leaseTransitions"] == 5


@pytest.mark.looptime
@pytest.mark.parametrize(
    ("outage", "lost"),
    [(5.0, False), (9.0, False), (11.0, True), (60.0, True)],
    ids=["5s-outage-survives", "9s-outage-survives", "11s-outage-loses", "long-outage-loses"],
)
async def test_renew_failure_past_renew_deadline_loses_leadership(outage: float, lost: bool) -> None:
    store = Store()
    leases = FlakyLeases(store)
    a = elector(leases, "a")
    t0 = now()
    lost_at: list[float] = []
    await a.acquire()
    a.start_renewing(on_lost=lambda: lost_at.append(now() - t0))
    await asyncio.sleep(20.5)  # renewed at 2, 4, ..., 20
    leases.down = True
    await asyncio.sleep(outage)
    leases.down = False
    await asyncio.sleep(40)
    if lost:
        # The round starting at 22 gets until 32 to succeed.
        assert lost_at == [pytest.approx(32.0)]
        assert not a.is_leader
    else:
        assert lost_at == []
        assert a.is_leader
        await a.stop_renewing()


@pytest.mark.looptime
async def test_an_async_on_lost_is_awaited_and_run_returns() -> None:
    store = Store()
    leases = FlakyLeases(store)
    a = elector(leases, "a")
    seen: list[str] = []

    async def on_lost() -> None:
        await asyncio.sleep(1)
        seen.append("lost")

    async def break_later() -> None:
        await asyncio.sleep(5)
        leases.down = True

    breaker = asyncio.create_task(break_later())
    await asyncio.wait_for(a.run(on_lost), timeout=60)
    await breaker
    assert seen == ["lost"]


@pytest.mark.looptime
async def test_release_lets_the_other_take_over_at_once() -> None:
    store = Store()
    a, b = elector(StoreLeaseClient(store), "a"), elector(StoreLeaseClient(store), "b")
    async with a.leading():
        waiting = asyncio.create_task(b.acquire())
        await asyncio.sleep(5)
        assert not waiting.done()
        released_at = now()
    spec = lease_spec(store)
    assert (spec["holderIdentity"], spec["leaseDurationSeconds"]) == ("", 1)
    assert not a.is_leader
    await waiting
    assert now() - released_at <= 2.0 * 2.2  # b's next poll, far sooner than the 15s lease
    assert lease_spec(store)["holderIdentity"] == "b"
    assert lease_spec(store)["leaseTransitions"] == 1


@pytest.mark.looptime
async def test_release_when_not_leader_writes_nothing() -> None:
    store = Store()
    a = elector(StoreLeaseClient(store), "a")
    b = elector(StoreLeaseClient(store), "b")
    await a.acquire()
    assert not await b.release()
    assert lease_spec(store)["holderIdentity"] == "a"


@pytest.mark.looptime
@pytest.mark.parametrize("existing", [False, True], ids=["lease-absent", "lease-expired"])
async def test_racing_electors_only_one_wins(existing: bool) -> None:
    store = Store()
    if existing:
        store.create(
            "Lease",
            {"metadata": {"name": NAME, "namespace": NS}, "spec": {"holderIdentity": "", "leaseDurationSeconds": 1}},
        )
    electors = [elector(FlakyLeases(store), f"e{i}") for i in range(5)]
    results = await asyncio.gather(*(e.try_acquire_or_renew() for e in electors))
    assert sum(results) == 1
    winner = electors[results.index(True)]
    assert lease_spec(store)["holderIdentity"] == winner.identity


@pytest.mark.looptime
@pytest.mark.parametrize("seed", [1, 2, 3], ids=["seed-1", "seed-2", "seed-3"])
async def test_never_two_leaders_under_outages_and_latency(seed: int) -> None:
    rng = random.Random(seed)
    store = Store()
    clients = [FlakyLeases(store, latency=0.5, rng=random.Random(seed * 10 + i)) for i in range(3)]
    intervals: list[tuple[str, float, float]] = []
    leading_now: dict[str, float] = {}
    end = 900.0

    async def replica(i: int) -> None:
        e = LeaderElector(clients[i], f"r{i}", NS, NAME, rng=random.Random(seed + i))
        while now() < end:
            await e.acquire()
            assert not leading_now, f"r{i} acquired while {leading_now} leads"
            leading_now[e.identity] = now()
            await e.renew_until_lost()
            intervals.append((e.identity, leading_now.pop(e.identity), now()))

    async def chaos() -> None:
        while now() < end:
            await asyncio.sleep(rng.uniform(5, 40))
            victim = rng.choice(clients)
            victim.down = True
            await asyncio.sleep(rng.uniform(1, 30))
            victim.down = False

    tasks = [asyncio.create_task(replica(i)) for i in range(3)]
    await asyncio.wait_for(chaos(), timeout=end + 60)
    for t in tasks:
        t.cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(r is None or isinstance(r, asyncio.CancelledError) for r in results), results
    assert len(intervals) >= 2  # the chaos did move leadership around
    intervals.sort(key=lambda iv: iv[1])
    for (_, _, end_prev), (_, start_next, _) in zip(intervals, intervals[1:]):
        assert start_next >= end_prev


def test_micro_time_now_is_rfc3339_with_microseconds_and_moves_on() -> None:
    from datetime import UTC, datetime

    from kubesched.cluster.leader import micro_time

    before = datetime.now(UTC)
    stamps = [micro_time() for _ in range(3)]
    after = datetime.now(UTC)
    for text in stamps:
        parsed = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
        assert before <= parsed <= after
    assert stamps == sorted(stamps)
    assert micro_time(datetime(2026, 1, 2, 3, 4, 5, 60, tzinfo=UTC)) == "2026-01-02T03:04:05.000060Z"
