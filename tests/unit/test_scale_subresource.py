"""The scale subresource's reading of a Scale body: anything but a non-negative integer
``spec.replicas`` is refused with 422, naming the field, never a server error."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.sim.apiserver.errors import APIError
from kubesched.sim.apiserver.scale import scaled

RS = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "x"}, "spec": {"replicas": 1}}


def test_replicas_are_taken_from_the_scale() -> None:
    assert scaled(RS, {"spec": {"replicas": 3}})["spec"]["replicas"] == 3


@pytest.mark.parametrize(
    "body",
    [None, [], {"spec": []}, {"spec": [{"replicas": 2}]}, {"spec": {"replicas": -1}}, {"spec": {"replicas": "2"}}],
    ids=["no-body", "list", "spec-list", "spec-list-of-objects", "negative", "string"],
)
def test_a_malformed_scale_is_invalid_not_a_server_error(body: Any) -> None:
    with pytest.raises(APIError) as err:
        scaled(RS, body)
    assert err.value.code == 422 and "spec.replicas: Invalid value" in err.value.message
