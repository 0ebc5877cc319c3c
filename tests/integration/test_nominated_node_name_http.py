"""NominatedNodeNameForExpectation over real HTTP: the scheduler on KubeCluster against the
embedded API server. A pod held at Permit shows its expected node as
``status.nominatedNodeName`` (what `kubectl get pods -o wide` prints as NOMINATED NODE) until it
is bound; the pods/binding subresource clears it, as kube-apiserver has since 1.35."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from conftest import registry_with
from polling import eventually

from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.store import Store
from kubesched.framework.status import Status
from kubesched.runtime.framework import PluginRef, ProfileSpec
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import make_node, make_pod


class HoldAtPermit:
    """Holds every pod at Permit (up to a minute) until the test allows it."""

    name = "HoldAtPermit"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def permit(self, state: Any, pod: Any, node_name: str) -> Any:
        return Status.wait(), 60


def nominated(store: Store, name: str) -> str | None:
    return (store.get("Pod", "default", name).get("status") or {}).get("nominatedNodeName")


async def test_a_pod_held_at_permit_shows_where_it_goes_until_bound(
    store: Store, server: APIServer, tmp_path: Path
) -> None:
    store.create("Node", make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    cluster = KubeCluster(kubeconfig=server.write_kubeconfig(tmp_path / "kc"))
    profile = ProfileSpec(
        "default-scheduler",
        {
            "queueSort": [PluginRef("PrioritySort")],
            "permit": [PluginRef("HoldAtPermit")],
            "bind": [PluginRef("DefaultBinder")],
        },
    )
    sched = Scheduler([profile], cluster, SchedulerOptions(seed=1), registry=registry_with(HoldAtPermit))
    runner = asyncio.create_task(sched.run())
    try:
        await eventually(lambda: sched.synced, what="informers synced", timeout=10)
        await cluster.request("POST", "/api/v1/namespaces/default/pods", body=make_pod("held").obj())
        await eventually(lambda: nominated(store, "held") == "n1", what="nominatedNodeName n1", timeout=10)
        assert not store.get("Pod", "default", "held")["spec"].get("nodeName")
        uid = store.get("Pod", "default", "held")["metadata"]["uid"]
        wp = sched.waiting_pods.get(uid)
        assert wp is not None
        wp.allow("HoldAtPermit")
        await eventually(
            lambda: store.get("Pod", "default", "held")["spec"].get("nodeName") == "n1", what="bound", timeout=10
        )
        assert nominated(store, "held") is None
    finally:
        await sched.stop(grace=5)
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
        await cluster.stop()
