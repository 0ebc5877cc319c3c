"""What a replay records after every pod, as the artifact's ``ClusterGpuFragReport`` logs it
(pkg/simulator/analysis.go): GPU demand arrived so far (pods that found no node included),
GPU milli allocated, the cluster's GPU fragmentation and idle GPU milli; and beside those the CPU
and memory requested.

The cluster is seen from outside, as a user of the simulator sees it: each bound pod's node and
the GPUs recorded on it. A node's fragmentation is recomputed only when a pod lands on it or
leaves it; the cluster's is the sum over its nodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.research.trace import MILLI, TraceNode, TracePod

#: ``(model, cpu left, milli left per GPU) -> fragmented milli-GPU`` of one node.
FragmentationOf = Callable[[str, int, Sequence[int]], float]
#: ``(bound pod, GPU count, milli per GPU, milli left per GPU) -> indices of the GPUs it holds``.
GpusOf = Callable[[dict[str, Any], int, int, Sequence[int]], tuple[int, ...]]


@dataclass
class Samples:
    """One entry per event (a pod created, or deleted under churn), in order."""

    arrived_gpu_milli: list[int] = field(default_factory=list)
    used_gpu_milli: list[int] = field(default_factory=list)
    frag_gpu_milli: list[float] = field(default_factory=list)
    idle_gpu_milli: list[int] = field(default_factory=list)
    used_cpu_milli: list[int] = field(default_factory=list)
    used_memory_mib: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.arrived_gpu_milli)


@dataclass
class _Node:
    model: str
    cpu_left: int
    left: list[int]
    frag: float = 0.0


class ClusterGauge:
    """The cluster's use and fragmentation, kept up to date pod by pod (see the module docstring)."""

    def __init__(self, nodes: Sequence[TraceNode], fragmentation: FragmentationOf, gpus_of: GpusOf) -> None:
        self._fragmentation = fragmentation
        self._gpus_of = gpus_of
        self._nodes: dict[str, _Node] = {}
        self.gpu_capacity_milli = 0
        self.cpu_capacity_milli = 0
        self.memory_capacity_mib = 0
        self.frag = 0.0
        for n in nodes:
            node = _Node(n.model, n.cpu_milli, [MILLI] * n.gpus)
            node.frag = fragmentation(node.model, node.cpu_left, node.left)
            self.frag += node.frag
            self._nodes[n.name] = node
            self.gpu_capacity_milli += n.gpus * MILLI
            self.cpu_capacity_milli += n.cpu_milli
            self.memory_capacity_mib += n.memory_mib
        self.arrived = 0
        self.used_gpu = 0
        self.used_cpu = 0
        self.used_memory = 0
        #: pod name -> (node, GPUs it holds): what a deletion gives back.
        self._held: dict[str, tuple[str, tuple[int, ...]]] = {}
        self.samples = Samples()

    def arrive(self, pod: TracePod) -> None:
        """A pod is submitted: its GPU demand has arrived, whether it finds a node or not."""
        self.arrived += pod.total_gpu_milli

    def placed(self, pod: TracePod, node_name: str, bound: dict[str, Any]) -> None:
        node = self._nodes.get(node_name)
        if node is None:
            return  # not a node of the experiment
        gpus: tuple[int, ...] = ()
        if pod.gpu_count:
            gpus = self._gpus_of(bound, pod.gpu_count, pod.gpu_milli, node.left)
        self._held[pod.name] = (node_name, gpus)
        self._change(node, pod, gpus, -1)

    def removed(self, pod: TracePod) -> None:
        held = self._held.pop(pod.name, None)
        if held is None:
            return  # it never got a node
        self._change(self._nodes[held[0]], pod, held[1], +1)

    def _change(self, node: _Node, pod: TracePod, gpus: tuple[int, ...], sign: int) -> None:
        for i in gpus:
            node.left[i] += sign * pod.gpu_milli
        self.used_gpu -= sign * pod.gpu_milli * len(gpus)
        node.cpu_left += sign * pod.cpu_milli
        self.used_cpu -= sign * pod.cpu_milli
        self.used_memory -= sign * pod.memory_mib
        before = node.frag
        node.frag = self._fragmentation(node.model, node.cpu_left, node.left)
        self.frag += node.frag - before

    def spread(self) -> dict[str, Any]:
        """How the pods spread over the GPU nodes now: nodes with any GPU in use, nodes with every
        GPU fully used, and the standard deviation of the nodes' GPU allocation (percent)."""
        shares = [100.0 * (1 - sum(n.left) / (MILLI * len(n.left))) for n in self._nodes.values() if n.left]
        mean = sum(shares) / len(shares) if shares else 0.0
        stdev = (sum((x - mean) ** 2 for x in shares) / len(shares)) ** 0.5 if shares else 0.0
        return {
            "gpuNodesUsed": sum(1 for x in shares if x > 0),
            "gpuNodesFull": sum(1 for x in shares if x >= 100.0),
            "nodeGpuAllocationStdev": round(stdev, 2),
        }

    def record(self) -> None:
        s = self.samples
        s.arrived_gpu_milli.append(self.arrived)
        s.used_gpu_milli.append(self.used_gpu)
        s.frag_gpu_milli.append(max(self.frag, 0.0))
        s.idle_gpu_milli.append(self.gpu_capacity_milli - self.used_gpu)
        s.used_cpu_milli.append(self.used_cpu)
        s.used_memory_mib.append(self.used_memory)


__all__ = ["ClusterGauge", "FragmentationOf", "GpusOf", "Samples"]
