import pytest

from kubesched.framework.interface import NodeScore
from kubesched.plugins.helper import default_normalize_score, go_div

CASES = [
    # (reverse, raw scores, normalized scores) — upstream's DefaultNormalizeScore table
    (False, [1, 2, 3, 4], [25, 50, 75, 100]),
    (True, [1, 2, 3, 4], [75, 50, 25, 0]),
    (False, [1000, 10, 20, 30], [100, 1, 2, 3]),
    (True, [1000, 10, 20, 30], [0, 99, 98, 97]),
    (False, [1, 1, 1, 1], [100, 100, 100, 100]),
    (False, [1000, 1, 1, 1], [100, 0, 0, 0]),
    (True, [0, 1, 1, 1], [100, 0, 0, 0]),
    (False, [0, 0, 0, 0], [0, 0, 0, 0]),
    (True, [0, 0, 0, 0], [100, 100, 100, 100]),
]


@pytest.mark.parametrize(
    ("reverse", "raw", "expected"),
    CASES,
    ids=[f"{'reverse' if r else 'forward'}-{'-'.join(map(str, raw))}" for r, raw, _ in CASES],
)
def test_default_normalize_score(reverse: bool, raw: list[int], expected: list[int]) -> None:
    scores = [NodeScore(f"n{i}", s) for i, s in enumerate(raw)]
    assert default_normalize_score(100, reverse, scores) is None
    assert [s.score for s in scores] == expected
    assert [s.name for s in scores] == [f"n{i}" for i in range(len(raw))]


def test_empty_list_is_fine() -> None:
    scores: list[NodeScore] = []
    default_normalize_score(100, True, scores)
    assert scores == []


@pytest.mark.parametrize(
    ("a", "b", "q"),
    [(7, 2, 3), (-7, 2, -3), (7, -2, -3), (-7, -2, 3), (0, 5, 0)],
    ids=["pos-pos", "neg-pos", "pos-neg", "neg-neg", "zero"],
)
def test_go_div_truncates_toward_zero(a: int, b: int, q: int) -> None:
    assert go_div(a, b) == q
