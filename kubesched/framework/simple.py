"""Plugins from plain functions: the quickest way to write a first plugin.

    from kubesched.framework.simple import filter, score

    @filter
    def has_gpu(pod, node):
        \"\"\"Only nodes that advertise a GPU.\"\"\"
        return "nvidia.com/gpu" in node.allocatable.scalar

    @score(normalize=True)
    def fewest_pods(pod, node):
        return 110 - len(node.pods)

Each decorator returns a plugin *class* (not a function), registrable by entry point like any
other plugin: ``HasGpu = "my_module:has_gpu"`` under ``[project.entry-points."kubesched.plugins"]``.
The class

* is named after the function in CamelCase (``has_gpu`` → ``HasGpu``) unless ``name=`` is given;
  that is also its plugin ``name``, the one a configuration enables;
* takes ``(args, handle)`` like every plugin and keeps the function's docstring;
* keeps the original function as the static attribute ``fn``, so a unit test can call
  ``HasGpu.fn(pod_info, node_info)`` directly.

The decorators:

``@filter``
    ``fn(pod: PodInfo, node: NodeInfo) -> bool | Status | None``. ``True`` or ``None``: the node
    passes. ``False``: the node is rejected as Unschedulable with the reason given by
    ``reason=``, else by a docstring line starting with ``Reason:``, else
    ``node(s) didn't pass <Name>``. ``unresolvable=True`` rejects as
    UnschedulableAndUnresolvable instead (preemption cannot help). A ``Status`` is returned as is.
``@score``
    ``fn(pod: PodInfo, node: NodeInfo) -> int``. Without normalization the result must be within
    0..100. ``normalize=True`` scales each pod's raw scores so the highest becomes 100 (upstream's
    default normalization); ``reverse=True`` with it makes the lowest raw score the best.
``@queue_sort``
    ``fn(a: QueuedPodInfo, b: QueuedPodInfo) -> bool``: True when ``a`` goes before ``b``.

A plugin that needs configuration (``Args``), cycle state or several extension points is
written as a class; see "Writing a plugin" (docs/writing-a-plugin.md).
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Any

from kubesched.framework.interface import MAX_NODE_SCORE, CycleState, NodeScore
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo, QueuedPodInfo

__all__ = ["filter", "queue_sort", "score"]

_REASON_LINE = re.compile(r"^\s*Reason:\s*(.+?)\s*$", re.MULTILINE)


def plugin_name(fn_name: str) -> str:
    """``has_gpu`` → ``HasGpu``; a name already in CamelCase keeps its inner capitals."""
    parts = [p for p in fn_name.split("_") if p]
    return "".join(p[:1].upper() + p[1:] for p in parts) or fn_name


def _check_arity(kind: str, fn: Callable[..., Any], params: tuple[str, str]) -> None:
    if not callable(fn):
        raise TypeError(f"@{kind} decorates a function, got {fn!r}")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature: trust the caller
        return
    try:
        sig.bind(*params)
    except TypeError:
        raise TypeError(
            f"@{kind} function {getattr(fn, '__qualname__', fn)!r} must take two positional arguments "
            f"({', '.join(params)}), has signature {sig}"
        ) from None


def _init(self: Any, args: Any, handle: Any) -> None:
    self.args = args
    self.handle = handle


def _make_class(fn: Callable[..., Any], name: str, body: dict[str, Any]) -> type:
    namespace: dict[str, Any] = {
        "name": name,
        "fn": staticmethod(fn),
        "__init__": _init,
        "__doc__": fn.__doc__,
        "__module__": getattr(fn, "__module__", __name__),
        "__qualname__": name,
        **body,
    }
    return type(name, (), namespace)


def _decorator(build: Callable[[Callable[..., Any]], type], fn: Callable[..., Any] | None) -> Any:
    """Support both ``@deco`` and ``@deco(...)``."""
    if fn is None:
        return build
    return build(fn)


def filter(  # named after the extension point on purpose, shadowing the builtin
    fn: Callable[[PodInfo, NodeInfo], bool | Status | None] | None = None,
    *,
    name: str | None = None,
    reason: str | None = None,
    unresolvable: bool = False,
) -> Any:
    """Turn ``fn(pod, node) -> bool | Status | None`` into a Filter plugin class (see module doc)."""

    def build(f: Callable[..., Any]) -> type:
        _check_arity("filter", f, ("pod", "node"))
        plugin = name or plugin_name(f.__name__)
        found = _REASON_LINE.search(f.__doc__ or "")
        message = reason or (found.group(1) if found else f"node(s) didn't pass {plugin}")
        make = Status.unresolvable if unresolvable else Status.unschedulable

        def filter_method(self: Any, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
            result = f(pod, node)
            if isinstance(result, Status):
                return result
            if result is None or result:
                return None
            return make(message)

        return _make_class(f, plugin, {"filter": filter_method, "reason": message})

    return _decorator(build, fn)


def score(
    fn: Callable[[PodInfo, NodeInfo], int] | None = None,
    *,
    name: str | None = None,
    normalize: bool = False,
    reverse: bool = False,
) -> Any:
    """Turn ``fn(pod, node) -> int`` into a Score plugin class (see module doc)."""
    if reverse and not normalize:
        raise TypeError("@score(reverse=True) needs normalize=True")

    def build(f: Callable[..., Any]) -> type:
        _check_arity("score", f, ("pod", "node"))
        plugin = name or plugin_name(f.__name__)

        def score_method(self: Any, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
            return int(f(pod, node))

        body: dict[str, Any] = {"score": score_method}
        if normalize:
            body["normalize_score"] = _normalize_method(reverse)
        return _make_class(f, plugin, body)

    return _decorator(build, fn)


def _normalize_method(reverse: bool) -> Callable[..., None]:
    def normalize_score(self: Any, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> None:
        # Upstream's DefaultNormalizeScore: scale by the highest raw score, truncating like Go's
        # integer division; all-zero scores stay 0 (or all become 100 when reversed).
        highest = max((s.score for s in scores), default=0)
        if highest <= 0:
            if reverse:
                for s in scores:
                    s.score = MAX_NODE_SCORE
            return
        for s in scores:
            product = MAX_NODE_SCORE * s.score
            value = product // highest if product >= 0 else -(-product // highest)
            s.score = MAX_NODE_SCORE - value if reverse else value

    return normalize_score


def queue_sort(
    fn: Callable[[QueuedPodInfo, QueuedPodInfo], bool] | None = None,
    *,
    name: str | None = None,
) -> Any:
    """Turn ``fn(a, b) -> bool`` into a QueueSort plugin class (see module doc)."""

    def build(f: Callable[..., Any]) -> type:
        _check_arity("queue_sort", f, ("a", "b"))
        plugin = name or plugin_name(f.__name__)

        def less(self: Any, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
            return bool(f(a, b))

        return _make_class(f, plugin, {"less": less})

    return _decorator(build, fn)
