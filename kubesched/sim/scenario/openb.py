"""Scenarios from the Alibaba GPU cluster trace (2023, "openb"): real nodes and pods.

The trace (published in alibaba/clusterdata, cluster-trace-gpu-v2023) lists nodes with CPU,
memory, GPU count and GPU model, and pods with CPU, memory, GPU count, the share of one GPU a
GPU-sharing pod needs (``gpu_milli``), an optional GPU model constraint (``gpu_spec`` like
``V100M16|V100M32``) and creation times. It is not shipped with kubesched; point at a copy.

How it becomes Kubernetes objects:

* a node advertises ``nvidia.com/gpu: <gpu>`` and ``alibabacloud.com/gpu-milli: <gpu * 1000>``
  and carries its model as the label ``alibabacloud.com/gpu-model``;
* a pod that needs whole GPUs (``num_gpu`` > 1, or ``gpu_milli`` = 1000) requests
  ``nvidia.com/gpu: num_gpu`` and ``gpu-milli: num_gpu * 1000``; a GPU-sharing pod requests only
  ``gpu-milli: gpu_milli`` (so default plugins account the GPU share as a scalar resource —
  placement on one specific GPU device is beyond the default plugin set);
* ``gpu_spec`` becomes required node affinity on the model label;
* a pod with GPUs also carries the annotations the FGD artifact's GPU-sharing scheduler reads
  (``alibabacloud.com/gpu-count``, ``alibabacloud.com/gpu-milli`` per GPU, at most 1000, and
  ``alibabacloud.com/gpu-card-model`` for ``gpu_spec``), so that per-GPU placement (the
  gpushare plugin package) can work from the same scenario;
* pods are created in order of ``creation_time`` (rows without one keep file order).
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kubesched import errors
from kubesched.decoding import MAX_INTEGER_DIGITS
from kubesched.sim.scenario.reading import MAX_OBJECTS, SCENARIO_LIMITS, Scenario, parse_scenario
from kubesched.sim.scenario.steps import LIFETIME

GPU = "nvidia.com/gpu"
GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_MODEL_LABEL = "alibabacloud.com/gpu-model"
#: Pod annotations of the FGD artifact (hkust-adsl/kubernetes-scheduler-simulator).
GPU_COUNT_ANNOTATION = "alibabacloud.com/gpu-count"
GPU_MILLI_ANNOTATION = "alibabacloud.com/gpu-milli"
GPU_MODEL_ANNOTATION = "alibabacloud.com/gpu-card-model"

#: Where the project keeps the trace, relative to the repository root.
#: Why what needs the trace is skipped when it is absent.
TRACE_ABSENT = (
    "the openb trace is absent: neither $KUBESCHED_TRACES/alibaba-gpu-v2023 nor "
    "../shared/traces/alibaba-gpu-v2023 holds it (docs/research.md says where to get it)"
)
DEFAULT_TRACE_DIR = Path(__file__).resolve().parents[3].parent / "shared" / "traces" / "alibaba-gpu-v2023"


class TraceError(errors.ScenarioError):
    pass


def trace_dir() -> Path | None:
    """The trace folder: ``$KUBESCHED_TRACES/alibaba-gpu-v2023`` or ``../shared/traces/...``; None if absent."""
    env = os.environ.get("KUBESCHED_TRACES")
    for d in ([Path(env) / "alibaba-gpu-v2023"] if env else []) + [DEFAULT_TRACE_DIR]:
        if (d / "openb_node_list_all_node.csv").is_file():
            return d
    return None


def _int(row: dict[str, str], key: str, where: str) -> int:
    value = (row.get(key) or "").strip()
    if value == "":
        return 0
    if len(value) > MAX_INTEGER_DIGITS:
        raise TraceError(
            f"{where}: column {key!r}: a number of {len(value)} characters, more than the limit of {MAX_INTEGER_DIGITS}"
        )
    try:
        number = float(value)
    except ValueError:
        raise TraceError(f"{where}: column {key!r}: not a number: {value!r}") from None
    if not math.isfinite(number):
        raise TraceError(f"{where}: column {key!r}: not a finite number: {value!r}")
    return int(number)


def _rows(path: Path, limit: int | None = None) -> Iterator[tuple[int, dict[str, str]]]:
    """``(index, row)`` of a trace CSV, within the scenario's bounds: the file's size, at most
    :data:`MAX_OBJECTS` rows; bytes that are not UTF-8 and broken CSV are a TraceError."""
    try:
        size = path.stat().st_size
        if size > SCENARIO_LIMITS.max_bytes:
            raise TraceError(f"{path.name}: {size} bytes, more than the limit of {SCENARIO_LIMITS.max_bytes} bytes")
        with open(path, newline="", encoding="utf-8") as f:
            for i, row in enumerate(csv.DictReader(f)):
                if limit is not None and i >= limit:
                    return
                if i >= MAX_OBJECTS:
                    raise TraceError(f"{path.name}: more than {MAX_OBJECTS} rows, the limit of objects in a scenario")
                yield i, row
    except OSError as exc:
        raise TraceError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path.name}: not UTF-8 text: byte {exc.start} cannot be decoded") from None
    except csv.Error as exc:
        raise TraceError(f"{path.name}: not a CSV file: {exc}") from None


def node_objects(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    nodes = []
    for i, row in _rows(path, limit):
        where = f"{path.name} row {i + 2}"
        name = (row.get("sn") or "").strip()
        if not name:
            raise TraceError(f"{where}: column 'sn': empty node name")
        gpus = _int(row, "gpu", where)
        alloc = {
            "cpu": f"{_int(row, 'cpu_milli', where)}m",
            "memory": f"{_int(row, 'memory_mib', where)}Mi",
            "pods": "110",
        }
        labels = {"kubernetes.io/hostname": name}
        if gpus:
            alloc[GPU] = str(gpus)
            alloc[GPU_MILLI] = str(gpus * 1000)
            labels[GPU_MODEL_LABEL] = (row.get("model") or "").strip()
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": labels},
                "spec": {},
                "status": {"capacity": dict(alloc), "allocatable": alloc},
            }
        )
    return nodes


def pod_objects(
    path: Path, limit: int | None = None, scheduler_name: str = "default-scheduler"
) -> list[dict[str, Any]]:
    return [pod for _, _, pod in timed_pod_objects(path, limit, scheduler_name)]


def timed_pod_objects(
    path: Path, limit: int | None = None, scheduler_name: str = "default-scheduler"
) -> list[tuple[int, int | None, dict[str, Any]]]:
    """``(creation_time, deletion_time or None, pod)`` of each pod, in creation order."""
    rows = list(_rows(path))
    # Creation order, as the pods arrived in the traced cluster.
    rows.sort(key=lambda r: (_int(r[1], "creation_time", path.name) if "creation_time" in r[1] else 0, r[0]))
    if limit is not None:
        rows = rows[:limit]
    pods: list[tuple[int, int | None, dict[str, Any]]] = []
    for i, row in rows:
        where = f"{path.name} row {i + 2}"
        name = (row.get("name") or "").strip()
        if not name:
            raise TraceError(f"{where}: column 'name': empty pod name")
        num_gpu = _int(row, "num_gpu", where)
        gpu_milli = _int(row, "gpu_milli", where)
        requests: dict[str, str] = {
            "cpu": f"{_int(row, 'cpu_milli', where)}m",
            "memory": f"{_int(row, 'memory_mib', where)}Mi",
        }
        limits: dict[str, str] = {}
        if num_gpu > 1 or (num_gpu == 1 and gpu_milli >= 1000):
            limits[GPU] = str(num_gpu)
            requests[GPU_MILLI] = str(num_gpu * 1000)
        elif num_gpu == 1 and gpu_milli > 0:
            requests[GPU_MILLI] = str(gpu_milli)
        resources: dict[str, Any] = {"requests": requests}
        if limits:
            resources["limits"] = limits
        spec: dict[str, Any] = {
            "schedulerName": scheduler_name,
            "containers": [{"name": "main", "image": "registry.k8s.io/pause:3.10", "resources": resources}],
        }
        gpu_spec = (row.get("gpu_spec") or "").strip()
        if gpu_spec:
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": GPU_MODEL_LABEL, "operator": "In", "values": gpu_spec.split("|")}
                                ]
                            }
                        ]
                    }
                }
            }
        labels = {"app": "openb"}
        qos = (row.get("qos") or "").strip()
        if qos:
            labels["openb/qos"] = qos
        created = _int(row, "creation_time", where)
        deleted = _int(row, "deletion_time", where) if (row.get("deletion_time") or "").strip() else None
        meta: dict[str, Any] = {"name": name, "namespace": "default", "labels": labels}
        if num_gpu:
            annotations = {
                GPU_COUNT_ANNOTATION: str(num_gpu),
                GPU_MILLI_ANNOTATION: str(min(max(gpu_milli, 0), 1000)),
            }
            models = "|".join(m for m in gpu_spec.split("|") if m)
            if models:
                annotations[GPU_MODEL_ANNOTATION] = models
            meta["annotations"] = annotations
        pods.append((created, deleted, {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}))
    return pods


def load_openb(
    pods: str = "default",
    nodes: str = "all_node",
    directory: Path | None = None,
    node_limit: int | None = None,
    pod_limit: int | None = None,
    scheduler_name: str = "default-scheduler",
    churn: bool = False,
) -> Scenario:
    """A scenario of the trace's nodes and pods (``pods`` names a pod list: default, gpuspec33,
    multigpu50, cpu050; ``nodes``: all_node or gpu_node).

    With ``churn`` the pods arrive as they did in the traced cluster: each at its
    ``creation_time`` (a step, see kubesched.sim.scenario.timeline), and each with a deletion time runs
    for ``deletion_time - creation_time`` seconds once placed (``kubesched.io/lifetime``)."""
    d = directory or trace_dir()
    if d is None:
        raise TraceError(
            "the openb trace is not present (looked in $KUBESCHED_TRACES/alibaba-gpu-v2023 and "
            "../shared/traces/alibaba-gpu-v2023): get its CSV files from github.com/alibaba/clusterdata "
            "(cluster-trace-gpu-v2023/csv) into a folder alibaba-gpu-v2023 and set KUBESCHED_TRACES to its parent"
        )
    node_path = d / f"openb_node_list_{nodes}.csv"
    pod_path = d / f"openb_pod_list_{pods}.csv"
    for p in (node_path, pod_path):
        if not p.is_file():
            raise TraceError(f"{p}: no such trace file")
    docs: list[Any] = node_objects(node_path, node_limit)
    if not churn:
        return parse_scenario(docs + pod_objects(pod_path, pod_limit, scheduler_name), f"openb:{pods}")
    arrivals: dict[int, list[dict[str, Any]]] = {}
    for created, deleted, pod in timed_pod_objects(pod_path, pod_limit, scheduler_name):
        if deleted is not None and deleted > created:
            pod["metadata"].setdefault("annotations", {})[LIFETIME] = f"{deleted - created}s"
        arrivals.setdefault(created, []).append(pod)
    steps = [{"at": f"{t}s", "create": batch} for t, batch in sorted(arrivals.items())]
    docs.append({"apiVersion": "kubesched.io/v1", "kind": "Steps", "steps": steps})
    return parse_scenario(docs, f"openb:{pods} (churn)")
