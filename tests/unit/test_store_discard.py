"""``Store.discard``: a finished simulation's store forgets everything, telling no one."""

from __future__ import annotations

from kubesched.cluster.store import Store


def test_discard_forgets_objects_and_history_and_tells_no_subscriber() -> None:
    store = Store(history=10)
    store.create("Node", {"metadata": {"name": "n1"}})
    store.create("Pod", {"metadata": {"name": "p1", "namespace": "default"}, "spec": {}})
    store.list("Pod")  # a kept list page
    seen: list[str] = []
    store.subscribe(lambda etype, kind, obj, old: seen.append(etype))
    rv = store.resource_version
    store.discard()
    assert store.list("Pod")[0] == [] and store.list("Node")[0] == []
    assert store.events_since(rv) == []
    assert seen == []
    # The store still works: the next write carries on the revision.
    store.create("Node", {"metadata": {"name": "n2"}})
    assert seen == ["ADDED"] and store.resource_version > rv
