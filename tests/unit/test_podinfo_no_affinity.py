"""A pod without affinity gets what an empty affinity compiles to (PodInfo skips compiling
nothing), and each its own lists."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.types import PodInfo

FIELDS = (
    "required_node_affinity",
    "preferred_node_affinity",
    "required_affinity",
    "required_anti_affinity",
    "preferred_affinity",
    "preferred_anti_affinity",
)


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": {"containers": [{"name": "c"}], **spec}}


@pytest.mark.parametrize("affinity", [None, {}, [], "missing"])
def test_no_affinity_is_an_empty_one(affinity: Any) -> None:
    spec = {} if affinity == "missing" else {"affinity": affinity}
    empty = PodInfo(pod(affinity={"nodeAffinity": {}, "podAffinity": {}, "podAntiAffinity": {}}))
    pi = PodInfo(pod(**spec))
    assert [getattr(pi, f) for f in FIELDS] == [getattr(empty, f) for f in FIELDS]
    other = PodInfo(pod(**spec))
    assert all(getattr(pi, f) is not getattr(other, f) for f in FIELDS[1:])


def test_an_affinity_that_is_not_a_mapping_is_refused_as_before() -> None:
    with pytest.raises(Exception, match="pod default/p"):
        PodInfo(pod(affinity=["x"]))
