"""Cache: running totals, assume / confirm / forget / expire, and the incremental snapshot."""

from __future__ import annotations

import pytest

from kubesched.backend.cache import Cache, CacheError, Snapshot
from kubesched.framework.columns import NodeColumns, NodeSubset
from kubesched.framework.resources import DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST
from kubesched.testing import make_node, make_pod


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_totals_follow_pods() -> None:
    c = Cache()
    c.add_node(make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").obj())
    a = make_pod("a").req(cpu="500m", memory="1Gi").node("n1").info()
    b = make_pod("b").node("n1").info()  # requests nothing
    c.add_pod(a)
    c.add_pod(b)
    ni = c.nodes["n1"]
    assert ni.requested.milli_cpu == 500 and ni.requested.memory == 2**30
    assert ni.non_zero_requested.milli_cpu == 500 + DEFAULT_MILLI_CPU_REQUEST
    assert ni.non_zero_requested.memory == 2**30 + DEFAULT_MEMORY_REQUEST
    c.remove_pod(a.uid)
    assert ni.requested.milli_cpu == 0 and len(ni.pods) == 1


def test_assume_then_confirm() -> None:
    c = Cache()
    c.add_node(make_node("n1").obj())
    p = make_pod("p").req(cpu="1").info()
    c.assume_pod(p.with_node("n1"), "n1")
    assert c.is_assumed(p.uid)
    assert c.nodes["n1"].requested.milli_cpu == 1000
    with pytest.raises(CacheError):
        c.assume_pod(p.with_node("n1"), "n1")
    c.add_pod(p.with_node("n1"))  # the informer confirms the bind
    assert not c.is_assumed(p.uid)
    assert c.nodes["n1"].requested.milli_cpu == 1000  # counted once


def test_forget_undoes_assume() -> None:
    c = Cache()
    c.add_node(make_node("n1").obj())
    p = make_pod("p").req(cpu="1").info().with_node("n1")
    c.assume_pod(p, "n1")
    c.forget_pod(p)
    assert c.pod_count() == 0 and c.nodes["n1"].requested.milli_cpu == 0


def test_assumed_pod_expires_only_after_binding_finished_and_ttl() -> None:
    clock = Clock()
    c = Cache(assumed_ttl=30, clock=clock)
    c.add_node(make_node("n1").obj())
    p = make_pod("p").info().with_node("n1")
    c.assume_pod(p, "n1")
    clock.t = 1000
    assert c.cleanup_expired_assumed_pods() == []  # binding not finished: never expires
    c.finish_binding(p)
    clock.t = 1029
    assert c.cleanup_expired_assumed_pods() == []
    clock.t = 1030
    assert [x.uid for x in c.cleanup_expired_assumed_pods()] == [p.uid]
    assert c.pod_count() == 0


def test_snapshot_clones_only_changed_nodes() -> None:
    c = Cache()
    for i in range(5):
        c.add_node(make_node(f"n{i}").obj())
    snap = Snapshot()
    c.update_snapshot(snap)
    before = {n.name: n for n in snap.list()}
    assert len(before) == 5
    c.add_pod(make_pod("p").req(cpu="1").node("n3").info())
    c.update_snapshot(snap)
    after = {n.name: n for n in snap.list()}
    assert after["n3"] is not before["n3"]
    assert all(after[n] is before[n] for n in before if n != "n3")
    assert after["n3"].requested.milli_cpu == 1000
    assert before["n3"].requested.milli_cpu == 0  # the old clone is untouched


def test_snapshot_drops_removed_nodes_and_interleaves_zones() -> None:
    c = Cache()
    for i, z in enumerate(["a", "a", "a", "b", "b", "c"]):
        c.add_node(make_node(f"{z}{i}").zone(z).obj())
    snap = Snapshot()
    c.update_snapshot(snap)
    assert [n.name for n in snap.list()] == ["a0", "b3", "c5", "a1", "b4", "a2"]
    c.remove_node(make_node("b3").obj())
    c.update_snapshot(snap)
    assert [n.name for n in snap.list()] == ["a0", "b4", "c5", "a1", "a2"]


def test_image_states_count_nodes() -> None:
    c = Cache()
    c.add_node(make_node("n1").image(100, "nginx:1").obj())
    c.add_node(make_node("n2").image(100, "nginx:1").obj())
    assert c.nodes["n1"].image_states["nginx:1"].num_nodes == 2
    c.remove_node(make_node("n2").obj())
    assert c.nodes["n1"].image_states["nginx:1"].num_nodes == 1


def test_snapshot_affinity_lists_follow_incremental_updates() -> None:
    c = Cache()
    for i in range(3):
        c.add_node(make_node(f"n{i}").obj())
    snap = Snapshot()
    c.update_snapshot(snap)
    assert snap.have_pods_with_affinity() == [] and not snap.has_pods_with_affinity()

    def anti(name: str, node: str):  # type: ignore[no-untyped-def]
        term = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}
        return (
            make_pod(name)
            .label("app", "x")
            .set("spec.affinity", {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}})
            .node(node)
            .info()
        )

    a = anti("a", "n1")
    c.add_pod(a)
    c.add_pod(make_pod("plain").node("n2").info())
    c.update_snapshot(snap)
    assert [n.name for n in snap.have_pods_with_affinity()] == ["n1"] and snap.has_pods_with_affinity()
    assert [n.name for n in snap.have_pods_with_required_anti_affinity()] == ["n1"]
    # The listed NodeInfo is the current clone, not a stale one.
    assert snap.have_pods_with_affinity()[0] is snap.get("n1")
    c.add_pod(anti("b", "n1"))
    c.update_snapshot(snap)
    assert snap.have_pods_with_affinity()[0] is snap.get("n1")
    assert len(snap.get("n1").pods_with_affinity) == 2
    c.remove_pod(a.uid)
    c.remove_pod(next(p.uid for p in snap.get("n1").pods if p.name == "b"))
    c.update_snapshot(snap)
    assert snap.have_pods_with_affinity() == [] and snap.have_pods_with_required_anti_affinity() == []
    assert not snap.has_pods_with_affinity()


def test_a_pod_placed_in_the_snapshot_alone_is_undone_by_the_next_update() -> None:
    """A pod group's tentative placements and preemption's removals live in the snapshot only:
    the cache never sees them, and the next update puts the cache's nodes back."""
    from kubesched.framework.types import PodInfo

    cache = Cache()
    cache.add_node(make_node("n1").capacity(cpu="4", pods="10").obj())
    bound = PodInfo(make_pod("bound").req(cpu="1").node("n1").obj())
    cache.add_pod(bound)
    snap = Snapshot()
    cache.update_snapshot(snap)
    cols = snap.columns()
    tentative = PodInfo(make_pod("t").req(cpu="2").obj()).with_node("n1")
    snap.add_pod(tentative)
    assert snap.get("n1").requested.milli_cpu == 3000
    assert int(cols.req_cpu[0]) == 3000
    assert cache.nodes["n1"].requested.milli_cpu == 1000
    assert snap.remove_pod(bound)
    assert snap.get("n1").requested.milli_cpu == 2000
    assert not snap.remove_pod(bound)
    cache.update_snapshot(snap)
    assert [p.name for p in snap.get("n1").pods] == ["bound"]
    assert snap.get("n1").requested.milli_cpu == 1000 and int(snap.columns().req_cpu[0]) == 1000


def test_a_node_subset_keeps_its_rows_while_the_columns_keep_their_names() -> None:
    """A placement's nodes (NodeSubset) look their rows up once; a subset of the same nodes made
    after a tentative placement takes them over; columns built anew are looked up again."""
    from kubesched.framework.types import PodInfo

    cache = Cache()
    for name in ("n0", "n1", "n2"):
        cache.add_node(make_node(name).capacity(cpu="4", pods="10").obj())
    snap = Snapshot()
    cache.update_snapshot(snap)
    cols = snap.columns()
    first = NodeSubset([snap.get("n2"), snap.get("n0")])
    rows = first.rows_in(cols)
    assert rows.tolist() == [cols.index["n2"], cols.index["n0"]]
    assert first.rows_in(cols) is rows
    snap.add_pod(PodInfo(make_pod("t").req(cpu="1").obj()).with_node("n2"))
    second = NodeSubset([snap.get("n2"), snap.get("n0")], first)
    assert second[0] is not first[0] and second.rows_in(cols) is rows
    rebuilt = NodeColumns(snap.list())
    again = second.rows_in(rebuilt)
    assert again is not rows and again.tolist() == [rebuilt.index["n2"], rebuilt.index["n0"]]
    assert NodeSubset(second).rows_in(cols) is not rows  # made without rows_of: looked up anew
