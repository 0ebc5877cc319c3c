"""Smaller shapes of a shipped benchmark case, for tests that run one by ``kubesched bench``'s
runner: the case's ops with fewer nodes of a smaller kind, fewer groups, fewer pods; and the
objects a case's ops make, rendered as the runner renders them, for tests of their shapes."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

from kubesched.bench.model import CreateAny, CreateNodes, CreatePods, Workload
from kubesched.bench.render import node_object, node_template, render_any
from kubesched.bench.templates import read_template
from kubesched.bench.workload import DEFAULT_NODE_TEMPLATE


def small_node_template(folder: Path, pods: int) -> Path:
    """Upstream's default node with room for ``pods`` pods, written into ``folder``."""
    node = read_template(DEFAULT_NODE_TEMPLATE, "Node")
    for where in ("allocatable", "capacity"):
        node["status"][where]["pods"] = str(pods)
    path = folder / f"node-{pods}-pods.yaml"
    path.write_text(yaml.safe_dump(node), encoding="utf-8")
    return path


def reshaped(
    w: Workload,
    *,
    nodes: tuple[int, Path] | None = None,
    counts: dict[str, int] | None = None,
    measured: int | None = None,
) -> Workload:
    """``w`` with ``nodes`` (count, template) in place of its createNodes ops, ``counts[kind]``
    objects for each createPodGroups/createCompositePodGroups op of that kind, and ``measured``
    pods in its measured createPods op."""
    ops = []
    for op in w.ops:
        if isinstance(op, CreateNodes) and nodes is not None:
            op = dataclasses.replace(op, count=nodes[0], template=nodes[1])
        elif isinstance(op, CreateAny) and counts and op.kind in counts:
            op = dataclasses.replace(op, count=counts[op.kind])
        elif isinstance(op, CreatePods) and op.collect_metrics and measured is not None:
            op = dataclasses.replace(op, count=measured)
        ops.append(op)
    return dataclasses.replace(w, ops=ops)


def op_objects(w: Workload, kinds: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The objects of ``w``'s createAny ops (createPodGroups, createCompositePodGroups among them;
    of ``kinds`` only, if given), each in its op's namespace, as the runner renders them."""
    out = []
    for op in w.ops:
        if isinstance(op, CreateAny):
            for i in range(op.count):
                obj = render_any(op, i)
                if op.namespace:
                    obj.setdefault("metadata", {})["namespace"] = op.namespace
                if not kinds or obj.get("kind") in kinds:
                    out.append(obj)
    return out


def op_pod(w: Workload, i: int, measured: bool = True) -> dict[str, Any]:
    """Pod ``i`` of ``w``'s measured createPods op (or, with ``measured`` False, its first other
    one), its template filled in as the runner fills it in, named ``<generateName><i>`` in the
    op's namespace."""
    op = next(op for op in w.ops if isinstance(op, CreatePods) and op.collect_metrics == measured)
    pod = read_template(op.template, "Pod", {**dict(op.params), "Index": i, "Count": op.count})
    meta = pod["metadata"]
    meta["name"] = f"{meta.pop('generateName', None) or meta.get('name', 'pod') + '-'}{i}"
    meta["namespace"] = op.namespace
    return pod


def op_node(w: Workload, i: int) -> dict[str, Any]:
    """Node ``i`` of ``w``, counted over its createNodes ops, as the runner makes it."""
    first = 0
    for op in w.ops:
        if isinstance(op, CreateNodes):
            if i < first + op.count:
                return node_object(node_template(op)(i - first), op, i - first, i)
            first += op.count
    raise IndexError(f"{w.name} makes {first} nodes, not {i + 1}")
