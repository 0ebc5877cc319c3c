"""GPUs of a node, GPU asks of a pod, and where a pod's GPUs are: the facts every plugin of the
package reads.

A node has ``count`` GPUs of one model, each of :data:`MILLI` milli-GPU. A pod asks, in
annotations, for ``gpu-count`` GPUs of ``gpu-milli`` milli-GPU each, optionally of some models:

* one GPU with less than 1000 milli shares that GPU with other pods;
* 1000 milli takes ``count`` GPUs that nobody uses.

Which GPUs a pod holds is written on it (``gpu-index``, e.g. ``"2-3"``) before it is bound;
the usage of every GPU of a node is derived from the pods on the node, so nothing is kept that
could go stale: a restarted scheduler reads the annotations of the bound pods back.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched import NodeInfo, PodInfo

#: Milli-GPU in one GPU.
MILLI = 1000

#: Pod annotations (the keys of the FGD artifact and of Alibaba's open-gpu-share).
GPU_MILLI_ANNOTATION = "alibabacloud.com/gpu-milli"
GPU_COUNT_ANNOTATION = "alibabacloud.com/gpu-count"
GPU_MODEL_ANNOTATION = "alibabacloud.com/gpu-card-model"
#: Written on the pod at PreBind: the indices of the GPUs it got, joined by ``-``.
GPU_INDEX_ANNOTATION = "alibabacloud.com/gpu-index"
GPU_INDEX_SEPARATOR = "-"

#: Where a node's GPU count is read, first found wins: the artifact's resource, then the one
#: kubesched's openb loader and the NVIDIA device plugin advertise.
NODE_GPU_COUNT_RESOURCES = ("alibabacloud.com/gpu-count", "nvidia.com/gpu")
#: Where a node's GPU model is read, first found wins: the artifact's label, then openb's.
NODE_GPU_MODEL_LABELS = ("alibabacloud.com/gpu-card-model", "alibabacloud.com/gpu-model")

#: GpuClustering's kinds of GPU pods: one shared GPU, or ``k`` whole GPUs (``f"{k}-gpu"``).
SHARE_TAG = "share-gpu"


class GpuAskError(ValueError):
    """A pod's GPU annotations that cannot be honoured (the message names the annotation)."""


@dataclass(frozen=True, slots=True)
class GpuAsk:
    """What a pod asks of GPUs. ``count == 0`` (and ``milli == 0``): no GPU at all."""

    count: int = 0
    milli: int = 0
    #: The models the pod accepts; ``None``: any.
    models: frozenset[str] | None = None
    #: The model annotation as written (``"V100M16|V100M32"``), which typical pods are keyed by.
    model_text: str = ""

    @property
    def wants_gpu(self) -> bool:
        return self.count > 0

    @property
    def shared(self) -> bool:
        return self.count == 1 and self.milli < MILLI

    @property
    def total_milli(self) -> int:
        return self.count * self.milli

    @property
    def tag(self) -> str:
        """GpuClustering's kind of this pod ("" for a pod without GPUs)."""
        if not self.count:
            return ""
        return SHARE_TAG if self.shared else f"{self.count}-gpu"

    def accepts(self, model: str) -> bool:
        return accepts_model(self.models, model)


NO_GPU = GpuAsk()


def parse_models(text: str) -> frozenset[str] | None:
    """``"A|B"`` → {A, B}; empty parts are ignored, and nothing left means any model."""
    models = frozenset(part.strip() for part in text.split("|") if part.strip())
    return models or None


def accepts_model(models: frozenset[str] | None, node_model: str) -> bool:
    """As the artifact: a pod without models fits any node; with models, only a node of one of
    them (a node without a model label has none)."""
    if models is None:
        return True
    return node_model in models


def _annotation_int(annotations: Mapping[str, Any], key: str) -> int | None:
    value = annotations.get(key)
    if value is None:
        return None
    text = str(value).strip()
    try:
        return int(text)
    except ValueError:
        raise GpuAskError(f"annotation {key}: not an integer: {value!r}") from None


#: Asks already parsed, by their three annotations as written (strings or absent): every plugin
#: reads a pod's ask, and every node's derivation reads its pods' asks, thousands of times over
#: a handful of distinct values. A :class:`GpuAsk` is immutable, so one may be shared.
_ASKS: dict[tuple[str | None, str | None, str | None], GpuAsk] = {}
#: Distinct asks kept at once (beyond, the table starts again).
_ASKS_KEPT = 4096


def gpu_ask_of(pod: Mapping[str, Any]) -> GpuAsk:
    """The GPU ask in a pod's annotations; raises :class:`GpuAskError` on values that cannot be
    honoured. ``gpu-milli`` without ``gpu-count`` means one GPU; ``gpu-milli`` 0 (or a count of
    0) means no GPU."""
    return _ask_in((pod.get("metadata") or {}).get("annotations") or {})


def _ask_in(annotations: Mapping[str, Any]) -> GpuAsk:
    """:func:`gpu_ask_of` of a pod with these annotations."""
    milli = annotations.get(GPU_MILLI_ANNOTATION)
    count = annotations.get(GPU_COUNT_ANNOTATION)
    model = annotations.get(GPU_MODEL_ANNOTATION)
    # Only strings (and absent values) are kept: they are equal exactly when they read the same,
    # where 1, 1.0 and True are equal keys that do not.
    if (
        (milli is None or type(milli) is str)
        and (count is None or type(count) is str)
        and (model is None or type(model) is str)
    ):
        key = (milli, count, model)
        ask = _ASKS.get(key)
        if ask is None:
            ask = parse_gpu_ask(annotations)  # an error is raised each time, never kept
            if len(_ASKS) >= _ASKS_KEPT:
                _ASKS.clear()
            _ASKS[key] = ask
        return ask
    return parse_gpu_ask(annotations)


def parse_gpu_ask(annotations: Mapping[str, Any]) -> GpuAsk:
    """:func:`gpu_ask_of` of a pod with these annotations, parsed anew."""
    milli = _annotation_int(annotations, GPU_MILLI_ANNOTATION)
    if milli is None or milli == 0:
        return NO_GPU
    if milli < 0 or milli > MILLI:
        raise GpuAskError(f"annotation {GPU_MILLI_ANNOTATION}: must be within 0..{MILLI}, got {milli}")
    count = _annotation_int(annotations, GPU_COUNT_ANNOTATION)
    if count is None:
        count = 1
    if count < 0:
        raise GpuAskError(f"annotation {GPU_COUNT_ANNOTATION}: cannot be negative, got {count}")
    if count == 0:
        return NO_GPU
    if count > 1 and milli < MILLI:
        raise GpuAskError(
            f"annotations {GPU_COUNT_ANNOTATION}={count}, {GPU_MILLI_ANNOTATION}={milli}: "
            f"a pod sharing a GPU asks for one GPU; more than one must be whole ({MILLI})"
        )
    model_text = str(annotations.get(GPU_MODEL_ANNOTATION) or "").strip()
    return GpuAsk(count, milli, parse_models(model_text), model_text)


def format_indices(indices: Sequence[int]) -> str:
    return GPU_INDEX_SEPARATOR.join(str(i) for i in indices)


def parse_indices(text: Any) -> tuple[int, ...] | None:
    """``"2-3"`` → (2, 3); ``None`` for anything else."""
    if type(text) is str:
        # A node's pods carry a handful of distinct texts ("0", "2-3", ...), read at every
        # derivation: each is parsed once (a tuple is immutable, so one may be shared).
        held = KEPT_INDICES.get(text)
        if held is not None or text in KEPT_INDICES:
            return held
        held = read_indices(text)
        if len(KEPT_INDICES) >= _INDICES_KEPT:
            KEPT_INDICES.clear()
        KEPT_INDICES[text] = held
        return held
    return read_indices(text)


def read_indices(text: Any) -> tuple[int, ...] | None:
    """:func:`parse_indices`, parsed anew."""
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return tuple(int(part) for part in text.strip().split(GPU_INDEX_SEPARATOR))
    except ValueError:
        return None


#: Index annotations already parsed, by their text (an entry of ``None``: not indices).
KEPT_INDICES: dict[str, tuple[int, ...] | None] = {}
_INDICES_KEPT = 4096


# --- the GPUs of a node --------------------------------------------------------------------------


def node_gpu_count(ni: NodeInfo) -> int:
    scalar = ni.allocatable.scalar
    for name in NODE_GPU_COUNT_RESOURCES:
        n = scalar.get(name)
        if n:
            return int(n)
    return 0


def node_gpu_model(ni: NodeInfo) -> str:
    for key in NODE_GPU_MODEL_LABELS:
        model = ni.labels.get(key)
        if model:
            return model
    return ""


@dataclass(slots=True)
class NodeGpus:
    """One node's GPUs as its pods use them, derived from a NodeInfo of one generation."""

    name: str
    generation: int
    model: str
    #: Milli-GPU left on each GPU (index = device index), never below 0.
    left: list[int]
    #: The node's allocatable CPU minus what its pods request, in millicores.
    cpu_left: int
    #: How many GPU pods of each kind (:attr:`GpuAsk.tag`) run here.
    tags: dict[str, int] = field(default_factory=dict)

    @property
    def count(self) -> int:
        return len(self.left)

    @property
    def total_left(self) -> int:
        return sum(self.left)

    @property
    def fully_free(self) -> int:
        return sum(1 for x in self.left if x == MILLI)


def indices_fit(indices: tuple[int, ...] | None, ask: GpuAsk, count: int) -> bool:
    if indices is None:
        return False
    wanted = 1 if ask.shared else ask.count
    key = (indices, wanted, count)
    valid = KEPT_VERDICTS.get(key)
    if valid is None:
        valid = len(indices) == wanted and len(set(indices)) == wanted and all(0 <= i < count for i in indices)
        if len(KEPT_VERDICTS) >= _INDICES_KEPT:
            KEPT_VERDICTS.clear()
        KEPT_VERDICTS[key] = valid
    return valid


#: :func:`indices_fit` by (indices, GPUs wanted, GPUs of the node): a handful of distinct keys.
KEPT_VERDICTS: dict[tuple[tuple[int, ...], int, int], bool] = {}


def derive_node_gpus(ni: NodeInfo, reserved: Mapping[str, tuple[str, tuple[int, ...]]]) -> NodeGpus:
    """Per-GPU usage of ``ni`` from its pods: the GPUs this scheduler reserved for a pod (assumed,
    not yet annotated) or else the pod's ``gpu-index`` annotation; pods with neither (bound by
    someone else) are then placed as best fit packs them, so that their usage still counts."""
    count = node_gpu_count(ni)
    left = [MILLI] * count
    tags: dict[str, int] = {}
    unplaced: list[GpuAsk] = []
    name = ni.name
    for pi in ni.pods:
        annotations = (pi.pod.get("metadata") or {}).get("annotations") or {}
        try:
            ask = _ask_in(annotations)
        except GpuAskError:
            continue
        if not ask.wants_gpu:
            continue
        tag = ask.tag
        tags[tag] = tags.get(tag, 0) + 1
        held = reserved.get(pi.uid) if reserved else None
        indices = held[1] if held is not None and held[0] == name else None
        if indices is None:
            indices = parse_indices(annotations.get(GPU_INDEX_ANNOTATION))
        if not indices_fit(indices, ask, count):
            unplaced.append(ask)
            continue
        assert indices is not None
        for i in indices:
            left[i] -= ask.milli
    for ask in unplaced:
        chosen = whole_gpus(left, ask.count) if not ask.shared else best_fit_gpu(left, ask.milli)
        if chosen is None:
            continue  # more than the node has: nothing to account it to
        for i in chosen if isinstance(chosen, tuple) else (chosen,):
            left[i] -= ask.milli
    # Annotations written elsewhere may overcommit a GPU: it then has no room, not less than none.
    left = [max(0, x) for x in left]
    cpu_left = ni.allocatable.milli_cpu - ni.requested.milli_cpu
    return NodeGpus(name, ni.generation, node_gpu_model(ni), left, cpu_left, tags)


# --- choosing GPUs -------------------------------------------------------------------------------


def whole_gpus(left: Sequence[int], count: int) -> tuple[int, ...] | None:
    """The ``count`` lowest-indexed GPUs nobody uses, or ``None`` when there are fewer."""
    free = [i for i, x in enumerate(left) if x == MILLI]
    return tuple(free[:count]) if len(free) >= count else None


def best_fit_gpu(left: Sequence[int], milli: int) -> int | None:
    """The GPU with the least room that still fits ``milli`` (the lowest index on ties)."""
    best: int | None = None
    for i, x in enumerate(left):
        if x >= milli and (best is None or x < left[best]):
            best = i
    return best


def worst_fit_gpu(left: Sequence[int], milli: int) -> int | None:
    """The GPU with the most room (the lowest index on ties)."""
    best: int | None = None
    for i, x in enumerate(left):
        if x >= milli and (best is None or x > left[best]):
            best = i
    return best


def random_gpu(left: Sequence[int], milli: int, rng: random.Random) -> int | None:
    """A GPU that fits ``milli``, each as likely (one pass, as the artifact draws it)."""
    chosen: int | None = None
    seen = 0
    for i, x in enumerate(left):
        if x >= milli:
            seen += 1
            if rng.randrange(seen) == 0:
                chosen = i
    return chosen


def pod_cpu(pi: PodInfo) -> int:
    """The pod's CPU as the artifact counts it: requests, 100m for a container without one."""
    return pi.non_zero_requests.milli_cpu


def has_requests(pi: PodInfo) -> bool:
    """Whether any container states requests or limits (FGD gives a pod without any 100)."""
    spec = pi.pod.get("spec") or {}
    for c in spec.get("containers") or ():
        res = (c or {}).get("resources") or {}
        if res.get("requests") or res.get("limits"):
            return True
    return False
