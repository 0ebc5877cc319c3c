"""The catalogue's workloads that ``kubesched bench`` ships, read from their one definition: the
test cases in upstream's YAML shape under ``kubesched/bench/workloads/`` (``misc.yaml``,
``affinity.yaml``, ``topology_spreading.yaml``, ``podgroups.yaml``), loaded by
:mod:`kubesched.bench.workload` and made into objects by :mod:`kubesched.bench.render`.

From the YAML case and size come the node template and label strategies, the node, init-pod and
measured-pod counts, the pod templates, the churn (template and interval), the feature gates, the
PodGroups and CompositePodGroups (with their namespace), and upstream's floor
(:func:`floor`). Nothing of them is spelled again in Python; the catalogue adds only how
``python -m benchmarks.run`` runs a workload (until bound, timing-dependent placements) and a
description.

The objects are named as the catalogue has always named them: nodes as ``kubesched bench`` names
them (``node-<i>``), pods ``<prefix>-<i>`` (``init-<i>``, ``measured-<i>``, ``churn-<i>``) in the
namespace their op names, or ``default`` where it names none (where upstream's runner makes
``namespace-<op index>``).

A case the catalogue takes must be of the shape its backends run: one createNodes op, at most
one createPods op of init pods before one measured createPods op, namespaces (``sched-*``, which
the backends make, or a pod-group namespace), a churn of one pod template in ``create`` mode, and
createPodGroups, createCompositePodGroups and waitForPodGroups for the pod groups. Any
other op is refused by name (:class:`ShippedShapeError`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.bench.errors import WorkloadError
from kubesched.bench.measure import Floor
from kubesched.bench.model import (
    Churn,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    Op,
    WaitForPodGroups,
)
from kubesched.bench.model import Workload as YamlWorkload
from kubesched.bench.render import fresh, node_maker, op_pod_maker, pod_maker, render_any
from kubesched.bench.templates import read_template
from kubesched.bench.workload import (
    DEFAULT_NODE_TEMPLATE,
    DEFAULT_POD_TEMPLATE,
    SHIPPED_DIR,
    load_workloads,
    shipped_files,
    shipped_workloads,
)

Obj = dict[str, Any]
PodMaker = Callable[[str, int], Obj]

#: The namespaces both backends make for every workload.
BACKEND_NAMESPACES = ("sched-0", "sched-1")
#: The kinds of the createPodGroups and createCompositePodGroups ops: the pod groups the
#: catalogue hands its backends.
GROUP_KINDS = ("PodGroup", "CompositePodGroup")


class ShippedShapeError(WorkloadError):
    """A shipped workload the catalogue cannot run as it is written (an op its backends lack)."""


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


@dataclass(frozen=True)
class ShippedPod:
    """Pods of the shipped pod template ``template`` (rendered by ``render``: pod ``i`` as the
    template makes it) named as the catalogue names pods: ``pod(prefix, i)`` is ``<prefix>-<i>``
    in ``namespace``."""

    render: Callable[[int], Obj]
    namespace: str
    template: Path

    def __call__(self, prefix: str, i: int) -> Obj:
        obj = self.render(i)
        meta = obj["metadata"]
        meta.pop("generateName", None)
        meta["name"] = f"{prefix}-{i}"
        meta["namespace"] = self.namespace
        return obj


@dataclass(frozen=True)
class ShippedNode:
    """Nodes of a shipped createNodes op (its template and label strategies, rendered by
    ``render``): ``node(i)``."""

    render: Callable[[int], Obj]
    template: Path

    def __call__(self, i: int) -> Obj:
        return self.render(i)

    @classmethod
    def of(cls, op: CreateNodes) -> ShippedNode:
        return cls(node_maker(op), op.template)


def template_pod(path: str, namespace: str, count: int = 1) -> PodMaker:
    """Pods of the shipped pod template ``templates/<path>`` in ``namespace`` (its
    ``{{.Index}}`` the pod's index, ``{{.Count}}`` ``count``): for a workload that takes a
    shipped template but not a whole case."""
    template = SHIPPED_DIR / "templates" / path
    return ShippedPod(pod_maker(template, count), namespace, template)


#: Upstream's default node (``templates/node-default.yaml``: 4 CPU, 32Gi, 110 pods), node ``i``
#: named ``node-<i>``: the node of the catalogue's workloads that ship no case of their own.
default_node: Callable[[int], Obj] = ShippedNode.of(CreateNodes(0, DEFAULT_NODE_TEMPLATE))
#: Upstream's default pod (``templates/pod-default.yaml``: 100m CPU, 500Mi), in ``default``.
default_pod: PodMaker = ShippedPod(pod_maker(DEFAULT_POD_TEMPLATE), "default", DEFAULT_POD_TEMPLATE)


def workload_fields(name: str) -> dict[str, Any]:
    """The fields of catalogue workload ``name`` that its shipped YAML workload of the same name
    defines (``nodes``, ``init_pods``, ``measure_pods``, templates, churn, gates, pod groups,
    ``floor``, ``yaml_source``): ``Workload(name, **workload_fields(name), ...)``."""
    w = yaml_workload(name)
    where = f"{w.source}: {name}"
    nodes = [op for op in w.ops if isinstance(op, CreateNodes)]
    if len(nodes) != 1:
        raise ShippedShapeError(f"{where}: the catalogue runs one createNodes op, the case has {len(nodes)}")
    pods = [(k, op) for k, op in enumerate(w.ops) if isinstance(op, CreatePods)]
    measured = [(k, op) for k, op in pods if op.collect_metrics]
    init = [(k, op) for k, op in pods if not op.collect_metrics]
    if len(measured) != 1 or len(init) > 1 or (init and init[0][0] > measured[0][0]):
        raise ShippedShapeError(
            f"{where}: the catalogue runs at most one createPods op of init pods, then one measured createPods op"
        )
    fields: dict[str, Any] = {
        "nodes": nodes[0].count,
        "init_pods": init[0][1].count if init else 0,
        "measure_pods": measured[0][1].count,
        "make_node": ShippedNode.of(nodes[0]),
        "make_pod": _pods(*measured[0]),
        "make_init_pod": _pods(*init[0]) if init else None,
        "feature_gates": dict(w.feature_gates),
        "floor": floor(name),
        "yaml_source": w.source,
    }
    namespaces: list[Obj] = []
    group_ops: list[CreateAny] = []
    for k, op in enumerate(w.ops):
        if isinstance(op, Churn):
            fields.update(_churn(op, f"{where}: workloadTemplate[{k}] (churn)"))
        elif isinstance(op, CreateNamespaces):
            namespaces += _namespaces(op)
        elif isinstance(op, CreateAny) and op.kind in GROUP_KINDS:
            group_ops.append(op)
        elif not isinstance(op, CreateNodes | CreatePods | WaitForPodGroups):
            raise ShippedShapeError(f"{where}: workloadTemplate[{k}]: the catalogue does not run {_opcode(op)}")
    groups = sum(op.count for op in group_ops if op.kind == "PodGroup")
    if groups:
        fields["pod_groups"] = _group_objects(namespaces, group_ops)
        fields["groups"] = groups
    elif any(ns["metadata"]["name"] not in BACKEND_NAMESPACES for ns in namespaces):
        raise ShippedShapeError(f"{where}: namespaces other than {', '.join(BACKEND_NAMESPACES)} need pod groups")
    return fields


def _pods(index: int, op: CreatePods) -> PodMaker:
    # A createPods op naming no namespace: upstream's runner makes ``namespace-<op index>``, the
    # catalogue's pods have always gone to ``default``.
    namespace = "default" if op.namespace == f"namespace-{index}" else op.namespace
    if op.volume_templates is not None or op.steady_seconds is not None or op.skip_wait:
        raise ShippedShapeError(f"createPods ({op.template.name}): volumes, steadyState, skipWaitToCompletion")
    return ShippedPod(op_pod_maker(op), namespace, op.template)


def _churn(op: Churn, where: str) -> dict[str, Any]:
    if op.mode != "create" or op.number or len(op.templates) != 1:
        raise ShippedShapeError(f"{where}: the catalogue churns one template in create mode, for the whole run")
    # pod_maker reads the template as a Pod: another kind is a WorkloadError naming it.
    pods = ShippedPod(pod_maker(op.templates[0]), "default", op.templates[0])
    return {"make_churn_pod": pods, "churn_interval": op.interval}


def _namespaces(op: CreateNamespaces) -> list[Obj]:
    labels = (read_template(op.template, "Namespace")["metadata"].get("labels") or {}) if op.template else {}
    return [
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": f"{op.prefix}-{i}", **({"labels": dict(labels)} if labels else {})},
        }
        for i in range(op.count)
    ]


def _group_objects(namespaces: list[Obj], ops: list[CreateAny]) -> Callable[[], list[Obj]]:
    """The namespaces, then each op's objects in its namespace, made when called (thousands of
    templates filled in: not at import)."""

    def make() -> list[Obj]:
        out: list[Obj] = fresh(namespaces)
        for op in ops:
            for i in range(op.count):
                obj = render_any(op, i)
                if obj.get("kind") != op.kind:
                    raise ShippedShapeError(f"{op.template}: expected a {op.kind} template, got {obj.get('kind')!r}")
                if op.namespace:
                    obj.setdefault("metadata", {})["namespace"] = op.namespace
                out.append(obj)
        return out

    return make


def _opcode(op: Op) -> str:
    return type(op).__name__
