"""A pod list is parsed once per process and handed out as copies: a second read gives the same
pods, each with objects of its own — what a replay wrote into the first read's objects is not in
the second — and a list refused is refused again."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.research import ReplayError
from kubesched.research import trace as trace_module
from kubesched.research.trace import read_pods

HEADER = (
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
)
ROWS = [
    "p0,12000,16384,1,1000,,LS,Running,0,12537496,0",
    "p1,6000,12288,1,460,V100M16|T4,LS,Running,427061,12902960,427061",
    "p2,4000,8192,0,0,,BE,Running,5,,5",
    "p3,8000,8192,2,1000,,LS,Running,7,90,7",
]


def fields(pods: list[trace_module.TracePod]) -> list[tuple[object, ...]]:
    return [(p.name, p.cpu_milli, p.memory_mib, p.gpu_count, p.gpu_milli, p.created, p.deleted, p.obj) for p in pods]


@pytest.mark.parametrize("churn", [False, True], ids=["arrivals", "churn"])
def test_a_second_read_gives_the_same_pods_with_objects_of_their_own(tmp_path: Path, churn: bool) -> None:
    path = tmp_path / "pods.csv"
    path.write_text(HEADER + "\n".join(ROWS) + "\n")
    trace_module._PODS.clear()
    first = read_pods(path, churn=churn)
    parsed = trace_module._read_pods(path, churn=churn)  # what parsing anew gives
    assert fields(first) == fields(parsed)
    for p in first:  # as a replay does
        p.obj["spec"]["schedulerName"] = "elsewhere"
        p.obj["metadata"]["labels"]["touched"] = "yes"
    second = read_pods(path, churn=churn)
    assert fields(second) == fields(parsed)
    assert all(a.obj is not b.obj for a, b in zip(first, second, strict=True))


def test_a_refused_list_is_refused_every_time(tmp_path: Path) -> None:
    path = tmp_path / "pods.csv"
    path.write_text(HEADER + "p0,12000,16384,1,0,,LS,Running,0,,0\n")
    trace_module._PODS.clear()
    for _ in range(2):
        with pytest.raises(ReplayError, match="gpu_milli"):
            read_pods(path)


def test_a_shared_read_hands_out_the_kept_objects_and_scheduled_by_leaves_them_alone(tmp_path: Path) -> None:
    path = tmp_path / "pods.csv"
    path.write_text(HEADER + "\n".join(ROWS) + "\n")
    trace_module._PODS.clear()
    shared = read_pods(path, shared=True)
    parsed = trace_module._read_pods(path)
    assert fields(shared) == fields(parsed)
    assert [p.obj for p in read_pods(path, shared=True)] == [p.obj for p in shared]
    for p in shared:
        mine = p.scheduled_by("elsewhere")
        assert mine.obj["spec"]["schedulerName"] == "elsewhere"
        assert fields([mine])[0][:7] == fields([p])[0][:7]
    # Neither the kept objects nor a later copied read saw the scheduler's name.
    assert fields(shared) == fields(parsed)
    assert fields(read_pods(path)) == fields(parsed)
