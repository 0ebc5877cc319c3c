"""plugins/gpushare: each score's formula on small cases computed by hand from the artifact's
formulas, the batch forms against the per-node ones, and how typical pods are built."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from gpushare_builders import batch_of, gpu_node, gpu_pod, gs, typical
from test_gpushare import _random_cluster

from kubesched.framework.columns import NodeBatch, NodeColumns
from kubesched.framework.interface import CycleState, NodeScore
from kubesched.framework.types import PodInfo
from kubesched.testing import as_node_infos, framework_for, make_pod, score_nodes

# Node A: 32 CPUs (28 left after a 4-CPU pod), GPUs [700, 1000]. B: 64 CPUs, 8 GPUs, empty.
# C: 16 CPUs, one GPU, empty. D: 2 CPUs, one GPU.
NODES = [gpu_node("A", 2, cpu="32"), gpu_node("B", 8, cpu="64"), gpu_node("C", 1, cpu="16"), gpu_node("D", 1, cpu="2")]
BOUND = [gpu_pod("a", 300, index="0", node="A", cpu="4")]
POD = gpu_pod("p", 500, cpu="4")


def test_best_fit_raw_and_normalized() -> None:
    # A: 1 - ((28000-4000)/128000*.5 + (1700-500)/8000*.5) = 1 - (.09375 + .075) = .83125 -> 83
    # B: 1 - ((64000-4000)/128000*.5 + (8000-500)/8000*.5) = 1 - (.234375 + .46875) -> 29
    # C: 1 - ((16000-4000)/128000*.5 + (1000-500)/8000*.5) = 1 - (.046875 + .03125) -> 92
    raw = score_nodes(gs.BestFit, POD, NODES[:3], pods=BOUND, normalize=False)
    assert raw == {"A": 83, "B": 29, "C": 92}
    # min-max: (83-29)*100 // 63 = 85
    assert score_nodes(gs.BestFit, POD, NODES[:3], pods=BOUND) == {"A": 85, "B": 0, "C": 100}
    assert score_nodes(gs.BestFit, POD, NODES[1:2]) == {"B": 0}  # a single node (all equal) scores 0


def test_best_fit_is_an_error_where_the_pod_does_not_fit() -> None:
    with pytest.raises(AssertionError, match="free resource not enough"):
        score_nodes(gs.BestFit, POD, NODES[3:], normalize=False)


def test_dot_product() -> None:
    # A: (28000/128000)(4000/128000) + (1700/8000)(500/8000) = .0068359375 + .01328125; 1 - sum/2 -> 98
    # B: .5 * .03125 + 1 * .0625 = .078125; 1 - .0390625 = .9609375 -> 96
    # C: .125 * .03125 + .125 * .0625 = .01171875; 1 - .005859375 -> 99
    # D: 2 CPUs left, the pod asks 4: 0
    assert score_nodes(gs.DotProduct, POD, NODES, pods=BOUND) == {"A": 98, "B": 96, "C": 99, "D": 0}


@pytest.mark.parametrize(
    "gpus, bound, pod, expected",
    [
        (4, [], gpu_pod("p", 250), 29),  # untouched node: max(33 - 4, 4)
        (2, [], gpu_pod("p", 250), 31),  # max(33 - 2, 2)
        # shared GPUs [300, 800, 1000, 1000]: the pod takes the 300 one: 100 - (300*100//1000)//10 = 97
        (4, [gpu_pod("a", 700, index="0", node="n"), gpu_pod("b", 200, index="1", node="n")], gpu_pod("p", 250), 97),
        # [100, 1000]: 250 needs the free GPU: max(50 - 1, 33)
        (2, [gpu_pod("a", 900, index="0", node="n")], gpu_pod("p", 250), 49),
        # two whole GPUs on a used node: max(50 - 2, 33)
        (4, [gpu_pod("a", 700, index="0", node="n")], gpu_pod("p", 1000, count=2), 48),
        (4, [gpu_pod("a", 700, index="0", node="n")], gpu_pod("p"), 0),  # no GPU asked
    ],
    ids=["untouched 4", "untouched 2", "shared", "free GPU of a used node", "whole GPUs", "CPU pod"],
)
def test_gpu_packing(gpus: int, bound: list[Any], pod: Any, expected: int) -> None:
    assert score_nodes(gs.GpuPacking, pod, [gpu_node("n", gpus)], pods=bound) == {"n": expected}


@pytest.mark.parametrize(
    "gpus, bound, pod, expected",
    [
        # only shared pods here: 25*(8000-1700)//8000 + 75 = 19 + 75
        (2, [gpu_pod("a", 300, index="0", node="n")], gpu_pod("p", 200), 94),
        # shared and one-GPU pods, 2500 idle: 25*5500//8000 + 50 = 17 + 50
        (
            4,
            [gpu_pod("a", 500, index="0", node="n"), gpu_pod("b", 1000, count=1, index="1", node="n")],
            gpu_pod("p", 200),
            67,
        ),
        (8, [], gpu_pod("p", 200), 25),  # no GPU pods: 0 + 25
        # only other kinds, nothing idle: 25*8000//8000 + 0
        (2, [gpu_pod("a", 1000, count=2, index="0-1", node="n")], gpu_pod("p", 200), 25),
        # the same kind of whole-GPU pod: 25*(8000-2000)//8000 + 75 = 18 + 75
        (4, [gpu_pod("a", 1000, count=2, index="0-1", node="n")], gpu_pod("p", 1000, count=2), 93),
        (2, [gpu_pod("a", 300, index="0", node="n")], gpu_pod("p"), 0),
    ],
    ids=["same kind alone", "same kind among others", "no GPU pods", "other kinds", "same whole kind", "CPU pod"],
)
def test_gpu_clustering(gpus: int, bound: list[Any], pod: Any, expected: int) -> None:
    assert score_nodes(gs.GpuClustering, pod, [gpu_node("n", gpus)], pods=bound) == {"n": expected}


# (id, node GPUs, bound, node CPUs, typical pods, pod, FGD score, FGD's GPUs)
FGD_CASES: list[tuple[str, int, list[Any], str, list[dict[str, Any]], Any, int, tuple[int, ...] | None]] = [
    (
        # [1000, 600, 300], typical 300 and 600 at one half each; before: .5*0 + .5*300 = 150.
        # GPU0 -> [750,600,300]: 150, 50; GPU1 -> [1000,350,300]: .5*650 = 325, int(100*sig(-.175)) = 45;
        # GPU2 -> [1000,600,50]: .5*50 + .5*50 = 50, int(100*sig(.1)) = 52
        "the best GPU scores the node",
        3,
        [gpu_pod("a", 400, index="1", node="n"), gpu_pod("b", 700, index="2", node="n")],
        "64",
        typical(("1", 1, 300, 0.5), ("1", 1, 600, 0.5)),
        gpu_pod("p", 250),
        52,
        (2,),
    ),
    (
        # [1000, 400], typical 200: GPU0 -> [700,400] still 0, 50; GPU1 -> [1000,100]: 100 unusable, 47
        "not the tightest GPU",
        2,
        [gpu_pod("a", 600, index="1", node="n")],
        "32",
        typical(("1", 1, 200, 1.0)),
        gpu_pod("p", 300),
        50,
        (0,),
    ),
    (
        # [1000,1000,1000,500], typical 2x1000: before 500 (GPU 3 too small); after [0,0,1000,500]
        # one GPU fits, two are needed: all 1500 idle -> delta -1000, int(100*sig(-1)) = 26
        "whole GPUs",
        4,
        [gpu_pod("a", 500, index="3", node="n")],
        "64",
        typical(("1", 2, 1000, 1.0)),
        gpu_pod("p", 1000, count=2),
        26,
        (0, 1),
    ),
    (
        # 8 CPUs, one GPU; typical pod 6 CPUs + 500: before 0; a 4-CPU pod leaves 4 CPUs: the GPU
        # becomes unusable (1000) -> 26
        "a CPU pod fragments the GPU it strands",
        1,
        [],
        "8",
        typical(("6", 1, 500, 1.0)),
        gpu_pod("p", cpu="4"),
        26,
        None,
    ),
    (
        # typical pods of another model count all idle GPU: 1000 -> 500, int(100*sig(.5)) = 62
        "typical pods of another model",
        1,
        [],
        "64",
        typical(("1", 1, 500, 1.0, "T4")),
        gpu_pod("p", 500),
        62,
        (0,),
    ),
    (
        # [1000] and a typical 500: the pod's 500 leaves exactly room for one: nothing unusable, 50
        "room left exactly for a typical pod",
        1,
        [],
        "64",
        typical(("1", 1, 500, 1.0)),
        gpu_pod("p", 500),
        50,
        (0,),
    ),
    (
        # CPU-only typical pods count all idle GPU too: 2000 -> 1500 with the pod on either GPU
        "CPU-only typical pods",
        2,
        [],
        "64",
        typical(("2", 0, 0, 1.0)),
        gpu_pod("p", 500),
        62,
        (0,),
    ),
]


@pytest.mark.parametrize(
    "gpus, bound, cpu, tp, pod, expected, choice", [c[1:] for c in FGD_CASES], ids=[c[0] for c in FGD_CASES]
)
def test_fgd(
    gpus: int,
    bound: list[Any],
    cpu: str,
    tp: list[dict[str, Any]],
    pod: Any,
    expected: int,
    choice: tuple[int, ...] | None,
) -> None:
    args = {"typicalPods": tp}
    nodes = [gpu_node("n", gpus, cpu=cpu)]
    assert score_nodes(gs.FGD, pod, nodes, args=args, pods=bound) == {"n": expected}
    infos = as_node_infos(nodes, bound)
    plugin = framework_for(gs.FGD, args, nodes=infos).plugins["FGD"]
    pi = PodInfo(pod.obj())
    assert plugin.choose_gpus(plugin.ledger.node(infos[0]), gs.gpu_ask_of(pi.pod), 4000) == choice
    assert list(plugin.score_nodes(CycleState(), pi, batch_of(infos))) == [expected]


def test_fgd_gives_a_pod_without_requests_100() -> None:
    args = {"typicalPods": typical(("1", 1, 500, 1.0))}
    assert score_nodes(gs.FGD, make_pod("empty"), [gpu_node("n", 1)], args=args) == {"n": 100}


def test_node_fragmentation() -> None:
    """[1000, 600, 300] with 20 CPUs left; typical: 300 milli (0.5: the 0 milli below it), 600 on
    2 GPUs (0.25: 300 below), 1000 with 32 CPUs (0.25: lacks CPU, all 1900)."""
    infos = as_node_infos(
        [gpu_node("n", 3, cpu="24")],
        [gpu_pod("a", 400, index="1", node="n"), gpu_pod("b", 700, index="2", node="n")],
    )
    args = gs.FGDArgs.model_validate(
        {"typicalPods": typical(("1", 1, 300, 0.5), ("1", 2, 600, 0.25), ("32", 1, 1000, 0.25))}
    )
    node = framework_for(gs.GpuShare, nodes=infos).plugins["GpuShare"].ledger.node(infos[0])
    assert node.cpu_left == 16000
    assert gs.node_fragmentation(node, args.table) == pytest.approx(0.25 * 300 + 0.25 * 1900)


def test_random_score_is_seeded_and_gives_one_node_100() -> None:
    nodes = [gpu_node(f"n{i}", 1) for i in range(6)]
    infos = as_node_infos(nodes)

    def winners(seed: int) -> list[str]:
        plugin = framework_for(gs.RandomScore, {"seed": seed}, nodes=infos).plugins["RandomScore"]
        out = []
        for _ in range(60):
            state = CycleState()
            pi = PodInfo(gpu_pod("p", 100).obj())
            plugin.pre_score(state, pi, infos)
            scores = [plugin.score(state, pi, ni) for ni in infos]
            assert sorted(scores) == [0] * 5 + [100]
            assert list(plugin.score_nodes(state, pi, batch_of(infos))) == scores
            out.append(infos[scores.index(100)].name)
        return out

    assert winners(3) == winners(3)
    assert winners(3) != winners(4)
    assert set(winners(3)) == {ni.name for ni in infos}


SCORERS = [
    (
        gs.FGD,
        {"typicalPods": typical(("4", 1, 500, 0.4), ("8", 1, 1000, 0.3), ("2", 0, 0, 0.2), ("4", 2, 1000, 0.1, "T4"))},
    ),
    (gs.BestFit, None),
    (gs.DotProduct, None),
    (gs.GpuPacking, None),
    (gs.GpuClustering, None),
]


@pytest.mark.parametrize("plugin, args", SCORERS, ids=[c[0].name for c in SCORERS])  # type: ignore[attr-defined]
@pytest.mark.parametrize("seed", [11, 12])
def test_batch_scores_agree_with_the_per_node_scores(plugin: Any, args: Any, seed: int) -> None:
    infos = _random_cluster(random.Random(seed), 40)
    fw = framework_for(plugin, args, nodes=infos)
    p = fw.plugins[plugin.name]
    share = fw.plugins.get("GpuShare") or framework_for(gs.GpuShare, nodes=infos).plugins["GpuShare"]
    asks = [gpu_pod("s", 300), gpu_pod("s2", 700), gpu_pod("w", 1000, count=1), gpu_pod("w2", 1000, count=2)]
    asks.append(gpu_pod("c", cpu="3"))
    compared = 0
    for builder in asks:
        pod = PodInfo(builder.obj())
        state = CycleState()
        share.pre_filter(state, pod)
        cpu = gs.gpu.pod_cpu(pod)
        feasible = [
            ni
            for ni in infos
            if share.filter(state, pod, ni) is None and ni.allocatable.milli_cpu - ni.requested.milli_cpu >= cpu
        ]
        per_node = [p.score(state, pod, ni) for ni in feasible]
        batch = p.score_nodes(state, pod, batch_of(feasible))
        assert [int(x) for x in batch] == per_node, builder.obj()["metadata"]["name"]
        compared += len(set(per_node)) > 1
    assert compared >= 3  # the scores told nodes apart


def test_min_max_normalization_matches_the_batch_form() -> None:
    plugin = framework_for(gs.BestFit).plugins["BestFit"]
    scores = [NodeScore("a", 83), NodeScore("b", 29), NodeScore("c", 92), NodeScore("d", 30)]
    plugin.normalize_score(CycleState(), None, scores)
    assert [s.score for s in scores] == [85, 0, 100, 1]
    assert list(plugin.normalize_scores(CycleState(), None, [83, 29, 92, 30])) == [85, 0, 100, 1]


# --- typical pods ----------------------------------------------------------------------------------


def _workload() -> list[Any]:
    """3 shared (4 CPUs, 500), 2 one-GPU (8 CPUs), 1 two-GPU (8 CPUs), 1 CPU pod (2 CPUs)."""
    pods = [gpu_pod(f"s{i}", 500, cpu="4") for i in range(3)]
    pods += [gpu_pod(f"w{i}", 1000, count=1, cpu="8") for i in range(2)]
    pods += [gpu_pod("w2", 1000, count=2, cpu="8"), gpu_pod("c", cpu="2")]
    return [p.obj() for p in pods]


def _kinds(pods: list[gs.TypicalPod]) -> list[tuple[int, int, int, float]]:
    return [(p.milli_cpu, p.gpu_count, p.gpu_milli, round(p.share, 9)) for p in pods]


@pytest.mark.parametrize(
    "options, expected",
    [
        # 60% of 7 = 4.2 pods: the 3 shared and the 2 one-GPU pods cover 5; 3/5 and 2/5
        ({"popularity_threshold": 60}, [(4000, 1, 500, 0.6), (8000, 1, 1000, 0.4)]),
        # everything: ties between the kinds of one pod go to the larger (8 CPUs before 2)
        (
            {"popularity_threshold": 100},
            [
                (4000, 1, 500, round(3 / 7, 9)),
                (8000, 1, 1000, round(2 / 7, 9)),
                (8000, 2, 1000, round(1 / 7, 9)),
                (2000, 0, 0, round(1 / 7, 9)),
            ],
        ),
        # without CPU pods, 60% of 6 = 3.6: shared (3) then one-GPU (2)
        ({"popularity_threshold": 60, "involve_cpu_pods": False}, [(4000, 1, 500, 0.6), (8000, 1, 1000, 0.4)]),
        # whole GPUs weigh 1 + count: one-GPU 2x2 = 4, two-GPU 3, shared 3 (the larger kind first)
        (
            {"popularity_threshold": 100, "gpu_res_weight": 1.0},
            [
                (8000, 1, 1000, round(4 / 11, 9)),
                (8000, 2, 1000, round(3 / 11, 9)),
                (4000, 1, 500, round(3 / 11, 9)),
                (2000, 0, 0, round(1 / 11, 9)),
            ],
        ),
        # step 2 adds kinds two at a time: 95% of 7 needs 3 kinds, step 2 keeps 4
        (
            {"increase_step": 2},
            [
                (4000, 1, 500, round(3 / 7, 9)),
                (8000, 1, 1000, round(2 / 7, 9)),
                (8000, 2, 1000, round(1 / 7, 9)),
                (2000, 0, 0, round(1 / 7, 9)),
            ],
        ),
        # the experiments' defaults (95%, step 1): 3 + 2 + 1 = 6 of 7 < 6.65, so all four
        (
            {},
            [
                (4000, 1, 500, round(3 / 7, 9)),
                (8000, 1, 1000, round(2 / 7, 9)),
                (8000, 2, 1000, round(1 / 7, 9)),
                (2000, 0, 0, round(1 / 7, 9)),
            ],
        ),
    ],
    ids=["60%", "100%", "without CPU pods", "GPU weight", "step 2", "defaults"],
)
def test_typical_pods(options: dict[str, Any], expected: list[tuple[int, int, int, float]]) -> None:
    assert _kinds(gs.typical_pods(_workload(), **options)) == expected


def test_typical_pods_keep_three_of_four_kinds_and_renormalize() -> None:
    """85% of 7 = 5.95: the first three kinds cover 6 pods; shares 3/6, 2/6, 1/6."""
    got = gs.typical_pods(_workload(), popularity_threshold=85)
    assert _kinds(got) == [(4000, 1, 500, 0.5), (8000, 1, 1000, round(2 / 6, 9)), (8000, 2, 1000, round(1 / 6, 9))]


def test_typical_pods_round_trip_through_a_file(tmp_path: Any) -> None:
    pods = gs.typical_pods(_workload())
    path = tmp_path / "typical.yaml"
    gs.write_typical_pods(path, pods)
    assert gs.load_typical_pods(path) == pods
    args = gs.FGDArgs.model_validate({"typicalPodsFile": str(path)})
    assert args.table.shares == [p.share for p in pods]


@pytest.mark.parametrize(
    "args, message",
    [
        ({}, "give typicalPods or typicalPodsFile"),
        ({"typicalPodsFile": "/nonexistent/typical.yaml"}, "no such file"),
        ({"typicalPods": [{"cpu": "1", "gpuCount": 1, "gpuMilli": 500}]}, "give percentage or weight"),
        ({"typicalPods": [{"cpu": "lots", "percentage": 1}]}, "quantities must match"),
    ],
    ids=["nothing", "missing file", "no share", "bad cpu"],
)
def test_fgd_args_are_checked(args: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        gs.FGDArgs.model_validate(args)


def test_weights_are_scaled_to_shares() -> None:
    args = gs.FGDArgs.model_validate({"typicalPods": [{"cpu": "1", "weight": 3}, {"cpu": "2", "weight": 1}]})
    assert args.table.shares == [0.75, 0.25]


def test_fgd_batch_scores_kept_per_kind_of_pod_follow_the_nodes_that_change() -> None:
    infos = _random_cluster(random.Random(5), 30)
    fw = framework_for(gs.FGD, SCORERS[0][1], nodes=infos)
    p = fw.plugins["FGD"]
    cols = NodeColumns(infos)
    batch = NodeBatch(cols, np.arange(len(infos)))
    pod = PodInfo(gpu_pod("s", 300).obj())
    state = CycleState()
    first = [int(x) for x in p.score_nodes(state, pod, batch)]
    assert first == [p.score(state, pod, ni) for ni in infos]
    # A pod of the same kind lands on every other node with room; the kept scores must follow.
    changed = 0
    for i, ni in enumerate(infos[::2]):
        room = [g for g, x in enumerate(p.ledger.node(ni).left) if x >= 300]
        if room:
            ni.add_pod(PodInfo(gpu_pod(f"x{i}", 300, index=str(room[0]), node=ni.name, cpu="1").obj()))
            cols.set_row(2 * i, ni)
            changed += 1
    second = [int(x) for x in p.score_nodes(state, pod, batch)]
    assert changed >= 3
    assert second == [p.score(state, pod, ni) for ni in infos]
    assert second != first
