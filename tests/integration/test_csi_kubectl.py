"""CSIDriver and CSIStorageCapacity through the real kubectl against the embedded API server, the
scheduler running on the same store as ``sim serve`` runs it: applied, listed with
kube-apiserver's columns, defaulted and validated as 1.37 does; a pod whose claim only one
node's capacity holds goes there, and a pod no capacity holds is scheduled once a capacity grows
(the CSIStorageCapacity update requeues it)."""

from __future__ import annotations

import json

from polling import eventually
from test_kubectl import Cluster, cluster, node_of  # noqa: F401 - the fixture is used by name

STORAGE = """\
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast-csi}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: csi.example.com}
spec: {attachRequired: false, storageCapacity: true}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: fast-csi-node-1, namespace: kube-system}
storageClassName: fast-csi
nodeTopology: {matchLabels: {kubernetes.io/hostname: node-1}}
capacity: 10Gi
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: fast-csi-node-2, namespace: kube-system}
storageClassName: fast-csi
nodeTopology: {matchLabels: {kubernetes.io/hostname: node-2}}
capacity: 100Gi
maximumVolumeSize: 64Gi
"""


def claim_and_pod(name: str, size: str) -> str:
    return f"""\
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {{name: {name}-data}}
spec:
  storageClassName: fast-csi
  accessModes: [ReadWriteOnce]
  resources: {{requests: {{storage: {size}}}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}}}
spec:
  containers: [{{name: main, image: registry.k8s.io/pause:3.10}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: {name}-data}}}}]
"""


async def test_csi_drivers_and_capacities_through_kubectl(cluster: Cluster) -> None:  # noqa: F811
    path = cluster.tmp / "storage.yaml"
    path.write_text(STORAGE)
    out = await cluster.ok("apply", "-f", str(path))
    for created in (
        "csidriver.storage.k8s.io/csi.example.com created",
        "csistoragecapacity.storage.k8s.io/fast-csi-node-1 created",
        "csistoragecapacity.storage.k8s.io/fast-csi-node-2 created",
    ):
        assert created in out
    resources = await cluster.ok("api-resources", "--api-group=storage.k8s.io", "-o", "wide")
    rows = {line.split()[0]: line.split() for line in resources.splitlines()[1:]}
    assert rows["csidrivers"][1:4] == ["storage.k8s.io/v1", "false", "CSIDriver"]
    assert rows["csistoragecapacities"][1:4] == ["storage.k8s.io/v1", "true", "CSIStorageCapacity"]

    # The columns kube-apiserver prints: CSIDrivers with their defaults filled in, capacities
    # without an age.
    drivers = (await cluster.ok("get", "csidrivers")).splitlines()
    assert drivers[0].split() == [
        "NAME",
        "ATTACHREQUIRED",
        "PODINFOONMOUNT",
        "STORAGECAPACITY",
        "TOKENREQUESTS",
        "REQUIRESREPUBLISH",
        "MODES",
        "AGE",
    ]
    assert drivers[1].split()[:7] == ["csi.example.com", "false", "false", "true", "<unset>", "false", "Persistent"]
    both = (await cluster.ok("get", "csidrivers,csistoragecapacities", "-n", "kube-system")).splitlines()
    assert ["NAME", "STORAGECLASSNAME", "CAPACITY"] in [line.split() for line in both]
    listed = [line.split() for line in both]
    assert ["csistoragecapacity.storage.k8s.io/fast-csi-node-1", "fast-csi", "10Gi"] in listed
    assert ["csistoragecapacity.storage.k8s.io/fast-csi-node-2", "fast-csi", "100Gi"] in listed
    assert any(row[0] == "csidriver.storage.k8s.io/csi.example.com" for row in listed)
    spec = json.loads(await cluster.ok("get", "csidriver", "csi.example.com", "-o", "json"))["spec"]
    assert spec == {
        "attachRequired": False,
        "fsGroupPolicy": "ReadWriteOnceWithFSType",
        "podInfoOnMount": False,
        "requiresRepublish": False,
        "seLinuxMount": False,
        "storageCapacity": True,
        "volumeLifecycleModes": ["Persistent"],
    }
    assert "unchanged" in await cluster.ok("apply", "-f", str(path))
    explained = await cluster.ok("explain", "csistoragecapacities.maximumVolumeSize")
    assert "FIELD: maximumVolumeSize <string>" in explained
    explained = await cluster.ok("explain", "csidrivers.spec.preventPodSchedulingIfMissing")
    assert "preventPodSchedulingIfMissing" in explained and "boolean" in explained

    # 50Gi: more than node-1's capacity, within node-2's maximumVolumeSize.
    (cluster.tmp / "db.yaml").write_text(claim_and_pod("db", "50Gi"))
    await cluster.ok("apply", "-f", str(cluster.tmp / "db.yaml"))
    await eventually(lambda: node_of(cluster.store, "db") == "node-2", what="db on node-2", timeout=10)
    claim = cluster.store.get("PersistentVolumeClaim", "default", "db-data")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "node-2"

    # 80Gi: within node-2's capacity but over its maximumVolumeSize, and over node-1's capacity.
    (cluster.tmp / "big.yaml").write_text(claim_and_pod("big", "80Gi"))
    await cluster.ok("apply", "-f", str(cluster.tmp / "big.yaml"))

    def refusal() -> str:
        conditions = (cluster.store.get("Pod", "default", "big").get("status") or {}).get("conditions") or []
        return next((c["message"] for c in conditions if c["type"] == "PodScheduled"), "")

    await eventually(lambda: "did not have enough free storage" in refusal(), what="big refused", timeout=10)
    assert refusal().startswith("0/2 nodes are available: 2 node(s) did not have enough free storage.")
    # The driver's deployment reports more room on node-1: the update requeues the pod.
    path.write_text(STORAGE.replace("capacity: 10Gi", "capacity: 1Ti"))
    assert "csistoragecapacity.storage.k8s.io/fast-csi-node-1 configured" in await cluster.ok("apply", "-f", str(path))
    await eventually(lambda: node_of(cluster.store, "big") == "node-1", what="big on node-1", timeout=10)


async def test_kubectl_shows_the_api_servers_refusals(cluster: Cluster) -> None:  # noqa: F811
    path = cluster.tmp / "storage.yaml"
    path.write_text(STORAGE)
    await cluster.ok("apply", "-f", str(path))
    cases = [
        (
            STORAGE.replace("attachRequired: false", "attachRequired: true"),
            "spec.attachedRequired: Invalid value: true: field is immutable",
        ),
        (
            STORAGE.replace(
                "nodeTopology: {matchLabels: {kubernetes.io/hostname: node-1}}",
                "nodeTopology: {matchLabels: {kubernetes.io/hostname: node-3}}",
            ),
            'nodeTopology: Invalid value: {"matchLabels":{"kubernetes.io/hostname":"node-3"}}: field is immutable',
        ),
        (
            STORAGE.replace(
                "spec: {attachRequired: false, storageCapacity: true}",
                "spec: {attachRequired: false, storageCapacity: true, tokenRequests: [{audience: a, "
                "expirationSeconds: 60}]}",
            ),
            "spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 "
            "minutes",
        ),
        (
            STORAGE.replace("capacity: 100Gi", "capacity: -1"),
            'capacity: Invalid value: "-1": must be greater than or equal to 0',
        ),
    ]
    for text, message in cases:
        path.write_text(text)
        r = await cluster.kubectl("apply", "-f", str(path))
        assert r.code != 0 and message in r.err, r.err
    assert cluster.store.get("CSIDriver", None, "csi.example.com")["spec"]["attachRequired"] is False
