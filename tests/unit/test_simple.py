"""kubesched.framework.simple: plugins from plain functions, run through the real runtime."""

from __future__ import annotations

import asyncio

import pytest

import kubesched.framework.simple as simple
from kubesched.framework.interface import CycleState, NodeScore
from kubesched.framework.simple import filter, queue_sort, score
from kubesched.framework.status import Code, Status
from kubesched.framework.types import QueuedPodInfo
from kubesched.plugins.helper import default_normalize_score
from kubesched.runtime.framework import Framework, PluginRef, ProfileSpec
from kubesched.runtime.registry import Registry
from kubesched.testing import filter_nodes, make_node, make_pod, reasons, score_nodes


def nodes() -> list:
    return [
        make_node("gpu-1").capacity(cpu="4", memory="8Gi", pods="110").label("gpu", "true"),
        make_node("cpu-1").capacity(cpu="8", memory="8Gi", pods="110"),
        make_node("cpu-2").capacity(cpu="16", memory="8Gi", pods="110").label("gpu", "false"),
    ]


# --- filter --------------------------------------------------------------------------------------


@filter
def has_gpu(pod, node):
    """Only nodes labelled gpu=true."""
    return node.labels.get("gpu") == "true"


@filter(name="GpuOrNothing", reason="node(s) had no GPU", unresolvable=True)
def gpu_or_nothing(pod, node):
    return node.labels.get("gpu") == "true"


@filter
def docstring_reason(pod, node):
    """Refuse nodes without a gpu label.

    Reason: node(s) had no gpu label
    """
    return "gpu" in node.labels


@filter
def returns_status(pod, node):
    if node.name == "cpu-2":
        return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "cpu-2 is special")
    if node.name == "cpu-1":
        return None
    return Status.success()


@filter
def truthy_values(pod, node):
    return {"gpu-1": 1, "cpu-1": 0, "cpu-2": "yes"}[node.name]


@pytest.mark.parametrize(
    "plugin, expected, code",
    [
        (
            has_gpu,
            {"gpu-1": [], "cpu-1": ["node(s) didn't pass HasGpu"], "cpu-2": ["node(s) didn't pass HasGpu"]},
            Code.UNSCHEDULABLE,
        ),
        (
            gpu_or_nothing,
            {"gpu-1": [], "cpu-1": ["node(s) had no GPU"], "cpu-2": ["node(s) had no GPU"]},
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ),
        (docstring_reason, {"gpu-1": [], "cpu-1": ["node(s) had no gpu label"], "cpu-2": []}, Code.UNSCHEDULABLE),
        (
            returns_status,
            {"gpu-1": [], "cpu-1": [], "cpu-2": ["cpu-2 is special"]},
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        ),
        (truthy_values, {"gpu-1": [], "cpu-1": ["node(s) didn't pass TruthyValues"], "cpu-2": []}, Code.UNSCHEDULABLE),
    ],
    ids=["bool-default-reason", "name-reason-unresolvable", "docstring-reason", "status-as-is", "truthiness"],
)
def test_filter_through_harness(plugin: type, expected: dict[str, list[str]], code: Code) -> None:
    statuses = filter_nodes(plugin, make_pod("p").req(cpu="1"), nodes())
    assert reasons(statuses) == expected
    rejected = [s for s in statuses.values() if s is not None and not s.is_success()]
    assert rejected and all(s.code is code for s in rejected)
    assert all(s.plugin == plugin.name for s in rejected)


@pytest.mark.parametrize(
    "fn_name, expected",
    [("has_gpu", "HasGpu"), ("random_predicate", "RandomPredicate"), ("MyFilter", "MyFilter"), ("_x__y_", "XY")],
    ids=["snake", "two-words", "already-camel", "stray-underscores"],
)
def test_plugin_name_is_camel_case(fn_name: str, expected: str) -> None:
    assert simple.plugin_name(fn_name) == expected


def test_decorated_filter_is_a_plugin_class() -> None:
    assert isinstance(has_gpu, type)
    assert has_gpu.name == "HasGpu" and has_gpu.__name__ == "HasGpu"
    assert has_gpu.__doc__ == "Only nodes labelled gpu=true."
    assert has_gpu.__module__ == __name__
    instance = has_gpu({"some": "args"}, "handle")
    assert (instance.args, instance.handle) == ({"some": "args"}, "handle")
    # The function stays callable, from the class and from an instance.
    gpu, cpu = make_node("g").label("gpu", "true").info(), make_node("c").info()
    pod = make_pod("p").info()
    assert has_gpu.fn(pod, gpu) is True and has_gpu.fn(pod, cpu) is False
    assert instance.fn(pod, gpu) is True
    assert instance.filter(CycleState(), pod, gpu) is None
    assert instance.filter(CycleState(), pod, cpu) == Status.unschedulable("node(s) didn't pass HasGpu")


@pytest.mark.parametrize(
    "decorator, fn",
    [
        (filter, lambda pod: True),
        (score, lambda pod, node, extra: 0),
        (queue_sort, lambda a: True),
        (filter(name="X"), lambda: True),
    ],
    ids=["filter-one-arg", "score-three-args", "queue-sort-one-arg", "with-arguments"],
)
def test_wrong_signature_is_refused_at_decoration(decorator, fn) -> None:
    with pytest.raises(TypeError, match="two positional arguments"):
        decorator(fn)


# --- score ---------------------------------------------------------------------------------------


@score
def more_cpu(pod, node):
    return node.allocatable.milli_cpu // 1000 * 5


@score(normalize=True)
def cpu_cores(pod, node):
    return node.allocatable.milli_cpu // 1000


@score(name="FewestCores", normalize=True, reverse=True)
def fewest_cores(pod, node):
    return node.allocatable.milli_cpu // 1000


@score(normalize=True)
def nothing(pod, node):
    return 0


@score(normalize=True, reverse=True)
def nothing_reversed(pod, node):
    return 0


@pytest.mark.parametrize(
    "plugin, normalize, expected",
    [
        (more_cpu, True, {"gpu-1": 20, "cpu-1": 40, "cpu-2": 80}),
        (cpu_cores, False, {"gpu-1": 4, "cpu-1": 8, "cpu-2": 16}),
        (cpu_cores, True, {"gpu-1": 25, "cpu-1": 50, "cpu-2": 100}),
        (fewest_cores, True, {"gpu-1": 75, "cpu-1": 50, "cpu-2": 0}),
        (nothing, True, {"gpu-1": 0, "cpu-1": 0, "cpu-2": 0}),
        (nothing_reversed, True, {"gpu-1": 100, "cpu-1": 100, "cpu-2": 100}),
    ],
    ids=["raw-in-range", "before-normalize", "normalized", "reversed", "all-zero", "all-zero-reversed"],
)
def test_score_through_harness(plugin: type, normalize: bool, expected: dict[str, int]) -> None:
    assert score_nodes(plugin, make_pod("p"), nodes(), normalize=normalize) == expected


def test_score_without_normalization_has_no_normalize_method() -> None:
    assert not hasattr(more_cpu, "normalize_score")
    assert callable(cpu_cores.normalize_score)
    assert more_cpu.fn(make_pod("p").info(), make_node("n").capacity(cpu="3").info()) == 15


@pytest.mark.parametrize(
    "raw",
    [[0, 1, 2, 3], [7, 7, 7], [0, 0], [3, 1000, 999], [1, 2, 3, 1001], [0, 5, 0]],
    ids=["ramp", "equal", "zeros", "large", "odd-max", "single-peak"],
)
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_normalization_matches_upstream_default(raw: list[int], reverse: bool) -> None:
    ours = [NodeScore(f"n{i}", v) for i, v in enumerate(raw)]
    reference = [NodeScore(f"n{i}", v) for i, v in enumerate(raw)]
    plugin = (fewest_cores if reverse else cpu_cores)(None, None)
    plugin.normalize_score(CycleState(), make_pod("p").info(), ours)
    default_normalize_score(100, reverse, reference)
    assert [s.score for s in ours] == [s.score for s in reference]


def test_reverse_without_normalize_is_refused() -> None:
    with pytest.raises(TypeError, match="normalize=True"):
        score(reverse=True)


# --- queue sort and a whole Framework -----------------------------------------------------------


@queue_sort
def fewest_containers_first(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """Pods with fewer containers first, then FIFO."""
    na, nb = len(a.pod["spec"]["containers"]), len(b.pod["spec"]["containers"])
    return na < nb if na != nb else a.timestamp < b.timestamp


def _framework(*plugins: type, score_weight: int = 1) -> Framework:
    registry = Registry()
    points: dict[str, list[PluginRef]] = {"queueSort": [], "filter": [], "score": []}
    for cls in plugins:
        registry.register(cls)
        if hasattr(cls, "less"):
            points["queueSort"].append(PluginRef(cls.name))
        if hasattr(cls, "filter"):
            points["filter"].append(PluginRef(cls.name))
        if hasattr(cls, "score"):
            points["score"].append(PluginRef(cls.name, score_weight))
    return Framework(ProfileSpec("simple-scheduler", points), registry, partial=True)


def test_registry_sees_the_extension_points() -> None:
    registry = Registry()
    assert registry.register(has_gpu).extension_points == ("filter",)
    assert registry.register(cpu_cores).extension_points == ("score",)
    assert registry.register(fewest_containers_first).extension_points == ("queueSort",)
    assert registry.names() == ["CpuCores", "FewestContainersFirst", "HasGpu"]


def test_framework_runs_decorated_plugins() -> None:
    fw = _framework(fewest_containers_first, has_gpu, cpu_cores, score_weight=2)
    assert fw.queue_sort_name == "FewestContainersFirst"
    pod = make_pod("p").req(cpu="1").info()
    infos = [
        make_node(n).capacity(cpu=c).label("gpu", g).info()
        for n, c, g in [("a", "2", "true"), ("b", "4", "false"), ("c", "8", "true")]
    ]
    state = CycleState()
    statuses = {ni.name: fw.run_filter(state, pod, ni) for ni in infos}
    assert statuses["a"] is None and statuses["c"] is None
    assert statuses["b"].reasons == ["node(s) didn't pass HasGpu"] and statuses["b"].plugin == "HasGpu"
    feasible = [ni for ni in infos if statuses[ni.name] is None]
    totals, status = asyncio.run(fw.run_score(state, pod, feasible))
    assert status is None
    assert totals == [50, 200]  # normalized 25 and 100, times weight 2

    bare = QueuedPodInfo(make_pod("no-containers").info(), timestamp=2.0)
    two = QueuedPodInfo(make_pod("two-containers").container().container().info(), timestamp=1.0)
    assert fw.less(bare, two) is True and fw.less(two, bare) is False
