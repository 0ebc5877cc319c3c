"""Storage capacity for VolumeBinding: what a CSIStorageCapacity can hold and from which nodes, and the
score of the storage a node offers per StorageClass (StorageCapacityScoring's ``shape``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from kubesched.framework.resources import QuantityError, parse_quantity
from kubesched.framework.selectors import LabelSelector, SelectorError
from kubesched.plugins.noderesources.resource_allocation import broken_linear_function, go_round


def quantity_value(value: Any) -> int:
    """A quantity in whole units rounded up, as ``Quantity.Value()``; 0 when absent or unreadable."""
    if value is None:
        return 0
    try:
        return math.ceil(parse_quantity(value))
    except (QuantityError, ValueError, TypeError):
        return 0


def volume_limit(capacity: Mapping[str, Any]) -> Any:
    """The largest volume a CSIStorageCapacity can hold: ``maximumVolumeSize`` when reported,
    else ``capacity`` (``None`` when neither is)."""
    limit = capacity.get("maximumVolumeSize")
    return capacity.get("capacity") if limit is None else limit


def node_has_access(capacity: Mapping[str, Any], node_labels: Mapping[str, str]) -> bool:
    """A CSIStorageCapacity without ``nodeTopology`` is reachable from no node."""
    try:
        selector = LabelSelector.compile(capacity.get("nodeTopology"))
    except SelectorError:
        return False
    return selector is not None and selector.matches(node_labels)


MAX_UTILIZATION = 100


def build_scorer(shape: list[tuple[int, int]]) -> Any:
    """The scorer of a node's storage from ``shape`` (utilization to score points): it scores
    each class by the share of its capacity requested (full when the class has no capacity or
    the request does not fit) and the node by the rounded mean of its classes (0 with none)."""
    raw = broken_linear_function(shape)

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def scorer(by_class: Mapping[str, list[int]]) -> int:
        # Every class weighs the same.
        if not by_class:
            return 0
        total = sum(class_score(req, cap) for req, cap in by_class.values())
        return go_round(total / len(by_class))

    return scorer
