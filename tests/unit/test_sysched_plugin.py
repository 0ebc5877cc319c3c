"""SySched (plugins/sysched) beyond upstream's unit tables: the plugin built through the runtime
with its informers (``TestNew``; the SeccompProfiles and the pods delivered as a scheduler would
deliver them), the ExS score and its normalization over several nodes, which profiles count
(Unconfined, RuntimeDefault, init containers, actions), a profile that cannot be read (logged in
upstream's words), pod events held until the profiles are listed, and the args as scheduler-plugins'
``SySchedArgs`` (defaults, errors naming the field)."""

from __future__ import annotations

import logging
import sys
from typing import Any

import pytest
import yaml
from pydantic import ValidationError
from sysched_cases import FULL_SECCOMP, PACKAGE, PROFILES, X_SECCOMP, Z_SECCOMP, annotated, localhost, seccomp_profile

from kubesched import NodeScore
from kubesched.config import parse_config
from kubesched.config.validation import validate_plugin_args
from kubesched.errors import ConfigurationError
from kubesched.runtime.registry import Registry, default_registry
from kubesched.testing import make_node, make_pod, plugin_framework

sys.path.insert(0, str(PACKAGE))  # the package is not installed for the suite

from kubesched_sysched import (
    CRD,
    MAX_INT64,
    SySched,
    SySchedArgs,
    default_normalize_score,
    pod_syscalls,
)

Obj = dict[str, Any]
ARGS = {"defaultProfileNamespace": "default", "defaultProfileName": "full-seccomp"}


def crd() -> Obj:
    loaded: Obj = yaml.safe_load(CRD.read_text())
    return loaded


def lookup_of(*profiles: Obj) -> Any:
    by_key = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in profiles}
    return lambda ns, name: by_key.get((ns, name))


# --- TestNew: through the runtime, objects from the informers ---------------------------------------
def test_new_reads_profiles_and_running_pods_through_its_informers() -> None:
    running = annotated("existing", "z-seccomp").node("n1").obj()
    with plugin_framework(
        SySched,
        args=ARGS,
        nodes=[make_node("n1"), make_node("n2")],
        pods=[running],
        objects=[crd(), *PROFILES, running],
    ) as fw:
        plugin = fw.plugin()
        assert isinstance(plugin, SySched)
        assert (plugin.default_profile_namespace, plugin.default_profile_name) == ("default", "full-seccomp")
        details = fw.score_details(annotated("new", "x-seccomp"))
        assert details.status is None
        # n1: fchmod the new pod never makes, dup3 the existing pod would be exposed to
        assert details.raw == {"SySched": {"n1": 2, "n2": 0}}
        assert details.final == {"SySched": {"n1": 0, "n2": 100}}
        assert plugin.hosts.host_syscalls == {"n1": set(Z_SECCOMP)}


class StubInformer:
    """An informer whose first list has not been delivered until ``synced`` is set."""

    def __init__(self, objects: list[Obj]) -> None:
        self.objects = objects
        self.synced = False
        self.handlers: list[Any] = []
        self.lister = self

    def get(self, namespace: str | None, name: str) -> Obj | None:
        return next((o for o in self.objects if o["metadata"]["name"] == name), None)

    def add_event_handler(self, on_add: Any = None, on_update: Any = None, on_delete: Any = None) -> None:
        self.handlers.append(on_add)

    def has_synced(self) -> bool:
        return self.synced


class StubHandle:
    def __init__(self) -> None:
        self.profiles = StubInformer(PROFILES)
        self.pods = StubInformer([])

    def informer_for(self, gvr: Any) -> StubInformer:
        return self.profiles if gvr.resource == "seccompprofiles" else self.pods


def test_pod_events_wait_for_the_profiles_to_be_listed() -> None:
    """A pod delivered before the SeccompProfiles would be read as having no profile; it is held
    until their informer has synced (upstream's cached client waits for that before its first
    read), then counted with its own profile."""
    handle = StubHandle()
    plugin = SySched(SySchedArgs.model_validate(ARGS), handle)  # type: ignore[arg-type]
    (on_add,) = handle.pods.handlers
    on_add(annotated("early", "z-seccomp").node("n1").obj())
    assert plugin.hosts.host_syscalls == {}
    handle.profiles.synced = True
    assert plugin.score(None, annotated("new", "z-seccomp").info(), make_node("n1").info()) == (0, None)  # type: ignore[arg-type]
    assert plugin.hosts.host_syscalls == {"n1": set(Z_SECCOMP)}
    on_add(annotated("later", "x-seccomp").node("n1").obj())  # once synced, at once
    assert plugin.hosts.host_syscalls == {"n1": set(Z_SECCOMP) | set(X_SECCOMP)}


# --- Score and NormalizeScore over several nodes ------------------------------------------------------
WEB = seccomp_profile("web", ["read", "write", "accept", "sendfile"])
DB = seccomp_profile("db", ["read", "write", "fsync", "pwrite64"])


def test_exs_counts_what_the_pod_and_each_pod_on_the_node_would_be_exposed_to() -> None:
    plugin = SySched(SySchedArgs.model_validate(ARGS))
    for profile in (WEB, DB):
        plugin.add_profile(profile)
    plugin.hosts.add_pod(annotated("web-1", "web").node("a").obj())
    plugin.hosts.add_pod(annotated("db-1", "db").node("a").obj())
    plugin.hosts.add_pod(annotated("web-2", "web").node("b").obj())
    pod = annotated("web-3", "web").info()
    # a: H = {read, write, accept, sendfile, fsync, pwrite64}; H - P = {fsync, pwrite64} (2);
    # H | P = H: web-1 is exposed to 2, db-1 to {accept, sendfile} (2): 6 in all
    assert plugin.score(None, pod, make_node("a").info()) == (6, None)  # type: ignore[arg-type]
    # b: nothing extraneous
    assert plugin.score(None, pod, make_node("b").info()) == (0, None)  # type: ignore[arg-type]
    # c: no pod seen
    assert plugin.score(None, pod, make_node("c").info()) == (0, None)  # type: ignore[arg-type]
    assert plugin.exs_avg_count == 3  # the two nodes with pods, and it starts at 1
    scores = [NodeScore("a", 6), NodeScore("b", 0), NodeScore("c", 0)]
    plugin.normalize_score(None, pod, scores)  # type: ignore[arg-type]
    assert [s.score for s in scores] == [0, 100, 100]


def test_a_pod_of_no_system_call_scores_the_largest_int64_and_every_node_100() -> None:
    """No profile of its own and the default one missing: the largest int64 on every node, which
    Go's ``100 * score`` wraps, so that the normalized score is 100 everywhere."""
    plugin = SySched(SySchedArgs.model_validate({"defaultProfileName": "missing"}))
    plugin.hosts.host_syscalls["a"] = {"read"}
    pod = make_pod("bare").info()
    assert plugin.score(None, pod, make_node("a").info()) == (MAX_INT64, None)  # type: ignore[arg-type]
    assert plugin.score(None, pod, make_node("b").info()) == (MAX_INT64, None)  # type: ignore[arg-type]
    scores = [NodeScore("a", MAX_INT64), NodeScore("b", MAX_INT64)]
    default_normalize_score(100, True, scores)
    assert [s.score for s in scores] == [100, 100]


def test_all_zero_scores_normalize_to_100() -> None:
    scores = [NodeScore("a", 0), NodeScore("b", 0)]
    default_normalize_score(100, True, scores)
    assert [s.score for s in scores] == [100, 100]


def test_a_deleted_pod_leaves_its_node_and_the_set_is_recomputed_from_the_profiles_now() -> None:
    plugin = SySched(SySchedArgs.model_validate(ARGS))
    for profile in (WEB, DB):
        plugin.add_profile(profile)
    plugin.pod_added(annotated("web-1", "web").node("a").obj())
    plugin.pod_added(annotated("db-1", "db").node("a").obj())
    plugin.add_profile(seccomp_profile("web", ["read"]))  # the web profile narrowed since
    plugin.pod_deleted(annotated("db-1", "db").node("a").obj())
    assert plugin.hosts.host_syscalls["a"] == {"read"}
    plugin.pod_deleted(annotated("web-1", "web").node("a").obj())
    # every pod gone: an empty set, not "never seen"
    assert plugin.hosts.host_syscalls_of("a") == (0, set())


# --- which profiles count ----------------------------------------------------------------------------
def syscalls(pod: Obj, *profiles: Obj, default: str = "full-seccomp") -> set[str]:
    return pod_syscalls(pod, lookup_of(*(profiles or PROFILES)), "default", default)


@pytest.mark.parametrize("kind", ["Unconfined", "RuntimeDefault"])
def test_unconfined_and_runtime_default_give_nothing_and_the_default_profile_is_taken(kind: str) -> None:
    pod = make_pod("p").set("spec.securityContext", {"seccompProfile": {"type": kind}}).obj()
    assert syscalls(pod) == set(FULL_SECCOMP)
    pod["spec"]["containers"][0]["securityContext"] = localhost("z-seccomp")
    assert syscalls(pod) == set(Z_SECCOMP)


def test_a_localhost_profile_without_a_path_gives_nothing() -> None:
    pod = make_pod("p").set("spec.securityContext", {"seccompProfile": {"type": "Localhost"}}).obj()
    assert syscalls(pod) == set(FULL_SECCOMP)


def test_pod_and_container_profiles_are_united_and_init_containers_are_not_read() -> None:
    pod = make_pod("p").set("spec.securityContext", localhost("z-seccomp")).obj()
    pod["spec"]["containers"][0]["securityContext"] = localhost("x-seccomp")
    pod["spec"]["initContainers"] = [{"name": "init", "securityContext": localhost("full-seccomp")}]
    assert syscalls(pod) == set(Z_SECCOMP) | set(X_SECCOMP)


def test_only_allowed_and_logged_system_calls_count() -> None:
    profile = seccomp_profile("mixed", ["read"])
    profile["spec"]["syscalls"] += [
        {"action": "SCMP_ACT_LOG", "names": ["write"]},
        {"action": "SCMP_ACT_ERRNO", "names": ["mount"]},
        {"action": "SCMP_ACT_KILL", "names": ["reboot"]},
        {"action": "SCMP_ACT_TRACE", "names": ["ptrace"]},
    ]
    assert syscalls(annotated("p", "mixed").obj(), profile) == {"read", "write"}


def test_the_first_readable_annotation_is_taken(caplog: pytest.LogCaptureFixture) -> None:
    pod = (
        make_pod("p")
        .annotation("a.seccomp.security.alpha.kubernetes.io/c0", "operator/default/missing.json")
        .annotation("b.seccomp.security.alpha.kubernetes.io/c1", "operator/default/z-seccomp.json")
        .annotation("c.seccomp.security.alpha.kubernetes.io/c2", "operator/default/x-seccomp.json")
        .obj()
    )
    with caplog.at_level(logging.ERROR):
        assert syscalls(pod) == set(Z_SECCOMP)
    assert "Failed to read syscall CR by parsing pod annotation" in caplog.text
    assert 'seccompprofiles.security-profiles-operator.x-k8s.io "missing" not found' in caplog.text


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ("spec.securityContext", "Failed to read syscall CR by parsing pod security context"),
        ("container", "Failed to read syscall CR by parsing container security context"),
    ],
)
def test_a_profile_not_found_is_logged_in_upstreams_words(
    where: str, message: str, caplog: pytest.LogCaptureFixture
) -> None:
    pod = make_pod("p").obj()
    if where == "container":
        pod["spec"]["containers"][0]["securityContext"] = localhost("gone")
    else:
        pod["spec"]["securityContext"] = localhost("gone")
    with caplog.at_level(logging.ERROR):
        assert syscalls(pod, *PROFILES, default="also-gone") == set()
    assert message in caplog.text
    assert "Failed to read the CR of all syscalls" in caplog.text


def test_a_malformed_profile_is_logged_and_gives_nothing(caplog: pytest.LogCaptureFixture) -> None:
    bad = seccomp_profile("bad", ["read"])
    bad["spec"]["syscalls"] = "read"
    with caplog.at_level(logging.ERROR):
        assert syscalls(annotated("p", "bad").obj(), bad) == set()
    assert "spec.syscalls: expected a list" in caplog.text


# --- the args ------------------------------------------------------------------------------------------
def test_the_args_default_as_upstream() -> None:
    args = validate_plugin_args(SySchedArgs, {})
    assert (args.default_profile_namespace, args.default_profile_name) == ("default", "all-syscalls")
    args = validate_plugin_args(SySchedArgs, {"defaultProfileNamespace": None, "defaultProfileName": None})
    assert (args.default_profile_namespace, args.default_profile_name) == ("default", "all-syscalls")


def test_a_bad_field_is_refused_by_name() -> None:
    with pytest.raises(ValidationError) as exc:
        validate_plugin_args(SySchedArgs, {"defaultProfileName": 5})
    assert "defaultProfileName" in str(exc.value)


def registry() -> Registry:
    reg = Registry()
    for entry in default_registry().entries():
        if entry.name != "SySched":
            reg.register(entry.cls, entry.name, entry.distribution)
    reg.register(SySched)
    return reg


#: scheduler-plugins' manifests/sysched/scheduler-config.yaml, in v1.
UPSTREAM_CONFIG = """
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: SySched
  pluginConfig:
    - name: SySched
      args:
        defaultProfileNamespace: "default"
        defaultProfileName: "full-seccomp"
"""


def test_upstreams_configuration_loads_unchanged() -> None:
    (profile,) = parse_config(yaml.safe_load(UPSTREAM_CONFIG), registry=registry()).profiles
    args = profile.plugin_args["SySched"]
    assert (args.default_profile_namespace, args.default_profile_name) == ("default", "full-seccomp")
    assert "SySched" in [r.name for r in profile.plugins["score"]]


def test_an_unknown_field_is_refused_by_name_through_the_configuration() -> None:
    data = yaml.safe_load(UPSTREAM_CONFIG)
    data["profiles"][0]["pluginConfig"][0]["args"]["defaultProfile"] = "x"
    with pytest.raises(ConfigurationError) as exc:
        parse_config(data, registry=registry())
    assert "pluginConfig[0].args.defaultProfile" in str(exc.value), str(exc.value)
