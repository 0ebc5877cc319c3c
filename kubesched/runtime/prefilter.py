"""PreFilter over a profile's plugins, as upstream's RunPreFilterPlugins: Skip, rejections (the most
useful verdict wins), and the intersection of the nodes each plugin allows."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from kubesched.framework.interface import CycleState, PreFilterResult
from kubesched.framework.status import Code, Status
from kubesched.framework.types import PodInfo
from kubesched.runtime.calls import PLAIN_RESULTS, BoundMethod, plugin_error, pre_filter_parts, trace_value

#: ``call(bound, point, state, pod)``: how the Framework calls a per-pod method (timed in sampled
#: cycles).
PluginCall = Callable[..., Awaitable[Any]]


async def run_pre_filter_plugins(
    plugins: Sequence[BoundMethod],
    call: PluginCall,
    state: CycleState,
    pod: PodInfo,
    trace: dict[str, Any] | None = None,
    timed: bool = True,
) -> tuple[PreFilterResult | None, Status | None, set[str]]:
    """Run ``plugins``' PreFilter in order. Returns the merged node restriction (None: all nodes),
    a non-success status when the pod cannot be scheduled, and the plugins that rejected it. A
    plugin that Skips is added to ``state.skip_filter_plugins``. Unless ``timed`` (a sampled
    cycle), a plain plugin is called directly rather than through ``call``."""
    result: PreFilterResult | None = None
    with_nodes: list[str] = []
    unschedulable: Status | None = None
    for b in plugins:
        try:
            if timed or b.is_async:
                out = await call(b, "PreFilter", state, pod)
            else:
                out = b.fn(state, pod)
                if type(out) not in PLAIN_RESULTS and inspect.isawaitable(out):
                    out = await out
            # The usual shapes read inline (no call per plugin); the rest by the typed reader.
            if out is None:
                r = status = None
            elif type(out) is tuple:
                r, status = out
            else:
                r, status = pre_filter_parts(out)
        except Exception as exc:  # noqa: BLE001
            return None, plugin_error("PreFilter", b.name, exc), set()
        if trace is not None:
            trace[b.name] = trace_value(status)
        if status is not None:
            if status.is_skip():
                state.skip_filter_plugins.add(b.name)
                continue
            if not status.is_success():
                status.with_plugin(b.name)
                if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE or status.code is Code.PENDING:
                    return None, status, {b.name}
                if status.code is Code.UNSCHEDULABLE:
                    # Keep going: a later plugin may still say UnschedulableAndUnresolvable,
                    # which is the more useful verdict (upstream does the same).
                    unschedulable = status
                    continue
                return (
                    None,
                    Status.as_error(f'running PreFilter plugin "{b.name}": {status.message()}', b.name),
                    set(),
                )
        if isinstance(r, PreFilterResult) and not r.all_nodes():
            with_nodes.append(b.name)
            result = r if result is None else result.merge(r)
            if result.node_names is not None and not result.node_names:
                if len(with_nodes) == 1:
                    msg = f"node(s) didn't satisfy plugin {with_nodes[0]}"
                else:
                    msg = f"node(s) didn't satisfy plugin(s) [{' '.join(sorted(with_nodes))}] simultaneously"
                return None, Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, msg), set(with_nodes)
    if unschedulable is not None:
        return None, unschedulable, {unschedulable.plugin}
    return result, None, set(with_nodes)
