"""Random clusters for the tests of the package: GPU nodes of a few models, with bound pods that
hold GPUs (shared or whole) by their index annotation."""

from __future__ import annotations

import random

from kubesched import NodeColumns, PodInfo
from kubesched.testing import as_node_infos, make_node, make_pod

MODELS = ["V100M16", "T4", "A10"]


def random_cluster(rng: random.Random, n: int) -> NodeColumns:
    nodes = []
    for i in range(n):
        gpus = rng.choice([0, 1, 2, 4, 8])
        node = make_node(f"n{i}").capacity(
            cpu=str(rng.choice([8, 32, 64, 96])),
            memory="256Gi",
            pods="110",
            **{"nvidia.com/gpu": str(gpus), "alibabacloud.com/gpu-milli": str(gpus * 1000)},
        )
        nodes.append(node.label("alibabacloud.com/gpu-model", rng.choice(MODELS)) if gpus else node)
    infos = as_node_infos(nodes)
    for i, ni in enumerate(infos):
        gpus = int(ni.allocatable.scalar.get("nvidia.com/gpu", 0))
        for j in range(rng.randrange(6) if gpus else 0):
            pod = make_pod(f"p{i}-{j}").req(cpu=str(rng.choice([1, 2, 4, 8])), memory="1Gi")
            whole = rng.random() < 0.3
            milli = 1000 if whole else rng.choice([100, 250, 300, 470, 500, 810])
            count = rng.randint(1, gpus) if whole else 1
            indices = rng.sample(range(gpus), count)
            pod.annotation("alibabacloud.com/gpu-milli", str(milli))
            pod.annotation("alibabacloud.com/gpu-count", str(count))
            pod.annotation("alibabacloud.com/gpu-index", "-".join(map(str, indices)))
            ni.add_pod(PodInfo(pod.node(ni.name).obj()))
    return NodeColumns(infos)
