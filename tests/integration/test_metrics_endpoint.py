"""Every ``scheduler_*`` family ``kubesched run`` serves moves as kube-scheduler's does, read
from ``/metrics`` over HTTPS with a token the cluster authorizes: the scheduler runs in-process
(``run``) against the embedded API server over real HTTP, and is driven by pods that bind, a pod
that does not fit until a node arrives (its queueing hints run on NodeAdd), and one that
preempts. ``/metrics/resources`` and ``/metrics/slis`` are read the same way, with the families,
help texts, labels and authorization kube-scheduler 1.37 serves them with."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from polling import eventually
from prometheus_client.parser import text_string_to_metric_families

from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.server.app import RunOptions, run
from kubesched.server.serving import ServingOptions
from kubesched.sim.apiserver.authn import UserInfo
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod

TOKEN = "metrics-admin"
#: In system:monitoring, whose bootstrap role may get /metrics and /metrics/slis (not /metrics/resources).
PROM = "prom-token-0123456789"
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
"""

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def parse(text: str) -> tuple[Samples, dict[str, tuple[str, str]]]:
    """Samples by (name, sorted labels), and each family's (type, help)."""
    samples: Samples = {}
    families: dict[str, tuple[str, str]] = {}
    for fam in text_string_to_metric_families(text):
        families[fam.name] = (fam.type, fam.documentation)
        for s in fam.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples, families


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels``."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= set(ls))


def bound(store: Store, name: str) -> str | None:
    return store.get("Pod", "default", name)["spec"].get("nodeName")


@pytest.fixture
async def running(tmp_path: Path) -> Any:
    store = Store()
    srv = APIServer(store, token=TOKEN, users={PROM: UserInfo("prometheus", "u-prom", ("system:monitoring",))})
    await srv.start()
    kubeconfig = srv.write_kubeconfig(str(tmp_path / "kubeconfig"))
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    opts = RunOptions(kubeconfig=kubeconfig, serving=ServingOptions(bind_address="127.0.0.1", secure_port=0))
    stop = asyncio.Event()
    task = asyncio.create_task(run(load_config(config), opts, stop))
    yield store, opts, task
    stop.set()
    assert await asyncio.wait_for(task, 30) == 0
    await srv.stop()


async def scrape(port: int) -> str:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as http:
        async with http.get(f"https://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}) as r:
            assert r.status == 200
            return await r.text()


async def call(port: int, path: str, token: str | None = TOKEN, method: str = "GET") -> tuple[int, str]:
    """``method`` on ``path`` of the secure port, with ``token`` (None: anonymous)."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as http:
        async with http.request(method, f"https://127.0.0.1:{port}{path}", headers=headers) as r:
            return r.status, await r.text()


async def test_every_family_moves_as_pods_are_scheduled(running: Any, caplog: pytest.LogCaptureFixture) -> None:
    store, opts, _ = running
    caplog.set_level("INFO", logger="kubesched")
    store.create("Node", make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    await eventually(lambda: "serving securely on" in caplog.text, "the secure port", timeout=20)
    port = int(caplog.text.split("serving securely on 127.0.0.1:")[1].split(" ")[0])
    before, families = parse(await scrape(port))

    # Ten identical pods that fit (more than ten cycles: some are sampled for plugin timings).
    for i in range(10):
        store.create("Pod", make_pod(f"small-{i}").req(cpu="100m").obj())
    await eventually(lambda: all(bound(store, f"small-{i}") for i in range(10)), "small pods bound", timeout=30)
    # One that fits nowhere until a bigger node is added: NodeResourcesFit's hint runs on NodeAdd.
    store.create("Pod", make_pod("big").req(cpu="6").obj())
    await eventually(
        lambda: bool((store.get("Pod", "default", "big").get("status") or {}).get("conditions")),
        "the big pod reported unschedulable",
        timeout=30,
    )
    stuck, _ = parse(await scrape(port))
    store.create("Node", make_node("n2").capacity(cpu="8", memory="8Gi", pods="110").obj())
    await eventually(lambda: bound(store, "big") == "n2", "the big pod bound on the new node", timeout=30)
    # One that fits both nodes: PreScore and Score run.
    store.create("Pod", make_pod("medium").req(cpu="1").obj())
    await eventually(lambda: bound(store, "medium"), "the medium pod bound", timeout=30)
    # A low-priority pod takes most of the room left; a high-priority one that fits nowhere preempts.
    store.create("Pod", make_pod("low").req(cpu="2").priority(0).obj())
    await eventually(lambda: bound(store, "low"), "the low-priority pod bound", timeout=30)
    store.create("Pod", make_pod("high").req(cpu="3").priority(1000).obj())

    def preempted() -> bool:
        names = {p["metadata"]["name"] for p in store.list("Pod")[0]}
        return len(names) < 14

    await eventually(preempted, "a lower-priority pod preempted", timeout=30)
    await eventually(lambda: bound(store, "high"), "the preemptor bound", timeout=30)

    async def settled() -> tuple[Samples, dict[str, tuple[str, str]]]:
        return parse(await scrape(port))

    # The binding cycle ends a moment after the API server has the binding: wait for it.
    after, families = await eventually(
        settled, "nothing in flight", until=lambda r: total(r[0], "scheduler_inflight_events") == 0, timeout=10
    )

    def moved(name: str, **labels: str) -> bool:
        return total(after, name, **labels) > total(before, name, **labels)

    assert moved("scheduler_schedule_attempts_total", result="scheduled", profile="default-scheduler")
    assert moved("scheduler_schedule_attempts_total", result="unschedulable", profile="default-scheduler")
    assert moved("scheduler_scheduling_attempt_duration_seconds_count", result="scheduled")
    assert total(after, "scheduler_scheduling_algorithm_duration_seconds_count") >= 13
    assert moved("scheduler_event_handling_duration_seconds_count", event="NodeAdd")
    assert moved("scheduler_event_handling_duration_seconds_count", event="UnscheduledPodAdd")
    assert moved("scheduler_event_handling_duration_seconds_count", event="AssignedPodUpdate")
    for point, plugin in (
        ("PreFilter", "NodeResourcesFit"),
        ("Filter", "NodeResourcesFit"),
        ("PreScore", "PodTopologySpread"),
        ("Score", "NodeResourcesBalancedAllocation"),
    ):
        assert moved("scheduler_plugin_evaluation_total", plugin=plugin, extension_point=point), point
    assert moved("scheduler_plugin_execution_duration_seconds_count")
    assert moved("scheduler_framework_extension_point_duration_seconds_count", extension_point="Filter")
    assert moved("scheduler_queueing_hint_execution_duration_seconds_count", plugin="NodeResourcesFit", event="NodeAdd")
    assert moved("scheduler_queue_incoming_pods_total", queue="active", event="PodAdd")
    assert moved("scheduler_queue_incoming_entities_total", queue="active", event="PodAdd", type="pod")
    assert moved("scheduler_queue_incoming_entities_total", queue="unschedulable", type="pod")
    assert total(stuck, "scheduler_pending_pods", queue="unschedulable") == 1
    assert total(stuck, "scheduler_queued_entities", queue="unschedulable", type="pod") == 1
    assert total(stuck, "scheduler_unschedulable_pods", plugin="NodeResourcesFit") == 1
    assert moved("scheduler_pod_scheduling_sli_duration_seconds_count")
    assert moved("scheduler_pod_scheduling_attempts_count")
    assert total(after, "scheduler_cache_size", type="nodes") == 2
    assert moved("scheduler_preemption_attempts_total")
    assert moved("scheduler_preemption_victims_count")
    assert moved("scheduler_preemption_goroutines_execution_total", result="success")
    assert moved("scheduler_preemption_goroutines_duration_seconds_count", result="success")
    assert moved("scheduler_batch_attempts_total", profile="default-scheduler")
    assert moved("scheduler_get_node_hint_duration_seconds_count", hinted="no_hint", profile="default-scheduler")
    assert moved("scheduler_store_schedule_results_duration_seconds_count", profile="default-scheduler")
    # Gauges of work in flight: present, and back to nothing once the pods are bound.
    assert ("scheduler_goroutines", (("operation", "binding"),)) in after
    assert ("scheduler_inflight_events", (("event", "PodPopped"),)) in after
    assert total(after, "scheduler_inflight_events") == 0
    # Families kube-scheduler 1.37 registers, served even before anything moves them.
    for name, kind, level in (
        ("scheduler_pod_scheduled_after_flush", "counter", "[ALPHA]"),
        ("scheduler_volume_scheduling_stage_error", "counter", "[ALPHA]"),
        ("scheduler_volume_binder_cache_requests", "counter", "[ALPHA]"),
        ("scheduler_batch_rescore_duration_seconds", "histogram", "[ALPHA]"),
        ("scheduler_scheduling_algorithm_duration_seconds", "histogram", "[BETA]"),
        ("scheduler_schedule_attempts", "counter", "[STABLE]"),
    ):
        assert families[name][0] == kind and families[name][1].startswith(level), name
    assert families["scheduler_preemption_goroutines_duration_seconds"][1].startswith(
        "[ALPHA] (Deprecated since 1.37.0) "
    )


REQUEST_HELP = (
    "# HELP kube_pod_resource_request [STABLE] Resources requested by workloads on the cluster, broken down by "
    "pod. This shows the resource usage the scheduler and kubelet expect per pod for resources along with the "
    "unit for the resource if any.\n# TYPE kube_pod_resource_request gauge\n"
)
LIMIT_HELP = (
    "# HELP kube_pod_resource_limit [STABLE] Resources limit for workloads on the cluster, broken down by pod. "
    "This shows the resource usage the scheduler and kubelet expect per pod for resources along with the unit "
    "for the resource if any.\n# TYPE kube_pod_resource_limit gauge\n"
)


async def test_resources_and_slis_are_served_as_kube_scheduler_serves_them(
    running: Any, caplog: pytest.LogCaptureFixture
) -> None:
    store, _, _ = running
    caplog.set_level("INFO", logger="kubesched")
    store.create("Node", make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    await eventually(lambda: "serving securely on" in caplog.text, "the secure port", timeout=20)
    port = int(caplog.text.split("serving securely on 127.0.0.1:")[1].split(" ")[0])

    # Every pod of the cluster but those that ended, whichever scheduler it names, bound or not.
    web = make_pod("web").container(requests={"cpu": "250m", "memory": "64Mi"}, limits={"cpu": "500m"})
    store.create("Pod", web.priority(10).obj())
    store.create("Pod", make_pod("elsewhere").scheduler("other-scheduler").req(cpu="2", nvidia_com_gpu="1").obj())
    store.create("Pod", make_pod("done").node("n1").req(cpu="1").set("status.phase", "Succeeded").obj())
    await eventually(lambda: bound(store, "web") == "n1", "web bound", timeout=30)
    status, text = await eventually(
        lambda: call(port, "/metrics/resources"), "web seen bound", until=lambda r: 'node="n1"' in r[1], timeout=10
    )
    assert status == 200
    assert text == (
        LIMIT_HELP + 'kube_pod_resource_limit{namespace="default",node="n1",pod="web",priority="10",resource="cpu",'
        'scheduler="default-scheduler",unit="cores"} 0.5\n'
        + REQUEST_HELP
        + 'kube_pod_resource_request{namespace="default",node="",pod="elsewhere",priority="",resource="cpu",'
        'scheduler="other-scheduler",unit="cores"} 2\n'
        'kube_pod_resource_request{namespace="default",node="",pod="elsewhere",priority="",'
        'resource="nvidia.com/gpu",scheduler="other-scheduler",unit=""} 1\n'
        'kube_pod_resource_request{namespace="default",node="n1",pod="web",priority="10",resource="cpu",'
        'scheduler="default-scheduler",unit="cores"} 0.25\n'
        'kube_pod_resource_request{namespace="default",node="n1",pod="web",priority="10",resource="memory",'
        'scheduler="default-scheduler",unit="bytes"} 6.7108864e+07\n'
    )

    # Nothing is recorded before a health check is asked for: nothing served.
    assert await call(port, "/metrics/slis") == (200, "")
    for path in ("/healthz", "/livez", "/readyz", "/readyz"):
        assert await call(port, path, token=None) == (200, "ok")
    status, text = await call(port, "/metrics/slis")
    gauge = [f'kubernetes_healthcheck{{name="{n}",type="{t}"}} 1' for n, t in CHECKS]
    totals = [
        f'kubernetes_healthchecks_total{{name="{n}",status="success",type="{t}"}} {2 if t == "readyz" else 1}'
        for n, t in CHECKS
    ]
    assert (status, text.splitlines()) == (
        200,
        [
            "# HELP kubernetes_healthcheck [STABLE] This metric records the result of a single healthcheck.",
            "# TYPE kubernetes_healthcheck gauge",
            *gauge,
            "# HELP kubernetes_healthchecks_total [STABLE] This metric records the results of all healthcheck.",
            "# TYPE kubernetes_healthchecks_total counter",
            *totals,
        ],
    )

    # Authorization as upstream's: neither path is always allowed; system:monitoring's role
    # grants get on /metrics/slis, not on /metrics/resources, and not delete.
    for path in ("/metrics/resources", "/metrics/slis"):
        status, text = await call(port, path, token=None)
        assert status == 403 and f'User \\"system:anonymous\\" cannot get path \\"{path}\\"' in text, text
    assert (await call(port, "/metrics/slis", PROM))[0] == 200
    status, text = await call(port, "/metrics/resources", PROM)
    assert status == 403 and 'User \\"prometheus\\" cannot get path \\"/metrics/resources\\"' in text, text
    status, text = await call(port, "/metrics/slis", PROM, method="DELETE")
    assert status == 403 and 'cannot delete path \\"/metrics/slis\\"' in text, text

    # DELETE resets what /metrics/slis recorded (upstream's resettable handler).
    assert await call(port, "/metrics/slis", method="DELETE") == (200, "metrics reset\n")
    assert await call(port, "/metrics/slis") == (200, "")


#: The checks /healthz, /livez and /readyz run, in the order served (by name, then type).
CHECKS = [
    ("informer-progress", "healthz"),
    ("informer-progress", "livez"),
    ("informer-progress", "readyz"),
    ("informer-served", "readyz"),
    ("informer-sync", "readyz"),
    ("ping", "healthz"),
    ("ping", "livez"),
    ("ping", "readyz"),
]
