"""``/metrics/resources`` and ``/metrics/slis`` in detail: what a pod counts for (containers, init
containers, pod-level resources, overhead), the unit of each resource, numbers as Go writes them,
nothing before the scheduler leads, and failed health checks."""

from __future__ import annotations

from aiohttp.test_utils import TestClient, TestServer

from kubesched.server.health import HealthApp
from kubesched.server.metrics import PrometheusObserver
from kubesched.server.resource_metrics import resource_families, unit_of
from kubesched.server.textformat import go_float
from kubesched.testing import make_pod


def test_numbers_are_written_as_go_writes_them() -> None:
    # strconv.FormatFloat(v, 'g', -1, 64), as the Go client's text format writes values.
    cases = {1.0: "1", 0.0: "0", 0.25: "0.25", 123456.0: "123456", 1234567.0: "1.234567e+06", 1e6: "1e+06"}
    cases |= {0.0001: "0.0001", 0.00001: "1e-05", 67108864.0: "6.7108864e+07", -2.0: "-2", 1.5e-7: "1.5e-07"}
    assert {v: go_float(v) for v in cases} == cases


def test_units_follow_the_resource() -> None:
    assert [unit_of(r) for r in ("cpu", "memory", "storage", "ephemeral-storage", "hugepages-2Mi")] == [
        "cores",
        "bytes",
        "bytes",
        "bytes",
        "bytes",
    ]
    assert (unit_of("attachable-volumes-csi-x"), unit_of("example.com/fpga")) == ("integer", "")


def series(pod: dict[str, object]) -> dict[str, dict[str, float]]:
    requests, limits = resource_families([pod])
    return {
        f.name: {values[5]: v for values, v in f.series.items()} for f in (requests, limits) if f.series
    }  # resource → value


def test_a_pod_counts_as_the_scheduler_counts_it() -> None:
    # The largest init container beats the regular ones; overhead is added to every request and
    # to the limits that are set; a zero request has no series.
    pod = (
        make_pod("p")
        .container(requests={"cpu": "500m", "memory": "1Gi", "example.com/fpga": "0"}, limits={"memory": "2Gi"})
        .init_req(cpu="2")
        .overhead(cpu="100m", memory="10Mi")
        .obj()
    )
    assert series(pod) == {
        "kube_pod_resource_request": {"cpu": 2.1, "memory": 1084227584.0},
        "kube_pod_resource_limit": {"memory": 2157969408.0},
    }
    # Pod-level requests replace the containers' sum of cpu and memory.
    pod["spec"]["resources"] = {"requests": {"cpu": "3", "memory": "4Gi"}}  # type: ignore[index]
    assert series(pod)["kube_pod_resource_request"] == {"cpu": 3.1, "memory": 4305453056.0}


def test_pods_that_ended_have_no_series() -> None:
    for phase in ("Succeeded", "Failed"):
        done = make_pod("p").node("n1").req(cpu="1").set("status.phase", phase).obj()
        assert not any(f.series for f in resource_families([done]))
    running = make_pod("p").node("n1").req(cpu="1").set("status.phase", "Running").obj()
    assert resource_families([running])[0].series


async def test_nothing_before_leading_and_failed_checks_count_as_errors() -> None:
    leading = False
    synced = False
    pods = [make_pod("p").req(cpu="1").obj()]
    app = HealthApp(PrometheusObserver(), ready=lambda: synced, pods=lambda: pods, leading=lambda: leading)
    async with TestClient(TestServer(app.app)) as client:
        r = await client.get("/metrics/resources")
        assert (r.status, await r.text()) == (200, "")
        leading = True
        r = await client.get("/metrics/resources")
        assert 'kube_pod_resource_request{namespace="default",node="",pod="p",' in await r.text()

        assert (await client.get("/readyz")).status == 503
        synced = True
        assert (await client.get("/readyz")).status == 200
        text = await (await client.get("/metrics/slis")).text()
        assert 'kubernetes_healthcheck{name="informer-sync",type="readyz"} 1\n' in text
        assert 'kubernetes_healthchecks_total{name="informer-sync",status="error",type="readyz"} 1\n' in text
        assert 'kubernetes_healthchecks_total{name="informer-sync",status="success",type="readyz"} 1\n' in text
        # Without a cluster to watch there is no informer-progress check.
        assert "informer-progress" not in text
