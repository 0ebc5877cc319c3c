"""One object of a workload's op, made from its template as ``kubesched bench`` makes it: a node of
a ``createNodes`` op, a pod of a ``createPods`` op (its template filled in) and the bound claim
and volume its volume templates give it, an object of a ``createAny`` op, a node's slice of a
``createResourceDriver`` op.

The runner (:mod:`kubesched.bench.ops`) makes its objects here, and so do the soak's and the
loop-lag probe's default node and pod (``benchmarks/shipped.py``): one way from a template to an
object.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubesched.bench.model import CreateAny, CreateNodes
from kubesched.bench.templates import is_templated, read_any, read_template
from kubesched.objects import Obj


def fresh(value: Any) -> Any:
    """A copy of ``value`` (an object as YAML gives it: mappings, lists, scalars) sharing nothing
    with it. Written and read back by :mod:`marshal` in its version 2, which keeps no references
    (a list that occurs twice, as a YAML alias makes, comes back as two lists): one C call each
    way instead of a Python call per mapping and list; a value marshal cannot write (a date) is
    copied mapping by mapping."""
    try:
        return marshal.loads(marshal.dumps(value, _NO_REFERENCES))
    except ValueError:
        return _copied(value)


#: The marshal format that writes every occurrence of an object out again (versions 3 and later
#: write a repeated object once and refer to it).
_NO_REFERENCES = 2


def _copied(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(v) for v in value]
    return value


def node_object(template: Obj, op: CreateNodes, index: int, number: int) -> Obj:
    """Node ``index`` of ``op`` (the workload's ``number``-th node, counted over all its
    createNodes ops) from ``op``'s ``template`` (read once, left as it is): named
    ``<generateName><number>`` (``node-7``), or by its fixed name when the op makes one node
    (else ``<name>-<number>``); labelled ``kubernetes.io/hostname``, and as the op's label
    strategies and nodeAllocatableStrategy say."""
    node: Obj = fresh(template)
    meta = node["metadata"]
    prefix = meta.pop("generateName", None)
    # A template with a fixed name and no generateName names its one node so (node-with-name).
    fixed = meta.get("name") if prefix is None else None
    name = fixed if fixed and op.count == 1 else f"{fixed or prefix or 'node'}{'' if prefix else '-'}{number}"
    meta["name"] = name
    labels = meta.setdefault("labels", {})
    labels.setdefault("kubernetes.io/hostname", name)
    if op.cycled_label is not None:
        key, values = op.cycled_label
        labels[key] = values[index % len(values)]
    if op.unique_label is not None:
        labels[op.unique_label] = name
    if op.allocatable is not None:
        status = node.setdefault("status", {})
        status["allocatable"] = {**(status.get("allocatable") or {}), **dict(op.allocatable.resources)}
    return node


def node_template(op: CreateNodes) -> Callable[[int], Obj]:
    """The template of ``op``'s node ``i``: the file read once, or, when it uses a
    ``{{.Field}}`` (upstream's podgroup/tas node: ``rack-{{DivideInt .Index 100}}``), filled in
    for each index (``{{.Index}}`` ``i``, ``{{.Count}}`` the op's count)."""
    if is_templated(op.template):
        return lambda i: read_template(op.template, "Node", {"Index": i, "Count": op.count})
    once = read_template(op.template, "Node")
    return lambda i: once


def node_maker(op: CreateNodes) -> Callable[[int], Obj]:
    """Node ``i`` of ``op`` when it is the workload's only createNodes op: a fresh object each call."""
    template = node_template(op)
    return lambda i: node_object(template(i), op, i, i)


def pod_maker(template: Path, count: int = 1, params: tuple[tuple[str, object], ...] = ()) -> Callable[[int], Obj]:
    """Pod ``i`` of the pod template file at ``template`` as written (``generateName`` and all;
    no name, no namespace), its ``{{.Index}}`` ``i``, ``{{.Count}}`` ``count`` and ``params``
    (an op's templateParams) filled in: a fresh object each call."""
    if is_templated(template):
        values = dict(params)
        return lambda i: read_template(template, "Pod", {**values, "Index": i, "Count": count})
    once = read_template(template, "Pod")
    return lambda i: fresh(once)


def render_any(op: CreateAny, index: int) -> Obj:
    """Object ``index`` of a createAny template: ``{{.Index}}``, ``{{.Count}}`` and the op's
    ``templateParams`` put into its text, then read."""
    return read_any(op.template, {"Index": index, "Count": op.count, **dict(op.params)})


def bound_volume(pv_template: Obj, pvc_template: Obj, namespace: str, index: int) -> tuple[Obj, Obj]:
    """As upstream's createPods with volume templates makes them for pod ``index``: claim
    ``pvc-<index>`` in ``namespace``, bound to volume ``<namespace>-vol-<index>`` (in-tree AWS
    ``volumeID`` ``vol-<index>``, CSI ``volumeHandle`` the volume's name); both fresh objects."""
    claim, volume = f"pvc-{index}", f"{namespace}-vol-{index}"
    pvc = fresh(pvc_template)
    pvc["metadata"].update(name=claim, namespace=namespace)
    pvc["spec"]["volumeName"] = volume
    pvc["status"] = {"phase": "Bound"}
    pv = fresh(pv_template)
    pv["metadata"]["name"] = volume
    if "csi" in pv["spec"]:
        pv["spec"]["csi"]["volumeHandle"] = volume
    elif "awsElasticBlockStore" in pv["spec"]:
        pv["spec"]["awsElasticBlockStore"]["volumeID"] = f"vol-{index}"
    pv["spec"]["claimRef"] = {
        "kind": "PersistentVolumeClaim",
        "apiVersion": "v1",
        "namespace": namespace,
        "name": claim,
    }
    pv["status"] = {"phase": "Bound"}
    return pvc, pv


def driver_slice(driver: str, node: str, devices: int) -> Obj:
    """Upstream's createResourceDriver for one node: a ResourceSlice of ``devices`` plain devices
    (``instance-<i>``) of ``driver``, in a pool of its own named after the node."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{driver}"},
        "spec": {
            "driver": driver,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"instance-{d}"} for d in range(devices)],
        },
    }
