"""DRA as 1.37 has it through the real kubectl against the embedded API server, the scheduler
running on the same store: a DeviceClass naming an extended resource, a pod asking for it, the
claim the scheduler creates; DeviceTaintRules applied and listed."""

from __future__ import annotations

import json

from polling import eventually
from test_kubectl import Cluster, cluster, node_of  # noqa: F401 - the fixture is used by name

EXTENDED = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  extendedResourceName: example.com/gpu
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-2-gpus
spec:
  driver: gpu.example.com
  nodeName: node-2
  pool: {name: node-2, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata:
  name: maintenance
spec:
  deviceSelector: {driver: other.example.com}
  taint: {key: maintenance, value: planned, effect: NoSchedule}
---
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {example.com/gpu: "1"}
      limits: {example.com/gpu: "1"}
"""


async def test_an_extended_resource_backed_by_dra_through_kubectl(cluster: Cluster) -> None:  # noqa: F811
    (cluster.tmp / "extended.yaml").write_text(EXTENDED)
    out = await cluster.ok("apply", "-f", str(cluster.tmp / "extended.yaml"))
    for created in (
        "deviceclass.resource.k8s.io/gpu.example.com created",
        "resourceslice.resource.k8s.io/node-2-gpus created",
        "devicetaintrule.resource.k8s.io/maintenance created",
        "pod/trainer created",
    ):
        assert created in out
    await eventually(lambda: node_of(cluster.store, "trainer") == "node-2", timeout=10)
    name = await cluster.ok(
        "get", "pod", "trainer", "-o", "jsonpath={.status.extendedResourceClaimStatus.resourceClaimName}"
    )
    assert name.startswith("trainer-extended-resources-")
    claim = json.loads(await cluster.ok("get", "resourceclaim", name, "-o", "json"))
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    assert [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]] == ["gpu-0"]
    listed = await cluster.ok("get", "devicetaintrules")
    assert "maintenance" in listed
