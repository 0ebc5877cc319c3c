"""Builders shared by the tests of plugins/gpushare: GPU nodes, GPU pods, and a registry with
this checkout's plugins of the package."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.framework.columns import NodeBatch, NodeColumns
from kubesched.framework.types import NodeInfo
from kubesched.runtime.registry import Registry, default_registry
from kubesched.testing import NodeBuilder, PodBuilder, make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "plugins" / "gpushare"
CONFIGS = ROOT / "config" / "gpushare"
if str(PACKAGE) not in sys.path:
    sys.path.insert(0, str(PACKAGE))

import kubesched_gpushare as gs  # noqa: E402

PLUGINS: tuple[type, ...] = (
    gs.GpuShare,
    gs.FGD,
    gs.BestFit,
    gs.DotProduct,
    gs.GpuPacking,
    gs.GpuClustering,
    gs.RandomScore,
    gs.NodeOrder,
    gs.NodeOrderFine,
)


def registry() -> Registry:
    """The installed plugins plus this checkout's gpushare plugins (replacing installed ones)."""
    names = {cls.name for cls in PLUGINS}  # type: ignore[attr-defined]
    reg = Registry()
    for e in default_registry().entries():
        if e.name not in names:
            reg.register(e.cls, e.name, e.distribution)
    for cls in PLUGINS:
        reg.register(cls)
    return reg


def gpu_node(name: str, gpus: int, model: str = "V100M32", cpu: str = "64", memory: str = "256Gi") -> NodeBuilder:
    """A node as kubesched.sim.scenario.openb writes one: nvidia.com/gpu, gpu-milli, the model label."""
    node = make_node(name).capacity(
        cpu=cpu,
        memory=memory,
        pods="110",
        **{"nvidia.com/gpu": str(gpus), "alibabacloud.com/gpu-milli": str(gpus * 1000)},
    )
    return node.label("alibabacloud.com/gpu-model", model) if gpus else node


def cpu_node(name: str, cpu: str = "32") -> NodeBuilder:
    return make_node(name).capacity(cpu=cpu, memory="64Gi", pods="110")


def gpu_pod(
    name: str,
    milli: int = 0,
    count: int | None = None,
    model: str | None = None,
    cpu: str = "4",
    index: str | None = None,
    node: str | None = None,
) -> PodBuilder:
    """A pod asking, in the artifact's annotations, for ``count`` GPUs of ``milli`` each."""
    pod = make_pod(name).req(cpu=cpu, memory="1Gi")
    if milli:
        pod.annotation(gs.GPU_MILLI_ANNOTATION, str(milli))
    if count is not None:
        pod.annotation(gs.GPU_COUNT_ANNOTATION, str(count))
    if model is not None:
        pod.annotation(gs.GPU_MODEL_ANNOTATION, model)
    if index is not None:
        pod.annotation(gs.GPU_INDEX_ANNOTATION, index)
    if node is not None:
        pod.node(node)
    return pod


def batch_of(infos: list[NodeInfo]) -> NodeBatch:
    """All of ``infos`` as the scheduler hands them to batch forms: rows of node columns."""
    return NodeBatch(NodeColumns(infos), np.arange(len(infos)))


def typical(*entries: tuple[Any, ...]) -> list[dict[str, Any]]:
    """Typical pods from ``(cpu, gpuCount, gpuMilli, percentage[, model])`` tuples."""
    out = []
    for cpu, count, milli, share, *model in entries:
        item: dict[str, Any] = {"cpu": cpu, "gpuCount": count, "gpuMilli": milli, "percentage": share}
        if model:
            item["model"] = model[0]
        out.append(item)
    return out
