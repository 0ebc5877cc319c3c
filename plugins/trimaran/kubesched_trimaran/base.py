"""What the three plugins share: their args' load source, read through a :class:`Collector`, and
a PreScore that waits for a read when one is due."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

from kubesched import CycleState, Handle, NodeInfo, PodInfo, Status

from .args import TrimaranSpec
from .sources import Collector, make_source


def go_round(x: float) -> int:
    """Rounded half away from zero, as Go's ``math.Round``."""
    return int(math.copysign(math.floor(abs(x) + 0.5), x))


class TrimaranPlugin:
    """A Score plugin over measured load (see the subclasses)."""

    name = ""
    Args: type[TrimaranSpec] = TrimaranSpec

    def __init__(
        self, args: TrimaranSpec | None = None, handle: Handle | None = None, clock: Callable[[], float] = time.time
    ) -> None:
        self.args = args if args is not None else self.Args.model_validate({})
        self.handle = handle
        self.clock = clock
        self.collector = Collector(make_source(self.args, handle, clock), handle, clock)

    async def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        """Read the load source when a read is due, before the nodes are scored."""
        await self.collector.refresh()
        return None
