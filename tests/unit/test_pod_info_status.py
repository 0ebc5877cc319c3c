"""What PodInfo reads of a pod's status (nominated node, phase, whether it finished) and
:func:`pod_uid`: the same values as the look-ups they replaced, and read from the object as it
is now (the status moves without a re-derive)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.types import PodInfo, pod_key, pod_uid


def _pod(status: Any = None, **meta: Any) -> dict[str, Any]:
    pod: dict[str, Any] = {"metadata": {"name": "p", "namespace": "ns", **meta}, "spec": {}}
    if status is not None:
        pod["status"] = status
    return pod


@pytest.mark.parametrize(
    ("status", "nominated", "phase", "terminal"),
    [
        (None, "", "", False),
        ({}, "", "", False),
        ({"nominatedNodeName": None, "phase": None}, "", "", False),
        ({"nominatedNodeName": "n1", "phase": "Pending"}, "n1", "Pending", False),
        ({"phase": "Running"}, "", "Running", False),
        ({"phase": "Succeeded"}, "", "Succeeded", True),
        ({"phase": "Failed", "nominatedNodeName": ""}, "", "Failed", True),
    ],
)
def test_status_fields(status: Any, nominated: str, phase: str, terminal: bool) -> None:
    pi = PodInfo(_pod(status))
    old = pi.pod.get("status") or {}
    assert (pi.nominated_node_name, pi.phase, pi.is_terminal) == (nominated, phase, terminal)
    assert bool(pi.nominated_node_name) == bool(old.get("nominatedNodeName"))
    assert pi.is_terminal == (old.get("phase") in ("Succeeded", "Failed"))


def test_status_read_as_it_is_now() -> None:
    pi = PodInfo(_pod({"phase": "Pending"}))
    assert pi.with_nomination("n2").nominated_node_name == "n2"
    pi.pod["status"]["phase"] = "Failed"
    assert pi.is_terminal and pi.phase == "Failed"


@pytest.mark.parametrize(
    ("pod", "uid"),
    [
        (_pod(uid="u-1"), "u-1"),
        (_pod(uid=""), "ns/p"),
        (_pod(uid=None), "ns/p"),
        ({"metadata": {"name": "q"}}, "default/q"),
        ({}, "default/"),
    ],
)
def test_pod_uid_is_what_pod_info_says(pod: dict[str, Any], uid: str) -> None:
    assert pod_uid(pod) == uid == ((pod.get("metadata") or {}).get("uid") or pod_key(pod))
    if pod.get("metadata", {}).get("name"):
        assert PodInfo(pod).uid == uid
