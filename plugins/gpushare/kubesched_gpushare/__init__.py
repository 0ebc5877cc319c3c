"""GPU sharing for kubesched, and the scheduling policies of the FGD paper (ATC'23, "Beware of
Fragmentation") as Score plugins: FGD, BestFit, DotProduct, GpuPacking, GpuClustering and
RandomScore."""

from .best_fit import BestFit
from .dot_product import DotProduct
from .fgd import FGD, FGDArgs, node_fragmentation
from .gpu import (
    GPU_COUNT_ANNOTATION,
    GPU_INDEX_ANNOTATION,
    GPU_MILLI_ANNOTATION,
    GPU_MODEL_ANNOTATION,
    MILLI,
    NODE_GPU_COUNT_RESOURCES,
    NODE_GPU_MODEL_LABELS,
    GpuAsk,
    GpuAskError,
    NodeGpus,
    derive_node_gpus,
    gpu_ask_of,
)
from .gpu_clustering import GpuClustering
from .gpu_packing import GpuPacking
from .gpushare import GpuShare, GpuShareArgs
from .random_score import RandomScore, RandomScoreArgs
from .typical import TypicalPod, load_typical_pods, typical_pods, write_typical_pods

__all__ = [
    "FGD",
    "GPU_COUNT_ANNOTATION",
    "GPU_INDEX_ANNOTATION",
    "GPU_MILLI_ANNOTATION",
    "GPU_MODEL_ANNOTATION",
    "MILLI",
    "NODE_GPU_COUNT_RESOURCES",
    "NODE_GPU_MODEL_LABELS",
    "BestFit",
    "DotProduct",
    "FGDArgs",
    "GpuAsk",
    "GpuAskError",
    "GpuClustering",
    "GpuPacking",
    "GpuShare",
    "GpuShareArgs",
    "NodeGpus",
    "RandomScore",
    "RandomScoreArgs",
    "TypicalPod",
    "derive_node_gpus",
    "gpu_ask_of",
    "load_typical_pods",
    "node_fragmentation",
    "typical_pods",
    "write_typical_pods",
]
