"""NodeDeclaredFeatures: upstream's nodedeclaredfeatures_test.go tables and the 1.37 features'
inference tables (component-helpers nodedeclaredfeatures/features/*_test.go)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.events import ActionType, EventResource, QueueingHint, node_update_actions
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState
from kubesched.framework.status import Code, Status
from kubesched.plugins.node_declared_features import (
    ERR_REASON_UNSATISFIED_REQUIREMENTS,
    FEATURES,
    PRE_FILTER_STATE_KEY,
    DeclaredFeature,
    NodeDeclaredFeatures,
    infer_for_scheduling,
)
from kubesched.runtime.framework import Framework
from kubesched.runtime.profile import PluginRef, ProfileSpec
from kubesched.runtime.registry import Registry
from kubesched.testing import filter_nodes, make_node, make_pod

NAME = "NodeDeclaredFeatures"


def always(_spec: Any) -> bool:
    return True


def never(_spec: Any) -> bool:
    return False


def plugin(
    features: list[DeclaredFeature], version: tuple[int, int, int] | None = (1, 35, 0), enabled: bool = True
) -> NodeDeclaredFeatures:
    pl = NodeDeclaredFeatures(features=features, version=version)
    pl.enabled = enabled
    return pl


def node_with(*features: str) -> Any:
    node = make_node("node-1")
    if features:
        node.set("status.declaredFeatures", list(features))
    return node.info()


RESTART_ALL = {
    "name": "container",
    "image": "image",
    "restartPolicy": "Never",
    "restartPolicyRules": [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}],
}
PLAIN = {"name": "name", "image": "image"}


# --- inference of the 1.37 features ---------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"initContainers": [RESTART_ALL], "containers": [PLAIN]}, True),
        ({"initContainers": [PLAIN], "containers": [RESTART_ALL]}, True),
        ({"initContainers": [PLAIN], "containers": [{**PLAIN, "name": "name2"}]}, False),
        ({"containers": [{**RESTART_ALL, "restartPolicyRules": [{"action": "Restart"}]}]}, False),
    ],
    ids=["init container with rules", "regular container with rules", "no rules", "another action"],
)
def test_restart_all_containers_inference(spec: dict[str, Any], expected: bool) -> None:
    assert ("RestartAllContainersOnContainerExits" in infer_for_scheduling(spec)) is expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"hostNetwork": True, "hostUsers": False}, True),
        ({"hostNetwork": True, "hostUsers": True}, False),
        ({"hostNetwork": True}, False),
        ({"hostNetwork": False, "hostUsers": False}, False),
        ({"hostUsers": False}, False),
    ],
    ids=["host network in a user namespace", "host users", "hostUsers unset", "no host network", "pod network"],
)
def test_user_namespaces_host_network_inference(spec: dict[str, Any], expected: bool) -> None:
    assert ("UserNamespacesHostNetworkSupport" in infer_for_scheduling(spec)) is expected


def _mounting(field: str, options: list[str] | None) -> dict[str, Any]:
    mount: dict[str, Any] = {"name": "scratch", "mountPath": "/scratch"}
    if options is not None:
        mount["bindMountOptions"] = options
    return {field: [{**PLAIN, "volumeMounts": [mount]}]}


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (_mounting("containers", ["noexec"]), True),
        (_mounting("initContainers", ["nosuid"]), True),
        (_mounting("ephemeralContainers", ["nodev"]), True),
        (_mounting("containers", []), False),
        (_mounting("containers", None), False),
    ],
    ids=["container", "init container", "ephemeral container", "empty options", "no options"],
)
def test_volume_bind_mount_options_inference(spec: dict[str, Any], expected: bool) -> None:
    assert ("VolumeBindMountOptions" in infer_for_scheduling(spec)) is expected


def test_the_1_37_features_a_pod_can_require_when_scheduled() -> None:
    assert [f.name for f in FEATURES] == [
        "RestartAllContainersOnContainerExits",
        "UserNamespacesHostNetworkSupport",
        "VolumeBindMountOptions",
    ]
    assert infer_for_scheduling({"containers": [PLAIN]}) == frozenset()


# --- PreFilter ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("enabled", "version", "features", "code", "state"),
    [
        (False, (1, 35, 0), [DeclaredFeature("TestFeature1", always), DeclaredFeature("TestFeature2", never)], Code.SKIP, None),
        (True, (1, 35, 0), [DeclaredFeature("TestFeature1", always), DeclaredFeature("TestFeature2", never)], None, {"TestFeature1"}),
        (
            True,
            (1, 35, 0),
            [DeclaredFeature("TestFeature1", always, (1, 38, 0)), DeclaredFeature("TestFeature2", always, (1, 38, 0))],
            None,
            {"TestFeature1", "TestFeature2"},
        ),
        (True, (1, 35, 0), [DeclaredFeature("TestFeature1", never), DeclaredFeature("TestFeature2", never)], Code.SKIP, None),
        (True, (1, 34, 0), [DeclaredFeature("TestFeature1", always, (1, 33, 0)), DeclaredFeature("TestFeature2", never)], Code.SKIP, None),
    ],
    ids=[
        "plugin disabled",
        "Pod with feature requirements",
        "Pod with multiple feature requirements",
        "Pod with no requirements",
        "Feature not required, version > MaxVersion",
    ],
)  # fmt: skip
def test_pre_filter(
    enabled: bool, version: Any, features: list[DeclaredFeature], code: Code | None, state: Any
) -> None:
    cs = CycleState()
    status = plugin(features, version, enabled).pre_filter(cs, make_pod("test-pod").info())
    assert (status.code if status is not None else None) is code
    assert cs.get(PRE_FILTER_STATE_KEY) == (frozenset(state) if state is not None else None)


def test_pre_filter_without_a_target_version_is_an_error() -> None:
    status = plugin([DeclaredFeature("TestFeature", always)], version=None).pre_filter(
        CycleState(), make_pod("p").info()
    )
    assert status is not None and status.code is Code.ERROR
    assert status.reasons == ["target version cannot be nil"]


# --- Filter -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("enabled", "declared", "reqs", "rejected"),
    [
        (False, ["FeatureA", "FeatureB"], None, False),
        (True, ["FeatureA", "FeatureB"], ["FeatureA"], False),
        (True, ["FeatureB"], ["FeatureA"], True),
        (True, ["FeatureA", "FeatureB", "FeatureC"], ["FeatureA", "FeatureC"], False),
        (True, [], ["FeatureA"], True),
        (True, ["FeatureA"], ["FeatureA", "FeatureB"], True),
    ],
    ids=[
        "plugin disabled",
        "Node matches requirements",
        "Node does not match requirements",
        "Node with multiple features, pod requires subset",
        "Node has no declared features",
        "Node with some but not all required features",
    ],
)
def test_filter(enabled: bool, declared: list[str], reqs: list[str] | None, rejected: bool) -> None:
    cs = CycleState()
    if reqs is not None:
        cs.write(PRE_FILTER_STATE_KEY, frozenset(reqs))
    status = plugin([], enabled=enabled).filter(cs, make_pod("test-pod").info(), node_with(*declared))
    if rejected:
        assert status is not None and status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.reasons == [ERR_REASON_UNSATISFIED_REQUIREMENTS]
    else:
        assert status is None


def test_filter_without_pre_filter_state_is_an_error() -> None:
    status = plugin([]).filter(CycleState(), make_pod("test-pod").info(), node_with())
    assert status is not None and status.code is Code.ERROR
    assert status.reasons == ['error reading "PreFilterNodeDeclaredFeatures" from cycle-state: not found']


def test_pods_go_only_to_nodes_declaring_what_they_need() -> None:
    """PreFilter and Filter through a Framework, with the 1.37 features."""
    nodes = [
        make_node("old"),
        make_node("new").set("status.declaredFeatures", ["RestartAllContainersOnContainerExits", "Other"]),
    ]
    needs = make_pod("needs").set("spec.containers", [RESTART_ALL])
    statuses = filter_nodes(NodeDeclaredFeatures, needs, nodes)
    assert statuses["new"] is None
    old = statuses["old"]
    assert isinstance(old, Status) and old.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert old.reasons == [ERR_REASON_UNSATISFIED_REQUIREMENTS] and old.plugin == NAME
    assert filter_nodes(NodeDeclaredFeatures, make_pod("plain"), nodes) == {"old": None, "new": None}


# --- queueing hints -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "hint"),
    [
        (None, make_node("node-1").set("status.declaredFeatures", ["FeatureA"]).obj(), QueueingHint.QUEUE),
        (make_node("node-1").obj(), make_node("node-1").set("status.declaredFeatures", ["FeatureA"]).obj(), QueueingHint.QUEUE),
        (
            make_node("node-1").set("status.declaredFeatures", ["FeatureA"]).obj(),
            make_node("node-1").set("status.declaredFeatures", ["FeatureA"]).obj(),
            QueueingHint.SKIP,
        ),
    ],
    ids=["Node Add with feature", "Node Update (Features Added)", "Node Update (Features Unchanged)"],
)  # fmt: skip
def test_node_change_hint(old: Any, new: Any, hint: QueueingHint) -> None:
    assert plugin([]).is_schedulable_after_node_change(make_pod("test-pod").obj(), old, new) is hint


def _needs_on_label(spec: Any) -> bool:
    return bool(spec.get("priorityClassName") == "needs")


@pytest.mark.parametrize(
    ("old", "new", "version", "hint"),
    [
        ({}, {"spec.priorityClassName": "needs"}, (1, 35, 0), QueueingHint.QUEUE),
        ({"spec.priorityClassName": "needs"}, {}, (1, 35, 0), QueueingHint.QUEUE),
        ({}, {"metadata.labels": {"foo": "bar"}}, (1, 35, 0), QueueingHint.SKIP),
        ({}, {"metadata.labels": {"foo": "bar"}}, None, QueueingHint.QUEUE),
    ],
    ids=[
        "Pod Update adds requirement",
        "Pod Update removes requirement",
        "Pod Update with no change in requirements",
        "Infer returns error",
    ],
)
def test_target_pod_update_hint(old: dict[str, Any], new: dict[str, Any], version: Any, hint: QueueingHint) -> None:
    def pod(fields: dict[str, Any]) -> dict[str, Any]:
        b = make_pod("test-pod").uid("123")
        for path, value in fields.items():
            b.set(path, value)
        return b.obj()

    pl = plugin([DeclaredFeature("TestFeature", _needs_on_label)], version)
    assert pl.is_schedulable_after_target_pod_update(pod({}), pod(old), pod(new)) is hint


def test_an_update_of_another_pod_is_skipped() -> None:
    pl = plugin([DeclaredFeature("TestFeature", always)])
    other = make_pod("other").uid("456").obj()
    assert pl.is_schedulable_after_target_pod_update(make_pod("p").uid("123").obj(), other, other) is QueueingHint.SKIP


@pytest.mark.parametrize(("enabled", "count"), [(False, 0), (True, 2)], ids=["plugin disabled", "plugin enabled"])
def test_events_to_register(enabled: bool, count: int) -> None:
    events = plugin([], enabled=enabled).events_to_register()
    assert len(events) == count
    if enabled:
        assert [(e.event.resource, e.event.action) for e in events] == [
            (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_DECLARED_FEATURE),
            (EventResource.UNSCHEDULED_POD, ActionType.UPDATE),
        ]


def test_a_node_update_of_its_declared_features_is_its_own_kind_of_update() -> None:
    old = make_node("n").obj()
    new = make_node("n").set("status.declaredFeatures", ["FeatureA"]).obj()
    assert node_update_actions(old, new) == ActionType.UPDATE_NODE_DECLARED_FEATURE
    assert node_update_actions(new, new) == ActionType(0)


# --- gates --------------------------------------------------------------------------------------


def _framework(gates: FeatureGates) -> Framework:
    registry = Registry()
    registry.register(NodeDeclaredFeatures)
    spec = ProfileSpec("p", {"preFilter": [PluginRef(NAME)], "filter": [PluginRef(NAME)]}, {})
    return Framework(spec, registry, partial=True, feature_gates=gates)


def _built(fw: Framework) -> NodeDeclaredFeatures:
    (pl,) = [p for p in fw.plugins.values() if isinstance(p, NodeDeclaredFeatures)]
    return pl


def test_the_gate_is_read_from_the_handle() -> None:
    pl = _built(_framework(FeatureGates()))
    assert pl.enabled is True and pl.skip_deferred_resize is False


def test_a_deferred_resize_is_skipped_with_resize_preemption_on() -> None:
    pod = make_pod("p").set("status.conditions", [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}])
    pod.set("spec.containers", [RESTART_ALL])
    pl = _built(_framework(FeatureGates({"InPlacePodVerticalScalingSchedulerPreemption": True})))
    status = pl.pre_filter(CycleState(), pod.info())
    assert status is not None and status.code is Code.SKIP
    assert pl.filter(CycleState(), pod.info(), node_with()) is None
    # Without the gate the same pod is checked.
    off = _built(_framework(FeatureGates()))
    assert off.pre_filter(CycleState(), pod.info()) is None


def test_sign_pod_names_the_required_features() -> None:
    pl = NodeDeclaredFeatures()
    assert pl.sign_pod(make_pod("p").info()) == {"Features": []}
    needs = make_pod("p").set("spec.hostNetwork", True).set("spec.hostUsers", False)
    assert pl.sign_pod(needs.info()) == {"Features": ["UserNamespacesHostNetworkSupport"]}


# --- preemption (upstream's TestDryRunPreemptionCandidateFiltering) ------------------------------


@pytest.mark.parametrize(
    ("needs", "nominated", "survivors"),
    [
        (True, "node-userns", {"victim-plain"}),
        (False, None, set()),
    ],
    ids=["preemptor needs the feature: only the declaring node is a candidate", "no requirement: any node"],
)
async def test_preemption_considers_only_nodes_declaring_the_features(
    needs: bool, nominated: str | None, survivors: set[str]
) -> None:
    from conftest import make_harness

    from kubesched.config import load_config

    # node-plain first: without the feature check it would be the preemption's choice.
    nodes = [
        make_node("node-plain").capacity(cpu="1", memory="1Gi", pods="10"),
        make_node("node-userns").capacity(cpu="1", memory="1Gi", pods="10"),
    ]
    nodes[1].set("status.declaredFeatures", ["UserNamespacesHostNetworkSupport"])
    victims = [
        make_pod("victim-userns").priority(500).req(cpu="1").node("node-userns"),
        make_pod("victim-plain").priority(500).req(cpu="1").node("node-plain"),
    ]
    preemptor = make_pod("preemptor").priority(1000).req(cpu="1")
    if needs:
        preemptor.set("spec.hostNetwork", True).set("spec.hostUsers", False)
    h = await make_harness(load_config(None).profiles, objs=[*nodes, *victims, preemptor])
    try:
        await h.run_all(limit=5)
        await h.settle()
        left = {p["metadata"]["name"] for p in h.store.list("Pod")[0] if p["metadata"]["name"].startswith("victim")}
        got = (h.pod("preemptor").get("status") or {}).get("nominatedNodeName") or h.node_of("preemptor")
        if nominated is not None:
            assert got == nominated
            assert left == survivors
        else:
            # Either node will do; exactly one victim goes.
            assert got in {"node-userns", "node-plain"} and len(left) == 1
    finally:
        await h.scheduler.stop(grace=1)
