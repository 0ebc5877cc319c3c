"""The GPU indices a pod holds are read once per distinct annotation text: what ``parse_indices``
answers, and whether the indices fit the ask and the node, must be what reading them anew gives,
whatever was read before (texts that look alike, values that are not text)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from kubesched_gpushare import gpu
from kubesched_gpushare.gpu import GpuAsk

TEXTS: list[Any] = ["0", "1", "2-3", "3-2", "0-0", " 1 ", "1-", "-1", "x", "", " ", "7", "8", "0-1-2-3", None, 1, 1.0]


def _valid_anew(indices: tuple[int, ...] | None, ask: GpuAsk, count: int) -> bool:
    if indices is None:
        return False
    wanted = 1 if ask.shared else ask.count
    return len(indices) == wanted and len(set(indices)) == wanted and all(0 <= i < count for i in indices)


@pytest.mark.parametrize("seed", range(20))
def test_kept_indices_and_verdicts_are_the_ones_read_anew(seed: int) -> None:
    rng = random.Random(seed)
    gpu.KEPT_INDICES.clear()
    gpu.KEPT_VERDICTS.clear()
    for _ in range(200):
        text = rng.choice(TEXTS)
        got = gpu.parse_indices(text)
        assert got == gpu.read_indices(text)
        ask = rng.choice([GpuAsk(1, 500), GpuAsk(1, 1000), GpuAsk(2, 1000), GpuAsk(4, 1000)])
        count = rng.choice([0, 1, 2, 4, 8])
        assert gpu.indices_fit(got, ask, count) == _valid_anew(got, ask, count)
