"""The store makes a created object's uid and creationTimestamp only where they are absent,
keeping given ones — even empty or null — as they are (no uuid made and dropped for every pod
the simulator creates with its own)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cluster.store import Store


def fresh_store() -> Store:
    store = Store()
    store.create("Namespace", {"metadata": {"name": "default"}})
    return store


@pytest.mark.parametrize("field", ["uid", "creationTimestamp"])
@pytest.mark.parametrize("given", ["given", "", None], ids=["a value", "empty", "null"])
def test_the_store_keeps_a_given_uid_and_creation_time(field: str, given: Any) -> None:
    created = fresh_store().create("Pod", {"metadata": {"name": "p", field: given}, "spec": {}})
    assert created["metadata"][field] == given


def test_the_store_makes_a_uid_and_creation_time_where_there_are_none() -> None:
    store = fresh_store()
    a = store.create("Pod", {"metadata": {"name": "a"}, "spec": {}})["metadata"]
    b = store.create("Pod", {"metadata": {"name": "b"}, "spec": {}})["metadata"]
    assert a["uid"] and b["uid"] and a["uid"] != b["uid"]
    assert a["creationTimestamp"].endswith("Z")
