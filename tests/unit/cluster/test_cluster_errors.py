"""What a cluster answers is raised in the cluster family of the one error root."""

from __future__ import annotations

import pytest

from kubesched import errors
from kubesched.cluster.base import ClusterError, Conflict, Invalid, NotFound
from kubesched.cluster.store import Gone, Store


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ClusterError("refused", 503), 503),
        (NotFound("pods p not found"), 404),
        (Conflict("already bound"), 409),
        (Invalid("metadata.name: Required value"), 422),
        (Gone("too old resource version: 1 (5)"), 410),
    ],
    ids=["cluster-error", "not-found", "conflict", "invalid", "gone"],
)
def test_every_cluster_error_is_caught_by_the_family_and_the_root(error: ClusterError, code: int) -> None:
    assert isinstance(error, errors.ClusterError)
    assert isinstance(error, errors.KubeschedError)
    assert error.code == code


def test_a_watch_from_compacted_history_raises_gone_as_a_cluster_error() -> None:
    store = Store()
    store.create("Namespace", {"metadata": {"name": "a"}})
    store.compact()
    with pytest.raises(errors.ClusterError) as info:
        store.events_since(0)
    assert isinstance(info.value, Gone)
    assert "too old resource version: 0" in str(info.value)
