"""GPU sharing for kubesched, and the scheduling policies of the FGD paper (ATC'23, "Beware of
Fragmentation") as Score plugins: FGD, BestFit, DotProduct, GpuPacking, GpuClustering and
RandomScore; and NodeOrder with NodeOrderFine, which break ties as the paper's simulator does."""

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
    best_fit_gpu,
    derive_node_gpus,
    gpu_ask_of,
    parse_indices,
    whole_gpus,
)
from .gpu_clustering import GpuClustering
from .gpu_packing import GpuPacking
from .gpushare import GpuShare, GpuShareArgs
from .node_order import NodeOrder, NodeOrderArgs, NodeOrderFine
from .random_score import RandomScore, RandomScoreArgs
from .typical import TypicalPod, TypicalPodTable, load_typical_pods, typical_pods, write_typical_pods

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
    "NodeOrder",
    "NodeOrderArgs",
    "NodeOrderFine",
    "RandomScore",
    "RandomScoreArgs",
    "TypicalPod",
    "TypicalPodTable",
    "best_fit_gpu",
    "derive_node_gpus",
    "gpu_ask_of",
    "load_typical_pods",
    "node_fragmentation",
    "parse_indices",
    "typical_pods",
    "whole_gpus",
    "write_typical_pods",
]
