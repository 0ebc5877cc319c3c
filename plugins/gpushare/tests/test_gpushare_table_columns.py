"""What the ledger keeps says what the per-GPU facts say: for random clusters, a row's ``max_left``
answers "has some GPU room for m milli" exactly as the row's GPUs do, for every m; and the kept
verdicts of a set of models are the verdicts made anew, whatever models were added since."""

from __future__ import annotations

import random

import numpy as np
import pytest
from gpushare_random import random_cluster
from kubesched_gpushare.gpu import accepts_model
from kubesched_gpushare.ledger import GpuLedger


@pytest.mark.parametrize("seed", range(20))
def test_max_left_answers_as_the_gpus_do(seed: int) -> None:
    rng = random.Random(seed)
    cols = random_cluster(rng, rng.randint(1, 24))
    table = GpuLedger().table(cols)
    table.refresh(np.arange(cols.n, dtype=np.intp))
    for m in (-1, 0, 1, 100, 250, 470, 500, 999, 1000, 1001):
        assert (table.max_left >= m).tolist() == (table.left >= m).any(axis=1).tolist()
    for r in range(cols.n):
        ng = table.ledger.node(cols.node(r))
        assert table.max_left[r] == max(ng.left, default=0)


@pytest.mark.parametrize("seed", range(20))
def test_kept_model_verdicts_are_the_verdicts_made_anew(seed: int) -> None:
    rng = random.Random(seed)
    ledger = GpuLedger()
    pool = ["A", "B", "C", "D", ""]
    for _ in range(60):
        if rng.random() < 0.3:
            ledger.model_code(rng.choice(pool) + str(rng.randrange(3)))
        models = rng.choice([None, frozenset(rng.sample(pool + ["A0", "B1"], rng.randint(1, 3)))])
        kept = ledger.accepting(models)
        assert kept.tolist() == [accepts_model(models, m) for m in ledger.models]
        assert not kept.flags.writeable
