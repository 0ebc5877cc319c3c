"""SySched (plugins/sysched) in a running scheduler over the in-memory cluster, its SeccompProfile
objects and the pods on each node read through the scheduler's informers: upstream's integration
test (``test/integration/sysched_test.go``, ``TestSyschedPlugin``: a pod of a wide profile kept
apart from two of narrow ones), the example scenario against the default profile, a deleted pod
leaving its node; then the package installed with pip from a copy, ``simulate`` over its example
with the default profile and with SySched, and ``compare`` over both."""

from __future__ import annotations

import asyncio
import copy
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import compare_metrics, installed_package

from kubesched.config import load_config
from kubesched.testing import running_scheduler
from kubesched.testing.running import Harness

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "sysched"
EXAMPLES = PACKAGE / "examples"
SCENARIO = EXAMPLES / "scenario.yaml"
SYSCHED = EXAMPLES / "sysched-scheduler.yaml"
DEFAULT = EXAMPLES / "default-scheduler.yaml"
sys.path.insert(0, str(PACKAGE))

from kubesched_sysched import CRD, SySched  # noqa: E402

Obj = dict[str, Any]


def documents(path: Path) -> list[Obj]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_the_example_scenario_carries_the_shipped_definition_unchanged() -> None:
    (shipped,) = documents(CRD)
    in_scenario = [d for d in documents(SCENARIO) if d["kind"] == "CustomResourceDefinition"]
    assert in_scenario == [shipped]


# --- TestSyschedPlugin --------------------------------------------------------------------------------
FULL = (
    "clone socket getuid setrlimit nanosleep sendto setuid getpgrp mkdir getegid getsockname clock_gettime prctl "
    "epoll_pwait futex link ftruncate access gettimeofday select getsockopt mmap write connect capget chmod "
    "arch_prctl wait4 brk stat getrlimit fsync chroot recvfrom newfstatat setresgid poll lstat listen getpgid "
    "sigreturn setreuid setgid signaldeliver recvmsg bind close setsockopt openat container getpeername lseek "
    "procexit uname statfs utime pipe getcwd chdir execve rt_sigaction set_tid_address dup ioctl munmap rename "
    "kill getpid alarm umask setresuid exit_group fstat geteuid mprotect read getppid fchown capset "
    "rt_sigprocmask accept setgroups open set_robust_list fchownat unlink getdents fcntl readlink getgid fchmod"
).split()
#: the integration test's profiles: ``bad`` the first 67 of full-seccomp's calls, ``good1`` 29, ``good2`` 31
PROFILES = {"full-seccomp": FULL, "bad": FULL[:67], "good1": FULL[:29], "good2": FULL[:31]}


def profile(name: str, names: list[str]) -> Obj:
    return {
        "apiVersion": "security-profiles-operator.x-k8s.io/v1beta1",
        "kind": "SeccompProfile",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "architectures": ["SCMP_ARCH_X86_64"],
            "defaultAction": "SCMP_ACT_LOG",
            "syscalls": [{"action": "SCMP_ACT_ALLOW", "names": names}],
        },
    }


def fake_node(i: int) -> Obj:
    name = f"fake-node-{i}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"node": name}},
        "status": {
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "addresses": [{"type": "InternalIP", "address": f"192.168.1.{1 + i}"}],
        },
    }


def pause_pod(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}]},
        "status": {"phase": "Pending"},  # as the API server admits it
    }


#: the test's profile: the default one's, Score given to SySched alone, PreScore off
ONLY_SYSCHED = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "preScore": {"disabled": [{"name": "*"}]},
                "score": {"enabled": [{"name": "SySched"}], "disabled": [{"name": "*"}]},
            },
            "pluginConfig": [
                {
                    "name": "SySched",
                    "args": {"defaultProfileNamespace": "default", "defaultProfileName": "full-seccomp"},
                }
            ],
        }
    ],
}


async def report_host_ip(h: Harness, name: str) -> None:
    """What the test does in place of a kubelet: the pod's ``status.hostIP`` set to its node's
    address, then changed again so that an update's old state is Pending with a host IP."""
    for ip in (None, "1"):
        pod = copy.deepcopy(h.pod(name))
        if ip is None:
            node = h.store.get("Node", None, pod["spec"]["nodeName"])
            ip = node["status"]["addresses"][0]["address"]
        pod.setdefault("status", {})["hostIP"] = ip
        h.update(pod)
        await h.settle()


async def test_sysched_plugin() -> None:
    """``TestSyschedPlugin``: ``bad`` (a pod-level Localhost profile of 67 calls), ``good1``
    (29) and ``good2`` (31, by annotation), created one after the other on two empty nodes: bad
    on one node, good1 and good2 together on the other."""
    objects = [*documents(CRD), *(profile(n, v) for n, v in PROFILES.items()), fake_node(0), fake_node(1)]
    pods = [pause_pod(n) for n in ("bad", "good1", "good2")]
    pods[0]["spec"]["securityContext"] = {
        "seccompProfile": {
            "type": "Localhost",
            "localhostProfile": "security-profiles-operator.x-k8s.io/default/bad.json",
        }
    }
    pods[1]["spec"]["securityContext"] = {
        "seccompProfile": {
            "type": "Localhost",
            "localhostProfile": "security-profiles-operator.x-k8s.io/default/good1.json",
        }
    }
    pods[2]["metadata"]["annotations"] = {
        "seccomp.security.alpha.kubernetes.io": "security-profiles-operator.x-k8s.io/default/good2.json"
    }
    async with running_scheduler(config=ONLY_SYSCHED, objects=objects, plugins=[SySched]) as h:
        for pod in pods:
            h.add(pod)
            await h.wait_bound(pod["metadata"]["name"])
            await report_host_ip(h, pod["metadata"]["name"])
        placed = {n: h.node_of(n) for n in ("bad", "good1", "good2")}
        plugin = h.scheduler.frameworks["default-scheduler"].plugins["SySched"]
    assert placed["bad"] != placed["good1"] and placed["bad"] != placed["good2"], placed
    assert placed["good1"] == placed["good2"], placed
    assert plugin.hosts.host_syscalls[placed["good1"]] == set(FULL[:31])


# --- the example, in a running scheduler -----------------------------------------------------------------
async def test_the_example_keeps_the_store_away_from_the_web_server() -> None:
    async with running_scheduler(config=DEFAULT, scenario=SCENARIO) as h:
        for name in ("nginx-1", "memcached-0", "nginx-2"):
            assert await h.wait_bound(name) == "mynode-1", name  # the less loaded node
    async with running_scheduler(config=SYSCHED, scenario=SCENARIO, plugins=[SySched]) as h:
        assert await h.wait_bound("nginx-1") == "mynode-1"
        assert await h.wait_bound("memcached-0") == "mynode-2"  # beside redis-0
        assert await h.wait_bound("nginx-2") == "mynode-1"


async def test_a_deleted_pod_leaves_its_node() -> None:
    async with running_scheduler(config=SYSCHED, scenario=SCENARIO, plugins=[SySched], loop=False) as h:
        assert await h.wait_bound("nginx-1") == "mynode-1"
        plugin = h.scheduler.frameworks["default-scheduler"].plugins["SySched"]
        # the running pods only: nginx-1 is bound, but no kubelet has reported it
        assert {n: [p["metadata"]["name"] for p in pods] for n, pods in plugin.hosts.host_to_pods.items()} == {
            "mynode-1": ["nginx-0"],
            "mynode-2": ["redis-0"],
        }
        h.delete("Pod", "redis-0")
        await h.settle()
        assert plugin.hosts.host_syscalls_of("mynode-2") == (0, set())
        assert await h.wait_bound("memcached-0") == "mynode-2"


# --- installed with pip: simulate and compare ----------------------------------------------------------
@pytest.fixture(scope="module")
def sysched_installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Installed from a copy: a build writes egg-info beside the sources."""
    source = tmp_path_factory.mktemp("sysched") / "sysched"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    with installed_package(source, "kubesched-sysched"):
        yield


def placements(config: Path) -> dict[str, str | None]:
    from kubesched.sim.run.simulate import simulate
    from kubesched.sim.scenario.reading import load_scenario

    result = asyncio.run(simulate(load_config(config).profiles, load_scenario(SCENARIO)))
    return {str(p["name"]): p["node"] for p in result.pods}


def test_simulate_keeps_pods_of_disjoint_system_calls_apart(sysched_installed: None) -> None:
    assert placements(DEFAULT) == {"nginx-1": "mynode-1", "memcached-0": "mynode-1", "nginx-2": "mynode-1"}
    assert placements(SYSCHED) == {"nginx-1": "mynode-1", "memcached-0": "mynode-2", "nginx-2": "mynode-1"}


def test_compare_shows_the_difference(sysched_installed: None) -> None:
    metrics = compare_metrics(SCENARIO, DEFAULT, SYSCHED)
    # the same three pods placed; by default 2.5 CPUs on each node, with SySched 2 and 3
    assert metrics["default-scheduler"]["scheduled"] == metrics["sysched-scheduler"]["scheduled"] == 3
    assert metrics["default-scheduler"]["nodeCpuAllocationStdev"] == 0
    assert metrics["sysched-scheduler"]["nodeCpuAllocationStdev"] == 12.5
