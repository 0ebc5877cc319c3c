"""scheduling.k8s.io's Workload, PodGroup and CompositePodGroup (1.37) and a pod's
``spec.schedulingGroup``, served by the embedded API server to the real kubectl: apply, get,
describe, the status subresource, immutability refused in kube-apiserver's words, and the gates
(GenericWorkload for the pod field, CompositePodGroup for its kind)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.server import APIServer

KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
pytestmark = pytest.mark.skipif(
    not os.access(KUBECTL, os.X_OK), reason="kubectl is not installed (looked on PATH and at /usr/bin/kubectl)"
)

WORKLOAD = """\
apiVersion: scheduling.k8s.io/v1beta1
kind: Workload
metadata:
  name: training
spec:
  controllerRef: {apiGroup: batch, kind: Job, name: training}
  podGroupTemplates:
  - name: workers
    schedulingPolicy:
      gang: {minCount: 4}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata:
  name: training-workers
spec:
  workloadRef: {workloadName: training, templateName: workers}
  schedulingPolicy:
    gang: {minCount: 4}
---
apiVersion: v1
kind: Pod
metadata:
  name: worker-0
spec:
  schedulingGroup: {podGroupName: training-workers}
  containers:
  - name: main
    image: registry.k8s.io/pause:3.10
"""

COMPOSITE = """\
apiVersion: scheduling.k8s.io/v1alpha3
kind: CompositePodGroup
metadata:
  name: job-set
spec:
  workloadRef: {workloadName: training, templateName: root}
  schedulingPolicy:
    gang: {minGroupCount: 2}
"""


async def kubectl(kubeconfig: str, tmp: Path, *args: str, stdin: str | None = None, ok: bool = True) -> str:
    proc = await asyncio.create_subprocess_exec(
        KUBECTL,
        "--kubeconfig",
        kubeconfig,
        "--cache-dir",
        str(tmp / "cache"),
        *args,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "HOME": str(tmp)},
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None), 30)
    if ok:
        assert proc.returncode == 0, f"kubectl {' '.join(args)} failed: {err.decode()}"
        return out.decode()
    assert proc.returncode != 0, f"kubectl {' '.join(args)} succeeded: {out.decode()}"
    return err.decode()


async def _serve(store: Store, gates: FeatureGates, kubeconfig: Path) -> AsyncIterator[str]:
    srv = APIServer(store, feature_gates=gates)
    await srv.start()
    try:
        yield srv.write_kubeconfig(kubeconfig)
    finally:
        await srv.stop()


@pytest.fixture
async def gated(store: Store, tmp_path: Path) -> AsyncIterator[str]:
    """A server with GenericWorkload and CompositePodGroup on; its kubeconfig."""
    async for kubeconfig in _serve(
        store, FeatureGates({"GenericWorkload": True, "CompositePodGroup": True}), tmp_path / "gated"
    ):
        yield kubeconfig


@pytest.fixture
async def plain(store: Store, tmp_path: Path) -> AsyncIterator[str]:
    """A server with 1.37's default gates (GenericWorkload and CompositePodGroup off)."""
    async for kubeconfig in _serve(store, FeatureGates(), tmp_path / "plain"):
        yield kubeconfig


async def test_apply_get_describe_a_workload_a_pod_group_and_a_pod_in_it(
    store: Store, gated: str, tmp_path: Path
) -> None:
    await kubectl(gated, tmp_path, "apply", "-f", "-", stdin=WORKLOAD)
    stored = store.get("PodGroup", "default", "training-workers")
    assert stored["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert stored["spec"]["disruptionMode"] == {"single": {}}  # defaulted as upstream
    pod = store.get("Pod", "default", "worker-0")
    assert pod["spec"]["schedulingGroup"] == {"podGroupName": "training-workers"}

    names = await kubectl(gated, tmp_path, "get", "workloads,podgroups", "-o", "name")
    assert names.split() == ["workload.scheduling.k8s.io/training", "podgroup.scheduling.k8s.io/training-workers"]
    table = await kubectl(gated, tmp_path, "get", "podgroups")
    assert table.splitlines()[0].split()[0] == "NAME" and "training-workers" in table
    described = await kubectl(gated, tmp_path, "describe", "podgroup", "training-workers")
    assert "Min Count:  4" in described and "Workload Name:  training" in described

    # The alpha version serves the same objects.
    alpha = json.loads(
        await kubectl(gated, tmp_path, "get", "workloads.v1alpha3.scheduling.k8s.io", "training", "-o", "json")
    )
    assert alpha["apiVersion"] == "scheduling.k8s.io/v1alpha3"
    assert alpha["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": 4}}

    # Applying again with a changed minCount is allowed (a gang's count may change).
    await kubectl(
        gated,
        tmp_path,
        "apply",
        "-f",
        "-",
        stdin=WORKLOAD.replace("minCount: 4}\n---\napiVersion: v1", "minCount: 3}\n---\napiVersion: v1"),
    )
    assert store.get("PodGroup", "default", "training-workers")["spec"]["schedulingPolicy"]["gang"]["minCount"] == 3


async def test_the_status_subresource_takes_conditions_and_the_main_resource_ignores_them(
    store: Store, gated: str, tmp_path: Path
) -> None:
    await kubectl(gated, tmp_path, "apply", "-f", "-", stdin=WORKLOAD)
    condition = {
        "type": "PodGroupInitiallyScheduled",
        "status": "False",
        "reason": "Unschedulable",
        "message": "0/3 nodes are available",
        "lastTransitionTime": "2026-09-01T00:00:00Z",
    }
    patch = json.dumps({"status": {"conditions": [condition]}})
    await kubectl(
        gated, tmp_path, "patch", "podgroup", "training-workers", "--subresource=status", "--type=merge", "-p", patch
    )
    assert store.get("PodGroup", "default", "training-workers")["status"]["conditions"][0]["reason"] == "Unschedulable"
    described = await kubectl(gated, tmp_path, "describe", "podgroup", "training-workers")
    assert "PodGroupInitiallyScheduled" in described

    bad = json.dumps({"status": {"conditions": [{**condition, "reason": "not a reason"}]}})
    err = await kubectl(
        gated,
        tmp_path,
        "patch",
        "podgroup",
        "training-workers",
        "--subresource=status",
        "--type=merge",
        "-p",
        bad,
        ok=False,
    )
    assert 'status.conditions[0].reason: Invalid value: "not a reason": a condition reason must start' in err

    # Through the main resource a status is ignored, as the strategy resets it.
    await kubectl(
        gated,
        tmp_path,
        "patch",
        "podgroup",
        "training-workers",
        "--type=merge",
        "-p",
        json.dumps({"status": {"conditions": []}}),
    )
    assert store.get("PodGroup", "default", "training-workers")["status"]["conditions"][0]["reason"] == "Unschedulable"


@pytest.mark.parametrize(
    ("resource", "patch", "message"),
    [
        (
            "podgroup/training-workers",
            {"spec": {"workloadRef": {"workloadName": "other", "templateName": "workers"}}},
            'spec.workloadRef: Invalid value: "null": field is immutable',
        ),
        (
            "podgroup/training-workers",
            {"spec": {"schedulingPolicy": {"gang": None, "basic": {}}}},
            'spec.schedulingPolicy.basic: Invalid value: "null": field is immutable',
        ),
        (
            "workload/training",
            {"spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "other"}}},
            'spec.controllerRef: Invalid value: "null": field is immutable',
        ),
        (
            "pod/worker-0",
            {"spec": {"schedulingGroup": {"podGroupName": "other"}}},
            "spec: Forbidden: pod updates may not change fields other than",
        ),
    ],
    ids=["podgroup-workloadRef", "podgroup-policy", "workload-controllerRef", "pod-schedulingGroup"],
)
async def test_immutable_fields_are_refused(
    store: Store, gated: str, tmp_path: Path, resource: str, patch: dict[str, object], message: str
) -> None:
    await kubectl(gated, tmp_path, "apply", "-f", "-", stdin=WORKLOAD)
    err = await kubectl(gated, tmp_path, "patch", resource, "--type=merge", "-p", json.dumps(patch), ok=False)
    assert "is invalid" in err and message in err


async def test_validation_on_create_names_the_field(gated: str, tmp_path: Path) -> None:
    bad = WORKLOAD.split("---")[0].replace("minCount: 4", "minCount: -1")
    err = await kubectl(gated, tmp_path, "apply", "-f", "-", stdin=bad, ok=False)
    assert (
        "spec.podGroupTemplates[0].schedulingPolicy.gang.minCount: Invalid value: -1: must be greater than or equal to 1"
        in err
    )


async def test_composite_pod_groups_are_served_only_with_their_gate(
    store: Store, gated: str, plain: str, tmp_path: Path
) -> None:
    await kubectl(gated, tmp_path, "apply", "-f", "-", stdin=COMPOSITE)
    assert store.get("CompositePodGroup", "default", "job-set")["apiVersion"] == "scheduling.k8s.io/v1alpha3"
    assert "job-set" in await kubectl(gated, tmp_path, "get", "compositepodgroups")
    err = await kubectl(plain, tmp_path, "get", "compositepodgroups", ok=False)
    assert 'the server doesn\'t have a resource type "compositepodgroups"' in err


async def test_without_generic_workload_a_pods_scheduling_group_is_dropped(
    store: Store, plain: str, tmp_path: Path
) -> None:
    await kubectl(plain, tmp_path, "apply", "-f", "-", stdin=WORKLOAD)
    assert "schedulingGroup" not in store.get("Pod", "default", "worker-0")["spec"]
    # The kinds themselves are served (stored for when the gate is turned on).
    assert store.get("Workload", "default", "training")["spec"]["podGroupTemplates"][0]["name"] == "workers"


async def test_an_unknown_field_is_refused_with_its_path(gated: str, tmp_path: Path) -> None:
    bad = WORKLOAD.split("---")[0].replace("minCount: 4", "minCount: 4, minCuont: 3")
    err = await kubectl(gated, tmp_path, "apply", "-f", "-", stdin=bad, ok=False)
    assert 'unknown field "spec.podGroupTemplates[0].schedulingPolicy.gang.minCuont"' in err


async def test_server_side_apply_and_the_generation(store: Store, gated: str, tmp_path: Path) -> None:
    group = WORKLOAD.split("---")[1]
    await kubectl(gated, tmp_path, "apply", "--server-side", "-f", "-", stdin=group)
    assert store.get("PodGroup", "default", "training-workers")["metadata"]["generation"] == 1
    await kubectl(
        gated, tmp_path, "apply", "--server-side", "-f", "-", stdin=group.replace("minCount: 4", "minCount: 6")
    )
    stored = store.get("PodGroup", "default", "training-workers")
    assert stored["spec"]["schedulingPolicy"]["gang"]["minCount"] == 6 and stored["metadata"]["generation"] == 2


async def test_a_pod_group_is_protected_by_its_finalizer_with_generic_workload(
    store: Store, gated: str, tmp_path: Path
) -> None:
    await kubectl(gated, tmp_path, "apply", "-f", "-", stdin=WORKLOAD)
    group = store.get("PodGroup", "default", "training-workers")
    assert group["metadata"]["finalizers"] == ["scheduling.k8s.io/podgroup-protection"]
    await kubectl(gated, tmp_path, "delete", "podgroup", "training-workers", "--wait=false")
    marked = store.get("PodGroup", "default", "training-workers")
    assert marked["metadata"]["deletionTimestamp"]
    # Taking the finalizer off (the protection controller's job once no pod names it) deletes it.
    await kubectl(
        gated,
        tmp_path,
        "patch",
        "podgroup",
        "training-workers",
        "--type=merge",
        "-p",
        '{"metadata":{"finalizers":null}}',
    )
    assert "training-workers" not in [g["metadata"]["name"] for g in store.list("PodGroup")[0]]


async def test_without_generic_workload_a_pod_group_has_no_finalizer(store: Store, plain: str, tmp_path: Path) -> None:
    await kubectl(plain, tmp_path, "apply", "-f", "-", stdin=WORKLOAD)
    assert not store.get("PodGroup", "default", "training-workers")["metadata"].get("finalizers")
    await kubectl(plain, tmp_path, "delete", "podgroup", "training-workers")
    assert not store.list("PodGroup")[0]
