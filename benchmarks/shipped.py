"""The catalogue's workloads that ``kubesched bench`` ships, read from their one definition: the
test cases in upstream's YAML shape under ``kubesched/bench/workloads/`` (``misc.yaml``,
``affinity.yaml``, ``topology_spreading.yaml``, ``podgroups.yaml``, ``dra.yaml``, ``traces.yaml``),
loaded by :mod:`kubesched.bench.workload`.

A workload runs from its ops by ``kubesched bench``'s runner on either backend; what the catalogue
takes from its case is what it shows and judges by: the node, init-pod and measured-pod counts, the
feature gates, the PodGroups the measured pods make up, upstream's floor (:func:`floor`) and
whether it can run here (:func:`unavailable`: a trace it replays may be absent).
Nothing of it is spelled again in Python; the catalogue adds only how ``python -m benchmarks.run``
runs a workload (timing-dependent placements, a configuration of its own) and a description.

Upstream's default node and pod (:data:`default_node`, :data:`default_pod`) are made here from the
shipped templates, for the soak and the loop-lag probe, which make their own objects.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubesched.bench.errors import WorkloadError
from kubesched.bench.measure import Floor
from kubesched.bench.model import CreateAny, CreateNodes, ReplayTrace
from kubesched.bench.model import Workload as YamlWorkload
from kubesched.bench.render import node_maker, pod_maker
from kubesched.bench.trace import trace_missing
from kubesched.bench.workload import (
    DEFAULT_NODE_TEMPLATE,
    DEFAULT_POD_TEMPLATE,
    SHIPPED_DIR,
    load_workloads,
    shipped_files,
    shipped_workloads,
)

Obj = dict[str, Any]


@functools.cache
def yaml_workloads() -> dict[str, YamlWorkload]:
    """Every shipped workload by name, read once."""
    return shipped_workloads()


@functools.cache
def _case_files() -> dict[str, Path]:
    """The shipped file each test case is written in, by case name, from the files' top-level
    ``- name:`` lines (no YAML read): a run reads the one file its workload is in."""
    out: dict[str, Path] = {}
    for f in shipped_files():
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.startswith("- name:"):
                out.setdefault(line.split(":", 1)[1].strip().strip("'\""), f)
    return out


@functools.cache
def _file_workloads(path: Path) -> dict[str, YamlWorkload]:
    """The workloads of one shipped file by name, read once."""
    return {w.name: w for w in load_workloads(path)}


def case_workloads(name: str) -> dict[str, YamlWorkload]:
    """The shipped workloads of the file that holds workload ``name``'s case (every file when
    the case is not found by its line, so that the error below names what is missing)."""
    path = _case_files().get(name.split("/", 1)[0])
    return _file_workloads(path) if path is not None else yaml_workloads()


def yaml_workload(name: str) -> YamlWorkload:
    """The shipped workload ``name`` (``SchedulingBasic/500Nodes``)."""
    try:
        return case_workloads(name)[name]
    except KeyError:
        raise WorkloadError(f"{name}: no shipped workload of that name in {SHIPPED_DIR}") from None


def floor(name: str) -> Floor | None:
    """Upstream's floor for shipped workload ``name``: its own ``threshold``, else that of the
    case's size with the same node count that measures more pods (upstream sets thresholds only
    on its large sizes: the table marks such a floor as borrowed), else none."""
    w = yaml_workload(name)
    if w.threshold is not None:
        return Floor(w.threshold, name)
    case = name.split("/", 1)[0]
    larger = [
        other
        for other in case_workloads(name).values()
        if other.name.startswith(case + "/")
        and other.threshold is not None
        and other.nodes == w.nodes
        and other.measured_pods > w.measured_pods
    ]
    if not larger:
        return None
    nearest = min(larger, key=lambda other: other.measured_pods)
    assert nearest.threshold is not None
    return Floor(nearest.threshold, nearest.name)


#: Upstream's default node (``templates/node-default.yaml``: 4 CPU, 32Gi, 110 pods), node ``i``
#: named ``node-<i>`` as ``kubesched bench`` names it: a fresh object each call.
default_node: Callable[[int], Obj] = node_maker(CreateNodes(0, DEFAULT_NODE_TEMPLATE))
_default_pod = pod_maker(DEFAULT_POD_TEMPLATE)


def default_pod(prefix: str, i: int) -> Obj:
    """Upstream's default pod (``templates/pod-default.yaml``: 100m CPU, 500Mi) named
    ``<prefix>-<i>`` in ``default``: a fresh object each call."""
    obj = _default_pod(i)
    meta = obj["metadata"]
    meta.pop("generateName", None)
    meta["name"] = f"{prefix}-{i}"
    meta["namespace"] = "default"
    return obj


def unavailable(name: str) -> str | None:
    """Why shipped workload ``name`` cannot run here (a trace it replays is absent), or None."""
    for op in yaml_workload(name).ops:
        if isinstance(op, ReplayTrace) and (why := trace_missing(op)):
            return why
    return None


def workload_fields(name: str) -> dict[str, Any]:
    """The fields of catalogue workload ``name`` that its shipped YAML workload of the same name
    defines (``feature_gates``, ``groups``: the PodGroups its createPodGroups ops make, ``floor``,
    ``yaml_source``; its counts the catalogue reads from it when asked):
    ``Workload(name, **workload_fields(name), ...)``."""
    w = yaml_workload(name)
    return {
        "feature_gates": dict(w.feature_gates),
        "groups": sum(op.count for op in w.ops if isinstance(op, CreateAny) and op.kind == "PodGroup"),
        "floor": floor(name),
        "yaml_source": w.source,
    }
