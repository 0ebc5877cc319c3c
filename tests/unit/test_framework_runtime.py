"""Extension-point semantics of the per-profile runtime, through the real scheduler loop."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from conftest import make_harness, profile, registry_with

from kubesched.framework.interface import CycleState, PreFilterResult
from kubesched.framework.status import Code, Status
from kubesched.runtime.framework import Framework, FrameworkError, PluginRef, ProfileSpec
from kubesched.scheduler import SchedulerOptions
from kubesched.testing import make_node, make_pod

CALLS: list[tuple[str, str]] = []


@pytest.fixture(autouse=True)
def _reset() -> None:
    CALLS.clear()


def plugin(name: str, **methods: Any) -> type:
    """A test plugin class named ``name`` whose methods record their calls, then act."""

    def wrap(point: str, fn: Any) -> Any:
        if asyncio.iscoroutinefunction(fn):

            async def async_method(self: Any, *args: Any) -> Any:
                CALLS.append((name, point))
                return await fn(self, *args)

            return async_method

        def method(self: Any, *args: Any) -> Any:
            CALLS.append((name, point))
            return fn(self, *args)

        return method

    ns: dict[str, Any] = {"name": name, "__init__": lambda self, args, handle: setattr(self, "handle", handle)}
    for point, fn in methods.items():
        ns[point] = wrap(point, fn)
    return type(name, (), ns)


def ok(*_: Any) -> None:
    return None


def nodes(*names: str) -> list[Any]:
    return [make_node(n) for n in names]


def calls(point: str) -> list[str]:
    return [p for p, pt in CALLS if pt == point]


async def test_filter_runs_in_order_and_stops_at_first_rejection() -> None:
    A = plugin("A", filter=lambda self, s, p, n: None)
    B = plugin("B", filter=lambda self, s, p, n: Status.unschedulable("b says no") if n.name == "n1" else None)
    C = plugin("C", filter=lambda self, s, p, n: None)
    h = await make_harness(
        [profile(filter=["A", "B", "C"])], registry_with(A, B, C), objs=[*nodes("n1"), make_pod("p")]
    )
    await h.run_all()
    assert calls("filter") == ["A", "B"]
    rec = h.scheduler.results["default/p"]
    assert rec.filter == {"n1": {"A": "passed", "B": "b says no"}}
    assert rec.message == "0/1 nodes are available: 1 b says no."
    assert h.node_of("p") is None


async def test_filter_exception_becomes_error_naming_plugin() -> None:
    def boom(self: Any, s: Any, p: Any, n: Any) -> None:
        raise ValueError("kaput")

    A = plugin("Boom", filter=boom)
    h = await make_harness([profile(filter=["Boom"])], registry_with(A), objs=[*nodes("n1"), make_pod("p")])
    await h.run_all()
    rec = h.scheduler.results["default/p"]
    assert rec.phase == "Error"
    assert 'running "Boom" filter plugin: kaput' in rec.message
    # An error is retried with backoff, not parked with the unschedulable pods.
    assert h.scheduler.queue.where(h.pod("p")["metadata"]["uid"]) == "backoff"
    events = h.events("p")
    assert events and events[0]["reason"] == "FailedScheduling"


@pytest.mark.parametrize(
    "filter_nodes",
    [
        lambda self, s, p, nodes: [True] * (len(nodes) + 1),
        lambda self, s, p, nodes: (_ for _ in ()).throw(ValueError("kaput")),
        lambda self, s, p, nodes: None,
    ],
    ids=["verdicts for another number of nodes", "an exception", "declined"],
)
async def test_a_batch_filter_that_cannot_answer_leaves_it_to_the_per_node_filter(filter_nodes: Any) -> None:
    """Whatever ``filter_nodes`` does wrong, the pod is filtered node by node and the scheduler
    goes on (an uncaught error here would end its loop)."""
    A = plugin(
        "A",
        filter=lambda self, s, p, n: Status.unschedulable("not n1") if n.name == "n1" else None,
        filter_nodes=filter_nodes,
    )
    h = await make_harness(
        [profile(filter=["A"])], registry_with(A), objs=[*nodes("n1", "n2"), make_pod("p"), make_pod("q")]
    )
    await h.run_all()
    assert (h.node_of("p"), h.node_of("q")) == ("n2", "n2")
    # Without Score plugins the first feasible node is the answer: chunks of one node, n1 then
    # n2, for each pod; every chunk asked filter_nodes first, then filter.
    assert calls("filter_nodes") == ["A"] * 4
    assert calls("filter") == ["A"] * 4


async def test_prefilter_skip_skips_that_plugins_filter() -> None:
    A = plugin(
        "A", pre_filter=lambda self, s, p: Status.skip(), filter=lambda self, s, p, n: Status.unschedulable("never")
    )
    h = await make_harness(
        [profile(preFilter=["A"], filter=["A"])], registry_with(A), objs=[*nodes("n1"), make_pod("p")]
    )
    await h.run_all()
    assert calls("filter") == []
    assert h.node_of("p") == "n1"


async def test_prefilter_results_intersect() -> None:
    A = plugin("A", pre_filter=lambda self, s, p: (PreFilterResult({"n1", "n2"}), None))
    B = plugin("B", pre_filter=lambda self, s, p: (PreFilterResult({"n2", "n3"}), None))
    h = await make_harness(
        [profile(preFilter=["A", "B"])], registry_with(A, B), objs=[*nodes("n1", "n2", "n3"), make_pod("p")]
    )
    await h.run_all()
    assert h.node_of("p") == "n2"


async def test_prefilter_disjoint_results_are_unresolvable() -> None:
    A = plugin("A", pre_filter=lambda self, s, p: (PreFilterResult({"n1"}), None))
    B = plugin("B", pre_filter=lambda self, s, p: (PreFilterResult({"n2"}), None))
    h = await make_harness(
        [profile(preFilter=["A", "B"])], registry_with(A, B), objs=[*nodes("n1", "n2"), make_pod("p")]
    )
    await h.run_all()
    rec = h.scheduler.results["default/p"]
    assert rec.message == "0/2 nodes are available: node(s) didn't satisfy plugin(s) [A B] simultaneously."


async def test_prefilter_rejection_message_is_not_repeated_per_node() -> None:
    A = plugin("A", pre_filter=lambda self, s, p: Status.unresolvable("pod is cursed"))
    h = await make_harness([profile(preFilter=["A"])], registry_with(A), objs=[*nodes("n1", "n2"), make_pod("p")])
    await h.run_all()
    assert h.scheduler.results["default/p"].message == "0/2 nodes are available: pod is cursed."


async def test_postfilter_runs_only_when_nothing_fits() -> None:
    F = plugin("F", filter=lambda self, s, p, n: Status.unschedulable("full") if p.name == "big" else None)
    P = plugin("P", post_filter=lambda self, s, p, st: Status.unschedulable("preemption: not eligible"))
    h = await make_harness(
        [profile(filter=["F"], postFilter=["P"])],
        registry_with(F, P),
        objs=[*nodes("n1"), make_pod("small"), make_pod("big")],
    )
    await h.run_all()
    assert calls("post_filter") == ["P"]
    assert h.node_of("small") == "n1"
    # PostFilter's message is appended as it is: no period of the scheduler's after it (1.30+).
    assert h.scheduler.results["default/big"].message == "0/1 nodes are available: 1 full. preemption: not eligible"


async def test_scores_are_weighted_and_normalized() -> None:
    S = plugin(
        "S",
        score=lambda self, s, p, n: {"n1": 10, "n2": 20, "n3": 5}[n.name],
        normalize_score=lambda self, s, p, scores: [setattr(x, "score", x.score * 5) for x in scores] and None,
    )
    h = await make_harness(
        [profile(score=[("S", 3)])], registry_with(S), objs=[*nodes("n1", "n2", "n3"), make_pod("p")]
    )
    await h.run_all()
    rec = h.scheduler.results["default/p"]
    assert rec.score == {"n1": {"S": 10}, "n2": {"S": 20}, "n3": {"S": 5}}
    assert rec.final_score == {"n1": {"S": 150}, "n2": {"S": 300}, "n3": {"S": 75}}
    assert h.node_of("p") == "n2"


async def test_a_batch_score_is_used_when_present_and_reported_per_node() -> None:
    table = {"n1": 10, "n2": 40, "n3": 5}
    batches: list[list[str]] = []

    def score_nodes(self: Any, s: Any, p: Any, ns: Any) -> list[int]:
        batches.append([n.name for n in ns])
        return [table[n.name] for n in ns]

    S = plugin("S", score=lambda self, s, p, n: table[n.name], score_nodes=score_nodes)
    h = await make_harness(
        [profile(score=[("S", 2)])], registry_with(S), objs=[*nodes("n1", "n2", "n3"), make_pod("p")]
    )
    await h.run_all()
    rec = h.scheduler.results["default/p"]
    assert calls("score") == []  # one call for the pod, not one per node
    assert [sorted(b) for b in batches] == [["n1", "n2", "n3"]]
    assert rec.score == {"n1": {"S": 10}, "n2": {"S": 40}, "n3": {"S": 5}}
    assert rec.final_score == {"n1": {"S": 20}, "n2": {"S": 80}, "n3": {"S": 10}}
    assert h.node_of("p") == "n2"


async def test_a_batch_score_with_a_score_missing_is_an_error_naming_the_plugin() -> None:
    S = plugin("S", score=lambda self, s, p, n: 1, score_nodes=lambda self, s, p, ns: [1])
    h = await make_harness([profile(score=["S"])], registry_with(S), objs=[*nodes("n1", "n2"), make_pod("p")])
    await h.run_all()
    rec = h.scheduler.results["default/p"]
    assert rec.phase == "Error"
    assert 'running "S" Score plugin: score_nodes returned 1 scores for 2 nodes' in rec.message


async def test_score_out_of_range_after_normalize_is_an_error() -> None:
    S = plugin("S", score=lambda self, s, p, n: 101)
    h = await make_harness([profile(score=["S"])], registry_with(S), objs=[*nodes("n1", "n2"), make_pod("p")])
    await h.run_all()
    rec = h.scheduler.results["default/p"]
    assert rec.phase == "Error"
    assert 'plugin "S" returns an invalid score 101' in rec.message


async def test_the_range_error_names_the_first_plugin_out_of_range_whichever_plugins_score_after_it() -> None:
    # All plugins are checked in one pass; the error still names the first out of range, in
    # the profile's order, and not one in range before it.
    In = plugin("In", score=lambda self, s, p, n: 100)
    Low = plugin("Low", score=lambda self, s, p, n: -1 if n.name == "n2" else 0)
    High = plugin("High", score=lambda self, s, p, n: 101)
    h = await make_harness(
        [profile(score=["In", "Low", "High"])],
        registry_with(In, Low, High),
        objs=[*nodes("n1", "n2"), make_pod("p")],
    )
    await h.run_all()
    rec = h.scheduler.results["default/p"]
    assert rec.phase == "Error"
    assert 'plugin "Low" returns an invalid score -1' in rec.message


async def test_scores_at_the_bounds_are_in_range() -> None:
    Zero = plugin("Zero", score=lambda self, s, p, n: 0)
    Full = plugin("Full", score=lambda self, s, p, n: 100 if n.name == "n1" else 0)
    h = await make_harness(
        [profile(score=["Zero", "Full"])], registry_with(Zero, Full), objs=[*nodes("n1", "n2"), make_pod("p")]
    )
    await h.run_all()
    assert h.node_of("p") == "n1"


async def test_prescore_skip_skips_score() -> None:
    S = plugin("S", pre_score=lambda self, s, p, ns: Status.skip(), score=lambda self, s, p, n: 50)
    h = await make_harness(
        [profile(preScore=["S"], score=["S"])], registry_with(S), objs=[*nodes("n1", "n2"), make_pod("p")]
    )
    await h.run_all()
    assert calls("pre_score") == ["S"]
    assert calls("score") == []
    assert h.node_of("p") in {"n1", "n2"}


async def test_scoring_skipped_with_one_feasible_node() -> None:
    F = plugin("F", filter=lambda self, s, p, n: None if n.name == "n2" else Status.unschedulable("no"))
    S = plugin("S", pre_score=ok, score=lambda self, s, p, n: 1)
    h = await make_harness(
        [profile(filter=["F"], preScore=["S"], score=["S"])],
        registry_with(F, S),
        objs=[*nodes("n1", "n2"), make_pod("p")],
    )
    await h.run_all()
    assert h.node_of("p") == "n2"
    assert calls("pre_score") == [] and calls("score") == []


@pytest.mark.parametrize("seed", [1, 2, 3])
async def test_ties_are_broken_at_random_but_reproducibly(seed: int) -> None:
    async def place(s: int) -> list[str | None]:
        h = await make_harness(
            [profile()],
            registry_with(),
            SchedulerOptions(seed=s, record_results=True),
            objs=[*nodes(*[f"n{i}" for i in range(8)]), *[make_pod(f"p{i}") for i in range(6)]],
        )
        await h.run_all()
        return [h.node_of(f"p{i}") for i in range(6)]

    first = await place(seed)
    assert first == await place(seed)
    assert len(set(first)) > 1


async def test_reserve_failure_unreserves_all_in_reverse_order() -> None:
    R1 = plugin("R1", reserve=ok, unreserve=ok)
    R2 = plugin("R2", reserve=lambda self, s, p, n: Status.unschedulable("r2 refuses"), unreserve=ok)
    R3 = plugin("R3", reserve=ok, unreserve=ok)
    h = await make_harness(
        [profile(reserve=["R1", "R2", "R3"])], registry_with(R1, R2, R3), objs=[*nodes("n1"), make_pod("p")]
    )
    await h.run_all()
    assert calls("reserve") == ["R1", "R2"]
    assert calls("unreserve") == ["R3", "R2", "R1"]
    assert h.scheduler.cache.pod_count() == 0  # forgotten
    assert h.scheduler.results["default/p"].message == "0/1 nodes are available: 1 r2 refuses."
    assert h.scheduler.queue.where(h.pod("p")["metadata"]["uid"]) == "unschedulable"


async def test_permit_reject_unreserves() -> None:
    R = plugin("R", reserve=ok, unreserve=ok)
    P = plugin("P", permit=lambda self, s, p, n: Status.unschedulable("not now"))
    h = await make_harness(
        [profile(reserve=["R"], permit=["P"])], registry_with(R, P), objs=[*nodes("n1"), make_pod("p")]
    )
    await h.run_all()
    assert calls("unreserve") == ["R"]
    assert h.node_of("p") is None


async def test_permit_wait_then_allow_binds() -> None:
    P = plugin("P", permit=lambda self, s, p, n: (Status.wait(), 30))
    h = await make_harness([profile(permit=["P"])], registry_with(P), objs=[*nodes("n1"), make_pod("p")])
    qpi = h.scheduler.queue.pop_nowait()
    await h.scheduler.schedule_one(qpi)
    await asyncio.sleep(0)
    fw = h.scheduler.frameworks["default-scheduler"]
    waiting = list(fw.iterate_waiting_pods())
    assert [w.pod["metadata"]["name"] for w in waiting] == ["p"]
    assert h.node_of("p") is None
    waiting[0].allow("P")
    await h.settle()
    assert h.node_of("p") == "n1"


async def test_permit_wait_then_reject_by_another_plugin() -> None:
    P = plugin("P", permit=lambda self, s, p, n: (Status.wait(), 30))
    R = plugin("R", reserve=ok, unreserve=ok)
    h = await make_harness(
        [profile(reserve=["R"], permit=["P"])], registry_with(P, R), objs=[*nodes("n1"), make_pod("p")]
    )
    await h.scheduler.schedule_one(h.scheduler.queue.pop_nowait())
    await asyncio.sleep(0)
    fw = h.scheduler.frameworks["default-scheduler"]
    wp = fw.get_waiting_pod(h.pod("p")["metadata"]["uid"])
    assert wp is not None
    wp.reject("Coscheduling", "group incomplete")
    await h.settle()
    assert h.node_of("p") is None
    assert calls("unreserve") == ["R"]
    assert h.scheduler.results["default/p"].message == "0/1 nodes are available: 1 group incomplete."


@pytest.mark.looptime
async def test_permit_wait_times_out() -> None:
    P = plugin("P", permit=lambda self, s, p, n: (Status.wait(), 10))
    h = await make_harness([profile(permit=["P"])], registry_with(P), objs=[*nodes("n1"), make_pod("p")])
    await h.scheduler.schedule_one(h.scheduler.queue.pop_nowait())
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await h.settle()
    assert loop.time() - t0 == pytest.approx(10, abs=0.5)
    assert h.node_of("p") is None
    assert h.scheduler.results["default/p"].message == (
        "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin P."
    )


async def test_bind_falls_through_skip_to_next_bind_plugin() -> None:
    async def skip_bind(self: Any, s: Any, p: Any, n: Any) -> Status:
        return Status.skip()

    B = plugin("SkipBinder", bind=skip_bind)
    spec = profile()
    spec.plugins["bind"] = [PluginRef("SkipBinder"), PluginRef("DefaultBinder")]
    h = await make_harness([spec], registry_with(B), objs=[*nodes("n1"), make_pod("p")])
    await h.run_all()
    assert calls("bind") == ["SkipBinder"]
    assert h.node_of("p") == "n1"
    assert h.scheduler.results["default/p"].bind == {"SkipBinder": "skipped", "DefaultBinder": "success"}


async def test_bind_failure_unreserves_forgets_and_retries() -> None:
    R = plugin("R", reserve=ok, unreserve=ok)
    B = plugin("FailBinder", bind=lambda self, s, p, n: Status.as_error("disk on fire"))
    spec = profile(reserve=["R"])
    spec.plugins["bind"] = [PluginRef("FailBinder")]
    h = await make_harness([spec], registry_with(R, B), objs=[*nodes("n1"), make_pod("p")])
    await h.run_all()
    assert calls("unreserve") == ["R"]
    assert h.scheduler.cache.pod_count() == 0
    assert h.scheduler.queue.where(h.pod("p")["metadata"]["uid"]) == "backoff"
    assert "disk on fire" in h.scheduler.results["default/p"].message


async def test_async_per_pod_methods_are_awaited() -> None:
    async def pre_filter(self: Any, s: CycleState, p: Any) -> Any:
        await asyncio.sleep(0)
        s.write("seen", p.name)
        return None

    A = plugin(
        "A",
        pre_filter=pre_filter,
        filter=lambda self, s, p, n: None if s.read("seen") == p.name else Status.unschedulable("x"),
    )
    h = await make_harness(
        [profile(preFilter=["A"], filter=["A"])], registry_with(A), objs=[*nodes("n1"), make_pod("p")]
    )
    await h.run_all()
    assert h.node_of("p") == "n1"


def test_profile_needs_exactly_one_queue_sort_and_a_binder() -> None:
    reg = registry_with()
    with pytest.raises(FrameworkError, match="exactly one queueSort"):
        Framework(ProfileSpec("x", {"bind": [PluginRef("DefaultBinder")]}), reg)
    with pytest.raises(FrameworkError, match="at least one bind plugin"):
        Framework(ProfileSpec("x", {"queueSort": [PluginRef("PrioritySort")]}), reg)


def test_plugin_enabled_at_a_point_it_does_not_implement_is_refused() -> None:
    reg = registry_with()
    spec = ProfileSpec(
        "x",
        {
            "queueSort": [PluginRef("PrioritySort")],
            "bind": [PluginRef("DefaultBinder")],
            "score": [PluginRef("NodeName", 1)],
        },
    )
    with pytest.raises(FrameworkError, match="'NodeName' does not implement extension point 'score'"):
        Framework(spec, reg)


def test_status_codes_match_upstream_numbers() -> None:
    assert [c.upstream_name for c in Code] == [
        "Success",
        "Error",
        "Unschedulable",
        "UnschedulableAndUnresolvable",
        "Wait",
        "Skip",
        "Pending",
    ]
    assert [int(c) for c in Code] == list(range(7))


async def test_prebind_rejection_goes_to_backoff_and_frees_the_room() -> None:
    # A pod rejected after Permit backs off (upstream); the room it held is released, so a pod
    # waiting for that room is moved out of the unschedulable pool at once.
    F = plugin("OnePerNode", filter=lambda self, s, p, n: Status.unschedulable("occupied") if n.pods else None)
    PB = plugin(
        "PB", pre_bind=lambda self, s, p, n: Status.unschedulable("volume not ready") if p.name == "a" else None
    )
    h = await make_harness([profile(filter=["OnePerNode"], preBind=["PB"])], registry_with(F, PB), objs=[*nodes("n1")])
    h.add(make_pod("a").priority(10), make_pod("b"))
    await h.settle()
    sched = h.scheduler
    await sched.schedule_one(sched.queue.pop_nowait())  # a: assumed on n1, binding cycle spawned
    await sched.schedule_one(sched.queue.pop_nowait())  # b: n1 is occupied by the assumed a
    uid_a, uid_b = h.pod("a")["metadata"]["uid"], h.pod("b")["metadata"]["uid"]
    assert sched.queue.where(uid_b) == "unschedulable"
    await h.settle()  # a's PreBind rejects
    assert sched.queue.where(uid_a) == "backoff"
    assert sched.queue.where(uid_b) in ("backoff", "active")
    assert h.node_of("a") is None


async def test_pods_to_activate_are_moved_to_the_active_queue() -> None:
    from kubesched.framework.interface import PODS_TO_ACTIVATE_KEY

    # "waiter" is rejected and parked; when "trigger" is placed, its Reserve asks for the waiter.
    def reserve(self: Any, state: Any, pod: Any, node: str) -> None:
        if pod.name == "trigger":
            state.write(PODS_TO_ACTIVATE_KEY, {UIDS["waiter"]: None})
        return None

    F = plugin(
        "OnlyTrigger", filter=lambda self, s, p, n: None if p.name == "trigger" else Status.unschedulable("later")
    )
    R = plugin("Activator", reserve=reserve, unreserve=ok)
    h = await make_harness(
        [profile(filter=["OnlyTrigger"], reserve=["Activator"])], registry_with(F, R), objs=[*nodes("n1")]
    )
    h.add(make_pod("waiter").priority(10))
    await h.settle()
    UIDS["waiter"] = h.pod("waiter")["metadata"]["uid"]
    await h.run_once()
    assert h.scheduler.queue.where(UIDS["waiter"]) == "unschedulable"
    h.add(make_pod("trigger"))
    await h.settle()
    await h.scheduler.schedule_one(h.scheduler.queue.pop_nowait())
    assert h.scheduler.queue.where(UIDS["waiter"]) == "active"


UIDS: dict[str, str] = {}


def test_an_unknown_plugin_is_named_with_the_uninstalled_package_that_declares_it(tmp_path: Path) -> None:
    from kubesched.errors import PluginError
    from kubesched.runtime.registry import Registry, RegistryError, unknown_plugin_message

    package = tmp_path / "catalogue" / "my-pkg"
    package.mkdir(parents=True)
    (package / "pyproject.toml").write_text(
        '[project]\nname = "my-dist"\n[project.entry-points."kubesched.plugins"]\nMyPlugin = "my_pkg:MyPlugin"\n'
    )
    (tmp_path / "catalogue" / "broken").mkdir()
    (tmp_path / "catalogue" / "broken" / "pyproject.toml").write_text("[project\n")
    msg = unknown_plugin_message("MyPlugin", ["NodeName"], folders=[tmp_path / "catalogue"])
    assert msg.startswith("unknown plugin 'MyPlugin': it is provided by the my-dist package (catalogue/my-pkg")
    assert "`pip install ./catalogue/my-pkg`" in msg
    assert unknown_plugin_message("MyPlugn", ["NodeName"], folders=[tmp_path / "catalogue"]).startswith(
        "unknown plugin 'MyPlugn' (did you mean 'MyPlugin'?)"
    )
    # Nothing close, no package: how a plugin of one's own is found.
    own = unknown_plugin_message("MyPlugin", ["NodeName"], folders=[])
    assert own.startswith("unknown plugin 'MyPlugin': a plugin of your own is found when its package is installed")
    assert "`--plugin my_module:MyPlugin`" in own and own.endswith("; known plugins: NodeName")
    with pytest.raises(RegistryError, match="unknown plugin 'Nope'") as err:
        Registry().get("Nope")
    assert isinstance(err.value, PluginError)
