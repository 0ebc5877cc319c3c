"""Workload files in upstream scheduler_perf's format, read and checked.

A file is a YAML list of test cases. Each case has a ``name``, optional ``featureGates``,
``labels`` and ``defaultPodTemplatePath``, a ``workloadTemplate`` (a list of ops) and
``workloads``: each a ``name``, ``params`` (the ``$name`` values the ops refer to), optional
``featureGates`` (over the case's), ``labels`` and ``threshold`` (upstream's pods/s floor).
A workload is named ``Case/workload``.

The ops kubesched runs (fields as upstream's; an op's ``<field>Param: $name`` sets ``<field>`` from
the workload's params, and so does any value written ``$name``):

* ``createNodes``: ``count``, ``nodeTemplatePath``, ``labelNodePrepareStrategy``
  (``labelKey``, ``labelValues``: node ``i`` gets value ``i % len``), ``uniqueNodeLabelStrategy``
  (``labelKey``: each node its own value), ``nodeAllocatableStrategy`` (``nodeAllocatable``
  added to each node's allocatable; a CSINode per node listing ``csiNodeAllocatable``'s drivers
  with their ``count`` and ``migratedPlugins`` in its migrated-plugins annotation);
* ``createNamespaces``: ``prefix``, ``count`` (``<prefix>-0`` ...), ``namespaceTemplatePath`` (a
  Namespace whose labels each namespace gets, for a namespaceSelector to match);
* ``createPods``: ``count`` (times ``countMultiplier``, if given), ``namespace`` (default
  ``namespace-<op index>``, as upstream), ``templateParams`` (values of the pod template's fields),
  ``steadyState`` with ``duration`` (and ``collectMetrics``: ``count`` pods kept pending for that
  long, each one bound deleted and a new one made, all of them measured),
  ``podTemplatePath`` (default the case's ``defaultPodTemplatePath``, else a 100m/500Mi pod),
  ``collectMetrics`` (measure these pods), ``skipWaitToCompletion`` (do not wait for them),
  ``persistentVolumeTemplatePath`` with ``persistentVolumeClaimTemplatePath`` (pod ``i`` mounts
  claim ``pvc-<i>``, bound to volume ``<namespace>-vol-<i>``, both made as upstream makes them);
* ``createPodSets``: ``count``, ``namespacePrefix`` and ``createPodsOp`` (a ``createPods`` op): that
  op once for each namespace ``<namespacePrefix>-0`` ... ``-<count - 1>``;
* ``createAny``: ``templatePath`` (any object: a CustomResourceDefinition, an object of its
  kind, a ConfigMap...; the text may use ``{{.Index}}``, ``{{.Count}}`` and each of
  ``templateParams``, ``$name`` values resolved), ``namespace``, ``count`` (default 1): what a
  plugin reads besides pods and nodes, e.g. a quota;
* ``createPodGroups``, ``createCompositePodGroups``: as ``createAny``, each object a PodGroup (a
  CompositePodGroup), the op ending once the scheduler has seen them all;
* ``waitForPodGroups``: ``namespace``, ``count``: until the scheduler has seen that many PodGroups
  there;
* ``createResourceDriver``: ``driverName``, ``nodes`` (a glob of node names, ``scheduler-perf-dra-*``),
  ``maxClaimsPerNode``: one ResourceSlice a matching node, its pool the node's, of that many plain
  devices ``instance-<i>``. Once a workload stores DRA objects (this op, or createAny of a
  ``resource.k8s.io`` kind), the resource-claim controller runs beside the scheduler, as upstream's
  scheduler_perf runs it, making each pod's claims from its templates;
* ``allocResourceClaims``: ``namespace``: its ResourceClaims allocated by the scheduler's DRA
  allocator before the pods come (:mod:`kubesched.bench.claims`);
* ``deletePods``: ``namespace``, ``labelSelector`` (labels the pods must have; none: every pod
  of the namespace), ``deletePodsPerSecond`` (0: all at once), ``skipWaitToCompletion``;
* ``churn``: ``templatePaths`` (pods, nodes, or any kind ``createAny`` makes, e.g. a Service),
  ``intervalMilliseconds`` and ``mode``: ``create``
  makes one object of each template every interval, ``number`` times (0: until the workload
  ends); ``recreate`` keeps ``number`` objects of each template, every interval deleting the
  oldest and making a new one;
* ``barrier``: ``namespaces``, ``stageRequirement`` (``Scheduled``, the default, or ``Attempted``),
  ``labelSelector`` (wait only for the pods with these labels);
* ``sleep``: ``duration`` (``500ms``, ``2s``);
* ``startCollectingMetrics`` (``name``, ``namespaces``, ``labelSelector``) and
  ``stopCollectingMetrics``: measure every pod created between them (of those namespaces, with
  those labels);
* ``replayTrace`` (ours; upstream has no such op): ``trace`` (``openb``, the Alibaba GPU trace,
  not shipped: :mod:`kubesched.bench.trace`), ``pods`` (a pod list of it, ``default``),
  ``nodes`` (``all_node``), ``nodeLimit``, ``podLimit`` (the first rows only), ``collectMetrics``:
  the trace's nodes, then its pods all at once in order of creation, waited for until each is
  decided. Where the trace is not here the op fails, saying so.

A pod template's text may use ``{{.Index}}`` (the pod's index in its createPods op),
``{{.Count}}`` and the op's ``templateParams``, and the integer functions of
:mod:`kubesched.bench.templates` (``{{DivideInt .Index .podsPerGroup}}``), as upstream's pod
templates do. A node template may use them too (``{{.Index}}`` the node's index in its
createNodes op), as upstream's podgroup/tas node does for its zone and rack labels.

A workload's ``threshold`` is a number, or as upstream's per-topic form a mapping of topic names
to numbers (``threshold: {dra: 120}``): the topic of a file is its name without ``.yaml``
(``dra.yaml``: ``dra``), and a workload whose mapping names no entry for it has no threshold.

Files (workloads and templates) are read within :data:`kubesched.bench.templates.BENCH_LIMITS`
(3 MiB, UTF-8, 200 levels, aliases bounded). A ``count`` (or churn ``number``) is at most
:data:`MAX_OBJECTS`, and so are the objects a workload's ops make together.

Template paths are relative to the workload file. Errors name the file, the workload and the
field: ``misc.yaml: SchedulingBasic/500Nodes: workloadTemplate[2] (createPods).countParam:
parameter $measurePods is not in the workload's params``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kubesched.bench.errors import WorkloadError
from kubesched.bench.model import (
    AllocClaims,
    Barrier,
    Churn,
    CreateAny,
    CreateNamespaces,
    CreateNodes,
    CreatePods,
    CreateResourceDriver,
    DeletePods,
    NodeAllocatable,
    Op,
    ReplayTrace,
    Sleep,
    StartCollecting,
    StopCollecting,
    WaitForPodGroups,
    Workload,
)
from kubesched.bench.templates import decode, read_file, type_name
from kubesched.bench.trace import TRACES

#: The workload files shipped in the package, and their node and pod templates.
SHIPPED_DIR = Path(__file__).resolve().parent / "workloads"
DEFAULT_NODE_TEMPLATE = SHIPPED_DIR / "templates" / "node-default.yaml"
DEFAULT_POD_TEMPLATE = SHIPPED_DIR / "templates" / "pod-default.yaml"
#: What ``kubesched bench`` runs when no workload is named: small enough for well under a minute.
DEFAULT_WORKLOAD = "SchedulingBasic/500Nodes"


#: The most objects one workload makes (each op's ``count``, and all its ops' together; a
#: churn's ``number`` of each template counts), as in a scenario: far above upstream's largest
#: workloads (5000 nodes, some 100,000 pods).
MAX_OBJECTS = 1_000_000
#: The most devices one ResourceSlice lists (resource.k8s.io/v1's limit): createResourceDriver's
#: ``maxClaimsPerNode``.
MAX_SLICE_DEVICES = 128


#: Each op's fields and their types (a field ``xParam`` stands for ``x``).
_FIELDS: dict[str, dict[str, type | tuple[type, ...]]] = {
    "createNodes": {
        "count": int,
        "nodeTemplatePath": str,
        "labelNodePrepareStrategy": dict,
        "uniqueNodeLabelStrategy": dict,
        "nodeAllocatableStrategy": dict,
    },
    "createNamespaces": {"prefix": str, "count": int, "namespaceTemplatePath": str},
    "createPods": {
        "count": int,
        "namespace": str,
        "podTemplatePath": str,
        "collectMetrics": bool,
        "skipWaitToCompletion": bool,
        "persistentVolumeTemplatePath": str,
        "persistentVolumeClaimTemplatePath": str,
        "countMultiplier": int,
        "templateParams": dict,
        "steadyState": bool,
        "duration": str,
    },
    "createPodSets": {"count": int, "namespacePrefix": str, "createPodsOp": dict},
    "createAny": {"templatePath": str, "namespace": str, "count": int, "templateParams": dict},
    "createPodGroups": {"templatePath": str, "namespace": str, "count": int, "templateParams": dict},
    "createCompositePodGroups": {"templatePath": str, "namespace": str, "count": int, "templateParams": dict},
    "waitForPodGroups": {"namespace": str, "count": int},
    "createResourceDriver": {"driverName": str, "nodes": str, "maxClaimsPerNode": int},
    "allocResourceClaims": {"namespace": str},
    "deletePods": {"namespace": str, "labelSelector": dict, "deletePodsPerSecond": int, "skipWaitToCompletion": bool},
    "churn": {"mode": str, "number": int, "templatePaths": list, "intervalMilliseconds": int},
    "barrier": {"namespaces": list, "stageRequirement": str, "labelSelector": dict},
    "sleep": {"duration": str},
    "startCollectingMetrics": {"name": str, "namespaces": list, "labelSelector": dict},
    "stopCollectingMetrics": {},
    "replayTrace": {
        "trace": str,
        "pods": str,
        "nodes": str,
        "nodeLimit": int,
        "podLimit": int,
        "collectMetrics": bool,
    },
}
#: Upstream ops kubesched bench does not run (yet): named in the error.
_NOT_RUN = (
    "createResourceClaims",
    "updateAny",
)
_CASE_FIELDS = {"name", "featureGates", "labels", "defaultPodTemplatePath", "workloadTemplate", "workloads"}
_WORKLOAD_FIELDS = {"name", "params", "featureGates", "labels", "threshold"}


def load_workloads(path: str | Path) -> list[Workload]:
    """Every workload of the file at ``path``, checked; WorkloadError naming the field otherwise."""
    p = Path(path)
    data = decode(read_file(p, "workload file"), p, "")
    return parse_workloads(data, p.parent, p.name)


def parse_workloads(data: Any, base: Path, source: str = "<workloads>") -> list[Workload]:
    """The workloads of decoded YAML ``data``; template paths are relative to ``base``."""
    if not isinstance(data, list):
        raise WorkloadError(f"{source}: expected a list of test cases, got {type_name(data)}")
    out: list[Workload] = []
    seen: set[str] = set()
    for i, case in enumerate(data):
        where = f"{source}: [{i}]"
        if not isinstance(case, dict):
            raise WorkloadError(f"{where}: a test case must be a mapping, got {type_name(case)}")
        name = case.get("name")
        if not isinstance(name, str) or not name:
            raise WorkloadError(f"{where}.name: a test case needs a name")
        where = f"{source}: {name}"
        _unknown(case, _CASE_FIELDS, where)
        gates = _gates(case.get("featureGates"), f"{where}.featureGates")
        default_pod = (
            _path(base, case["defaultPodTemplatePath"], f"{where}.defaultPodTemplatePath")
            if "defaultPodTemplatePath" in case
            else DEFAULT_POD_TEMPLATE
        )
        template = case.get("workloadTemplate")
        if not isinstance(template, list) or not template:
            raise WorkloadError(f"{where}.workloadTemplate: a non-empty list of ops is required")
        workloads = case.get("workloads")
        if not isinstance(workloads, list) or not workloads:
            raise WorkloadError(f"{where}.workloads: a non-empty list of workloads is required")
        for j, wl in enumerate(workloads):
            wwhere = f"{where}.workloads[{j}]"
            if not isinstance(wl, dict):
                raise WorkloadError(f"{wwhere}: a workload must be a mapping, got {type_name(wl)}")
            _unknown(wl, _WORKLOAD_FIELDS, wwhere)
            wname = wl.get("name")
            if not isinstance(wname, str) or not wname:
                raise WorkloadError(f"{wwhere}.name: a workload needs a name")
            full = f"{name}/{wname}"
            if full in seen:
                raise WorkloadError(f"{source}: {full}: defined twice")
            seen.add(full)
            params = wl.get("params") or {}
            if not isinstance(params, dict):
                raise WorkloadError(f"{wwhere}.params: expected a mapping, got {type_name(params)}")
            threshold = _threshold(wl.get("threshold"), _topic(source), f"{wwhere}.threshold")
            labels = wl.get("labels", case.get("labels")) or []
            if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
                raise WorkloadError(f"{wwhere}.labels: expected a list of strings")
            ops = [
                op
                for k, raw in enumerate(template)
                for op in _ops(raw, k, params, base, default_pod, f"{source}: {full}: workloadTemplate[{k}]")
            ]
            _check_collecting(ops, f"{source}: {full}")
            made = sum(_objects(op) for op in ops)
            if made > MAX_OBJECTS:
                raise WorkloadError(
                    f"{source}: {full}: workloadTemplate: the ops make {made} objects, more than the limit of "
                    f"{MAX_OBJECTS}"
                )
            out.append(
                Workload(
                    name=full,
                    ops=ops,
                    feature_gates={**gates, **_gates(wl.get("featureGates"), f"{wwhere}.featureGates")},
                    labels=tuple(labels),
                    threshold=threshold,
                    source=source,
                )
            )
    return out


def _topic(source: str) -> str:
    """The topic a file's per-topic thresholds are read for: its name without ``.yaml``."""
    name = Path(source).name
    for suffix in (".yaml", ".yml"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _threshold(value: Any, topic: str, where: str) -> float | None:
    """A workload's ``threshold``: a number, or upstream's mapping of topics to numbers (the
    entry for ``topic``, none if it has none)."""
    if value is None:
        return None
    if isinstance(value, dict):
        for key, number in value.items():
            if not isinstance(key, str) or isinstance(number, bool) or not isinstance(number, int | float):
                raise WorkloadError(f"{where}.{key}: expected a number of pods/s for topic {key!r}, got {number!r}")
        value = value.get(topic)
        return None if value is None else float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WorkloadError(f"{where}: expected a number, or a mapping of topics to numbers, got {value!r}")
    return float(value)


def shipped_files() -> list[Path]:
    """The workload files shipped in the package."""
    return sorted(SHIPPED_DIR.glob("*.yaml"))


def shipped_workloads() -> dict[str, Workload]:
    """Every shipped workload by name."""
    return {w.name: w for f in shipped_files() for w in load_workloads(f)}


def find_workloads(spec: str) -> list[Workload]:
    """``spec`` as a workload file (all its workloads), ``file.yaml:Case/name`` (one of them), or the
    name of a shipped workload (``SchedulingBasic/500Nodes``; a case name alone: all its workloads)."""
    path, sep, name = spec.partition(".yaml:")
    if sep:
        chosen = [w for w in load_workloads(path + ".yaml") if w.name == name or w.name.startswith(name + "/")]
        if not chosen:
            raise WorkloadError(f"{path}.yaml has no workload {name!r}")
        return chosen
    if spec.endswith((".yaml", ".yml")) or Path(spec).is_file():
        return load_workloads(spec)
    shipped = shipped_workloads()
    if spec in shipped:
        return [shipped[spec]]
    chosen = [w for n, w in shipped.items() if n.startswith(spec + "/")]
    if not chosen:
        raise WorkloadError(f"no workload file or shipped workload {spec!r} (see kubesched bench --list)")
    return chosen


def label_filter(spec: str) -> tuple[frozenset[str], frozenset[str]]:
    """Upstream's label filter (``-perf-scheduling-label-filter``): labels separated by commas, each
    one a workload must have (``name`` or ``+name``) or must not have (``-name``). Returns (must
    have, must not have); a WorkloadError names an empty label."""
    need: set[str] = set()
    refuse: set[str] = set()
    for part in spec.split(","):
        label = part.strip()
        into = refuse if label.startswith("-") else need
        label = label.lstrip("+-")
        if not label:
            raise WorkloadError(f"--label {spec!r}: an empty label (labels are separated by commas, -label excludes)")
        into.add(label)
    return frozenset(need), frozenset(refuse)


def select_labelled(workloads: list[Workload], spec: str) -> list[Workload]:
    """Those of ``workloads`` that :func:`label_filter`'s ``spec`` selects."""
    need, refuse = label_filter(spec)
    return [w for w in workloads if need <= set(w.labels) and not refuse & set(w.labels)]


def _ops(raw: Any, index: int, params: dict[str, Any], base: Path, default_pod: Path, where: str) -> list[Op]:
    """The ops one entry of ``workloadTemplate`` stands for: one, or for ``createPodSets`` its
    ``createPodsOp`` once for each namespace."""
    op = _op(raw, index, params, base, default_pod, where)
    if not isinstance(op, _PodSets):
        return [op]
    inner = _op(op.inner, index, params, base, default_pod, f"{where} (createPodSets).createPodsOp")
    if not isinstance(inner, CreatePods):
        raise WorkloadError(f"{where} (createPodSets).createPodsOp.opcode: must be createPods")
    made = op.count * (1 + _objects(inner))  # a namespace and its pods, each set
    if made > MAX_OBJECTS:
        raise WorkloadError(
            f"{where} (createPodSets): {op.count} sets of {inner.count} pods make {made} objects, "
            f"more than the limit of {MAX_OBJECTS}"
        )
    return [replace(inner, namespace=f"{op.prefix}-{i}") for i in range(op.count)]


@dataclass(frozen=True)
class _PodSets:
    """A ``createPodSets`` op as read, before :func:`_ops` expands it."""

    count: int
    prefix: str
    inner: dict[str, Any]


def _op(raw: Any, index: int, params: dict[str, Any], base: Path, default_pod: Path, where: str) -> Op | _PodSets:
    if not isinstance(raw, dict):
        raise WorkloadError(f"{where}: an op must be a mapping, got {type_name(raw)}")
    opcode = raw.get("opcode")
    if not isinstance(opcode, str):
        raise WorkloadError(f"{where}.opcode: expected an opcode (one of: {', '.join(_FIELDS)}), got {opcode!r}")
    if opcode in _NOT_RUN:
        raise WorkloadError(f"{where}.opcode: {opcode} is not run by kubesched bench (it runs: {', '.join(_FIELDS)})")
    if opcode not in _FIELDS:
        raise WorkloadError(f"{where}.opcode: unknown opcode {opcode!r} (one of: {', '.join(_FIELDS)})")
    where = f"{where} ({opcode})"
    fields = _FIELDS[opcode]
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "opcode":
            continue
        if not isinstance(key, str):
            raise WorkloadError(f"{where}.{key!r}: unknown field (fields are strings)")
        target = key[: -len("Param")] if key.endswith("Param") and key[: -len("Param")] in fields else key
        if target not in fields:
            allowed = ", ".join(sorted(fields)) or "none"
            raise WorkloadError(f"{where}.{key}: unknown field (fields of {opcode}: {allowed})")
        if isinstance(value, str) and value.startswith("$"):
            if value[1:] not in params:
                raise WorkloadError(f"{where}.{key}: parameter {value} is not in the workload's params")
            value = params[value[1:]]
        elif target != key:
            raise WorkloadError(f"{where}.{key}: expected a parameter reference ($name), got {value!r}")
        want = fields[target]
        if (want is int and (isinstance(value, bool) or not isinstance(value, int))) or not isinstance(value, want):
            name = want.__name__ if isinstance(want, type) else "/".join(t.__name__ for t in want)
            raise WorkloadError(f"{where}.{key}: expected {_article(name)}, got {value!r}")
        if target == "templateParams" and isinstance(value, dict):
            value = {k: _param(x, params, f"{where}.{key}.{k}") for k, x in value.items()}
        values[target] = value
    return _build(opcode, values, index, base, default_pod, where)


def _param(value: Any, params: dict[str, Any], where: str) -> Any:
    """``value``, or the workload's param it names (``$name``)."""
    if isinstance(value, str) and value.startswith("$"):
        if value[1:] not in params:
            raise WorkloadError(f"{where}: parameter {value} is not in the workload's params")
        return params[value[1:]]
    return value


def _build(opcode: str, v: dict[str, Any], index: int, base: Path, default_pod: Path, where: str) -> Op | _PodSets:
    if opcode == "createNodes":
        cycled = None
        if "labelNodePrepareStrategy" in v:
            s = v["labelNodePrepareStrategy"]
            key, vals = s.get("labelKey"), s.get("labelValues")
            if not isinstance(key, str) or not isinstance(vals, list) or not vals:
                raise WorkloadError(f"{where}.labelNodePrepareStrategy: needs labelKey and non-empty labelValues")
            cycled = (key, tuple(str(x) for x in vals))
        unique = None
        if "uniqueNodeLabelStrategy" in v:
            unique = v["uniqueNodeLabelStrategy"].get("labelKey")
            if not isinstance(unique, str):
                raise WorkloadError(f"{where}.uniqueNodeLabelStrategy.labelKey: a label key is required")
        template = (
            _path(base, v["nodeTemplatePath"], f"{where}.nodeTemplatePath")
            if "nodeTemplatePath" in v
            else DEFAULT_NODE_TEMPLATE
        )
        allocatable = (
            _node_allocatable(v["nodeAllocatableStrategy"], f"{where}.nodeAllocatableStrategy")
            if "nodeAllocatableStrategy" in v
            else None
        )
        # No nodes is allowed, as upstream (nodesWithoutDRA: 0).
        return CreateNodes(_count(v, where, 0), template, cycled, unique, allocatable)
    if opcode == "createNamespaces":
        if "prefix" not in v:
            raise WorkloadError(f"{where}.prefix: required")
        tpl = (
            _path(base, v["namespaceTemplatePath"], f"{where}.namespaceTemplatePath")
            if "namespaceTemplatePath" in v
            else None
        )
        return CreateNamespaces(v["prefix"], _count(v, where, 1), tpl)
    if opcode == "createPods":
        if v.get("collectMetrics") and v.get("skipWaitToCompletion"):
            raise WorkloadError(f"{where}: collectMetrics and skipWaitToCompletion cannot both be true")
        template = (
            _path(base, v["podTemplatePath"], f"{where}.podTemplatePath") if "podTemplatePath" in v else default_pod
        )
        volumes = None
        if "persistentVolumeTemplatePath" in v or "persistentVolumeClaimTemplatePath" in v:
            for key in ("persistentVolumeTemplatePath", "persistentVolumeClaimTemplatePath"):
                if key not in v:
                    raise WorkloadError(
                        f"{where}.{key}: required with "
                        "persistentVolumeTemplatePath or persistentVolumeClaimTemplatePath (a volume and a claim a pod)"
                    )
            volumes = (
                _path(base, v["persistentVolumeTemplatePath"], f"{where}.persistentVolumeTemplatePath"),
                _path(base, v["persistentVolumeClaimTemplatePath"], f"{where}.persistentVolumeClaimTemplatePath"),
            )
        steady = None
        if v.get("steadyState"):
            if not v.get("collectMetrics"):
                raise WorkloadError(f"{where}.steadyState: needs collectMetrics: true (the pods made are measured)")
            steady = _seconds(v.get("duration"), f"{where}.duration")
            if steady <= 0:
                raise WorkloadError(
                    f"{where}.duration: steadyState needs a positive duration, got {v.get('duration')!r}"
                )
        elif "duration" in v:
            raise WorkloadError(f"{where}.duration: only with steadyState: true")
        count = _count(v, where, 0)
        if "countMultiplier" in v:
            multiplier = v["countMultiplier"]
            if multiplier < 0:
                raise WorkloadError(f"{where}.countMultiplier: must not be negative, got {multiplier}")
            count *= multiplier
            if count > MAX_OBJECTS:
                raise WorkloadError(
                    f"{where}.countMultiplier: count times countMultiplier is {count}, more than the limit of "
                    f"{MAX_OBJECTS}"
                )
        return CreatePods(
            count,
            v.get("namespace", f"namespace-{index}"),
            template,
            bool(v.get("collectMetrics", False)),
            bool(v.get("skipWaitToCompletion", False)),
            volumes,
            _template_params(v, where),
            steady,
        )
    if opcode == "createPodSets":
        if not v.get("namespacePrefix"):
            raise WorkloadError(f"{where}.namespacePrefix: required")
        if "createPodsOp" not in v:
            raise WorkloadError(f"{where}.createPodsOp: required (a createPods op)")
        return _PodSets(_count(v, where, 0), v["namespacePrefix"], v["createPodsOp"])
    if opcode in _ANY_KINDS:
        if "templatePath" not in v:
            raise WorkloadError(f"{where}.templatePath: required")
        return CreateAny(
            _path(base, v["templatePath"], f"{where}.templatePath"),
            v.get("namespace", ""),
            # None is allowed, as upstream (initClaims: 0).
            _count(v, where, 0) if "count" in v or opcode != "createAny" else 1,
            _template_params(v, where),
            _ANY_KINDS[opcode],
        )
    if opcode == "allocResourceClaims":
        if not v.get("namespace"):
            raise WorkloadError(f"{where}.namespace: required")
        return AllocClaims(v["namespace"])
    if opcode == "waitForPodGroups":
        if not v.get("namespace"):
            raise WorkloadError(f"{where}.namespace: required")
        return WaitForPodGroups(v["namespace"], _count(v, where, 0))
    if opcode == "createResourceDriver":
        for key in ("driverName", "nodes"):
            if not v.get(key):
                raise WorkloadError(f"{where}.{key}: required")
        devices = _count(v, where, 0, "maxClaimsPerNode")
        if devices > MAX_SLICE_DEVICES:
            raise WorkloadError(
                f"{where}.maxClaimsPerNode: a ResourceSlice holds at most {MAX_SLICE_DEVICES} devices, got {devices}"
            )
        return CreateResourceDriver(v["driverName"], v["nodes"], devices)
    if opcode == "deletePods":
        if not v.get("namespace"):
            raise WorkloadError(f"{where}.namespace: required")
        rate = v.get("deletePodsPerSecond", 0)
        if rate < 0:
            raise WorkloadError(f"{where}.deletePodsPerSecond: must not be negative, got {rate}")
        selector = v.get("labelSelector") or {}
        return DeletePods(
            v["namespace"],
            tuple(sorted((str(k), str(x)) for k, x in selector.items())),
            rate,
            bool(v.get("skipWaitToCompletion", False)),
        )
    if opcode == "churn":
        mode = v.get("mode")
        if mode not in ("create", "recreate"):
            raise WorkloadError(f"{where}.mode: create or recreate, got {mode!r}")
        number = v.get("number", 0)
        if number > MAX_OBJECTS:
            raise WorkloadError(f"{where}.number: must be at most {MAX_OBJECTS}, got {number}")
        if number < 0 or (mode == "recreate" and number == 0):
            raise WorkloadError(
                f"{where}.number: must be positive in recreate mode (at least 0 in create), got {number}"
            )
        paths = v.get("templatePaths") or []
        if not paths or not all(isinstance(p, str) for p in paths):
            raise WorkloadError(f"{where}.templatePaths: a non-empty list of template paths is required")
        ms = v.get("intervalMilliseconds", 500)
        if ms <= 0:
            raise WorkloadError(f"{where}.intervalMilliseconds: must be positive, got {ms}")
        return Churn(tuple(_path(base, p, f"{where}.templatePaths") for p in paths), ms / 1000.0, mode, number)
    if opcode == "barrier":
        stage = v.get("stageRequirement", "Scheduled")
        if stage not in ("Scheduled", "Attempted"):
            raise WorkloadError(f"{where}.stageRequirement: Scheduled or Attempted, got {stage!r}")
        return Barrier(
            _names(v.get("namespaces"), f"{where}.namespaces"), stage, _selector(v, f"{where}.labelSelector")
        )
    if opcode == "sleep":
        seconds = _seconds(v.get("duration", ""), f"{where}.duration")
        if seconds < 0:
            raise WorkloadError(f"{where}.duration: must not be negative")
        return Sleep(seconds)
    if opcode == "replayTrace":
        return _replay_trace(v, where)
    if opcode == "startCollectingMetrics":
        return StartCollecting(
            v.get("name", ""),
            _names(v.get("namespaces"), f"{where}.namespaces"),
            _selector(v, f"{where}.labelSelector"),
        )
    return StopCollecting()


def _replay_trace(v: dict[str, Any], where: str) -> ReplayTrace:
    if v.get("trace") not in TRACES:
        raise WorkloadError(f"{where}.trace: the trace to replay, one of: {', '.join(TRACES)}; got {v.get('trace')!r}")
    lists = {"pods": v.get("pods", "default"), "nodes": v.get("nodes", "all_node")}
    for key, name in lists.items():
        if not re.fullmatch(r"[A-Za-z0-9_]+", name):
            raise WorkloadError(
                f"{where}.{key}: the name of one of the trace's {key} lists (letters, digits, _), got {name!r}"
            )
    node_limit = _count(v, where, 1, "nodeLimit") if "nodeLimit" in v else None
    pod_limit = _count(v, where, 1, "podLimit") if "podLimit" in v else None
    collect = bool(v.get("collectMetrics", False))
    return ReplayTrace(v["trace"], lists["pods"], lists["nodes"], node_limit, pod_limit, collect)


#: The ops that create objects from a template, and the kind each insists on (None: any).
_ANY_KINDS: dict[str, str | None] = {
    "createAny": None,
    "createPodGroups": "PodGroup",
    "createCompositePodGroups": "CompositePodGroup",
}


def _template_params(v: dict[str, Any], where: str) -> tuple[tuple[str, Any], ...]:
    """An op's ``templateParams``, sorted; each named as a Go field is."""
    params = v.get("templateParams") or {}
    for key in params:
        if not isinstance(key, str) or not key.isidentifier():
            raise WorkloadError(f"{where}.templateParams.{key}: a parameter is named like a Go field (letters, digits)")
    return tuple(sorted(params.items()))


def _seconds(value: Any, where: str) -> float:
    """A Go duration (``500ms``, ``2s``) in seconds."""
    from kubesched.config.models import parse_go_duration

    if not isinstance(value, str):
        raise WorkloadError(f"{where}: expected a duration such as 2s, got {value!r}")
    try:
        return float(parse_go_duration(value))
    except ValueError as exc:
        raise WorkloadError(f"{where}: {exc}") from None


def _node_allocatable(raw: dict[str, Any], where: str) -> NodeAllocatable:
    _unknown(raw, {"nodeAllocatable", "csiNodeAllocatable", "migratedPlugins"}, where)
    resources = raw.get("nodeAllocatable") or {}
    if not isinstance(resources, dict):
        raise WorkloadError(f"{where}.nodeAllocatable: expected a mapping of resource names to quantities")
    drivers = raw.get("csiNodeAllocatable") or {}
    if not isinstance(drivers, dict):
        raise WorkloadError(f"{where}.csiNodeAllocatable: expected a mapping of CSI driver names to {{count: n}}")
    counts: list[tuple[str, int | None]] = []
    for name, limit in drivers.items():
        count = (limit or {}).get("count") if isinstance(limit, dict | None) else limit
        if count is not None and (isinstance(count, bool) or not isinstance(count, int) or count < 0):
            raise WorkloadError(f"{where}.csiNodeAllocatable.{name}.count: expected a count of volumes, got {count!r}")
        counts.append((str(name), count))
    migrated = raw.get("migratedPlugins") or []
    if not isinstance(migrated, list) or not all(isinstance(x, str) for x in migrated):
        raise WorkloadError(f"{where}.migratedPlugins: expected a list of in-tree plugin names")
    return NodeAllocatable(tuple((str(k), str(x)) for k, x in resources.items()), tuple(counts), tuple(migrated))


def _selector(v: dict[str, Any], where: str) -> tuple[tuple[str, str], ...]:
    """A ``labelSelector`` (labels a pod must all have), sorted."""
    selector = v.get("labelSelector") or {}
    if not all(isinstance(x, str | int | float | bool) for x in selector.values()):
        raise WorkloadError(f"{where}: expected a mapping of label keys to values")
    return tuple(sorted((str(k), str(x)) for k, x in selector.items()))


def _check_collecting(ops: list[Op], where: str) -> None:
    collecting = False
    measured = False
    for k, op in enumerate(ops):
        if isinstance(op, StartCollecting):
            if collecting:
                raise WorkloadError(f"{where}: workloadTemplate[{k}]: startCollectingMetrics while already collecting")
            collecting = measured = True
        elif isinstance(op, StopCollecting):
            if not collecting:
                raise WorkloadError(f"{where}: workloadTemplate[{k}]: stopCollectingMetrics without a start")
            collecting = False
        elif isinstance(op, CreatePods | ReplayTrace) and op.collect_metrics:
            if collecting:
                opcode = "createPods" if isinstance(op, CreatePods) else "replayTrace"
                raise WorkloadError(
                    f"{where}: workloadTemplate[{k}] ({opcode}).collectMetrics: already inside startCollectingMetrics"
                )
            measured = True
    if not measured:
        raise WorkloadError(
            f"{where}: nothing is measured: no createPods or replayTrace with collectMetrics: true and no "
            "startCollectingMetrics"
        )


def _count(v: dict[str, Any], where: str, minimum: int, key: str = "count") -> int:
    if key not in v:
        raise WorkloadError(f"{where}.{key}: required ({key} or {key}Param)")
    n = int(v[key])
    if n < minimum:
        raise WorkloadError(f"{where}.{key}: must be at least {minimum}, got {n}")
    if n > MAX_OBJECTS:
        raise WorkloadError(f"{where}.{key}: must be at most {MAX_OBJECTS}, got {n}")
    return n


def _objects(op: Op) -> int:
    """How many objects ``op`` makes (at most: a churn's slots)."""
    if isinstance(op, CreatePods):
        return op.count * (3 if op.volume_templates is not None else 1)
    if isinstance(op, CreateNodes):
        return op.count * (2 if op.allocatable is not None else 1)
    if isinstance(op, CreateNamespaces | CreateAny):
        return op.count
    if isinstance(op, Churn):
        return op.number * len(op.templates)
    return 0


def _path(base: Path, value: Any, where: str) -> Path:
    if not isinstance(value, str) or not value:
        raise WorkloadError(f"{where}: expected a path, got {value!r}")
    p = Path(value)
    p = p if p.is_absolute() else base / p
    if not p.is_file():
        raise WorkloadError(f"{where}: no such template file: {value}")
    return p


def _names(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise WorkloadError(f"{where}: expected a list of namespace names")
    return tuple(value)


def _gates(value: Any, where: str) -> dict[str, bool]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(b, bool) for k, b in value.items()):
        raise WorkloadError(f"{where}: expected a mapping of gate names to true or false")
    return dict(value)


def _unknown(obj: dict[str, Any], allowed: set[str], where: str) -> None:
    for key in obj:
        if key not in allowed:
            raise WorkloadError(f"{where}.{key}: unknown field (fields: {', '.join(sorted(allowed))})")


def _article(name: str) -> str:
    return f"an {name}" if name[0] in "aeiou" else f"a {name}"
