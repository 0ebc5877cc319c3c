"""A plugin's handle is the face's ``Handle`` and nothing more: not the profile's Framework, no
public member the protocol does not declare, and no way to add one. Every member passes on what
the Framework holds when it is asked."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched import Code, Handle, Status
from kubesched.framework.interface import CycleState
from kubesched.runtime.framework import Framework
from kubesched.runtime.handle import PluginHandle
from kubesched.testing import as_node_infos, framework_for, make_node, make_pod


class Spy:
    name = "Spy"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle
        self.calls: list[str] = []

    def filter(self, state: CycleState, pod: Any, node: Any) -> Status | None:
        return Status(Code.UNSCHEDULABLE, "not this one") if pod.name == "refused" else None

    def reserve(self, state: CycleState, pod: Any, node_name: str) -> None:
        self.calls.append(f"reserve {pod.name} {node_name}")

    def unreserve(self, state: CycleState, pod: Any, node_name: str) -> None:
        self.calls.append(f"unreserve {pod.name} {node_name}")


def _protocol_members(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")}


def _public(obj: object) -> set[str]:
    return {name for name in dir(obj) if not name.startswith("_")}


def _spy() -> tuple[Framework, Any]:
    fw = framework_for(Spy, nodes=as_node_infos([make_node("n1")]))
    return fw, fw.plugins["Spy"].handle


def test_a_plugin_is_given_a_handle_that_is_not_the_framework() -> None:
    fw, handle = _spy()
    assert isinstance(handle, PluginHandle) and not isinstance(handle, Framework)
    assert handle is fw.handle


def test_the_handle_has_exactly_the_protocols_members() -> None:
    _, handle = _spy()
    members = _protocol_members(Handle)
    assert len(members) > 20  # the protocol read as it is, not an empty set
    assert _public(handle) == members


def test_what_the_framework_runs_is_out_of_a_plugins_reach() -> None:
    fw, handle = _spy()
    beyond = _public(fw) - _protocol_members(Handle)
    assert {"run_pre_filter", "run_filter", "plugins", "set_snapshot", "waiting_pods", "spec"} <= beyond
    assert not any(hasattr(handle, name) for name in beyond)


def test_nothing_can_be_added_to_the_handle() -> None:
    _, handle = _spy()
    assert not hasattr(handle, "__dict__")
    with pytest.raises(AttributeError):
        handle.run_pre_filter = None
    with pytest.raises(AttributeError):
        handle.listers = None


def test_each_member_is_the_frameworks_when_asked() -> None:
    fw, handle = _spy()
    assert handle.snapshot() is fw.snapshot()
    assert (handle.profile_name, handle.parallelism) == (fw.profile_name, fw.parallelism)
    assert handle.feature_gates is fw.feature_gates and handle.pod_groups is fw.pod_groups
    assert handle.cluster is fw.cluster and handle.preempt_with_extenders is None
    # Collaborators given to the Framework after the plugins were built reach them too.
    listers, nominator, observer = object(), object(), object()
    fw.listers, fw.nominator, fw.observer = listers, nominator, observer
    assert (handle.listers, handle.nominator, handle.observer) == (listers, nominator, observer)
    pod = make_pod("p").uid("p-uid").info()
    fw.placed_pod = lambda uid: pod if uid == "p-uid" else None
    assert handle.placed_pod("p-uid") is pod and handle.placed_pod("other") is None
    moved: list[list[str]] = []
    fw.activator = moved.append
    handle.activate([pod])
    assert moved == [["p-uid"]]
    state = CycleState()
    assert [p.name for p in handle.filter_plugins_in_play(state)] == ["Spy"]
    state.skip_filter_plugins.add("Spy")
    assert list(handle.filter_plugins_in_play(state)) == []
    assert handle.pre_filter_extensions_in_play(state) is False


async def test_the_runners_a_plugin_may_call_are_the_frameworks() -> None:
    fw, handle = _spy()
    pod = make_pod("p").info()
    node = fw.snapshot().get("n1")
    state = CycleState()
    assert await handle.run_filter_with_nominated_pods(state, pod, node) is None
    refused = await handle.run_filter_with_nominated_pods(state, make_pod("refused").info(), node)
    assert refused is not None and refused.reasons == ["not this one"]
    assert await handle.run_pre_filter_add_pod(state, pod, pod, node) is None
    assert await handle.run_pre_filter_remove_pod(state, pod, pod, node) is None
    assert await handle.run_reserve(state, pod, "n1") is None
    assert await handle.run_unreserve(state, pod, "n1") is None
    assert fw.plugins["Spy"].calls == ["reserve p n1", "unreserve p n1"]
    assert handle.nominated_pods_counted(pod, "n1") == []
    assert handle.get_waiting_pod("nobody") is None and list(handle.iterate_waiting_pods()) == []
    assert handle.reject_waiting_pod("nobody") is False
