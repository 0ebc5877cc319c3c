"""The DRA binding-conditions families of kube-scheduler 1.37, read from ``/metrics`` over
HTTPS as ``kubesched run`` serves them: a pod whose claim gets a device with binding conditions
waits in DynamicResources' PreBind until an attach controller (here, the test) sets the condition
True; the wait is counted and timed per driver with ``status="success"``."""

from __future__ import annotations

import asyncio
import copy
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
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node

TOKEN = "metrics-admin"
DRIVER = "gpu.example.com"
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
"""
ALLOCATIONS = "scheduler_dra_bindingconditions_allocations_total"
WAITS = "scheduler_dra_bindingconditions_wait_duration_seconds"


def objects() -> list[dict[str, Any]]:
    return [
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}},
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "n1-gpus"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "n1",
                "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                "devices": [
                    {
                        "name": "gpu-0",
                        "bindsToNode": True,
                        "bindingConditions": ["example.com/attached"],
                        "bindingFailureConditions": ["example.com/failed"],
                    }
                ],
            },
        },
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "gpu-claim", "namespace": "default"},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}},
        },
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "trainer", "namespace": "default"},
            "spec": {
                "resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu-claim"}],
                "containers": [
                    {
                        "name": "main",
                        "image": "registry.k8s.io/pause:3.10",
                        "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": "gpu"}]},
                    }
                ],
            },
        },
    ]


@pytest.fixture
async def running(tmp_path: Path) -> Any:
    store = Store()
    srv = APIServer(store, token=TOKEN)
    await srv.start()
    kubeconfig = srv.write_kubeconfig(str(tmp_path / "kubeconfig"))
    config = tmp_path / "config.yaml"
    config.write_text(CONFIG)
    opts = RunOptions(kubeconfig=kubeconfig, serving=ServingOptions(bind_address="127.0.0.1", secure_port=0))
    stop = asyncio.Event()
    task = asyncio.create_task(run(load_config(config), opts, stop))
    yield store
    stop.set()
    assert await asyncio.wait_for(task, 30) == 0
    await srv.stop()


async def scrape(port: int) -> tuple[dict[tuple[str, tuple[tuple[str, str], ...]], float], dict[str, str]]:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=False)) as http:
        async with http.get(f"https://127.0.0.1:{port}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}) as r:
            assert r.status == 200
            text = await r.text()
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    helps: dict[str, str] = {}
    for fam in text_string_to_metric_families(text):
        helps[fam.name] = f"{fam.type} {fam.documentation}"
        for s in fam.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples, helps


def labels(status: str, **more: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({"profile": "default-scheduler", "driver": DRIVER, "status": status, **more}.items()))


async def test_a_binding_condition_wait_is_counted_and_timed(running: Store, caplog: pytest.LogCaptureFixture) -> None:
    store = running
    caplog.set_level("INFO", logger="kubesched")
    store.create("Node", make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    await eventually(lambda: "serving securely on" in caplog.text, "the secure port", timeout=20)
    port = int(caplog.text.split("serving securely on 127.0.0.1:")[1].split(" ")[0])
    before, helps = await scrape(port)
    # Registered before anything moves them, as upstream registers them with the gate on.
    assert helps["scheduler_dra_bindingconditions_allocations"] == (
        "counter [ALPHA] Number of allocations using devices with BindingConditions, counted per driver per "
        "scheduling attempt"
    )
    assert helps[WAITS] == (
        "histogram [ALPHA] Time in seconds spent waiting for BindingConditions to be satisfied during PreBind."
    )
    assert (ALLOCATIONS, labels("success")) not in before

    for obj in objects():
        store.create(obj["kind"], obj)

    def allocated() -> bool:
        claim = store.get("ResourceClaim", "default", "gpu-claim")
        return bool((claim.get("status") or {}).get("allocation"))

    await eventually(allocated, "the claim allocated (PreBind waiting)", timeout=30)
    assert not store.get("Pod", "default", "trainer")["spec"].get("nodeName")
    # The attach controller's word: the device is ready.
    claim = copy.deepcopy(store.get("ResourceClaim", "default", "gpu-claim"))
    claim["status"]["devices"] = [
        {
            "driver": DRIVER,
            "pool": "n1",
            "device": "gpu-0",
            "conditions": [
                {
                    "type": "example.com/attached",
                    "status": "True",
                    "reason": "Attached",
                    "message": "",
                    "lastTransitionTime": "2026-01-01T00:00:00Z",
                }
            ],
        }
    ]
    store.update("ResourceClaim", claim)
    await eventually(
        lambda: store.get("Pod", "default", "trainer")["spec"].get("nodeName") == "n1", "the pod bound", timeout=30
    )
    after, _ = await scrape(port)
    assert after[(ALLOCATIONS, labels("success"))] == 1
    assert after[(WAITS + "_count", labels("success"))] == 1
    assert 0 < after[(WAITS + "_sum", labels("success"))] < 30
    # Buckets as upstream's: exponential from 0.1 s, doubling, 14 of them.
    assert (WAITS + "_bucket", labels("success", le="819.2")) in after
    assert (ALLOCATIONS, labels("failure")) not in after and (ALLOCATIONS, labels("timeout")) not in after
