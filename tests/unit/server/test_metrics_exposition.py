"""The exposition of the scheduler's families, as kube-scheduler 1.37's own metrics test has it
(pkg/scheduler/metrics/metrics_test.go: TestSchedulerMetricsRegistrationAndEmission and
TestSchedulingAlgorithmLatency), and the recording points the observer adds."""

from __future__ import annotations

import asyncio

import pytest

from kubesched.cluster.memory import InMemoryCluster
from kubesched.config import load_config
from kubesched.framework.types import PodInfo
from kubesched.scheduler import Scheduler
from kubesched.scheduler.observer import event_label
from kubesched.server.metrics import FAMILIES, PrometheusObserver, exponential_buckets, help_text
from kubesched.testing import make_pod


def default_scheduler(obs: PrometheusObserver) -> Scheduler:
    """A scheduler with kube-scheduler's default profile over an empty in-memory cluster, its
    metrics in ``obs`` (as ``kubesched run`` wires them)."""
    sched = Scheduler(load_config(None).profiles, InMemoryCluster(), observer=obs)
    obs.watch_scheduler(sched)
    return sched


def sample(obs: PrometheusObserver, name: str, **labels: str) -> float | None:
    return obs.registry.get_sample_value(name, labels)


async def test_goroutines_binding() -> None:
    obs = PrometheusObserver()

    sched = default_scheduler(obs)
    sched.ctx.bindings.spawn(asyncio.sleep(10), name="a binding cycle")
    text = obs.exposition().decode()
    await sched.ctx.bindings.cancel()
    assert (
        "# HELP scheduler_goroutines [BETA] Number of running goroutines split by the work they do such as binding.\n"
        "# TYPE scheduler_goroutines gauge\n"
        'scheduler_goroutines{operation="binding"} 1.0\n'
    ) in text


def test_permit_wait_duration_success() -> None:
    obs = PrometheusObserver()
    obs.permit_waited("success", 0.1)
    assert sample(obs, "scheduler_permit_wait_duration_seconds_count", result="success") == 1
    assert sample(obs, "scheduler_permit_wait_duration_seconds_sum", result="success") == 0.1
    # 0.1 falls in the 0.128 bucket: every bucket below it holds 0, every one from it 1.
    for ub in exponential_buckets(0.001, 2, 15):
        want = 0 if ub < 0.128 else 1
        assert sample(obs, "scheduler_permit_wait_duration_seconds_bucket", result="success", le=str(ub)) == want
    assert "# HELP scheduler_permit_wait_duration_seconds [BETA] Duration of waiting on permit." in (
        obs.exposition().decode()
    )


def test_plugin_evaluation_total() -> None:
    obs = PrometheusObserver()
    obs.plugins_evaluated("default", "Filter", ["testPlugin"], 1)
    text = obs.exposition().decode()
    assert (
        "# HELP scheduler_plugin_evaluation_total [BETA] Number of attempts to schedule pods by each plugin and the "
        "extension point (available only in PreFilter, Filter, PreScore, and Score).\n"
        "# TYPE scheduler_plugin_evaluation_total counter\n"
        'scheduler_plugin_evaluation_total{extension_point="Filter",plugin="testPlugin",profile="default"} 1.0\n'
    ) in text


def test_plugin_execution_duration_buckets() -> None:
    obs = PrometheusObserver()
    obs.plugin_execution("testPlugin", "Filter", "Success", 0.00001)
    text = obs.exposition().decode()
    assert (
        "# HELP scheduler_plugin_execution_duration_seconds [BETA] Duration for running a plugin at a specific" in text
    )
    labels = {"extension_point": "Filter", "plugin": "testPlugin", "status": "Success"}
    # Upstream's 20 buckets from 1e-05 by a factor of 1.5, the last ~0.0222.
    bounds = exponential_buckets(0.00001, 1.5, 20)
    assert bounds[0] == 1e-05 and round(bounds[-1], 8) == 0.02216838
    for ub in bounds:
        assert sample(obs, "scheduler_plugin_execution_duration_seconds_bucket", **labels, le=str(ub)) == 1
    assert sample(obs, "scheduler_plugin_execution_duration_seconds_sum", **labels) == 1e-05


def test_unschedulable_pods() -> None:
    obs = PrometheusObserver()
    obs.watch_unschedulable(lambda: {("testPlugin", "default"): 2})
    text = obs.exposition().decode()
    assert (
        "# HELP scheduler_unschedulable_pods [BETA] The number of unschedulable pods broken down by plugin name. A pod "
        "will increment the gauge for all plugins that caused it to not schedule and so this metric have meaning "
        "only when broken down by plugin.\n"
        "# TYPE scheduler_unschedulable_pods gauge\n"
        'scheduler_unschedulable_pods{plugin="testPlugin",profile="default"} 2.0\n'
    ) in text


def test_scheduling_algorithm_latency_is_beta() -> None:
    obs = PrometheusObserver()
    obs.scheduling_algorithm(0.1)
    text = obs.exposition().decode()
    assert (
        "# HELP scheduler_scheduling_algorithm_duration_seconds [BETA] Scheduling algorithm latency in seconds" in text
    )
    assert sample(obs, "scheduler_scheduling_algorithm_duration_seconds_count") == 1


async def test_every_family_is_registered_with_its_type_and_stability() -> None:
    obs = PrometheusObserver()

    sched = default_scheduler(obs)
    sched.queue.add(PodInfo(make_pod("p").obj()))
    popped = sched.queue.pop_nowait()
    assert popped is not None
    text = obs.exposition().decode()
    for name, (stability, kind) in FAMILIES.items():
        assert f"# TYPE {name} {kind}\n" in text, name
        assert f"# HELP {name} [{stability}] " in text, name
    assert 'scheduler_inflight_events{event="PodPopped"} 1.0' in text
    assert 'scheduler_queued_entities{queue="active",type="pod"} 0.0' in text


@pytest.mark.parametrize(
    ("call", "family", "labels"),
    [
        (
            lambda o: o.event_handled("NodeAdd", 0.001),
            "scheduler_event_handling_duration_seconds_count",
            {"event": "NodeAdd"},
        ),
        (
            lambda o: o.queueing_hint("NodeResourcesFit", "NodeAdd", "Queue", 0.00002),
            "scheduler_queueing_hint_execution_duration_seconds_count",
            {"plugin": "NodeResourcesFit", "event": "NodeAdd", "hint": "Queue"},
        ),
        (
            lambda o: o.queue_incoming("active", "PodAdd"),
            "scheduler_queue_incoming_entities_total",
            {"queue": "active", "event": "PodAdd", "type": "pod"},
        ),
        (
            lambda o: o.volume_stage_error("predicate"),
            "scheduler_volume_scheduling_stage_error_total",
            {"operation": "predicate"},
        ),
        (
            lambda o: o.plugins_evaluated("p", "Score", ["A", "B"], 3),
            "scheduler_plugin_evaluation_total",
            {"plugin": "B", "extension_point": "Score", "profile": "p"},
        ),
    ],
    ids=["event handling", "queueing hint", "incoming entities", "volume stage error", "evaluations per node"],
)
def test_recording_points(call: object, family: str, labels: dict[str, str]) -> None:
    obs = PrometheusObserver()
    assert sample(obs, family, **labels) is None
    call(obs)  # type: ignore[operator]
    assert sample(obs, family, **labels) == (3 if "Score" in labels.values() else 1)


def test_deprecated_help_text() -> None:
    assert help_text("ALPHA", "Duration.", deprecated="1.37.0") == "[ALPHA] (Deprecated since 1.37.0) Duration."


@pytest.mark.parametrize(
    ("kind", "action", "obj", "label"),
    [
        ("Pod", "add", {"spec": {}}, "UnscheduledPodAdd"),
        ("Pod", "update", {"spec": {"nodeName": "n1"}}, "AssignedPodUpdate"),
        ("Pod", "delete", {"spec": {"nodeName": "n1"}}, "AssignedPodDelete"),
        ("Node", "add", {}, "NodeAdd"),
        ("PersistentVolumeClaim", "update", {}, "PersistentVolumeClaimUpdate"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_event_labels(kind: str, action: str, obj: dict[str, object], label: str) -> None:
    assert event_label(kind, action, obj) == label


def test_observations_of_one_series_add_up_and_other_labels_make_their_own() -> None:
    """The per-cycle families find their series again (kept by label values): repeated
    observations land in one series, another label value in another, counts exact."""
    obs = PrometheusObserver()
    for _ in range(3):
        obs.extension_point("Filter", "Success", "default-scheduler", 0.001)
    obs.extension_point("Filter", "Unschedulable", "default-scheduler", 0.002)
    obs.plugins_evaluated("default-scheduler", "Filter", ["NodeName", "TaintToleration"], 5)
    obs.plugins_evaluated("default-scheduler", "Filter", ["NodeName"], 2)
    family = "scheduler_framework_extension_point_duration_seconds_count"
    labels = {"extension_point": "Filter", "profile": "default-scheduler"}
    assert sample(obs, family, status="Success", **labels) == 3
    assert sample(obs, family, status="Unschedulable", **labels) == 1
    evaluations = "scheduler_plugin_evaluation_total"
    where = {"extension_point": "Filter", "profile": "default-scheduler"}
    assert sample(obs, evaluations, plugin="NodeName", **where) == 7
    assert sample(obs, evaluations, plugin="TaintToleration", **where) == 5


def test_the_null_observer_is_not_timed_and_a_real_one_is() -> None:
    """Extension-point durations are worked out only for an observer that records them."""
    quiet = Scheduler(load_config(None).profiles, InMemoryCluster())
    assert not quiet.ctx.observed
    obs = PrometheusObserver()
    sched = default_scheduler(obs)
    assert sched.ctx.observed
    fw = next(iter(sched.ctx.frameworks.values()))
    sched.ctx.extension_point("Reserve", None, fw, 0.0)
    family = "scheduler_framework_extension_point_duration_seconds_count"
    assert sample(obs, family, extension_point="Reserve", status="Success", profile=fw.profile_name) == 1
