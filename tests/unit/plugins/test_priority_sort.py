import pytest

from kubesched.framework.types import QueuedPodInfo
from kubesched.plugins.priority_sort import PrioritySort
from kubesched.testing import make_pod

LOW, HIGH = 10, 100
T1, T2 = 1000.0, 1001.0


def qpi(priority: int | None, ts: float) -> QueuedPodInfo:
    b = make_pod("p")
    if priority is not None:
        b = b.priority(priority)
    return QueuedPodInfo(b.info(), ts)


@pytest.mark.parametrize(
    ("p1", "p2", "expected"),
    [
        (qpi(LOW, T1), qpi(HIGH, T2), False),
        (qpi(HIGH, T1), qpi(LOW, T2), True),
        (qpi(HIGH, T1), qpi(HIGH, T2), True),
        (qpi(HIGH, T2), qpi(HIGH, T1), False),
        (qpi(None, T2), qpi(-1, T1), True),
        (qpi(None, T1), qpi(0, T1), False),
    ],
    ids=[
        "p1 priority lower than p2",
        "p1 priority higher than p2",
        "equal priority, p1 queued earlier",
        "equal priority, p2 queued earlier",
        "absent priority counts as zero, above negative",
        "equal priority and time: not less",
    ],
)
def test_less(p1: QueuedPodInfo, p2: QueuedPodInfo, expected: bool) -> None:
    assert PrioritySort().less(p1, p2) is expected


def test_registers_no_events() -> None:
    assert PrioritySort().events_to_register() == []
