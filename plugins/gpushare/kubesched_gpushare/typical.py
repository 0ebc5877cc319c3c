"""The typical pods of a workload: the distribution FGD measures fragmentation against.

A typical pod is a kind of pod — its CPU, GPU count, milli-GPU per GPU and accepted GPU models
— with the share of the workload it stands for. :func:`typical_pods` builds the list from a
workload's pods as the FGD artifact does (``GetTypicalPods`` in its ``pkg/utils/frag.go``, with
the settings of its experiments): count the pods of each kind, order the kinds from the most
common, keep the most common ones until they cover ``popularity_threshold`` percent of the
pods (adding ``increase_step`` kinds at a time), and share 100% among the kinds kept.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kubesched import PodInfo, milli_value

from .gpu import accepts_model, gpu_ask_of, parse_models

#: The settings of the artifact's experiments (its defaults when unset are 60 and 10).
POPULARITY_THRESHOLD = 95
INCREASE_STEP = 1


class TypicalPod(BaseModel):
    """One kind of pod and its share of the workload.

    ``cpu`` and ``memory`` are Kubernetes quantities (``"6000m"``, ``6``); ``memory`` is kept for
    the record only: the fragmentation measure reads CPU and GPUs. Give the share as
    ``percentage`` (a fraction, 0..1) or as a relative ``weight``: a list is scaled to sum to 1.
    """

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    cpu: str | int | float = 0
    memory: str | int | float | None = None
    gpu_count: int = Field(0, alias="gpuCount", ge=0)
    gpu_milli: int = Field(0, alias="gpuMilli", ge=0, le=1000)
    #: Accepted GPU models, ``"A|B"``; empty: any.
    model: str = ""
    percentage: float | None = Field(None, ge=0)
    weight: float | None = Field(None, ge=0)

    @field_validator("cpu", "memory")
    @classmethod
    def _quantity(cls, v: Any) -> Any:
        if v is not None:
            milli_value(v)  # raises on what is not a quantity
        return v

    @model_validator(mode="after")
    def _share(self) -> TypicalPod:
        if self.percentage is None and self.weight is None:
            raise ValueError("give percentage or weight")
        if self.percentage is not None and self.weight is not None:
            raise ValueError("give percentage or weight, not both")
        if self.gpu_milli > 0 and self.gpu_count == 0:
            raise ValueError("gpuMilli needs gpuCount of at least 1")
        return self

    @property
    def milli_cpu(self) -> int:
        return milli_value(self.cpu)

    @property
    def share(self) -> float:
        return self.percentage if self.percentage is not None else float(self.weight or 0.0)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cpu": f"{self.milli_cpu}m", "gpuCount": self.gpu_count, "gpuMilli": self.gpu_milli}
        if self.model:
            out["model"] = self.model
        out["percentage"] = self.share
        return out


PodKey = tuple[int, int, int, str]


def _pod_key(pod: PodInfo | Mapping[str, Any]) -> PodKey:
    pi = pod if isinstance(pod, PodInfo) else PodInfo(dict(pod))
    ask = gpu_ask_of(pi.pod)
    return (pi.non_zero_requests.milli_cpu, ask.milli, ask.count, ask.model_text)


def typical_pods(
    pods: Iterable[PodInfo | Mapping[str, Any]],
    *,
    involve_cpu_pods: bool = True,
    popularity_threshold: float = POPULARITY_THRESHOLD,
    increase_step: int = INCREASE_STEP,
    gpu_res_weight: float = 0.0,
) -> list[TypicalPod]:
    """The typical pods of a workload (see the module docstring). A pod's kind is its CPU
    (requests, 100m for a container without one), milli-GPU, GPU count and model annotation;
    ``gpu_res_weight`` > 0 counts a whole-GPU pod as ``1 + count × weight`` pods."""
    counts: dict[PodKey, float] = {}
    total = 0.0
    for pod in pods:
        key = _pod_key(pod)
        if not involve_cpu_pods and key[2] == 0:
            continue
        weighted = 1.0
        if gpu_res_weight > 0 and key[1] == 1000:
            weighted = 1.0 + key[2] * gpu_res_weight
        counts[key] = counts.get(key, 0.0) + weighted
        total += weighted
    if not counts:
        return []
    # The most common first; among equally common kinds, the larger (cpu, milli, count, model).
    kinds = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shares = [0.0] * len(kinds)
    expected = float(popularity_threshold) * total / 100.0
    step = increase_step if increase_step > 0 else 1
    kept = 0
    target = 0
    covered = 0.0
    while covered < expected and kept < len(kinds):
        target += step
        while kept < target and kept < len(kinds):
            covered += kinds[kept][1]
            shares[kept] = kinds[kept][1] / total
            kept += 1
    if kept < len(kinds):
        scale = covered / total
        shares = [s / scale for s in shares[:kept]]
    return [
        TypicalPod.model_validate(
            {"cpu": f"{cpu}m", "gpuCount": count, "gpuMilli": milli, "model": model, "percentage": share}
        )
        for ((cpu, milli, count, model), _), share in zip(kinds, shares)
    ]


def load_typical_pods(path: str | Path) -> list[TypicalPod]:
    """A typical-pod list from a YAML or JSON file: a list, or ``{"typicalPods": [...]}``."""
    text = Path(path).read_text(encoding="utf-8")
    data = json.loads(text) if str(path).endswith(".json") else yaml.safe_load(text)
    if isinstance(data, Mapping):
        data = data.get("typicalPods")
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a list of typical pods (or typicalPods: [...])")
    return [TypicalPod.model_validate(item) for item in data]


def write_typical_pods(path: str | Path, pods: Sequence[TypicalPod]) -> None:
    """Write ``pods`` as YAML (``{"typicalPods": [...]}``), for ``typicalPodsFile``."""
    Path(path).write_text(yaml.safe_dump({"typicalPods": [p.to_dict() for p in pods]}, sort_keys=False))


class TypicalPodTable:
    """A typical-pod list as arrays, shares scaled to sum to 1 (weights, or percentages that do not)."""

    def __init__(self, pods: Sequence[TypicalPod]) -> None:
        if not pods:
            raise ValueError("the typical-pod list is empty")
        self.pods = tuple(pods)
        shares = [p.share for p in pods]
        total = sum(shares)
        if total <= 0:
            raise ValueError("the shares of the typical pods sum to 0")
        # A list that sums to 1 up to rounding (the builder's) is taken as it is, as the artifact does.
        self.shares: list[float] = shares if abs(total - 1.0) < 1e-9 else [s / total for s in shares]
        self.cpu_list = [p.milli_cpu for p in pods]
        self.milli_list = [p.gpu_milli if p.gpu_count > 0 else 0 for p in pods]
        self.count_list = [p.gpu_count if p.gpu_milli > 0 else 0 for p in pods]
        self.models = [parse_models(p.model) for p in pods]
        self.cpu = np.array(self.cpu_list, np.int64)
        self.milli = np.array(self.milli_list, np.int64)
        self.count = np.array(self.count_list, np.int64)
        self.p = np.array(self.shares, np.float64)
        self.gpu = self.milli > 0
        self._access: dict[str, np.ndarray] = {}
        self._access_lists: dict[str, list[bool]] = {}

    def __len__(self) -> int:
        return len(self.pods)

    def access(self, model: str) -> np.ndarray:
        """Per typical pod: does it ask for GPUs, and accept a node of ``model``."""
        row = self._access.get(model)
        if row is None:
            row = self._access[model] = self.gpu & np.array([accepts_model(m, model) for m in self.models], bool)
        return row

    def access_list(self, model: str) -> list[bool]:
        """:meth:`access` as a list, for per-node loops."""
        row = self._access_lists.get(model)
        if row is None:
            row = self._access_lists[model] = self.access(model).tolist()
        return row
