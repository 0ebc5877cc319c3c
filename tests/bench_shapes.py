"""Smaller shapes of a shipped benchmark case, for tests that run one by ``kubesched bench``'s
runner: the case's ops with fewer nodes of a smaller kind, fewer groups, fewer pods."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from kubesched.bench.model import CreateAny, CreateNodes, CreatePods, Workload
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
