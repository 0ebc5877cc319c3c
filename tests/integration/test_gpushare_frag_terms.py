"""FGD's fragmentation terms, found by bisecting the node's GPUs in order of room, are the ones a
walk over the GPUs for every typical pod gives: for random nodes (any room per GPU, some GPUs
idle, full or overcommitted, CPU short or not, a model or none) and random typical-pod lists."""

from __future__ import annotations

from collections.abc import Sequence

from fuzzing import fuzz_settings
from gpushare_builders import gs
from hypothesis import given
from hypothesis import strategies as st
from kubesched_gpushare.fgd import frag_terms

MODELS = ["", "V100M16", "T4", "A10"]


def walked(cpu_left: int, left: Sequence[int], model: str, tp: gs.TypicalPodTable) -> list[int]:
    """Per typical pod, the node's idle milli-GPU it could not use, GPU by GPU."""
    total = sum(left)
    out = []
    for ok, cpu, m, count in zip(tp.access_list(model), tp.cpu_list, tp.milli_list, tp.count_list, strict=True):
        fit = sum(1 for x in left if x >= m)
        small = sum(x for x in left if x < m)
        out.append(small if ok and cpu_left >= cpu and fit >= count else total)
    return out


typical_pods = st.builds(
    lambda cpu, count, milli, model, share: gs.TypicalPod(
        cpu=f"{cpu}m", gpuCount=count, gpuMilli=milli if count else 0, model=model, weight=share
    ),
    st.integers(0, 64000),
    st.integers(0, 8),
    st.sampled_from([0, 100, 250, 300, 470, 500, 810, 1000]),
    st.sampled_from(["", "V100M16", "T4|A10"]),
    st.integers(1, 10),
)


@fuzz_settings(400)
@given(
    st.lists(typical_pods, min_size=1, max_size=12),
    st.lists(st.sampled_from([-200, 0, 100, 250, 300, 470, 500, 810, 1000]), max_size=8),
    st.integers(-1000, 96000),
    st.sampled_from(MODELS),
)
def test_bisected_terms_are_the_walked_terms(
    pods: list[gs.TypicalPod], left: list[int], cpu_left: int, model: str
) -> None:
    tp = gs.TypicalPodTable(pods)
    assert frag_terms(cpu_left, left, model, tp) == walked(cpu_left, left, model, tp)
