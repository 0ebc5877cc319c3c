"""CapacityScheduling's quota bookkeeping (plugins/capacity-scheduling): ElasticQuotaInfo and
ElasticQuotaInfos, case for case as scheduler-plugins' ``elasticquota_test.go``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from kubesched import PodInfo, Resource
from kubesched.testing import make_pod

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "capacity-scheduling"
sys.path.insert(0, str(PACKAGE))

from kubesched_capacity_scheduling import (  # noqa: E402
    LOWER_BOUND_OF_MIN,
    UPPER_BOUND_OF_MAX,
    ElasticQuotaInfo,
    ElasticQuotaInfos,
    compute_pod_resource_request,
)

GPU = "nvidia.com/gpu"
MID, HIGH = 100, 1000


def quota_pod(name: str, ns: str, mem: int, cpu: int, gpu: int, priority: int, uid: str, node: str = "") -> PodInfo:
    """Upstream's makePod: one container requesting ``mem`` bytes, ``cpu`` millicores, ``gpu``."""
    b = (
        make_pod(name, ns)
        .uid(uid)
        .priority(priority)
        .container(requests={"memory": str(mem), "cpu": f"{cpu}m", GPU: str(gpu)})
    )
    if node:
        b.node(node)
    return b.info()


def R(cpu: int = 0, mem: int = 0, eph: int = 0, gpu: int | None = None) -> Resource:
    return Resource(milli_cpu=cpu, memory=mem, ephemeral_storage=eph, scalar={GPU: gpu} if gpu is not None else {})


def EQ(used: Resource, min: Resource | None = None, max: Resource | None = None) -> ElasticQuotaInfo:
    return ElasticQuotaInfo("ns1", min=min, max=max, used=used)


THREE_PODS = [
    ("t1-p1", "ns1", 50, 1000, 1),
    ("t1-p2", "ns2", 100, 2000, 0),
    ("t1-p3", "ns2", 0, 0, 2),
]


# --- TestReserveResource / TestUnReserveResource ----------------------------------------------------


@pytest.mark.parametrize(
    ("before", "expected"),
    [pytest.param(EQ(R(1000, 200, gpu=2)), EQ(R(4000, 350, gpu=5)), id="ElasticQuotaInfo ReserveResource")],
)
def test_reserve_resource(before: ElasticQuotaInfo, expected: ElasticQuotaInfo) -> None:
    for name, ns, mem, cpu, gpu in THREE_PODS:
        before.reserve_resource(compute_pod_resource_request(quota_pod(name, ns, mem, cpu, gpu, MID, name, "node-a")))
    assert before == expected


@pytest.mark.parametrize(
    ("before", "expected"),
    [pytest.param(EQ(R(4000, 200, gpu=5)), EQ(R(1000, 50, gpu=2)), id="ElasticQuotaInfo UnReserveResource")],
)
def test_unreserve_resource(before: ElasticQuotaInfo, expected: ElasticQuotaInfo) -> None:
    for name, ns, mem, cpu, gpu in THREE_PODS:
        before.unreserve_resource(compute_pod_resource_request(quota_pod(name, ns, mem, cpu, gpu, MID, name, "node-a")))
    assert before == expected


# --- TestUsedOverMinWith ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("info", "request_", "expected"),
    [
        pytest.param(
            EQ(R(4000, 200, gpu=5), min=R(3000, 100, gpu=5)),
            R(1500, 100),
            True,
            id="ElasticQuotaInfo OverMinWith Sum Of PodRequest And Used Is Bigger Than Min",
        ),
        pytest.param(
            EQ(R(300, 100, gpu=5), min=R(4000, 200, gpu=5)),
            R(100, 50),
            False,
            id="ElasticQuotaInfo OverMinWith Sum Of PodRequest And Used Is Not Bigger Than Min",
        ),
        pytest.param(
            EQ(R(3900, 100, gpu=5)),
            R(100, 100),
            True,
            id="ElasticQuotaInfo OverMinWith ElasticQuotaInfo Doesn't Have Max",
        ),
        pytest.param(
            EQ(R(10, 10), min=R(3000, 100)),
            R(10, 10, gpu=5),
            True,
            id="ElasticQuotaInfo OverMinWith Used And Min Don't Have GPU Value",
        ),
        pytest.param(
            EQ(R(10, 10, 10), min=R(3000, 100, 100)),
            R(10, 10, 10),
            False,
            id="ElasticQuotaInfo OverMinWith EphemeralStorage",
        ),
    ],
)
def test_used_over_min_with(info: ElasticQuotaInfo, request_: Resource, expected: bool) -> None:
    assert info.used_over_min_with(request_) is expected


# --- TestUsedOverMaxWith ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("info", "request_", "expected"),
    [
        pytest.param(
            EQ(R(4000, 200, gpu=5), max=R(4000, 200, gpu=5)),
            R(100, 100),
            True,
            id="ElasticQuotaInfo OverMaxWith Sum Of PodRequest And Used Is Bigger Than Max",
        ),
        pytest.param(
            EQ(R(3900, 100, gpu=5), max=R(4000, 200, gpu=5)),
            R(100, 100),
            False,
            id="ElasticQuotaInfo OverMaxWith Sum Of PodRequest And Used Is Not Bigger Than Max",
        ),
        pytest.param(
            EQ(R(3900, 100, gpu=5)),
            R(100, 100),
            False,
            id="ElasticQuotaInfo OverMaxWith ElasticQuotaInfo Doesn't Have Max",
        ),
        pytest.param(
            EQ(R(10, 10), max=R(3000, 100)),
            R(10, 10, gpu=5),
            False,
            id="ElasticQuotaInfo OverMaxWith Used And Max Don't Have GPU Value",
        ),
        pytest.param(
            EQ(R(10, 10, 10), max=R(3000, 100, 100)),
            R(10, 10, 100),
            True,
            id="ElasticQuotaInfo OverMaxWith EphemeralStorage",
        ),
    ],
)
def test_used_over_max_with(info: ElasticQuotaInfo, request_: Resource, expected: bool) -> None:
    assert info.used_over_max_with(request_) is expected


# --- TestUsedOverMin --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        pytest.param(
            EQ(R(4000, 200, gpu=5), min=R(3000, 300, gpu=5)),
            True,
            id="ElasticQuotaInfo OverMin Used Is Bigger Than Min",
        ),
        pytest.param(
            EQ(R(300, 100, gpu=5), min=R(4000, 200, gpu=5)),
            False,
            id="ElasticQuotaInfo OverMin Used Is Not Bigger Than Min",
        ),
        pytest.param(EQ(R(3900, 100, gpu=5)), True, id="ElasticQuotaInfo OverMin ElasticQuotaInfo Doesn't Have Min"),
        pytest.param(
            EQ(R(300, 100, gpu=5), min=R(4000, 200)),
            True,
            id="ElasticQuotaInfo OverMin Used Has GPU But Min Doesn't Have GPU",
        ),
        pytest.param(EQ(R(300, 100, 100), min=R(4000, 200, 10)), True, id="ElasticQuotaInfo OverMin EphemeralStorage"),
    ],
)
def test_used_over_min(info: ElasticQuotaInfo, expected: bool) -> None:
    assert info.used_over_min() is expected


# --- TestNewElasticQuotaInfo ------------------------------------------------------------------------


def resource_list(cpu: int, mem: int) -> dict[str, Any]:
    """Upstream's makeResourceList: ``cpu`` millicores, ``mem`` bytes."""
    return {"cpu": f"{cpu}m", "memory": str(mem)}


UNBOUNDED = Resource(UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX)
NO_MIN = Resource(LOWER_BOUND_OF_MIN, LOWER_BOUND_OF_MIN, LOWER_BOUND_OF_MIN)


@pytest.mark.parametrize(
    ("max_", "min_", "expected"),
    [
        pytest.param(
            resource_list(100, 1000),
            resource_list(10, 100),
            ElasticQuotaInfo("ns1", min=R(10, 100), max=R(100, 1000), used=R()),
            id="ElasticQuota",
        ),
        pytest.param(
            None,
            resource_list(10, 100),
            ElasticQuotaInfo("ns1", min=R(10, 100), max=UNBOUNDED, used=R()),
            id="ElasticQuota Without Max",
        ),
        pytest.param(
            resource_list(100, 1000),
            None,
            ElasticQuotaInfo("ns1", min=NO_MIN, max=R(100, 1000), used=R()),
            id="ElasticQuota Without Min",
        ),
        pytest.param(
            None,
            None,
            ElasticQuotaInfo("ns1", min=NO_MIN, max=UNBOUNDED, used=R()),
            id="ElasticQuota Without Max and Min",
        ),
    ],
)
def test_new_elastic_quota_info(
    max_: dict[str, Any] | None, min_: dict[str, Any] | None, expected: ElasticQuotaInfo
) -> None:
    got = ElasticQuotaInfo.new("ns1", min_, max_, resource_list(0, 0))
    assert got == expected
    assert got.pods == set()


# --- beyond upstream's tables -----------------------------------------------------------------------


def test_a_pod_is_counted_once_and_uncounted_once() -> None:
    info = ElasticQuotaInfo.new("ns1", resource_list(10, 100), resource_list(100, 1000))
    pod = quota_pod("p", "ns1", 50, 10, 0, MID, "p-uid", "node-a")
    info.add_pod_if_not_present(pod)
    info.add_pod_if_not_present(pod)
    assert info.used == R(10, 50) and info.pods == {"p-uid"}
    info.delete_pod_if_present(pod)
    info.delete_pod_if_present(pod)
    assert info.used == R() and info.pods == set()


def test_a_pod_request_takes_the_largest_init_container_and_the_overhead() -> None:
    pod = make_pod("p").req(cpu="2", memory="1G").req(cpu="1", memory="1G").init_req(cpu="2", memory="3G")
    assert compute_pod_resource_request(pod.info()) == R(3000, 3_000_000_000)
    assert compute_pod_resource_request(pod.overhead(cpu="100m").obj()) == R(3100, 3_000_000_000)


def test_clones_are_independent() -> None:
    infos = ElasticQuotaInfos({"ns1": ElasticQuotaInfo.new("ns1", resource_list(10, 100), None)})
    copy = infos.clone()
    copy["ns1"].add_pod_if_not_present(quota_pod("p", "ns1", 50, 10, 0, MID, "p", "n"))
    assert infos["ns1"].used == R() and infos["ns1"].pods == set()
    assert copy["ns1"].used == R(10, 50)


@pytest.mark.parametrize(
    ("request_", "expected"), [pytest.param(R(0, 50), False, id="at the sum"), pytest.param(R(0, 51), True, id="past")]
)
def test_aggregated_use_is_weighed_against_the_sum_of_min(request_: Resource, expected: bool) -> None:
    infos = ElasticQuotaInfos(
        {
            "ns1": ElasticQuotaInfo("ns1", min=R(0, 100), max=R(0, 200), used=R(0, 150)),
            "ns2": ElasticQuotaInfo("ns2", min=R(0, 100), max=R(0, 200), used=R(0, 0)),
        }
    )
    assert infos.aggregated_used_over_min_with(request_) is expected
