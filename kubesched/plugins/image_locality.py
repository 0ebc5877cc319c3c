"""ImageLocality: favour nodes that already hold the pod's images.

The images are those of the init and regular containers and, as since 1.36, of image volumes
(``spec.volumes[].image.reference``); as in 1.37 each image volume also counts as one image in
the score's upper threshold, so an image volume weighs exactly as a container image."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.framework.columns import Array, columns_of, positions
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.interface import MAX_NODE_SCORE, CycleState, Handle
from kubesched.framework.types import NodeInfo, PodInfo

MB = 1024 * 1024
#: Bounds of the summed image score: a range typical of compressed registry images.
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB

_STATE_KEY = "ImageLocality/pod"


def normalized_image_name(name: str) -> str:
    """The name as the runtime reports it: an untagged, undigested reference gets ``:latest``."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def calculate_priority(sum_scores: int, num_containers: int) -> int:
    """Scale ``sum_scores`` from ``[MIN_THRESHOLD, MAX_CONTAINER_THRESHOLD * containers]``
    (clamped) to ``0..MAX_NODE_SCORE``."""
    max_threshold = MAX_CONTAINER_THRESHOLD * num_containers
    if sum_scores < MIN_THRESHOLD:
        sum_scores = MIN_THRESHOLD
    elif sum_scores > max_threshold:
        sum_scores = max_threshold
    return MAX_NODE_SCORE * (sum_scores - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)


def scaled_image_score(size: int, num_nodes: int, total_num_nodes: int) -> int:
    """The image size scaled by the share of nodes that have it, which keeps pods from piling
    onto the few nodes that happen to hold a large image."""
    spread = float(num_nodes) / float(total_num_nodes)
    return int(float(size) * spread)


def pod_images(pod: Mapping[str, Any]) -> list[str]:
    """The normalized images of the pod's init containers, containers and image volumes, one
    entry each (a repeated image counts each time, as upstream sums it)."""
    spec = pod.get("spec") or {}
    containers = (*(spec.get("initContainers") or ()), *(spec.get("containers") or ()))
    images = [normalized_image_name(c.get("image") or "") for c in containers]
    for volume in spec.get("volumes") or ():
        image = volume.get("image")
        if image is not None:
            images.append(normalized_image_name((image or {}).get("reference") or ""))
    return images


class ImageLocality:
    """Score only: the summed, spread-scaled size of the pod's images present on the node."""

    name = "ImageLocality"

    def __init__(self, args: Any = None, handle: Any = None) -> None:
        self.handle: Handle = handle

    def _pod_data(self, state: CycleState, pod: PodInfo) -> tuple[list[str], int, int]:
        cached = state.get(_STATE_KEY)
        if cached is not None and cached[0] == pod.uid:
            return cached[1], cached[2], cached[3]
        images = pod_images(pod.pod)
        total = len(self.handle.snapshot().list())
        state.write(_STATE_KEY, (pod.uid, images, len(images), total))
        return images, len(images), total

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        images, num_containers, total = self._pod_data(state, pod)
        states = node.image_states
        total_score = 0
        for image in images:
            s = states.get(image)
            if s is not None:
                total_score += scaled_image_score(s.size, s.num_nodes, total)
        return calculate_priority(total_score, num_containers)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        """Nodes that hold no image at all score as if none of the pod's images were there; only
        the others are scored one by one."""
        batch = columns_of(nodes)
        if batch is None:
            return None
        _, num_containers, _ = self._pod_data(state, pod)
        scores = np.full(len(batch), calculate_priority(0, num_containers), np.int64)
        for j in positions(batch.columns.has_images[batch.rows]).tolist():
            scores[j] = self.score(state, pod, batch[j])
        return scores

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        # The count matters too: it scales the score.
        return {"Images": sorted(pod_images(pod.pod))}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        """None: a score plugin never rejects a pod."""
        return []
