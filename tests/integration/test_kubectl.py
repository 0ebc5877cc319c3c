"""The real kubectl against the embedded API server, with the real scheduler running on the
same store in the same event loop: what a user types must work as against a real cluster."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from polling import eventually

from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.config import load_config
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.sim.apiserver.server import APIServer
from kubesched.sim.controllers import ControllerManager
from kubesched.testing import make_node

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
pytestmark = pytest.mark.skipif(
    not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed (looked on PATH and at /usr/bin/kubectl)"
)

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: {name}
  labels: {{app: web}}
spec:
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {{cpu: "{cpu}", memory: 64Mi}}
"""


@dataclass
class Result:
    code: int
    out: str
    err: str


@dataclass
class Cluster:
    store: Store
    server: APIServer
    kubeconfig: str
    cache: str
    tmp: Path

    async def kubectl(self, *args: str, stdin: str | None = None, timeout: float = 30) -> Result:
        proc = await asyncio.create_subprocess_exec(
            KUBECTL,
            "--kubeconfig",
            self.kubeconfig,
            "--cache-dir",
            self.cache,
            *args,
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "KUBECONFIG": self.kubeconfig, "HOME": str(self.tmp)},
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), timeout)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise AssertionError(f"kubectl {' '.join(args)} did not finish within {timeout}s") from None
        assert proc.returncode is not None
        return Result(proc.returncode, out.decode(), err.decode())

    async def ok(self, *args: str, stdin: str | None = None) -> str:
        r = await self.kubectl(*args, stdin=stdin)
        assert r.code == 0, f"kubectl {' '.join(args)} failed: {r.err}"
        return r.out

    def pod_file(self, name: str, cpu: str = "100m") -> str:
        path = self.tmp / f"{name}.yaml"
        path.write_text(POD.format(name=name, cpu=cpu))
        return str(path)


@pytest.fixture
async def cluster(tmp_path: Path) -> AsyncIterator[Cluster]:
    store = Store()
    server = APIServer(store)
    await server.start()
    for i in (1, 2):
        node = make_node(f"node-{i}").capacity(cpu="4", memory="8Gi", pods="110")
        node.set("status.conditions", [{"type": "Ready", "status": "True"}])
        node.set("status.nodeInfo", {"kubeletVersion": "v1.32.0"})
        store.create("Node", node.obj())
    cfg = load_config(None)
    sched = Scheduler(cfg.profiles, InMemoryCluster(store), SchedulerOptions(seed=1))
    task = asyncio.create_task(sched.run())
    controllers = ControllerManager(store)  # as `sim serve` runs them
    controllers.start()
    try:
        yield Cluster(
            store, server, server.write_kubeconfig(tmp_path / "kubeconfig"), str(tmp_path / "cache"), tmp_path
        )
    finally:
        await controllers.stop()
        await sched.stop(grace=1)
        await asyncio.wait_for(task, 5)
        await server.stop()


def node_of(store: Store, name: str) -> str | None:
    return store.get("Pod", "default", name)["spec"].get("nodeName")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(("version",), ["Server Version: v1.37.0-kubesched"], id="version"),
        pytest.param(
            ("api-resources",),
            ["pods", "po", "priorityclasses", "pc", "scheduling.k8s.io/v1", "leases", "events.k8s.io/v1"],
            id="api-resources",
        ),
        pytest.param(("get", "nodes"), ["node-1", "Ready", "v1.32.0"], id="get-nodes"),
        pytest.param(("get", "namespaces"), ["default", "kube-system", "Active"], id="get-namespaces"),
        pytest.param(("get", "pc"), ["system-node-critical", "2000001000"], id="get-priorityclasses"),
        pytest.param(("explain", "pod.spec.schedulerName"), ["schedulerName", "string"], id="explain"),
        pytest.param(
            ("explain", "pod.spec.resources.limits"), ["limits", "map[string]"], id="explain-pod-level-resources"
        ),
        pytest.param(
            ("explain", "devicetaintrules.spec.taint", "--api-version=resource.k8s.io/v1"),
            ["DeviceTaintRule", "effect", "timeAdded"],
            id="explain-device-taint-rule",
        ),
    ],
)
async def test_read_only_commands(cluster: Cluster, args: tuple[str, ...], expected: list[str]) -> None:
    out = await cluster.ok(*args)
    for text in expected:
        assert text in out


async def test_apply_is_scheduled_and_shown_with_its_node_and_event(cluster: Cluster) -> None:
    out = await cluster.ok("apply", "-f", cluster.pod_file("web"))
    assert "pod/web created" in out
    await eventually(lambda: node_of(cluster.store, "web") is not None, timeout=10)
    node = node_of(cluster.store, "web")
    wide = await cluster.ok("get", "pods", "-o", "wide")
    header, row = wide.splitlines()[:2]
    assert header.split()[:5] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"] and "NOMINATED NODE" in header
    assert row.split()[0] == "web" and node in row.split()
    await eventually(
        lambda: any(e["reason"] == "Scheduled" for e in cluster.store.list("Event", "default")[0]), timeout=10
    )
    events = await cluster.ok("get", "events")
    assert "Scheduled" in events and "pod/web" in events and f"to {node}" in events
    # Applying the same file again is a no-op; a changed one is patched (client-side apply).
    assert "pod/web unchanged" in await cluster.ok("apply", "-f", cluster.pod_file("web"))


async def test_describe_unschedulable_pod_shows_failed_scheduling(cluster: Cluster) -> None:
    await cluster.ok("apply", "-f", cluster.pod_file("huge", cpu="64"))
    await eventually(
        lambda: any(e["reason"] == "FailedScheduling" for e in cluster.store.list("Event", "default")[0]), timeout=10
    )
    out = await cluster.ok("describe", "pod", "huge")
    assert "FailedScheduling" in out
    assert "0/2 nodes are available" in out and "Insufficient cpu" in out
    assert "Status:" in out and "Pending" in out


async def test_server_side_apply_creates_and_updates(cluster: Cluster) -> None:
    path = cluster.pod_file("ssa")
    assert "pod/ssa serverside-applied" in await cluster.ok("apply", "--server-side", "-f", path)
    Path(path).write_text(Path(path).read_text().replace("{app: web}", "{app: web, tier: fe}"))
    assert "serverside-applied" in await cluster.ok("apply", "--server-side", "-f", path)
    assert cluster.store.get("Pod", "default", "ssa")["metadata"]["labels"] == {"app": "web", "tier": "fe"}


@pytest.mark.parametrize(
    ("args", "check"),
    [
        pytest.param(("label", "pod", "p", "team=a"), lambda p: p["metadata"]["labels"]["team"] == "a", id="label"),
        pytest.param(
            ("annotate", "pod", "p", "note=hi"), lambda p: p["metadata"]["annotations"]["note"] == "hi", id="annotate"
        ),
        pytest.param(
            ("patch", "pod", "p", "--type", "merge", "-p", '{"metadata":{"labels":{"m":"1"}}}'),
            lambda p: p["metadata"]["labels"]["m"] == "1",
            id="patch-merge",
        ),
        pytest.param(
            ("patch", "pod", "p", "--type", "json", "-p", '[{"op":"add","path":"/metadata/labels/j","value":"2"}]'),
            lambda p: p["metadata"]["labels"]["j"] == "2",
            id="patch-json",
        ),
        pytest.param(
            (
                "patch",
                "pod",
                "p",
                "--type",
                "strategic",
                "-p",
                '{"spec":{"containers":[{"name":"main","image":"x:2"}]}}',
            ),
            lambda p: [c["image"] for c in p["spec"]["containers"]] == ["x:2"],
            id="patch-strategic",
        ),
    ],
)
async def test_edits(cluster: Cluster, args: tuple[str, ...], check: Any) -> None:
    await cluster.ok("apply", "-f", cluster.pod_file("p"))
    out = await cluster.ok(*args)
    assert "pod/p" in out
    assert check(cluster.store.get("Pod", "default", "p"))


async def test_strict_validation_rejects_unknown_fields(cluster: Cluster) -> None:
    path = cluster.tmp / "bad.yaml"
    path.write_text(POD.format(name="bad", cpu="1").replace("  containers:", "  colour: red\n  containers:"))
    r = await cluster.kubectl("apply", "-f", str(path))
    assert r.code != 0
    assert 'unknown field "spec.colour"' in r.err


async def test_label_selector_and_field_selector(cluster: Cluster) -> None:
    await cluster.ok("apply", "-f", cluster.pod_file("a"))
    await cluster.ok("run", "b", "--image=registry.k8s.io/pause:3.10", "--labels=app=db")
    await eventually(lambda: node_of(cluster.store, "a") and node_of(cluster.store, "b"), timeout=10)
    out = await cluster.ok("get", "pods", "-l", "app=web", "-o", "name")
    assert out.split() == ["pod/a"]
    node = node_of(cluster.store, "b")
    out = await cluster.ok("get", "pods", "--field-selector", f"spec.nodeName={node},metadata.name=b", "-o", "name")
    assert out.split() == ["pod/b"]


async def test_get_watch_streams_changes(cluster: Cluster) -> None:
    watcher = asyncio.create_task(cluster.kubectl("get", "pods", "-w", "--request-timeout=2s", timeout=15))
    await asyncio.sleep(0.5)
    await cluster.ok("apply", "-f", cluster.pod_file("w"))
    r = await watcher
    assert "w" in r.out.split()


async def test_delete_returns_once_the_pod_is_gone(cluster: Cluster) -> None:
    await cluster.ok("apply", "-f", cluster.pod_file("gone"))
    out = await cluster.ok("delete", "pod", "gone")
    assert 'pod "gone" deleted' in out
    r = await cluster.kubectl("get", "pod", "gone")
    assert r.code != 0 and 'pods "gone" not found' in r.err


# --- kubectl habits: typed-client commands (protobuf bodies), events, drain -----------------------


async def test_create_commands_that_send_protobuf(cluster: Cluster) -> None:
    assert "namespace/team-a created" in await cluster.ok("create", "namespace", "team-a")
    await cluster.ok("create", "priorityclass", "high", "--value=1000", "--description=important")
    await cluster.ok("create", "configmap", "settings", "--from-literal=a=1", "--from-literal=b=2", "-n", "team-a")
    await cluster.ok("create", "secret", "generic", "creds", "--from-literal=password=s3cret")
    ns = cluster.store.get("Namespace", None, "team-a")
    assert ns["status"]["phase"] == "Active"
    pc = cluster.store.get("PriorityClass", None, "high")
    assert (pc["value"], pc["description"], pc.get("globalDefault", False)) == (1000, "important", False)
    assert cluster.store.get("ConfigMap", "team-a", "settings")["data"] == {"a": "1", "b": "2"}
    secret = cluster.store.get("Secret", "default", "creds")
    assert base64.b64decode(secret["data"]["password"]) == b"s3cret" and secret["type"] == "Opaque"
    listed = await cluster.ok("get", "configmaps", "-n", "team-a")
    assert listed.split()[:3] == ["NAME", "DATA", "AGE"] and "settings" in listed
    # The pod of a priority class created that way gets its priority.
    pod = POD.format(name="vip", cpu="100m").replace("spec:\n", "spec:\n  priorityClassName: high\n")
    await cluster.ok("apply", "-f", "-", stdin=pod)
    assert cluster.store.get("Pod", "default", "vip")["spec"]["priority"] == 1000


async def test_get_events_sorted_by_last_timestamp(cluster: Cluster) -> None:
    await cluster.ok("apply", "-f", cluster.pod_file("ev"))
    await eventually(
        lambda: any(e["reason"] == "Scheduled" for e in cluster.store.list("Event", "default")[0]), timeout=10
    )
    out = await cluster.ok("get", "events", "--sort-by=.lastTimestamp")
    assert "Scheduled" in out and "pod/ev" in out


async def test_drain_evicts_through_the_disruption_budget(cluster: Cluster) -> None:
    for name in ("web-1", "web-2"):
        await cluster.ok(
            "run",
            name,
            "--image=registry.k8s.io/pause:3.10",
            "--labels=app=web",
            "--overrides",
            '{"spec": {"nodeName": "node-1"}}',
        )
    budget = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web}\n"
    budget += "spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}\n"
    await cluster.ok("apply", "-f", "-", stdin=budget)
    # The disruption controller counts the budget's pods: two healthy, one may go.
    await eventually(
        lambda: (
            cluster.store.get("PodDisruptionBudget", "default", "web").get("status", {}).get("disruptionsAllowed") == 1
        ),
        timeout=10,
    )
    r = await cluster.kubectl("drain", "node-1", "--force", "--timeout=3s", timeout=30)
    # One pod may go; the budget keeps the other, and drain says why.
    assert r.code != 0
    assert "Cannot evict pod as it would violate the pod's disruption budget" in r.err
    left = [n for n in ("web-1", "web-2") if _exists(cluster, n)]
    assert len(left) == 1
    pdb = cluster.store.get("PodDisruptionBudget", "default", "web")
    assert (pdb["status"]["disruptionsAllowed"], pdb["status"]["currentHealthy"]) == (0, 1)
    assert pdb["status"]["disruptedPods"] == {}  # the evicted pod is gone, and seen gone
    assert cluster.store.get("Node", None, "node-1")["spec"]["unschedulable"] is True


def _exists(cluster: Cluster, name: str) -> bool:
    try:
        cluster.store.get("Pod", "default", name)
    except Exception:  # noqa: BLE001 - not found
        return False
    return True


# --- workloads: the simulated controllers behind kubectl --------------------------------------------


def _owned_pods(cluster: Cluster, prefix: str) -> list[dict[str, Any]]:
    items, _ = cluster.store.list("Pod", "default")
    return [p for p in items if p["metadata"]["name"].startswith(prefix)]


async def test_create_and_scale_a_deployment(cluster: Cluster) -> None:
    out = await cluster.ok("create", "deployment", "web", "--image=registry.k8s.io/pause:3.10", "--replicas=3")
    assert "deployment.apps/web created" in out
    await eventually(lambda: sum(1 for p in _owned_pods(cluster, "web-") if p["spec"].get("nodeName")) == 3, timeout=10)
    await eventually(
        lambda: (
            "3/3" in cluster.store.get("Deployment", "default", "web").get("status", {}).__repr__()
            or cluster.store.get("Deployment", "default", "web")["status"].get("readyReplicas") == 3
        ),
        timeout=10,
    )
    listed = await cluster.ok("get", "deployments")
    assert listed.split()[:5] == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"] and "3/3" in listed
    assert "deployment.apps/web scaled" in await cluster.ok("scale", "deployment", "web", "--replicas=5")
    await eventually(lambda: len(_owned_pods(cluster, "web-")) == 5, timeout=10)
    assert "deployment.apps/web scaled" in await cluster.ok("scale", "deployment", "web", "--replicas=1")
    await eventually(lambda: len(_owned_pods(cluster, "web-")) == 1, timeout=10)
    scale = json.loads(await cluster.ok("get", "--raw", "/apis/apps/v1/namespaces/default/deployments/web/scale"))
    assert (scale["kind"], scale["spec"]["replicas"]) == ("Scale", 1)
    assert scale["status"]["selector"] == "app=web"


async def test_create_job(cluster: Cluster) -> None:
    assert "job.batch/hello created" in await cluster.ok(
        "create", "job", "hello", "--image=registry.k8s.io/pause:3.10", "--", "echo", "hi"
    )
    await eventually(lambda: len(_owned_pods(cluster, "hello-")) == 1, timeout=10)
    (pod,) = _owned_pods(cluster, "hello-")
    assert pod["spec"]["containers"][0]["command"] == ["echo", "hi"]
    assert pod["metadata"]["labels"]["job-name"] == "hello"


async def test_a_preempted_replica_comes_back(cluster: Cluster) -> None:
    # One big replica per node fills both nodes; a higher-priority pod preempts one of them.
    deploy = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: big}
spec:
  replicas: 2
  selector: {matchLabels: {app: big}}
  template:
    metadata: {labels: {app: big}}
    spec:
      containers: [{name: c, image: registry.k8s.io/pause:3.10, resources: {requests: {cpu: "3"}}}]
"""
    await cluster.ok("apply", "-f", "-", stdin=deploy)
    await eventually(lambda: sum(1 for p in _owned_pods(cluster, "big-") if p["spec"].get("nodeName")) == 2, timeout=10)
    before = {p["metadata"]["name"] for p in _owned_pods(cluster, "big-")}
    await cluster.ok("create", "priorityclass", "urgent", "--value=1000")
    vip = POD.format(name="vip", cpu="3").replace("spec:\n", "spec:\n  priorityClassName: urgent\n")
    await cluster.ok("apply", "-f", "-", stdin=vip)
    await eventually(lambda: node_of(cluster.store, "vip") is not None, timeout=20)
    # The ReplicaSet made a new replica in place of the victim; it waits for room.
    await eventually(lambda: len(_owned_pods(cluster, "big-")) == 2, timeout=10)
    after = {p["metadata"]["name"] for p in _owned_pods(cluster, "big-")}
    assert len(after - before) == 1
    (replacement,) = after - before
    assert node_of(cluster.store, replacement) is None


@pytest.mark.parametrize("flags", [("--grace-period=5",), ("--grace-period=0", "--force"), ("--now",)])
async def test_delete_with_a_grace_period(cluster: Cluster, flags: tuple[str, ...]) -> None:
    await cluster.ok("apply", "-f", cluster.pod_file("graceful"))
    await eventually(lambda: node_of(cluster.store, "graceful") is not None, timeout=10)
    r = await cluster.kubectl("delete", "pod", "graceful", *flags)
    assert r.code == 0, r.err
    assert 'pod "graceful"' in r.out and ("deleted" in r.out or "force deleted" in r.out)
    assert not _exists(cluster, "graceful")  # no kubelet to wait for: gone at once


DRA = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
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
    attributes: {model: {string: h100}}
  - name: gpu-1
    attributes: {model: {string: h100}}
  - name: gpu-2
    attributes: {model: {string: a100}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: two-h100
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.example.com
          count: 2
          selectors:
          - cel:
              expression: device.attributes["gpu.example.com"].model == "h100"
---
apiVersion: v1
kind: Pod
metadata:
  name: trainer
spec:
  resourceClaims:
  - name: gpus
    resourceClaimTemplateName: two-h100
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      claims: [{name: gpus}]
"""


async def test_dra_kinds_through_kubectl(cluster: Cluster) -> None:
    """DeviceClass, ResourceSlice and ResourceClaimTemplate applied with kubectl; the pod's
    claim is made from the template, allocated on the node whose slice has two h100s, and
    kubectl reads the allocation back."""
    (cluster.tmp / "dra.yaml").write_text(DRA)
    out = await cluster.ok("apply", "-f", str(cluster.tmp / "dra.yaml"))
    for created in (
        "deviceclass.resource.k8s.io/gpu.example.com created",
        "resourceslice.resource.k8s.io/node-2-gpus created",
        "resourceclaimtemplate.resource.k8s.io/two-h100 created",
        "pod/trainer created",
    ):
        assert created in out
    await eventually(lambda: node_of(cluster.store, "trainer") == "node-2", timeout=10)
    claims = json.loads(await cluster.ok("get", "resourceclaims", "-o", "json"))["items"]
    assert len(claims) == 1 and claims[0]["metadata"]["name"].startswith("trainer-gpus-")
    devices = await cluster.ok(
        "get",
        "resourceclaim",
        claims[0]["metadata"]["name"],
        "-o",
        "jsonpath={.status.allocation.devices.results[*].device}",
    )
    assert sorted(devices.split()) == ["gpu-0", "gpu-1"]
    listed = await cluster.ok("get", "deviceclasses,resourceslices")
    assert "gpu.example.com" in listed and "node-2-gpus" in listed


# --- 1.37: pod-level resources, in-place resize, DRA's 1.37 fields and DeviceTaintRules ----------

POD_LEVEL = """\
apiVersion: v1
kind: Pod
metadata:
  name: pod-level
spec:
  resources:
    requests: {cpu: "1", memory: 1Gi}
    limits: {cpu: "2", memory: 2Gi}
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {cpu: 500m, memory: 256Mi}
      limits: {cpu: "1", memory: 512Mi}
"""

DRA_137 = """\
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-counters
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 2}
  sharedCounters:
  - name: gpu-0-counters
    counters:
      memory: {value: 80Gi}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-partitions
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 2}
  devices:
  - name: gpu-0-half
    consumesCounters:
    - counterSet: gpu-0-counters
      counters: {memory: {value: 40Gi}}
    taints:
    - {key: example.com/ecc, value: degraded, effect: NoSchedule}
    bindingConditions: [example.com/attached]
    bindingFailureConditions: [example.com/attach-failed]
    bindsToNode: true
---
apiVersion: resource.k8s.io/v1
kind: DeviceTaintRule
metadata:
  name: broken-fan
spec:
  deviceSelector: {driver: gpu.example.com, pool: node-1, device: gpu-0-half}
  taint: {key: example.com/fan, value: broken, effect: None}
"""


async def test_pod_level_resources_and_resize_through_kubectl(cluster: Cluster) -> None:
    (cluster.tmp / "pod-level.yaml").write_text(POD_LEVEL)
    assert "pod/pod-level created" in await cluster.ok("apply", "-f", str(cluster.tmp / "pod-level.yaml"))
    got = json.loads(await cluster.ok("get", "pod", "pod-level", "-o", "jsonpath={.spec.resources}"))
    assert got == {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}}
    assert "pod/pod-level unchanged" in await cluster.ok("apply", "-f", str(cluster.tmp / "pod-level.yaml"))
    out = await cluster.ok(
        "patch",
        "pod",
        "pod-level",
        "--subresource=resize",
        "--type=merge",
        "-p",
        '{"spec":{"containers":[{"name":"main","resources":{"requests":{"cpu":"750m","memory":"256Mi"},"limits":{"cpu":"1","memory":"512Mi"}}}]}}',
    )
    assert "pod/pod-level patched" in out
    stored = cluster.store.get("Pod", "default", "pod-level")["spec"]["containers"][0]["resources"]
    assert stored["requests"]["cpu"] == "750m"
    r = await cluster.kubectl(
        "patch",
        "pod",
        "pod-level",
        "--subresource=resize",
        "--type=merge",
        "-p",
        '{"spec":{"resources":{"requests":{"cpu":"2","memory":"2Gi"}}}}',
    )
    assert r.code != 0 and "Pod QOS Class may not change as a result of resizing" in r.err
    bad = POD_LEVEL.replace("name: pod-level", "name: gpu-pod-level").replace(
        'limits: {cpu: "2", memory: 2Gi}', 'limits: {cpu: "2", memory: 2Gi, nvidia.com/gpu: "1"}'
    )
    (cluster.tmp / "bad.yaml").write_text(bad)
    r = await cluster.kubectl("apply", "-f", str(cluster.tmp / "bad.yaml"))
    assert r.code != 0 and 'spec.resources.limits[nvidia.com/gpu]: Unsupported value: "nvidia.com/gpu"' in r.err


async def test_dra_1_37_kinds_through_kubectl(cluster: Cluster) -> None:
    """Shared counters, device taints and binding conditions in ResourceSlices, and a
    DeviceTaintRule: applied, listed with their columns, described, re-applied."""
    path = cluster.tmp / "dra-137.yaml"
    path.write_text(DRA_137)
    out = await cluster.ok("apply", "-f", str(path))
    for created in (
        "resourceslice.resource.k8s.io/node-1-counters created",
        "resourceslice.resource.k8s.io/node-1-partitions created",
        "devicetaintrule.resource.k8s.io/broken-fan created",
    ):
        assert created in out
    slices = (await cluster.ok("get", "resourceslices")).splitlines()
    assert slices[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert slices[1].split()[:4] == ["node-1-counters", "node-1", "gpu.example.com", "node-1"]
    counters = await cluster.ok(
        "get", "resourceslice", "node-1-counters", "-o", "jsonpath={.spec.sharedCounters[0].counters.memory.value}"
    )
    assert counters == "80Gi"
    device = json.loads(
        await cluster.ok("get", "resourceslice", "node-1-partitions", "-o", "jsonpath={.spec.devices[0]}")
    )
    assert device["consumesCounters"][0]["counterSet"] == "gpu-0-counters" and device["bindsToNode"] is True
    assert device["taints"][0]["effect"] == "NoSchedule" and device["bindingConditions"] == ["example.com/attached"]

    rules = (await cluster.ok("get", "devicetaintrules")).splitlines()
    assert rules[0].split() == ["NAME", "CREATED", "AT"] and rules[1].split()[0] == "broken-fan"
    described = await cluster.ok("describe", "devicetaintrule", "broken-fan")
    assert "Name:         broken-fan" in described and "Device Selector:" in described and "Effect:" in described
    added = cluster.store.get("DeviceTaintRule", None, "broken-fan")["spec"]["taint"]["timeAdded"]
    assert added
    assert "devicetaintrule.resource.k8s.io/broken-fan unchanged" in await cluster.ok("apply", "-f", str(path))
    path.write_text(DRA_137.replace("effect: None}", "effect: NoSchedule}"))
    assert "devicetaintrule.resource.k8s.io/broken-fan configured" in await cluster.ok("apply", "-f", str(path))
    taint = cluster.store.get("DeviceTaintRule", None, "broken-fan")["spec"]["taint"]
    assert taint["effect"] == "NoSchedule"
    assert "devicetaintrules" in await cluster.ok("api-resources", "--api-group=resource.k8s.io")
    path.write_text(DRA_137.replace("effect: None}", "effect: PreferNoSchedule}").replace("broken-fan", "other"))
    r = await cluster.kubectl("apply", "-f", str(path))
    assert r.code != 0 and 'spec.taint.effect: Unsupported value: "PreferNoSchedule"' in r.err
