"""``sim serve --import-from`` copies Workloads, PodGroups (their status too) and a pod's
scheduling group from a cluster serving scheduling.k8s.io/v1beta1, and skips them where the
source does not serve them (GenericWorkload off there)."""

from __future__ import annotations

from pathlib import Path

from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.server import APIServer
from kubesched.sim.importer import Importer
from kubesched.testing import make_node, make_pod

GROUP = {
    "apiVersion": "scheduling.k8s.io/v1beta1",
    "kind": "PodGroup",
    "metadata": {"name": "pg", "namespace": "default"},
    "spec": {"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"single": {}}},
    "status": {
        "conditions": [
            {
                "type": "PodGroupInitiallyScheduled",
                "status": "False",
                "reason": "Unschedulable",
                "message": "0/1 nodes are available",
                "lastTransitionTime": "2026-09-01T00:00:00Z",
            }
        ]
    },
}


def _source() -> Store:
    store = Store()
    store.create("Namespace", {"metadata": {"name": "default"}})
    store.create("Node", make_node("n1").capacity(cpu="4", memory="8Gi", pods="110").obj())
    store.create(
        "Workload",
        {
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {"podGroupTemplates": [{"name": "t", "schedulingPolicy": {"gang": {"minCount": 2}}}]},
        },
    )
    store.create("PodGroup", dict(GROUP))
    pod = make_pod("p").req(cpu="1").obj()
    pod["spec"]["schedulingGroup"] = {"podGroupName": "pg"}
    store.create("Pod", pod)
    return store


async def _import(gates: FeatureGates, tmp_path: Path) -> Importer:
    server = APIServer(_source(), feature_gates=gates)
    await server.start()
    importer = Importer(Store(), server.write_kubeconfig(tmp_path / "kubeconfig"))
    try:
        await importer.run_once()
    finally:
        await importer.close()
        await server.stop()
    return importer


async def test_groups_and_their_pods_are_copied(tmp_path: Path) -> None:
    importer = await _import(FeatureGates({"GenericWorkload": True}), tmp_path)
    here = importer.store
    group = here.get("PodGroup", "default", "pg")
    assert group["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert group["status"]["conditions"][0]["reason"] == "Unschedulable"
    assert here.get("Workload", "default", "w")["spec"]["podGroupTemplates"][0]["name"] == "t"
    assert here.get("Pod", "default", "p")["spec"]["schedulingGroup"] == {"podGroupName": "pg"}
    # CompositePodGroups are not served there (their gate is off): nothing to copy, no failure.
    assert importer.unserved == {"CompositePodGroup"}
