"""kubesched.testing's drivers: each extension point of a test plugin, run through the runtime."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched import PostFilterResult, PreFilterResult, Status
from kubesched.framework.status import Code
from kubesched.testing import PluginFramework, make_node, make_pod, plugin_framework, reasons


class Everything:
    """One plugin at every per-pod point, each answer read from the pod's labels."""

    name = "Everything"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle
        self.calls: list[tuple[str, str]] = []

    def pre_enqueue(self, pod: Any) -> Status | None:
        return Status.unresolvable("gated") if pod.labels.get("gate") else None

    def less(self, a: Any, b: Any) -> bool:
        return bool(a.pod_info.name < b.pod_info.name)

    def pre_filter(self, state: Any, pod: Any) -> Any:
        state.write("count", 0)
        only = pod.labels.get("only")
        return (PreFilterResult({only}) if only else None), None

    def add_pod(self, state: Any, pod: Any, to_add: Any, node: Any) -> None:
        state.write("count", state.read("count") + 1)

    def remove_pod(self, state: Any, pod: Any, to_remove: Any, node: Any) -> None:
        state.write("count", state.read("count") - 1)

    def filter(self, state: Any, pod: Any, node: Any) -> Status | None:
        if node.labels.get("bad"):
            return Status.unschedulable("node(s) are bad")
        if state.read("count") > 0:
            return Status.unschedulable("node(s) are counted")
        return None

    async def post_filter(self, state: Any, pod: Any, statuses: dict[str, Status]) -> Any:
        self.calls.append(("PostFilter", ",".join(sorted(statuses))))
        if len(statuses) > 1:
            return PostFilterResult(sorted(statuses)[0]), Status.success()
        return None, Status.unschedulable("no room made")

    async def pre_score(self, state: Any, pod: Any, nodes: Any) -> Status | None:
        return Status.skip() if pod.labels.get("skip-score") else None

    def score(self, state: Any, pod: Any, node: Any) -> int:
        return int(node.labels.get("score", "0"))

    def normalize_score(self, state: Any, pod: Any, scores: list[Any]) -> None:
        top = max(s.score for s in scores) or 1
        for s in scores:
            s.score = s.score * 100 // top

    def reserve(self, state: Any, pod: Any, node_name: str) -> Status | None:
        self.calls.append(("Reserve", node_name))
        return Status.unschedulable("full") if node_name == "n3" else None

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        self.calls.append(("Unreserve", node_name))

    async def pre_bind(self, state: Any, pod: Any, node_name: str) -> Status | None:
        return Status.skip() if node_name == "n1" else Status.as_error("volume not ready")

    def bind(self, state: Any, pod: Any, node_name: str) -> Status | None:
        self.calls.append(("Bind", node_name))
        return None

    def post_bind(self, state: Any, pod: Any, node_name: str) -> None:
        self.calls.append(("PostBind", node_name))


NODES = [
    make_node("n1").label("score", "10"),
    make_node("n2").label("score", "40"),
    make_node("n3").label("bad", "true"),
]


@pytest.fixture
def fw() -> Any:
    with plugin_framework(Everything, nodes=NODES) as driver:
        yield driver


def test_pre_enqueue(fw: PluginFramework) -> None:
    assert fw.pre_enqueue(make_pod("p")) is None
    status = fw.pre_enqueue(make_pod("p").label("gate", "1"))
    assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.plugin == "Everything" and status.reasons == ["gated"]


def test_queue_sort(fw: PluginFramework) -> None:
    assert fw.sort_pods([make_pod("c"), make_pod("a"), make_pod("b")]) == ["a", "b", "c"]
    assert fw.less(make_pod("a"), make_pod("b")) and not fw.less(make_pod("b"), make_pod("a"))


def test_pre_filter_result_and_filter_of_every_node(fw: PluginFramework) -> None:
    outcome = fw.pre_filter(make_pod("p").label("only", "n2"))
    assert outcome.status is None and outcome.node_names == {"n2"}
    statuses = fw.filter_all(make_pod("p").label("only", "n2"))
    assert statuses["n2"] is None
    assert statuses["n1"] is not None and statuses["n1"].code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert fw.filter_all(make_pod("q"))["n3"] == Status.unschedulable("node(s) are bad")


def test_add_pod_and_remove_pod_share_the_pods_cycle(fw: PluginFramework) -> None:
    pod, other = make_pod("p"), make_pod("other")
    fw.pre_filter(pod)
    assert fw.filter(pod, "n1") is None
    assert fw.add_pod(pod, other, "n1") is None
    assert fw.filter(pod, "n1") == Status.unschedulable("node(s) are counted")
    assert [p.name for p in fw.node("n1").pods] == ["other"]
    assert fw.remove_pod(pod, other, "n1") is None
    assert fw.filter(pod, "n1") is None
    state = fw.new_cycle(pod)
    assert fw.pre_filter(pod).status is None
    assert fw.state(pod) is state and state.read("count") == 0


def test_post_filter_gets_the_filtered_statuses(fw: PluginFramework) -> None:
    pod = make_pod("p").label("only", "n2")
    outcome = fw.post_filter(pod)
    assert ("PostFilter", "n1,n3") in fw.plugin().calls
    assert outcome.status.is_success() and outcome.nominated_node_name == "n1"
    rejected = fw.post_filter(pod, {"n3": Status.unschedulable("node(s) are bad")})
    assert rejected.status.code is Code.UNSCHEDULABLE and rejected.nominated_node_name is None


def test_score_normalized_and_raw(fw: PluginFramework) -> None:
    assert fw.score(make_pod("p"), ["n1", "n2"]) == {"n1": 25, "n2": 100}
    assert fw.score(make_pod("p"), ["n1", "n2"], normalize=False) == {"n1": 10, "n2": 40}
    details = fw.score_details(make_pod("p"), ["n1", "n2"])
    assert details.raw == {"Everything": {"n1": 10, "n2": 40}} and details.status is None


def test_normalize_score_alone_over_given_raw_scores(fw: PluginFramework) -> None:
    outcome = fw.normalize_scores(make_pod("p"), {"n1": 5, "n2": 20, "n3": 0})
    assert outcome.status is None and outcome.totals == {"n1": 25, "n2": 100, "n3": 0}
    assert fw.normalize_scores(make_pod("p"), {"Everything": {"n1": 1, "n2": 4}}).totals == {"n1": 25, "n2": 100}


def test_a_score_left_outside_the_range_is_an_error() -> None:
    class Unnormalized(Everything):
        name = "Unnormalized"

        def normalize_score(self, state: Any, pod: Any, scores: list[Any]) -> None:
            pass

    with plugin_framework(Unnormalized, nodes=NODES[:2]) as fw:
        outcome = fw.normalize_scores(make_pod("p"), {"n1": 10, "n2": 400})
        assert outcome.status is not None and outcome.status.code is Code.ERROR
        assert outcome.status.plugin == "Unnormalized"


def test_pre_score_skip_leaves_score_out(fw: PluginFramework) -> None:
    pod = make_pod("p").label("skip-score", "1")
    assert fw.pre_score(pod) is None
    assert fw.score_details(pod, ["n1", "n2"]).totals == {"n1": 0, "n2": 0}


def test_score_weights_of_several_plugins() -> None:
    class Half(Everything):
        name = "Half"

        def score(self, state: Any, pod: Any, node: Any) -> int:
            return 50

    with plugin_framework(Everything, Half, weights={"Half": 2}, nodes=NODES[:2]) as fw:
        assert fw.score(make_pod("p")) == {"n1": 25 + 200, "n2": 100 + 200}


def test_reserve_and_unreserve(fw: PluginFramework) -> None:
    pod = make_pod("p")
    assert fw.reserve(pod, "n1") is None
    status = fw.reserve(pod, "n3")
    assert status is not None and status.code is Code.UNSCHEDULABLE and status.plugin == "Everything"
    fw.unreserve(pod, "n3")
    assert fw.plugin().calls == [("Reserve", "n1"), ("Reserve", "n3"), ("Unreserve", "n3")]


def test_pre_bind_bind_post_bind(fw: PluginFramework) -> None:
    pod = make_pod("p")
    assert fw.pre_bind(pod, "n1") is None  # skipped
    error = fw.pre_bind(pod, "n2")
    assert error is not None and error.code is Code.ERROR and "volume not ready" in error.message()
    assert fw.bind(pod, "n1") is None
    fw.post_bind(pod, "n1")
    assert fw.plugin().calls == [("Bind", "n1"), ("PostBind", "n1")]


def test_a_plugins_exception_is_an_error_naming_it() -> None:
    class Broken:
        name = "Broken"

        def __init__(self, args: Any, handle: Any) -> None:
            pass

        def filter(self, state: Any, pod: Any, node: Any) -> None:
            raise ValueError("boom")

    with plugin_framework(Broken, nodes=[make_node("n1")]) as fw:
        status = fw.filter(make_pod("p"), "n1")
        assert status is not None and status.code is Code.ERROR and status.plugin == "Broken"
        assert "boom" in status.message()


async def test_async_variants_run_on_the_tests_loop() -> None:
    fw = plugin_framework(Everything, nodes=NODES)
    pod = make_pod("p")
    assert (await fw.apre_filter(pod)).status is None
    assert await fw.ascore(pod, ["n1", "n2"]) == {"n1": 25, "n2": 100}
    assert await fw.areserve(pod, "n1") is None
    assert (await fw.apost_filter(pod, {"n3": Status.unschedulable("bad")})).status.code is Code.UNSCHEDULABLE
    assert await fw.abind(pod, "n1") is None


def test_installed_plugin_by_name_with_args() -> None:
    nodes = [make_node("n1").capacity(cpu="2", pods="10"), make_node("n2").capacity(cpu="8", pods="10")]
    with plugin_framework("NodeResourcesFit", args={"scoringStrategy": {"type": "MostAllocated"}}, nodes=nodes) as fw:
        statuses = fw.filter_all(make_pod("p").req(cpu="4"))
        assert reasons(statuses) == {"n1": ["Insufficient cpu"], "n2": []}
        scores = fw.score(make_pod("p").req(cpu="1"))
        assert scores["n1"] > scores["n2"]
