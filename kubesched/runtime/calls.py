"""How the runtime calls a plugin method and reads what it returns.

A plugin method is bound once per profile (:class:`BoundMethod`), knowing whether it is a
coroutine function, so the runtime awaits only those that are. What it returns is read with
upstream's rules: ``(value, status)``, a bare Status, or ``None`` for Success; a non-success
status of a per-pod point is either a rejection or becomes an error naming point and plugin.
Every point is read by :func:`split_result`; each point that returns a value besides its status
reads it under a name of its own, typed with the shapes the face declares for it
(:mod:`kubesched.framework.results`), and Permit by :func:`permit_parts` (its timeout). The points
called for every pod (PreEnqueue, PreFilter, PreScore, Reserve, PreBind, Bind) read the usual
answers — None, a bare Status, a PreFilter pair — inline, and only the rest through it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, SupportsInt

from kubesched.framework.podgroup import Placement, PodGroupPostFilterResult
from kubesched.framework.results import (
    PermitShape,
    PlacementGenerateShape,
    PlacementScoreShape,
    PodGroupPostFilterShape,
    PostFilterResult,
    PostFilterShape,
    PreFilterResult,
    PreFilterShape,
)
from kubesched.framework.status import Code, Status

#: What plain plugins return; never awaitable, so :meth:`BoundMethod.call` skips the check.
PLAIN_RESULTS = frozenset({type(None), Status, tuple, int, bool})


class BoundMethod:
    """A plugin method, whether it is a coroutine function, and its plugin's name."""

    __slots__ = ("name", "fn", "is_async", "weight", "plugin", "batch", "statuses")

    def __init__(self, plugin: Any, method: str, weight: int = 0) -> None:
        self.plugin = plugin
        self.name: str = plugin.name
        self.fn: Callable[..., Any] = getattr(plugin, method)
        self.is_async = inspect.iscoroutinefunction(self.fn)
        self.weight = weight
        #: the batch form of a per-node method (``filter`` → ``filter_nodes``, ``score`` →
        #: ``score_nodes``), when the plugin has one
        batch = getattr(plugin, f"{method}_nodes", None) if method in ("filter", "score") else None
        self.batch: Callable[..., Any] | None = batch if callable(batch) else None
        #: ``filter_statuses``: the per-node Filter statuses of many nodes at once, if it has it
        statuses = getattr(plugin, "filter_statuses", None) if method == "filter" else None
        self.statuses: Callable[..., Any] | None = statuses if callable(statuses) else None

    async def call(self, *args: Any) -> Any:
        result = self.fn(*args)
        # What plain plugins return (None, a Status, a tuple) is never awaitable: skip the check.
        if type(result) in PLAIN_RESULTS and not self.is_async:
            return result
        if self.is_async or inspect.isawaitable(result):
            result = await result
        return result


def plugin_error(point: str, plugin: str, exc: BaseException) -> Status:
    """The Error status for an exception raised by ``plugin`` at extension point ``point``: a
    plugin's exception is a bug in that plugin, never a crash of the scheduler."""
    return Status.as_error(RuntimeError(f'running "{plugin}" {point} plugin: {exc}'), plugin)


def rejected_or_error(point: str, plugin: str, status: Status) -> Status:
    """A non-success status from a per-pod point: a rejection goes on as it is (credited to
    ``plugin``); anything else becomes an error naming the point and the plugin."""
    status.with_plugin(plugin)
    if status.is_rejected():
        return status
    # The plugin's exception stays attached: the scheduler tells a Conflict or a timeout of the
    # cluster from other errors by it.
    return Status(
        Code.ERROR, f'running {point} plugin "{plugin}": {status.message()}', plugin=plugin, error=status.error
    )


def split_result(result: Any) -> tuple[Any, Status | None]:
    """Accept ``(value, status)``, a bare Status, or None (Success)."""
    if isinstance(result, tuple):
        return result[0], result[1]
    if result is None or isinstance(result, Status):
        return None, result
    return result, None


# The points that return a value besides their status read it by :func:`split_result` itself,
# each name typed with the shapes the face declares for its point (one body, no extra call).
pre_filter_parts: Callable[[PreFilterShape], tuple[PreFilterResult | None, Status | None]] = split_result
post_filter_parts: Callable[[PostFilterShape], tuple[PostFilterResult | None, Status | None]] = split_result
placements_parts: Callable[[PlacementGenerateShape], tuple[list[Placement] | None, Status | None]] = split_result
placement_score_parts: Callable[[PlacementScoreShape], tuple[SupportsInt | None, Status | None]] = split_result
pod_group_post_filter_parts: Callable[
    [PodGroupPostFilterShape], tuple[PodGroupPostFilterResult | None, Status | None]
] = split_result


def permit_parts(out: PermitShape) -> tuple[Status | None, float]:
    """What a Permit plugin returned, as ``(status, timeout_seconds)`` (0 unless it gave one)."""
    if isinstance(out, tuple):
        return out[0], float(out[1] or 0)
    return out, 0.0


def status_label(status: Status | None) -> str:
    """The status as a metric label: upstream's code name."""
    return "Success" if status is None else status.code.upstream_name


def trace_value(status: Status | None) -> str:
    """The status as a recorded per-plugin result (``simulate``'s report, result annotations)."""
    if status is None or status.is_success():
        return "success"
    if status.is_skip():
        return "skipped"
    if status.is_wait():
        return "wait"
    return status.message() or status.code.upstream_name
