"""How an extension point's runner calls a per-pod plugin method: through :meth:`TimedCalls._call`,
which in a sampled cycle also times the call for the observer (the plugin execution metric).
"""

from __future__ import annotations

import inspect
import time
from typing import Any

from kubesched.framework.interface import CycleState
from kubesched.runtime.calls import PLAIN_RESULTS, BoundMethod, split_result, status_label
from kubesched.runtime.collaborators import PluginObserver


class TimedCalls:
    """The base of the extension points' runners (see :class:`kubesched.runtime.framework.Framework`)."""

    #: Receives ``plugin_execution(plugin, point, status, seconds)`` in sampled cycles.
    observer: PluginObserver | None

    # --- plugin metrics (sampled cycles only) -------------------------------------------------
    async def _call(self, b: BoundMethod, point: str, state: CycleState, *args: Any) -> Any:
        """Call a per-pod plugin method; in a sampled cycle, also time it for the observer."""
        observer = self.observer
        if observer is None or not state.record_plugin_metrics:
            # BoundMethod.call inline: one coroutine less per plugin call.
            result = b.fn(state, *args)
            if b.is_async or (type(result) not in PLAIN_RESULTS and inspect.isawaitable(result)):
                result = await result
            return result
        t0 = time.perf_counter()
        try:
            result = await b.call(state, *args)
        except BaseException:
            observer.plugin_execution(b.name, point, "Error", time.perf_counter() - t0)
            raise
        status = result[0] if point == "Permit" and isinstance(result, tuple) else split_result(result)[1]
        observer.plugin_execution(b.name, point, status_label(status), time.perf_counter() - t0)
        return result
