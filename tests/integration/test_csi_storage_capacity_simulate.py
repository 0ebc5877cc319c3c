"""Storage capacity tracking end to end in the simulator: a scenario with a CSIDriver that asks
for it (``storageCapacity: true``), a WaitForFirstConsumer StorageClass of that driver and one
CSIStorageCapacity per node topology. Through ``simulate --output json`` (the real command) the
claim too big for one node's capacity goes to the node with enough; in process, the filter's
reason for the other node, the scores StorageCapacityScoring gives, and a claim no node holds."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kubesched.config import load_config
from kubesched.sim.run.simulate import simulate
from kubesched.sim.scenario.reading import ScenarioError, parse_scenario

NOT_ENOUGH = "node(s) did not have enough free storage"

CLUSTER = """\
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
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {topology.csi.example.com/node: node-a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {topology.csi.example.com/node: node-b}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: fast-csi-node-a, namespace: kube-system}
storageClassName: fast-csi
nodeTopology: {matchLabels: {topology.csi.example.com/node: node-a}}
capacity: 10Gi
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: fast-csi-node-b, namespace: kube-system}
storageClassName: fast-csi
nodeTopology: {matchLabels: {topology.csi.example.com/node: node-b}}
capacity: 100Gi
"""


def claim_and_pod(size: str, name: str = "db") -> str:
    return f"""\
---
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
  containers: [{{name: main, image: registry.k8s.io/pause:3.10, resources: {{requests: {{cpu: 100m}}}}}}]
  volumes: [{{name: data, persistentVolumeClaim: {{claimName: {name}-data}}}}]
"""


def run(text: str) -> dict[str, dict[str, object]]:
    scenario = parse_scenario(list(yaml.safe_load_all(text)), "capacity.yaml")
    result = asyncio.run(simulate(load_config(None).profiles, scenario))
    return {str(p["name"]): p for p in result.pods}


def test_simulate_json_places_the_claim_where_the_capacity_holds_it(tmp_path: Path) -> None:
    path = tmp_path / "capacity.yaml"
    path.write_text(CLUSTER + claim_and_pod("50Gi"))
    out = subprocess.run(
        [sys.executable, "-m", "kubesched", "simulate", "--scenario", str(path), "--output", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    (pod,) = json.loads(out.stdout)["pods"]
    assert (pod["name"], pod["node"], pod["phase"]) == ("db", "node-b", "Scheduled")
    assert pod["filter"]["node-a"]["VolumeBinding"] == NOT_ENOUGH
    assert pod["filter"]["node-b"]["VolumeBinding"] == "passed"


def test_the_claim_is_provisioned_on_the_chosen_node() -> None:
    scenario = parse_scenario(list(yaml.safe_load_all(CLUSTER + claim_and_pod("50Gi"))), "capacity.yaml")
    result = asyncio.run(simulate(load_config(None).profiles, scenario))
    claim = result.store.get("PersistentVolumeClaim", "default", "db-data")
    assert claim["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "node-b"


def test_a_claim_no_capacity_holds_is_unschedulable_everywhere() -> None:
    pod = run(CLUSTER + claim_and_pod("200Gi"))["db"]
    assert pod["phase"] == "Unschedulable"
    # The PostFilter's sentence ends the FitError's as it is: one full stop, its own.
    assert pod["message"] == (
        f"0/2 nodes are available: 2 {NOT_ENOUGH}. "
        "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    )


def test_storage_capacity_scoring_prefers_the_node_with_more_free_storage() -> None:
    """Both nodes hold 5Gi; with the default shape (free storage first) node-a scores
    100 * (1 - 5/10) = 50 and node-b 100 * (1 - 5/100) = 95."""
    pod = run(CLUSTER + claim_and_pod("5Gi"))["db"]
    assert pod["node"] == "node-b"
    scores = pod["score"]
    assert isinstance(scores, dict)
    assert (scores["node-a"]["VolumeBinding"], scores["node-b"]["VolumeBinding"]) == (50, 95)


def test_without_the_drivers_opt_in_capacity_is_not_checked() -> None:
    text = CLUSTER.replace("storageCapacity: true", "storageCapacity: false") + claim_and_pod("50Gi")
    pod = run(text)["db"]
    assert pod["phase"] == "Scheduled"
    assert pod["filter"]["node-a"]["VolumeBinding"] == "passed"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("capacity: 10Gi", "capacity: -1Gi", 'capacity: Invalid value: "-1Gi": must be greater than or equal to 0'),
        (
            "storageClassName: fast-csi\nnodeTopology: {matchLabels: {topology.csi.example.com/node: node-a}}",
            "storageClassName: Fast_CSI\nnodeTopology: {matchLabels: {topology.csi.example.com/node: node-a}}",
            'storageClassName: Invalid value: "Fast_CSI": a lowercase RFC 1123 subdomain',
        ),
        (
            "spec: {attachRequired: false, storageCapacity: true}",
            "spec: {attachRequired: false, storageCapacity: true, fsGroupPolicy: Always}",
            'spec.fsGroupPolicy: Unsupported value: "Always": supported values: "File", "None", '
            '"ReadWriteOnceWithFSType"',
        ),
    ],
    ids=["negative-capacity", "class-name", "fs-group-policy"],
)
def test_a_scenario_with_an_object_the_api_server_refuses_is_refused(old: str, new: str, message: str) -> None:
    text = CLUSTER.replace(old, new, 1)
    assert text != CLUSTER
    with pytest.raises(ScenarioError) as caught:
        parse_scenario(list(yaml.safe_load_all(text)), "capacity.yaml")
    assert message in str(caught.value)
