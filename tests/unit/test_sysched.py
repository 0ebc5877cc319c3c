"""SySched (plugins/sysched) as scheduler-plugins' ``pkg/sysched``: ``sysched_test.go``, case
for case, each test named after its Go test and case (``TestRemove/"Remove one"`` ...), against
the profiles that test's fake client holds (:mod:`sysched_cases`)."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from sysched_cases import FULL_SECCOMP, PACKAGE, PROFILES, X_SECCOMP, Z_SECCOMP, annotated, localhost

from kubesched import NodeScore
from kubesched.testing import make_node, make_pod

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_sysched import SySched, SySchedArgs, calc_score, parse_name_ns, read_profile, remove

Obj = dict[str, Any]


def mock_sysched() -> SySched:
    """upstream's ``mockSysched``: the three profiles, ``full-seccomp`` the default."""
    sys_ = SySched(
        SySchedArgs.model_validate({"defaultProfileNamespace": "default", "defaultProfileName": "full-seccomp"})
    )
    for profile in PROFILES:
        sys_.add_profile(profile)
    return sys_


# --- TestRemove ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("case", "remove_index", "expected_len"),
    [("Remove one", [1], 2), ("Remove two", [1, 0], 1), ("Remove all", [2, 1, 0], 0)],
)
def test_remove(case: str, remove_index: list[int], expected_len: int) -> None:
    pods: list[Any] = [make_pod(f"Pod-{i}").obj() for i in (1, 2, 3)]
    for i in remove_index:
        pods = remove(pods, i)
    assert len(pods) == expected_len, case


def test_remove_moves_the_last_pod_into_the_gap() -> None:
    pods: list[Any] = [make_pod(f"Pod-{i}").obj() for i in (1, 2, 3)]
    assert [p["metadata"]["name"] for p in remove(pods, 0)] == ["Pod-3", "Pod-2"]
    assert remove([], 0) == []


# --- TestParseNameNS -------------------------------------------------------------------------------
def test_parse_name_ns_get_name_space_and_name() -> None:
    assert parse_name_ns("localhost/operator/default/httpd-seccomp.json") == ("default", "httpd-seccomp")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("operator/prod/web.json", ("prod", "web")),  # the path SPO installs at
        ("security-profiles-operator.x-k8s.io/default/bad.json", ("default", "bad")),  # the integration test's
        ("default/web", ("default", "web")),  # no extension
        ("default/web.v2.json", ("default", "web.v2")),  # only the last extension goes
        ("web.json", ("", "")),  # fewer than two elements
        ("", ("", "")),
        ("default/.json", ("default", "")),  # Go's path.Ext of ".json" is all of it
    ],
)
def test_parse_name_ns_takes_the_last_two_path_elements(path: str, expected: tuple[str, str]) -> None:
    assert parse_name_ns(path) == expected


# --- TestReadSPOProfileCR --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("case", "ns", "name", "expected"),
    [("Empty CR path", "", "", []), ("Valid CR path", "default", "z-seccomp", Z_SECCOMP)],
)
def test_read_spo_profile_cr(case: str, ns: str, name: str, expected: list[str]) -> None:
    sys_ = mock_sysched()
    syscalls = read_profile(sys_.lookup, name, ns)
    assert syscalls == set(expected), case


# --- TestGetSyscalls -------------------------------------------------------------------------------
def pod_with_security_context() -> Obj:
    """``MakePodWithSecurityContext``: a spec of nothing but the pod's security context."""
    pod = make_pod("").obj()
    pod["spec"] = {"securityContext": localhost("z-seccomp")}
    return pod


def pod_container_with_security_context() -> Obj:
    """``MakePodContainerWithSecurityContext``"""
    pod = make_pod("").obj()
    pod["spec"]["containers"] = [{"name": "c0", "securityContext": localhost("z-seccomp")}]
    return pod


@pytest.mark.parametrize(
    ("case", "pod", "expected"),
    [
        ("Pod with annotation", annotated("", "z-seccomp").obj(), len(Z_SECCOMP)),
        ("Pod with SecurityContext", pod_with_security_context(), len(Z_SECCOMP)),
        ("Pod with Container SecurityContext", pod_container_with_security_context(), len(Z_SECCOMP)),
        ("Pod with empty SecurityContext", make_pod("").obj(), len(FULL_SECCOMP)),
    ],
)
def test_get_syscalls(case: str, pod: Obj, expected: int) -> None:
    assert len(mock_sysched().get_syscalls(pod)) == expected, case


# --- TestCalcScore ---------------------------------------------------------------------------------
def test_calc_score_calculate_exs_score() -> None:
    assert calc_score(set(Z_SECCOMP)) == len(Z_SECCOMP)


# --- TestScore -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("case", "profile", "expected"),
    [("Test score difference", "x-seccomp", 2), ("Test score same", "z-seccomp", 0)],
)
def test_score(case: str, profile: str, expected: int) -> None:
    sys_ = mock_sysched()
    sys_.hosts.add_pod(annotated("Existing pod", "z-seccomp").node("test").obj())
    score, status = sys_.score(None, annotated("pod", profile).info(), make_node("test").info())  # type: ignore[arg-type]
    assert status is None
    assert score == expected, case


# --- TestNormalizeScore ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("case", "raw", "expected"),
    [("Normalize score", [100, 200], [50, 0]), ("Normalize score 2", [0, 200], [100, 0])],
)
def test_normalize_score(case: str, raw: list[int], expected: list[int]) -> None:
    scores = [NodeScore("test", raw[0]), NodeScore("test1", raw[1])]
    pod = annotated("pod1", "httpd-seccomp").info()
    assert mock_sysched().normalize_score(None, pod, scores) is None  # type: ignore[arg-type]
    assert [s.score for s in scores] == expected, case


# --- TestGetHostSyscalls ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("case", "pods", "expected"),
    [
        ("single", [annotated("pod1", "z-seccomp").node("test")], len(Z_SECCOMP)),
        (
            "many",
            [
                annotated("pod1", "z-seccomp").node("test"),
                annotated("pod2", "x-seccomp").node("test"),
                annotated("pod3", "full-seccomp").node("test1"),
            ],
            len(set(Z_SECCOMP) | set(X_SECCOMP)),
        ),
    ],
)
def test_get_host_syscalls(case: str, pods: list[Any], expected: int) -> None:
    sys_ = mock_sysched()
    for p in pods:
        sys_.hosts.add_pod(p.obj())
    count, _ = sys_.hosts.host_syscalls_of("test")
    assert count == expected, case


# --- TestUpdateHostSyscalls ------------------------------------------------------------------------
def test_update_host_syscalls_on_same_host() -> None:
    sys_ = mock_sysched()
    sys_.hosts.add_pod(annotated("", "z-seccomp").node("test").obj())
    sys_.hosts.update_host_syscalls(annotated("", "x-seccomp").node("test").obj())
    count, _ = sys_.hosts.host_syscalls_of("test")
    assert count == len(set(Z_SECCOMP) | set(X_SECCOMP))


# --- TestAddPod ------------------------------------------------------------------------------------
def test_add_pod_add_1_pod() -> None:
    sys_ = mock_sysched()
    pods = [annotated("", "z-seccomp").node("test").obj()]
    for p in pods:
        sys_.hosts.add_pod(p)
    assert sys_.hosts.host_to_pods["test"] == pods
    assert len(sys_.hosts.host_syscalls["test"]) == len(Z_SECCOMP)


def test_add_pod_lists_a_pod_once_by_its_name() -> None:
    """Upstream compares names only: a second pod of the same name on the node is not added."""
    sys_ = mock_sysched()
    sys_.hosts.add_pod(annotated("web", "z-seccomp").node("test").obj())
    sys_.hosts.add_pod(annotated("web", "x-seccomp").namespace("other").node("test").obj())
    assert len(sys_.hosts.host_to_pods["test"]) == 1
    assert sys_.hosts.host_syscalls["test"] == set(Z_SECCOMP)


# --- TestRecomputeHostSyscalls ---------------------------------------------------------------------
def test_recompute_host_syscalls_recompute_2_pods() -> None:
    pods = [annotated("", "z-seccomp").node("test").obj(), annotated("", "x-seccomp").node("test").obj()]
    assert len(mock_sysched().hosts.recompute_host_syscalls(pods)) == len(set(Z_SECCOMP) | set(X_SECCOMP))


# --- TestRemovePod ---------------------------------------------------------------------------------
def test_remove_pod_remove_1_pod() -> None:
    sys_ = mock_sysched()
    sys_.hosts.add_pod(annotated("pod1", "z-seccomp").node("test").obj())
    sys_.hosts.add_pod(annotated("pod2", "x-seccomp").node("test").obj())
    sys_.hosts.remove_pod(annotated("pod1", "z-seccomp").node("test").obj())
    assert len(sys_.hosts.host_to_pods["test"]) == 1
    assert len(sys_.hosts.host_syscalls["test"]) == len(X_SECCOMP)


def test_remove_pod_of_a_node_never_seen_changes_nothing() -> None:
    sys_ = mock_sysched()
    sys_.hosts.remove_pod(annotated("pod1", "z-seccomp").node("test").obj())
    assert sys_.hosts.host_syscalls_of("test") == (0, None)


# --- TestPodAdded ----------------------------------------------------------------------------------
def test_pod_added_update_1_pod() -> None:
    sys_ = mock_sysched()
    for p in (annotated("pod1", "z-seccomp"), annotated("pod2", "x-seccomp")):
        sys_.pod_added(p.node("test").set("status.phase", "Running").obj())
    assert len(sys_.hosts.host_to_pods["test"]) == 2
    assert len(sys_.hosts.host_syscalls["test"]) == len(set(Z_SECCOMP) | set(X_SECCOMP))


def test_pod_added_that_is_not_running_is_not_counted() -> None:
    sys_ = mock_sysched()
    sys_.pod_added(annotated("pod1", "z-seccomp").node("test").set("status.phase", "Pending").obj())
    assert sys_.hosts.host_to_pods == {}


# --- TestPodUpdated --------------------------------------------------------------------------------
def test_pod_updated_update_1_pod() -> None:
    sys_ = mock_sysched()
    sys_.hosts.add_pod(annotated("pod1", "z-seccomp").node("test").obj())
    old = annotated("pod2", "x-seccomp").node("test").set("status.hostIP", "192.168.0.2").set("status.phase", "Pending")
    sys_.pod_updated(old.obj(), None)
    assert len(sys_.hosts.host_to_pods["test"]) == 2
    assert len(sys_.hosts.host_syscalls["test"]) == len(set(Z_SECCOMP) | set(X_SECCOMP))


@pytest.mark.parametrize(
    "old",
    [
        annotated("pod2", "x-seccomp").node("test").set("status.phase", "Pending"),  # no host IP yet
        annotated("pod2", "x-seccomp").node("test").set("status.hostIP", "10.0.0.2"),  # Running already
    ],
)
def test_pod_updated_counts_only_an_old_state_pending_with_a_host_ip(old: Any) -> None:
    sys_ = mock_sysched()
    sys_.pod_updated(old.obj(), None)
    assert sys_.hosts.host_to_pods == {}


# --- TestPodDeleted --------------------------------------------------------------------------------
def test_pod_deleted_delete_1_pod() -> None:
    sys_ = mock_sysched()
    sys_.hosts.add_pod(annotated("pod1", "z-seccomp").node("test").obj())
    sys_.hosts.add_pod(annotated("pod2", "x-seccomp").node("test").set("status.phase", "Pending").obj())
    sys_.pod_deleted(annotated("pod2", "x-seccomp").node("test").set("status.phase", "Pending").obj())
    assert len(sys_.hosts.host_to_pods["test"]) == 1
    assert len(sys_.hosts.host_syscalls["test"]) == len(Z_SECCOMP)


# --- TestGetArgs -----------------------------------------------------------------------------------
def test_get_args() -> None:
    args = SySchedArgs.model_validate({"defaultProfileNamespace": "default", "defaultProfileName": "x-seccomp.json"})
    assert (args.default_profile_namespace, args.default_profile_name) == ("default", "x-seccomp.json")
    plugin = SySched(args)
    assert (plugin.default_profile_namespace, plugin.default_profile_name) == ("default", "x-seccomp.json")
