"""node_requests' path for plain pods (regular containers, no overhead, no pod-level or status
resources) counts exactly as the general one, for well-formed specs and odd ones alike: an odd
spec is left to the general path, which counts it or refuses it with the same message."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework import pod_requests
from kubesched.framework.pod_requests import _aggregate, _container_infos, _spec_requests, node_requests, to_resource

NAMES = st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "ephemeral-storage", "hugepages-2Mi", "example.com/x"])
QUANTITIES = st.one_of(
    st.sampled_from(["0", "1", "100m", "1.5", "2Gi", "512Mi", "3k", "bad", "", "1e3", None]),
    st.integers(min_value=0, max_value=10**6),
    st.sampled_from([1.25, [], {}]),
)
LISTS = st.one_of(st.none(), st.dictionaries(NAMES, QUANTITIES, max_size=4), st.sampled_from([[], "x"]))
RESOURCES = st.one_of(
    st.none(), st.fixed_dictionaries({}, optional={"requests": LISTS, "limits": LISTS}), st.sampled_from([[], 3])
)
CONTAINER = st.one_of(
    st.fixed_dictionaries({"name": st.sampled_from(["a", "b"])}, optional={"resources": RESOURCES}),
    st.sampled_from([None, "c"]),
)
SPEC = st.fixed_dictionaries(
    {},
    optional={
        "containers": st.one_of(st.lists(CONTAINER, max_size=4), st.sampled_from([None, {}, "x"])),
        "initContainers": st.one_of(st.lists(CONTAINER, max_size=2), st.none()),
        "overhead": st.one_of(st.none(), st.dictionaries(NAMES, QUANTITIES, max_size=2)),
    },
)


def res(r: Any) -> tuple[Any, ...]:
    """A Resource's every amount, its scalar resources in their order."""
    return (r.milli_cpu, r.memory, r.ephemeral_storage, r.allowed_pod_number, list(r.scalar.items()))


def general(pod: dict[str, Any]) -> tuple[Any, ...]:
    """What the general path gives (or raises) for a pod without status or pod-level resources."""
    try:
        containers = _container_infos(pod, False)
        overhead = pod_requests.amounts_of((pod.get("spec") or {}).get("overhead"), "spec.overhead")
        plain = _aggregate(containers, _spec_requests, False, {})
        defaulted = _aggregate(containers, _spec_requests, False, pod_requests.NON_ZERO_DEFAULTS)
        if overhead:
            pod_requests._add(plain, overhead)
            pod_requests._add(defaulted, overhead)
    except Exception as exc:  # noqa: BLE001 - the very failure is compared
        return ("raised", type(exc), str(exc))
    return ("counted", res(to_resource(plain)), res(to_resource(defaulted)))


def counted(pod: dict[str, Any]) -> tuple[Any, ...]:
    try:
        requests, non_zero = node_requests(pod)
    except Exception as exc:  # noqa: BLE001
        return ("raised", type(exc), str(exc))
    return ("counted", res(requests), res(non_zero))


@settings(max_examples=400, deadline=None)
@given(SPEC)
def test_node_requests_equals_the_general_count(spec: dict[str, Any]) -> None:
    pod = {"metadata": {"name": "p"}, "spec": spec}
    assert counted(pod) == general(pod)


@pytest.mark.parametrize(
    "spec",
    [
        {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}, {}]},
        {"containers": [{"resources": {"limits": {"nvidia.com/gpu": 2, "cpu": "2"}, "requests": {"cpu": "500m"}}}]},
        {"containers": [{"resources": {"requests": {"cpu": "x"}}}]},
    ],
)
def test_typical_specs(spec: dict[str, Any]) -> None:
    pod = {"metadata": {"name": "p"}, "spec": spec}
    assert pod_requests._simple_container_requests(spec) is not None or "x" in str(spec)
    assert counted(pod) == general(pod)
