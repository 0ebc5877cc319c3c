"""plugins/gpushare: GpuShare's Filter, Reserve per policy, PreBind, usage derived from pods, the
six configurations, and a run through the simulator (the openb trace where present)."""

from __future__ import annotations

import asyncio
import json
import random
import tomllib
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import make_harness
from gpushare_builders import CONFIGS, PACKAGE, PLUGINS, batch_of, cpu_node, gpu_node, gpu_pod, gs, registry, typical
from polling import eventually_sync

from kubesched.config import load_config, parse_config
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.sim.run.simulate import simulate
from kubesched.sim.scenario.openb import TRACE_ABSENT, load_openb, trace_dir
from kubesched.sim.scenario.reading import parse_scenario
from kubesched.testing import as_node_infos, filter_nodes, framework_for, make_node, plugin_framework, sim_serve_process

MODEL_MISMATCH = gs.gpushare.MODEL_MISMATCH
NO_FREE_GPUS = gs.gpushare.NO_FREE_GPUS
NO_GPU = gs.gpushare.NO_GPU
NO_GPU_ROOM = gs.gpushare.NO_GPU_ROOM
TOO_FEW_GPUS = gs.gpushare.TOO_FEW_GPUS
POLICIES = ["FGD", "BestFit", "DotProduct", "GpuPacking", "GpuClustering", "Random"]

# --- Filter ----------------------------------------------------------------------------------------

# (id, nodes, pods already bound there, the pod, {node: expected reason or None}, expected code)
FILTER_CASES: list[tuple[str, list[Any], list[Any], Any, dict[str, str | None], Code | None]] = [
    (
        "a sharing pod fits on one GPU with room",
        [gpu_node("n", 2)],
        [gpu_pod("a", 600, index="0", node="n"), gpu_pod("b", 700, index="1", node="n")],
        gpu_pod("p", 400),
        {"n": None},
        None,
    ),
    (
        "700 milli free in total is not room for 500 on one GPU",
        [gpu_node("n", 2)],
        [gpu_pod("a", 600, index="0", node="n"), gpu_pod("b", 700, index="1", node="n")],
        gpu_pod("p", 500),
        {"n": NO_GPU_ROOM},
        Code.UNSCHEDULABLE,
    ),
    (
        "whole GPUs must be untouched: 100 milli in use spoils one",
        [gpu_node("four", 4), gpu_node("three", 4)],
        [gpu_pod("a", 100, index="0", node="four"), gpu_pod("b", 100, index="2", node="three")],
        gpu_pod("p", 1000, count=4),
        {"four": NO_FREE_GPUS, "three": NO_FREE_GPUS},
        Code.UNSCHEDULABLE,
    ),
    (
        "three whole GPUs beside a shared one",
        [gpu_node("n", 4)],
        [gpu_pod("a", 100, index="0", node="n")],
        gpu_pod("p", 1000, count=3),
        {"n": None},
        None,
    ),
    (
        "a node with fewer GPUs than asked",
        [gpu_node("n", 2)],
        [],
        gpu_pod("p", 1000, count=4),
        {"n": TOO_FEW_GPUS},
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ),
    (
        "a model constraint picks the node of that model",
        [gpu_node("t4", 1, model="T4"), gpu_node("v100", 1, model="V100M16")],
        [],
        gpu_pod("p", 500, model="V100M16|V100M32"),
        {"t4": MODEL_MISMATCH, "v100": None},
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ),
    (
        "a node without GPUs",
        [cpu_node("cpu")],
        [],
        gpu_pod("p", 300),
        {"cpu": NO_GPU},
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    ),
    (
        "a pod without GPUs passes a full GPU node and a CPU node",
        [gpu_node("n", 1), cpu_node("cpu")],
        [gpu_pod("a", 1000, count=1, index="0", node="n")],
        gpu_pod("p"),
        {"n": None, "cpu": None},
        None,
    ),
    (
        "the artifact's node resource and model label",
        [
            make_node("n")
            .capacity(cpu="64", memory="64Gi", pods="110", **{"alibabacloud.com/gpu-count": "2"})
            .label("alibabacloud.com/gpu-card-model", "P100")
        ],
        [gpu_pod("a", 1000, count=1, index="1", node="n")],
        gpu_pod("p", 1000, count=1, model="P100"),
        {"n": None},
        None,
    ),
]


@pytest.mark.parametrize(
    "nodes, bound, pod, expected, code", [c[1:] for c in FILTER_CASES], ids=[c[0] for c in FILTER_CASES]
)
def test_filter(
    nodes: list[Any], bound: list[Any], pod: Any, expected: dict[str, str | None], code: Code | None
) -> None:
    statuses = filter_nodes(gs.GpuShare, pod, nodes, pods=bound)
    assert {n: (s.reasons[0] if s is not None else None) for n, s in statuses.items()} == expected
    rejected = [s for s in statuses.values() if s is not None]
    assert all(s.code is code for s in rejected)


@pytest.mark.parametrize(
    "annotations, message",
    [
        (
            {"alibabacloud.com/gpu-milli": "500", "alibabacloud.com/gpu-count": "2"},
            "a pod sharing a GPU asks for one GPU",
        ),
        ({"alibabacloud.com/gpu-milli": "lots"}, "annotation alibabacloud.com/gpu-milli: not an integer: 'lots'"),
        ({"alibabacloud.com/gpu-milli": "1500"}, "must be within 0..1000, got 1500"),
        ({"alibabacloud.com/gpu-milli": "1000", "alibabacloud.com/gpu-count": "-1"}, "cannot be negative"),
    ],
    ids=["several shared GPUs", "not a number", "more than a GPU", "negative count"],
)
def test_a_malformed_ask_is_refused_at_prefilter_naming_the_annotation(
    annotations: dict[str, str], message: str
) -> None:
    pod = gpu_pod("p")
    for k, v in annotations.items():
        pod.annotation(k, v)
    statuses = filter_nodes(gs.GpuShare, pod, [gpu_node("n", 8)])
    status = statuses["n"]
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert message in status.reasons[0]


def test_gpu_milli_alone_asks_for_one_gpu() -> None:
    ask = gs.gpu_ask_of(gpu_pod("p", 300).obj())
    assert (ask.count, ask.milli, ask.shared, ask.models) == (1, 300, True, None)
    assert gs.gpu_ask_of(gpu_pod("p", 1000, count=2, model="|A||B").obj()).models == frozenset({"A", "B"})
    assert not gs.gpu_ask_of(gpu_pod("p", 0, count=3).obj()).wants_gpu


def _random_cluster(rng: random.Random, n: int) -> list[NodeInfo]:
    """Nodes of 0..8 GPUs and two models, with shared and whole-GPU pods bound (annotated)."""
    nodes, pods = [], []
    for i in range(n):
        gpus = rng.choice([0, 1, 2, 4, 8, 8])
        name = f"n{i}"
        nodes.append(gpu_node(name, gpus, model=rng.choice(["V100M16", "T4"]), cpu=str(rng.choice([8, 32, 96]))))
        left = [1000] * gpus
        for j in range(rng.randrange(6)):
            if not gpus:
                break
            if rng.random() < 0.6:
                g = rng.randrange(gpus)
                milli = rng.choice([100, 250, 500, 700])
                if left[g] >= milli:
                    left[g] -= milli
                    pods.append(gpu_pod(f"{name}-s{j}", milli, index=str(g), node=name, cpu="1"))
            else:
                free = [g for g in range(gpus) if left[g] == 1000]
                k = min(len(free), rng.choice([1, 2]))
                if k:
                    for g in free[:k]:
                        left[g] = 0
                    index = "-".join(str(g) for g in free[:k])
                    pods.append(gpu_pod(f"{name}-w{j}", 1000, count=k, index=index, node=name, cpu="2"))
    return as_node_infos(nodes, pods)


ASKS = [
    gpu_pod("shared", 300),
    gpu_pod("shared-big", 800, model="T4"),
    gpu_pod("one", 1000, count=1),
    gpu_pod("two", 1000, count=2, model="V100M16"),
    gpu_pod("eight", 1000, count=8),
    gpu_pod("cpu", cpu="6"),
]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batch_filter_agrees_with_the_per_node_filter(seed: int) -> None:
    infos = _random_cluster(random.Random(seed), 40)
    fw = framework_for(gs.GpuShare, nodes=infos)
    plugin = fw.plugins["GpuShare"]
    seen: set[tuple[str, bool]] = set()
    for builder in ASKS:
        pod = PodInfo(builder.obj())
        state = CycleState()
        plugin.pre_filter(state, pod)
        batch = [bool(x) for x in plugin.filter_nodes(state, pod, batch_of(infos))]
        per_node = [plugin.filter(state, pod, ni) is None for ni in infos]
        assert batch == per_node, pod.name
        seen.update((pod.name, x) for x in per_node)
    # The comparison means something only if each GPU ask both passed and failed somewhere.
    for name in ("shared", "shared-big", "one", "two"):
        assert {(name, True), (name, False)} <= seen, name


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_batch_filter_statuses_are_the_per_node_statuses(seed: int) -> None:
    infos = _random_cluster(random.Random(seed), 40)
    fw = framework_for(gs.GpuShare, nodes=infos)
    plugin = fw.plugins["GpuShare"]
    reasons: set[str] = set()
    for builder in ASKS:
        pod = PodInfo(builder.obj())
        state = CycleState()
        plugin.pre_filter(state, pod)
        bulk = plugin.filter_statuses(state, pod, batch_of(infos))
        per_node = [plugin.filter(state, pod, ni) for ni in infos]
        assert [None if s is None else (s.code, s.reasons) for s in bulk] == [
            None if s is None else (s.code, s.reasons) for s in per_node
        ], pod.name
        reasons.update(r for s in per_node if s is not None for r in s.reasons)
    # Every reason the filter gives came up, so each was compared.
    assert reasons == {
        gs.gpushare.NO_GPU,
        gs.gpushare.MODEL_MISMATCH,
        gs.gpushare.TOO_FEW_GPUS,
        gs.gpushare.NO_GPU_ROOM,
        gs.gpushare.NO_FREE_GPUS,
    }


# --- Reserve / Unreserve ---------------------------------------------------------------------------

# left per GPU [1000, 300, 600, 300]
RESERVE_BOUND = [
    gpu_pod("b1", 700, index="1", node="n"),
    gpu_pod("b2", 400, index="2", node="n"),
    gpu_pod("b3", 700, index="3", node="n"),
]


@pytest.mark.parametrize(
    "selection, pod, expected, left",
    [
        ("best", gpu_pod("p", 250), (1,), [1000, 50, 600, 300]),
        ("worst", gpu_pod("p", 250), (0,), [750, 300, 600, 300]),
        ("best", gpu_pod("p", 400), (2,), [1000, 300, 200, 300]),
        ("best", gpu_pod("p", 1000, count=1), (0,), [0, 300, 600, 300]),
        ("worst", gpu_pod("p", 1000, count=1), (0,), [0, 300, 600, 300]),
        ("random", gpu_pod("p", 1000, count=1), (0,), [0, 300, 600, 300]),
    ],
    ids=[
        "best: least room, lowest index on a tie",
        "worst: most room",
        "best: only one GPU has 400",
        "whole GPU under best",
        "whole GPU under worst",
        "whole GPU under random",
    ],
)
def test_reserve_picks_gpus_by_policy_and_unreserve_gives_them_back(
    selection: str, pod: Any, expected: tuple[int, ...], left: list[int]
) -> None:
    with plugin_framework(
        gs.GpuShare, args={"gpuSelection": selection}, nodes=[gpu_node("n", 4)], pods=RESERVE_BOUND
    ) as fw:
        plugin, pi, node = fw.plugin(), fw.pod_info(pod), fw.node("n")
        assert fw.pre_filter(pod).status is None
        assert fw.reserve(pod, "n") is None
        assert plugin.ledger.reservation(pi.uid, "n") == expected
        # The scheduler assumes the pod on the node: its GPUs count as used, though the pod has
        # no annotation yet.
        node.add_pod(pi.with_node("n"))
        assert plugin.ledger.node(node).left == left
        fw.unreserve(pod, "n")
        assert plugin.ledger.reservation(pi.uid, "n") is None
        node.remove_pod(pi)
        assert plugin.ledger.node(node).left == [1000, 300, 600, 300]


def test_random_selection_is_seeded_and_draws_every_gpu_that_fits() -> None:
    infos = as_node_infos([gpu_node("n", 4)], RESERVE_BOUND)

    def draws(seed: int) -> list[tuple[int, ...] | None]:
        plugin = framework_for(gs.GpuShare, {"gpuSelection": "random", "seed": seed}, nodes=infos).plugins["GpuShare"]
        node = plugin.ledger.node(infos[0])
        ask = gs.gpu_ask_of(gpu_pod("p", 250).obj())
        return [plugin.choose(node, ask, 4000) for _ in range(200)]

    first = draws(7)
    assert first == draws(7)
    assert first != draws(8)
    assert Counter(first).keys() == {(0,), (1,), (2,), (3,)}
    # 600 fits only GPU 0.
    plugin = framework_for(gs.GpuShare, {"gpuSelection": "random"}, nodes=infos).plugins["GpuShare"]
    assert plugin.choose(plugin.ledger.node(infos[0]), gs.gpu_ask_of(gpu_pod("p", 650).obj()), 0) == (0,)


def test_fgd_selection_takes_the_fgd_plugins_choice_of_the_profile() -> None:
    """Left [1000, 400]; the only typical pod asks 200. A 300 pod on GPU 1 would leave 100 that
    no typical pod can use (FGD 47), on GPU 0 nothing changes (50): FGD picks GPU 0 where best
    fit would pick GPU 1."""
    nodes, bound, pod = [gpu_node("n", 2, cpu="32")], [gpu_pod("b", 600, index="1", node="n")], gpu_pod("p", 300)
    args = {"GpuShare": {"gpuSelection": "FGD"}, "FGD": {"typicalPods": typical(("1", 1, 200, 1.0))}}
    with plugin_framework(gs.GpuShare, gs.FGD, plugin_args=args, nodes=nodes, pods=bound) as fw:
        assert fw.reserve(pod, "n") is None
        assert fw.plugin("GpuShare").ledger.reservation(fw.pod_info(pod).uid, "n") == (0,)
    with plugin_framework(gs.GpuShare, nodes=nodes, pods=bound) as fw:
        assert fw.reserve(pod, "n") is None
        assert fw.plugin().ledger.reservation(fw.pod_info(pod).uid, "n") == (1,)


def test_fgd_selection_without_fgd_in_the_profile_is_an_error() -> None:
    with plugin_framework(gs.GpuShare, args={"gpuSelection": "FGD"}, nodes=[gpu_node("n", 2)]) as fw:
        pod = gpu_pod("p", 300)
        fw.pre_filter(pod)
        status = fw.reserve(pod, "n")
        assert status is not None and status.code is Code.ERROR and status.plugin == "GpuShare"
        assert 'needs the FGD score plugin in profile "test-scheduler"' in status.message()


# --- PreBind ---------------------------------------------------------------------------------------


def test_prebind_writes_the_reserved_gpus_on_the_pod(kubesched_cluster: Any) -> None:
    pod = gpu_pod("p", 1000, count=2)
    kubesched_cluster.add(gpu_node("n", 4), pod)
    with plugin_framework(gs.GpuShare, nodes=[gpu_node("n", 4)], cluster=kubesched_cluster.cluster) as fw:
        status = fw.pre_bind(pod, "n")  # nothing reserved yet
        assert status is not None and status.code is Code.ERROR and "no GPUs reserved" in status.message()
        assert fw.pre_filter(pod).status is None
        assert fw.reserve(pod, "n") is None
        assert fw.pre_bind(pod, "n") is None
    annotations = kubesched_cluster.get("Pod", "p")["metadata"]["annotations"]
    assert annotations[gs.GPU_INDEX_ANNOTATION] == "0-1"
    with plugin_framework(gs.GpuShare, nodes=[gpu_node("n", 4)]) as fw:
        assert fw.pre_bind(gpu_pod("cpu-only"), "n") is None  # no GPUs asked, nothing to write


# --- usage from annotations ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bound, expected",
    [
        ([gpu_pod("a", 600, index="1", node="n"), gpu_pod("b", 300, index="1", node="n")], [1000, 100, 1000]),
        ([gpu_pod("a", 1000, count=2, index="0-2", node="n")], [0, 1000, 0]),
        # No annotation (bound by someone else): counted where best fit puts it.
        ([gpu_pod("a", 400, index="2", node="n"), gpu_pod("b", 500, node="n")], [1000, 1000, 100]),
        # An index out of range is not believed either.
        ([gpu_pod("a", 1000, count=1, index="7", node="n")], [0, 1000, 1000]),
    ],
    ids=["shared on one GPU", "two whole GPUs", "unannotated pod packed", "bad index"],
)
def test_per_gpu_usage_is_derived_from_the_pods_annotations(bound: list[Any], expected: list[int]) -> None:
    infos = as_node_infos([gpu_node("n", 3)], bound)
    plugin = framework_for(gs.GpuShare, nodes=infos).plugins["GpuShare"]
    assert plugin.ledger.node(infos[0]).left == expected


def _profiles(config: str) -> list[Any]:
    data = yaml.safe_load((CONFIGS / config).read_text())
    return parse_config(data, registry=registry()).profiles


async def test_prebind_writes_the_gpu_index_and_a_restarted_scheduler_reads_it_back() -> None:
    objs = [gpu_node("n", 2), gpu_pod("p1", 600), gpu_pod("p2", 600), gpu_pod("p3", 300)]
    h = await make_harness(_profiles("BestFit.yaml"), registry(), objs=objs)
    try:
        assert await h.run_all() == 3
        index = {p: h.pod(p)["metadata"]["annotations"].get(gs.GPU_INDEX_ANNOTATION) for p in ("p1", "p2", "p3")}
        # Best fit: p1 on GPU 0, p2 on GPU 1 (the only one with 600), p3 on the lower of two 400s.
        assert index == {"p1": "0", "p2": "1", "p3": "0"}
        assert all(h.node_of(p) == "n" for p in index)
    finally:
        await h.scheduler.stop()

    # Another scheduler over a cluster where GPU 1 holds 600 + 300 (the annotations say so,
    # though best fit would have put them on GPU 0): a 400 pod must go to GPU 0.
    bound = [gpu_pod("a", 600, index="1", node="n"), gpu_pod("b", 300, index="1", node="n")]
    h = await make_harness(_profiles("BestFit.yaml"), registry(), objs=[gpu_node("n", 2), *bound, gpu_pod("c", 400)])
    try:
        assert await h.run_all() == 1
        assert h.node_of("c") == "n"
        assert h.pod("c")["metadata"]["annotations"][gs.GPU_INDEX_ANNOTATION] == "0"
    finally:
        await h.scheduler.stop()


# --- configurations --------------------------------------------------------------------------------


def test_distribution_declares_the_entry_points() -> None:
    meta = tomllib.loads((PACKAGE / "pyproject.toml").read_text())
    assert meta["project"]["name"] == "kubesched-gpushare"
    assert meta["project"]["entry-points"]["kubesched.plugins"] == {
        cls.name: f"kubesched_gpushare:{cls.__name__}"  # type: ignore[attr-defined]
        for cls in PLUGINS
    }


@pytest.mark.parametrize("policy", POLICIES)
def test_each_configuration_scores_with_its_policy_alone(policy: str) -> None:
    data = yaml.safe_load((CONFIGS / f"{policy}.yaml").read_text())
    assert data["percentageOfNodesToScore"] == 100
    cfg = parse_config(data, registry=registry())
    (spec,) = cfg.profiles
    score = {"Random": "RandomScore"}.get(policy, policy)
    assert [r.name for r in spec.plugins["score"]] == [score]
    assert "GpuShare" in [r.name for r in spec.plugins["filter"]]
    assert "NodeResourcesFit" in [r.name for r in spec.plugins["filter"]]
    for point in ("preFilter", "reserve", "preBind"):
        assert "GpuShare" in [r.name for r in spec.plugins[point]], point
    selection = spec.plugin_args["GpuShare"].gpu_selection
    assert selection == {"FGD": "FGD", "Random": "random"}.get(policy, "best")
    assert [r.name for r in spec.plugins.get("preScore", [])] == (["RandomScore"] if policy == "Random" else [])


def test_configurations_load_through_the_cli_once_installed(gpushare_installed: None) -> None:
    import subprocess
    import sys

    for policy in POLICIES:
        out = subprocess.run(
            [sys.executable, "-m", "kubesched", "config", "validate", str(CONFIGS / f"{policy}.yaml")],
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, out.stderr
        assert "valid (1 profile(s): default-scheduler)" in out.stdout


def _gpu_usage(result: Any) -> dict[tuple[str, int], int]:
    """milli-GPU per (node, GPU index) of the bound pods, from their annotations."""
    used: Counter[tuple[str, int]] = Counter()
    for pod in result.store.list("Pod")[0]:
        node = pod["spec"].get("nodeName")
        ask = gs.gpu_ask_of(pod)
        if not node or not ask.wants_gpu:
            continue
        index = pod["metadata"]["annotations"][gs.GPU_INDEX_ANNOTATION]
        indices = [int(i) for i in index.split("-")]
        assert len(indices) == (1 if ask.shared else ask.count), pod["metadata"]["name"]
        for i in indices:
            used[node, i] += ask.milli
    return dict(used)


@pytest.mark.parametrize("policy", POLICIES)
def test_simulate_places_pods_on_gpus_with_each_configuration(gpushare_installed: None, policy: str) -> None:
    """Two nodes of two GPUs: a two-GPU pod takes one node, four 500 pods must pair up on the
    other node's GPUs, and a 600 pod then fits nowhere."""
    docs = [
        gpu_node("n1", 2).obj(),
        gpu_node("n2", 2).obj(),
        gpu_pod("train", 1000, count=2).obj(),
        *(gpu_pod(f"s{i}", 500).obj() for i in range(4)),
        gpu_pod("late", 600).obj(),
    ]
    result = asyncio.run(simulate(load_config(CONFIGS / f"{policy}.yaml").profiles, parse_scenario(docs)))
    phases = {p["name"]: p["phase"] for p in result.pods}
    assert phases == {**{n: "Scheduled" for n in ("train", "s0", "s1", "s2", "s3")}, "late": "Unschedulable"}
    late = next(p for p in result.pods if p["name"] == "late")
    assert "2 node(s) didn't have a GPU with enough free milli-GPU" in late["message"]
    train = next(p["node"] for p in result.pods if p["name"] == "train")
    other = "n2" if train == "n1" else "n1"
    assert _gpu_usage(result) == {(train, 0): 1000, (train, 1): 1000, (other, 0): 1000, (other, 1): 1000}


TRACE = trace_dir()


@pytest.mark.skipif(TRACE is None, reason=TRACE_ABSENT)
def test_the_openb_trace_with_fgd(gpushare_installed: None) -> None:
    """The shipped FGD configuration carries the typical pods of the default workload, and a
    slice of the trace schedules with every GPU within its 1000 milli and every model honoured."""
    from kubesched.sim.scenario.openb import pod_objects

    assert TRACE is not None
    data = yaml.safe_load((CONFIGS / "FGD.yaml").read_text())
    shipped = next(c for c in data["profiles"][0]["pluginConfig"] if c["name"] == "FGD")["args"]["typicalPods"]
    built = gs.typical_pods(pod_objects(TRACE / "openb_pod_list_default.csv"))
    assert shipped == [p.to_dict() for p in built]

    scenario = load_openb("default", "gpu_node", pod_limit=400)
    result = asyncio.run(simulate(load_config(CONFIGS / "FGD.yaml").profiles, scenario))
    assert result.summary["scheduled"] == 400
    assert all(v <= 1000 for v in _gpu_usage(result).values())
    models = {n["metadata"]["name"]: n["metadata"]["labels"]["alibabacloud.com/gpu-model"] for n in scenario.nodes}
    for pod in result.store.list("Pod")[0]:
        ask = gs.gpu_ask_of(pod)
        if ask.wants_gpu:
            assert ask.accepts(models[pod["spec"]["nodeName"]])


def test_node_info_generation_caches_derived_usage() -> None:
    infos = as_node_infos([gpu_node("n", 2)], [gpu_pod("a", 500, index="0", node="n")])
    plugin = framework_for(gs.GpuShare, nodes=infos).plugins["GpuShare"]
    first = plugin.ledger.node(infos[0])
    assert plugin.ledger.node(infos[0]) is first
    infos[0].add_pod(PodInfo(gpu_pod("b", 200, index="0", node="n").obj()))
    assert plugin.ledger.node(infos[0]).left == [300, 1000]


def test_sim_serve_places_gpu_pods_on_gpus_and_records_the_index(gpushare_installed: None, tmp_path: Path) -> None:
    """Through a real `sim serve --with-scheduler` process and its HTTP API, as a user runs it:
    two sharing pods created by a client land on one node's GPUs, best fit packing them onto one
    GPU, and each carries the GPU index GpuShare wrote at PreBind."""
    scenario = tmp_path / "start.yaml"
    scenario.write_text(yaml.safe_dump_all([gpu_node("g1", 2).obj()]))
    config = CONFIGS / "BestFit.yaml"
    with sim_serve_process(tmp_path, "--with-scheduler", "--config", str(config), "--scenario", str(scenario)) as srv:

        def call(method: str, path: str, body: Any = None) -> Any:
            data = json.dumps(body).encode() if body is not None else None
            req = urllib.request.Request(srv["url"] + path, data=data, method=method)
            req.add_header("Content-Type", "application/json")
            with urllib.request.urlopen(req, timeout=10) as resp:
                return json.loads(resp.read())

        for name, milli in (("half", 500), ("third", 300)):
            call("POST", "/api/v1/namespaces/default/pods", gpu_pod(name, milli).obj())
        pods = eventually_sync(
            lambda: {p["metadata"]["name"]: p for p in call("GET", "/api/v1/namespaces/default/pods")["items"]},
            "both pods bound with a GPU index",
            until=lambda pods: (
                all(
                    p["spec"].get("nodeName") and gs.GPU_INDEX_ANNOTATION in p["metadata"].get("annotations", {})
                    for p in pods.values()
                )
                and len(pods) == 2
            ),
            timeout=30,
            interval=0.2,
        )
    assert {p["spec"]["nodeName"] for p in pods.values()} == {"g1"}
    indices = {name: p["metadata"]["annotations"][gs.GPU_INDEX_ANNOTATION] for name, p in pods.items()}
    assert indices["half"] == indices["third"]  # best fit: the second pod goes where the first left room
