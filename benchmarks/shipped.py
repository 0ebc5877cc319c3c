"""The catalogue's workloads that ``kubesched bench`` ships, read from their one definition: the
test cases in upstream's YAML shape under ``kubesched/bench/workloads/`` (``misc.yaml``,
``affinity.yaml``, ``topology_spreading.yaml``, ``podgroups.yaml``, ``dra.yaml``), loaded by
:mod:`kubesched.bench.workload` and made into objects by :mod:`kubesched.bench.render`.

From the YAML case and size come the node templates and label strategies, the node, init-pod and
measured-pod counts, the pod templates, the churn (template and interval), the feature gates, the
cluster objects (createAny, createResourceDriver: DeviceClasses, ResourceSlices, claim
templates, DeviceTaintRules), the PodGroups and CompositePodGroups (with their namespace), and
upstream's floor (:func:`floor`). Nothing of them is spelled again in Python; the catalogue adds
only how ``python -m benchmarks.run`` runs a workload (until bound, timing-dependent placements,
a configuration of its own) and a description. On the in-memory cluster a workload runs from its
ops by ``kubesched bench``'s runner; the objects made here are what the HTTP backend (whose API
server has a process of its own) starts its server with and creates over HTTP.

The objects are named as the catalogue has always named them: nodes as ``kubesched bench`` names
them (``node-<i>``, counted over the case's createNodes ops), pods ``<prefix>-<i>`` (``init-<i>``,
``measured-<i>``, ``churn-<i>``) in the namespace their op names, or ``default`` where it names
none (where upstream's runner makes ``namespace-<op index>``).

A case the catalogue takes must be of the shape the HTTP backend runs: createNodes ops, at most one
createPods op of init pods before one measured createPods op, namespaces (``sched-*``, which the
backends make, or a pod-group namespace), cluster objects (createAny in ``init``, ``test`` or no
namespace; createResourceDriver), made before the init pods, a churn of one pod template in
``create`` mode, and createPodGroups, createCompositePodGroups and waitForPodGroups for the pod
groups. Any other op (allocResourceClaims, steadyState, barriers, deletes) is refused by name
(:class:`ShippedShapeError`): such a case runs by ``kubesched bench``'s runner on both backends.
"""

from __future__ import annotations

import bisect
import fnmatch
import functools
import itertools
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
    CreateResourceDriver,
    Op,
    WaitForPodGroups,
)
from kubesched.bench.model import Workload as YamlWorkload
from kubesched.bench.render import (
    driver_slice,
    fresh,
    node_maker,
    node_object,
    node_template,
    op_pod_maker,
    pod_maker,
    render_any,
)
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
#: The namespaces the backends make for a workload with cluster objects (its createAny ops' own,
#: and its pods'), "" for a cluster-scoped object.
OBJECT_NAMESPACES = ("", "init", "test")
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
    defines (``nodes``, ``init_pods``, ``measure_pods``, templates, churn, gates, cluster objects,
    pod groups, ``floor``, ``yaml_source``): ``Workload(name, **workload_fields(name), ...)``."""
    w = yaml_workload(name)
    where = f"{w.source}: {name}"
    nodes = [op for op in w.ops if isinstance(op, CreateNodes)]
    if not nodes:
        raise ShippedShapeError(f"{where}: the catalogue runs at least one createNodes op, the case has none")
    pods = [(k, op) for k, op in enumerate(w.ops) if isinstance(op, CreatePods)]
    measured = [(k, op) for k, op in pods if op.collect_metrics]
    init = [(k, op) for k, op in pods if not op.collect_metrics]
    if len(measured) != 1 or len(init) > 1 or (init and init[0][0] > measured[0][0]):
        raise ShippedShapeError(
            f"{where}: the catalogue runs at most one createPods op of init pods, then one measured createPods op"
        )
    make_node = _nodes(nodes)
    fields: dict[str, Any] = {
        "nodes": sum(op.count for op in nodes),
        "init_pods": init[0][1].count if init else 0,
        "measure_pods": measured[0][1].count,
        "make_node": make_node,
        "make_pod": _pods(*measured[0], where),
        "make_init_pod": _pods(*init[0], where) if init else None,
        "feature_gates": dict(w.feature_gates),
        "floor": floor(name),
        "yaml_source": w.source,
    }
    namespaces: list[Obj] = []
    group_ops: list[CreateAny] = []
    object_ops: list[tuple[int, CreateAny | CreateResourceDriver]] = []
    for k, op in enumerate(w.ops):
        at = f"{where}: workloadTemplate[{k}]"
        if isinstance(op, Churn):
            fields.update(_churn(op, f"{at} (churn)"))
        elif isinstance(op, CreateNamespaces):
            namespaces += _namespaces(op)
        elif isinstance(op, CreateAny) and op.kind in GROUP_KINDS:
            group_ops.append(op)
        elif isinstance(op, CreateAny) and op.namespace not in OBJECT_NAMESPACES:
            raise ShippedShapeError(f"{at}: the catalogue makes objects in {', '.join(OBJECT_NAMESPACES[1:])} or none")
        elif isinstance(op, CreateAny | CreateResourceDriver):
            object_ops.append((sum(n.count for n in w.ops[:k] if isinstance(n, CreateNodes)), op))
        elif not isinstance(op, CreateNodes | CreatePods | WaitForPodGroups):
            raise ShippedShapeError(f"{at}: the catalogue does not run {_opcode(op)}")
    if object_ops:
        fields["objects"] = _cluster_objects(object_ops, make_node)
    groups = sum(op.count for op in group_ops if op.kind == "PodGroup")
    if groups:
        fields["pod_groups"] = _group_objects(namespaces, group_ops)
        fields["groups"] = groups
    elif any(ns["metadata"]["name"] not in BACKEND_NAMESPACES for ns in namespaces):
        raise ShippedShapeError(f"{where}: namespaces other than {', '.join(BACKEND_NAMESPACES)} need pod groups")
    return fields


def _nodes(ops: list[CreateNodes]) -> ShippedNode:
    """Node ``i`` of the workload, counted over its createNodes ops in order and named as
    kubesched bench names it (``node-<i>``, ``scheduler-perf-dra-<i>``)."""
    made = [op for op in ops if op.count]
    if len(made) <= 1:
        return ShippedNode.of(made[0] if made else ops[0])
    templates = [node_template(op) for op in made]
    ends = list(itertools.accumulate(op.count for op in made))

    def render(i: int) -> Obj:
        k = bisect.bisect_right(ends, i)
        index = i - (ends[k] - made[k].count)
        return node_object(templates[k](index), made[k], index, i)

    return ShippedNode(render, made[-1].template)


def _cluster_objects(
    ops: list[tuple[int, CreateAny | CreateResourceDriver]], make_node: Callable[[int], Obj]
) -> Callable[[], list[Obj]]:
    """The objects of the case's createAny ops (each in its op's namespace) and createResourceDriver
    ops (a slice for each node made before the op whose name matches, as kubesched bench finds
    them), in the case's order, made when called; each op beside the nodes made before it."""

    def make() -> list[Obj]:
        seen = max((made for made, op in ops if isinstance(op, CreateResourceDriver)), default=0)
        names = [make_node(i)["metadata"]["name"] for i in range(seen)]
        out: list[Obj] = []
        for made, op in ops:
            if isinstance(op, CreateResourceDriver):
                matching = (n for n in names[:made] if fnmatch.fnmatchcase(n, op.nodes))
                out += [driver_slice(op.driver, n, op.max_claims) for n in matching]
            else:
                out += [_rendered(op, i) for i in range(op.count)]
        return out

    return make


def _rendered(op: CreateAny, index: int) -> Obj:
    """Object ``index`` of a createAny op, in the op's namespace if it names one."""
    obj = render_any(op, index)
    if op.namespace:
        obj.setdefault("metadata", {})["namespace"] = op.namespace
    return obj


def _pods(index: int, op: CreatePods, where: str) -> PodMaker:
    # A createPods op naming no namespace: upstream's runner makes ``namespace-<op index>``, the
    # catalogue's pods have always gone to ``default``.
    namespace = "default" if op.namespace == f"namespace-{index}" else op.namespace
    if op.volume_templates is not None or op.steady_seconds is not None or op.skip_wait:
        raise ShippedShapeError(
            f"{where}: workloadTemplate[{index}] (createPods, {op.template.name}): the catalogue runs no "
            "volumes, steadyState or skipWaitToCompletion"
        )
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
                obj = _rendered(op, i)
                if obj.get("kind") != op.kind:
                    raise ShippedShapeError(f"{op.template}: expected a {op.kind} template, got {obj.get('kind')!r}")
                out.append(obj)
        return out

    return make


def _opcode(op: Op) -> str:
    return type(op).__name__
