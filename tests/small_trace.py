"""A trace of two nodes and five pods in the openb trace's format (its CSV columns), written where
a test asks: the replayTrace op and the OpenbGPU workloads run on it on any machine, the real
trace present or not. The ``small_trace`` fixture (tests/conftest.py) points KUBESCHED_TRACES at it."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

NODES = [
    {"sn": "gpu-node", "cpu_milli": 8000, "memory_mib": 16384, "gpu": 2, "model": "V100M16"},
    {"sn": "cpu-node", "cpu_milli": 16000, "memory_mib": 16384, "gpu": 0, "model": ""},
]
#: In order of creation: whole, shared and model-bound GPU pods, a CPU pod, pods that fit nowhere.
PODS = [
    {"name": "late-cpu", "cpu_milli": 3000, "memory_mib": 1024, "num_gpu": 0, "gpu_milli": 0, "gpu_spec": "",
     "creation_time": 50},
    {"name": "whole-gpu", "cpu_milli": 1000, "memory_mib": 1024, "num_gpu": 1, "gpu_milli": 1000, "gpu_spec": "",
     "creation_time": 10},
    {"name": "shared-gpu", "cpu_milli": 1000, "memory_mib": 1024, "num_gpu": 1, "gpu_milli": 500, "gpu_spec": "",
     "creation_time": 20},
    {"name": "wants-t4", "cpu_milli": 1000, "memory_mib": 1024, "num_gpu": 1, "gpu_milli": 1000, "gpu_spec": "T4",
     "creation_time": 30},
    {"name": "too-big", "cpu_milli": 64000, "memory_mib": 1024, "num_gpu": 0, "gpu_milli": 0, "gpu_spec": "",
     "creation_time": 40},
]  # fmt: skip


def _write(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        out = csv.DictWriter(f, fieldnames=list(rows[0]))
        out.writeheader()
        out.writerows(rows)


def write_small_trace(root: Path) -> Path:
    """The trace's folder under ``root`` (``root/alibaba-gpu-v2023``: KUBESCHED_TRACES is ``root``),
    its node list ``all_node`` and its pod list ``default``."""
    folder = root / "alibaba-gpu-v2023"
    folder.mkdir()
    _write(folder / "openb_node_list_all_node.csv", NODES)
    _write(folder / "openb_pod_list_default.csv", PODS)
    return folder
