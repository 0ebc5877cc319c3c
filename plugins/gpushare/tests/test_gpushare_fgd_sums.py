"""FGD's weighted sums are the sums of its definition term for term, in the same order (so the very
same floats): a node's fragmentation and a move's change of it, for random nodes and typical pods."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest
from kubesched_gpushare import NodeGpus, TypicalPod, TypicalPodTable, node_fragmentation
from kubesched_gpushare.fgd import frag_delta, frag_terms
from kubesched_gpushare.gpu import accepts_model


def walked(cpu_left: int, left: Sequence[int], model: str, tp: TypicalPodTable) -> list[int]:
    total = sum(left)
    out = []
    for m, count, cpu, models in zip(tp.milli_list, tp.count_list, tp.cpu_list, tp.models):
        ok = m > 0 and accepts_model(models, model) and cpu_left >= cpu
        fit = sum(1 for x in left if x >= m)
        out.append(sum(x for x in left if x < m) if ok and fit >= count else total)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_sums_are_the_defined_sums(seed: int) -> None:
    rng = random.Random(seed)
    pods = []
    for _ in range(rng.randint(1, 40)):
        count = rng.choice([0, 1, 1, 2, 8])
        milli = rng.choice([100, 230, 470, 810, 1000]) if count == 1 else (1000 if count else 0)
        pods.append(
            TypicalPod(
                cpu=f"{rng.randrange(40000)}m",
                gpuCount=count,
                gpuMilli=milli,
                model=rng.choice(["", "T4"]),
                weight=rng.random(),
            )
        )
    tp = TypicalPodTable(pods)
    for _ in range(20):
        left = [rng.choice([0, 100, 190, 530, 1000]) for _ in range(rng.choice([0, 1, 2, 4, 8]))]
        cpu_left = rng.randrange(-1000, 64000)
        model = rng.choice(["T4", "V100M16", ""])
        terms = frag_terms(cpu_left, left, model, tp)
        assert terms == walked(cpu_left, left, model, tp)
        node = NodeGpus("n", 0, model, left, cpu_left)
        assert node_fragmentation(node, tp) == sum(p * f for p, f in zip(tp.shares, terms))
        after = frag_terms(cpu_left - 1000, [max(0, x - 100) for x in left], model, tp)
        assert frag_delta(terms, after, tp.shares) == sum(p * (b - a) for p, b, a in zip(tp.shares, terms, after))
