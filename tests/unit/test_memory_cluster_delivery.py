"""The in-memory cluster's ``wait_delivered``: by default until no change is in flight (what the
deliveries led to included: the test kit steps the scheduler on it); with ``meanwhile=False``
only for the changes made before it was called — a benchmark waited for a moment with none in
flight while the scheduler kept binding (each bind a change of its own) and ran far past its
``--timeout``."""

from __future__ import annotations

import asyncio
from typing import Any

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}


class Chain:
    """A handler whose every node it sees makes the next one: changes without end."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.seen: list[str] = []

    def on_add(self, kind: str, obj: Any) -> None:
        if kind == "Node":
            self.seen.append(obj["metadata"]["name"])
            self.store.create("Node", node(f"n{len(self.seen)}"))

    def on_update(self, kind: str, old: Any, new: Any) -> None:
        pass

    def on_delete(self, kind: str, obj: Any) -> None:
        pass


async def test_changes_made_meanwhile_are_not_waited_for() -> None:
    store = Store()
    cluster = InMemoryCluster(store)
    chain = Chain(store)
    await cluster.start(chain)
    store.create("Node", node("n0"))
    await asyncio.wait_for(cluster.wait_delivered(meanwhile=False), 5)
    assert chain.seen[0] == "n0"  # what was made before the call has arrived
    await cluster.stop()


async def test_every_change_made_before_the_call_has_arrived_when_it_returns() -> None:
    store = Store()
    cluster = InMemoryCluster(store)
    names: list[str] = []

    class Seen(Chain):
        def on_add(self, kind: str, obj: Any) -> None:
            names.append(obj["metadata"]["name"])

    await cluster.start(Seen(store))
    for i in range(50):
        store.create("Node", node(f"m{i}"))
    await cluster.wait_delivered()
    assert names == [f"m{i}" for i in range(50)]
    await cluster.wait_delivered()  # nothing in flight: returns at once
    await cluster.stop()


async def test_by_default_what_the_deliveries_made_arrives_too() -> None:
    store = Store()
    cluster = InMemoryCluster(store)

    class Five(Chain):
        """Makes the next node for each of the first five it sees."""

        def on_add(self, kind: str, obj: Any) -> None:
            self.seen.append(obj["metadata"]["name"])
            if len(self.seen) < 5:
                self.store.create("Node", node(f"n{len(self.seen)}"))

    five = Five(store)
    await cluster.start(five)
    store.create("Node", node("n0"))
    await asyncio.wait_for(cluster.wait_delivered(), 5)
    assert five.seen == ["n0", "n1", "n2", "n3", "n4"]
    await cluster.stop()
