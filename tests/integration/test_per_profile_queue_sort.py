"""Profiles with different QueueSort plugins: each orders its own pods, and the profiles take
turns at the queue; profiles with the same QueueSort share one queue, exactly as upstream's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kubesched.backend.queue import SchedulingQueue
from kubesched.cluster.memory import InMemoryCluster
from kubesched.config import parse_config
from kubesched.framework.types import PodInfo
from kubesched.runtime.registry import Registry, default_registry
from kubesched.scheduler import Scheduler
from kubesched.testing import make_pod

ROOT = Path(__file__).resolve().parents[2]
QOS_SORT = f"{ROOT / 'plugins' / 'qos-sort' / 'kubesched_qos_sort' / '__init__.py'}:QOSSort"

# The scheduling-framework journey's file, exactly.
CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
  - schedulerName: qos-scheduler
    plugins:
      queueSort:
        enabled:
        - name: 'QOSSort'
        disabled:
        - name: '*'
"""

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status:
  allocatable: {cpu: "8", memory: 16Gi, pods: "2"}
"""
BEST_EFFORT = """\
apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  schedulerName: %s
  containers: [{name: c, image: nginx}]
"""
GUARANTEED = """\
apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  schedulerName: %s
  containers:
  - name: c
    image: nginx
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 100m, memory: 64Mi}
"""


def test_the_journeys_file_loads_and_each_profile_orders_its_own_pods(tmp_path: Path) -> None:
    (tmp_path / "config.yaml").write_text(CONFIG)
    # Created in this order; the node has room for two pods.
    docs = [
        NODE,
        BEST_EFFORT % ("default-best-effort", "default-scheduler"),
        BEST_EFFORT % ("qos-best-effort", "qos-scheduler"),
        GUARANTEED % ("default-guaranteed", "default-scheduler"),
        GUARANTEED % ("qos-guaranteed", "qos-scheduler"),
    ]
    (tmp_path / "scenario.yaml").write_text("---\n".join(docs))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "kubesched",
            "simulate",
            "--plugin",
            QOS_SORT,
            "--config",
            "config.yaml",
            "--scenario",
            "scenario.yaml",
            "--output",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    placed = sorted(p["name"] for p in json.loads(out.stdout)["pods"] if p["node"])
    # PrioritySort takes the default profile's oldest pod; QOSSort takes the qos profile's
    # Guaranteed pod before its older BestEffort one. The profiles alternate, one pod each.
    assert placed == ["default-best-effort", "qos-guaranteed"]


def _registry_with_qos_sort() -> Registry:
    from kubesched.runtime.local_plugins import load_plugin_class

    registry = Registry()
    for entry in default_registry().entries():
        if entry.name != "QOSSort":  # an installed kubesched-qos-sort gives way to the checkout's
            registry.register(entry.cls, entry.name)
    registry.register(load_plugin_class(QOS_SORT), "QOSSort")
    return registry


def _queue(config: str, registry: Registry) -> SchedulingQueue:
    import yaml

    cfg = parse_config(yaml.safe_load(config), registry=registry)
    return Scheduler(cfg.profiles, InMemoryCluster(), registry=registry).queue


def _pod(name: str, profile: str, priority: int = 0, guaranteed: bool = False) -> PodInfo:
    b = make_pod(name).scheduler(profile).priority(priority)
    if guaranteed:
        b = b.req(cpu="100m", memory="64Mi").lim(cpu="100m", memory="64Mi")
    return PodInfo(b.obj())


def test_profiles_with_different_queue_sorts_take_turns_each_in_its_own_order() -> None:
    q = _queue(CONFIG, _registry_with_qos_sort())
    for pi in [
        _pod("d-old", "default-scheduler"),
        _pod("d-high", "default-scheduler", priority=5),
        _pod("d-new", "default-scheduler"),
        _pod("q-best-effort", "qos-scheduler"),
        _pod("q-guaranteed", "qos-scheduler", guaranteed=True),
    ]:
        q.add(pi)
    order = []
    while (qpi := q.pop_nowait()) is not None:
        order.append(qpi.pod_info.name)
        q.done(qpi.pod_info.uid)
    assert order == ["d-high", "q-guaranteed", "d-old", "q-best-effort", "d-new"]


def test_profiles_with_the_same_queue_sort_share_one_queue_as_upstream() -> None:
    config = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: default-scheduler
  - schedulerName: other
"""
    q = _queue(config, default_registry())
    for pi in [
        _pod("a1", "default-scheduler"),
        _pod("a2", "default-scheduler"),
        _pod("b-high", "other", priority=5),
        _pod("b1", "other"),
    ]:
        q.add(pi)
    order = []
    while (qpi := q.pop_nowait()) is not None:
        order.append(qpi.pod_info.name)
        q.done(qpi.pod_info.uid)
    # One queue, one order: priority, then arrival — no turns between profiles.
    assert order == ["b-high", "a1", "a2", "b1"]
