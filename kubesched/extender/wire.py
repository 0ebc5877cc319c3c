"""The wire format shared by the extender client and the kit: upstream's
``k8s.io/kube-scheduler/extender/v1``, Go structs without JSON tags, so keys are PascalCase
(``Pod``, ``NodeNames``, ``FailedNodes``) and Go's decoder matches them case-insensitively.
"""

from __future__ import annotations

from typing import Any

from kubesched.objects import Obj

__all__ = ["MAX_EXTENDER_PRIORITY", "MIN_EXTENDER_PRIORITY", "Obj", "as_int64", "field", "node_name", "string_map"]

MIN_EXTENDER_PRIORITY = 0
MAX_EXTENDER_PRIORITY = 10
"""An extender scores nodes 0..10; the scheduler scales that to its own 0..100 range."""


def field(obj: Any, key: str) -> Any:
    """``obj[key]`` as Go's JSON decoder finds it: the exact key first, then case-insensitively."""
    if not isinstance(obj, dict):
        return None
    if key in obj:
        return obj[key]
    low = key.lower()
    for k, v in obj.items():
        if isinstance(k, str) and k.lower() == low:
            return v
    return None


def string_map(value: Any, what: str) -> dict[str, str]:
    """A Go ``map[string]string``: ``None`` is empty, anything but an object is an error."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ValueError(f"{what}: expected an object, got {type(value).__name__}")
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def as_int64(value: Any, what: str) -> int:
    """A Go ``int64`` field; ``what`` names it in the error."""
    # Go decodes JSON numbers into int64 only when they are whole; anything else is an error.
    if isinstance(value, bool) or value is None:
        raise ValueError(f"{what}: expected an integer, got {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise ValueError(f"{what}: expected an integer, got {value!r}")


def node_name(node: Any) -> str:
    """The name of a node given as a name or as a Node object."""
    if isinstance(node, str):
        return node
    meta = node.get("metadata") if isinstance(node, dict) else None
    return str((meta or {}).get("name", ""))
