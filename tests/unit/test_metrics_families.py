"""The metric families kube-scheduler serves, with their labels, fed the way the scheduler feeds
them: unschedulable pods per rejecting plugin and profile, cache sizes, attempts, permit waits."""

from __future__ import annotations

from kubesched.server.metrics import PrometheusObserver


def sample(obs: PrometheusObserver, name: str, **labels: str) -> float | None:
    return obs.registry.get_sample_value(name, labels)


def test_unschedulable_pods_and_cache_size_are_read_at_scrape_time() -> None:
    obs = PrometheusObserver()
    pool = {("NodeResourcesFit", "default-scheduler"): 2}
    sizes = {"nodes": 3, "pods": 7, "assumed_pods": 1}
    obs.watch_unschedulable(lambda: dict(pool))
    obs.watch_cache(lambda: dict(sizes))
    assert sample(obs, "scheduler_unschedulable_pods", plugin="NodeResourcesFit", profile="default-scheduler") == 2
    pool[("TaintToleration", "default-scheduler")] = 1
    sizes["pods"] = 8
    assert sample(obs, "scheduler_unschedulable_pods", plugin="TaintToleration", profile="default-scheduler") == 1
    assert sample(obs, "scheduler_cache_size", type="pods") == 8
    assert sample(obs, "scheduler_cache_size", type="assumed_pods") == 1


def test_attempts_permit_waits_and_victims_are_histograms() -> None:
    obs = PrometheusObserver()
    obs.pod_scheduled(3, 0.5)
    obs.pod_scheduled(1, 0.1)
    obs.permit_waited("Unschedulable", 0.02)
    obs.preemption_victims(4)
    assert sample(obs, "scheduler_pod_scheduling_attempts_count") == 2
    assert sample(obs, "scheduler_pod_scheduling_attempts_sum") == 4
    assert sample(obs, "scheduler_pod_scheduling_attempts_bucket", le="2.0") == 1
    assert sample(obs, "scheduler_permit_wait_duration_seconds_count", result="Unschedulable") == 1
    assert sample(obs, "scheduler_preemption_victims_bucket", le="4.0") == 1


def test_dra_binding_conditions_families_follow_their_gate() -> None:
    # Upstream registers them only with DRADeviceBindingConditions (on by default in 1.37).
    from kubesched.framework.features import FeatureGates

    labels = {"profile": "p", "driver": "gpu.example.com", "status": "timeout"}
    on = PrometheusObserver()
    on.dra_binding_conditions("p", "gpu.example.com", "timeout", 120.0)
    assert sample(on, "scheduler_dra_bindingconditions_allocations_total", **labels) == 1
    assert sample(on, "scheduler_dra_bindingconditions_wait_duration_seconds_bucket", le="102.4", **labels) == 0
    assert sample(on, "scheduler_dra_bindingconditions_wait_duration_seconds_bucket", le="204.8", **labels) == 1
    off = PrometheusObserver(feature_gates=FeatureGates({"DRADeviceBindingConditions": False}))
    off.dra_binding_conditions("p", "gpu.example.com", "timeout", 120.0)
    assert sample(off, "scheduler_dra_bindingconditions_allocations_total", **labels) is None
    assert "scheduler_dra_bindingconditions" not in off.exposition().decode()


def test_pod_group_families_follow_generic_workload() -> None:
    """Upstream registers the pod-group and workload-preemption families only with
    GenericWorkload, the placement ones with TopologyAwareWorkloadScheduling too."""
    from kubesched.framework.features import FeatureGates

    off = PrometheusObserver()
    off.pod_group_attempt("scheduled", "p", 0.01)
    assert "scheduler_podgroup" not in off.exposition().decode()
    on = PrometheusObserver(feature_gates=FeatureGates({"GenericWorkload": True}))
    on.pod_group_attempt("unschedulable", "p", 0.003)
    on.pod_group_algorithm(0.002)
    on.workload_preemption("Success", 3)
    on.placements("p", 4, 1, 3)
    assert sample(on, "scheduler_podgroup_schedule_attempts_total", result="unschedulable", profile="p") == 1
    assert (
        sample(
            on,
            "scheduler_podgroup_scheduling_attempt_duration_seconds_bucket",
            le="0.004",
            **{"result": "unschedulable", "profile": "p"},
        )
        == 1
    )
    assert sample(on, "scheduler_podgroup_scheduling_algorithm_duration_seconds_count") == 1
    assert sample(on, "scheduler_workload_preemption_attempts_total", result="Success") == 1
    assert sample(on, "scheduler_workload_preemption_victims_bucket", le="4.0") == 1
    assert "scheduler_generated_placements" not in on.exposition().decode()
    tas = PrometheusObserver(
        feature_gates=FeatureGates({"GenericWorkload": True, "TopologyAwareWorkloadScheduling": True})
    )
    tas.placements("p", 4, 1, 3)
    assert sample(tas, "scheduler_generated_placements_total", profile="p") == 4
    # Evaluations are counted one by one, with their latency.
    assert sample(tas, "scheduler_placement_evaluations_total", result="infeasible", profile="p") is None
    for feasible, seconds in ((False, 0.0015), (False, 0.2), (True, 0.003)):
        tas.placement_evaluated("p", feasible, seconds)
    assert sample(tas, "scheduler_placement_evaluations_total", result="infeasible", profile="p") == 2
    assert sample(tas, "scheduler_placement_evaluations_total", result="feasible", profile="p") == 1
    duration = "scheduler_placement_evaluation_duration_seconds"
    infeasible = {"result": "infeasible", "profile": "p"}
    assert sample(tas, f"{duration}_count", **infeasible) == 2
    assert sample(tas, f"{duration}_bucket", le="0.001", **infeasible) == 0
    assert sample(tas, f"{duration}_bucket", le="0.002", **infeasible) == 1
    assert sample(tas, f"{duration}_bucket", le="16.384", **infeasible) == 2
    assert sample(tas, f"{duration}_bucket", le="0.004", result="feasible", profile="p") == 1


def test_placement_families_are_registered_by_topology_aware_scheduling_alone() -> None:
    """Upstream's Register adds the three placement families under TopologyAwareWorkloadScheduling,
    with their help texts; the pod-group ones need GenericWorkload."""
    from prometheus_client.parser import text_string_to_metric_families

    from kubesched.framework.features import FeatureGates

    tas = PrometheusObserver(feature_gates=FeatureGates({"TopologyAwareWorkloadScheduling": True}))
    tas.placement_evaluated("p", True, 0.01)
    text = tas.exposition().decode()
    assert "scheduler_podgroup" not in text
    helps = {f.name: (f.type, f.documentation) for f in text_string_to_metric_families(text)}
    results = "'feasible' means the pod group fit into the placement, while 'infeasible' means it did not."
    assert helps["scheduler_placement_evaluation_duration_seconds"] == (
        "histogram",
        "[ALPHA] Latency in seconds of evaluating a single candidate placement when scheduling pod groups, by "
        f"result and scheduler profile. {results}",
    )
    assert helps["scheduler_placement_evaluations"] == (
        "counter",
        f"[ALPHA] Number of candidate placements evaluated when scheduling pod groups, by result and scheduler "
        f"profile. {results}",
    )
    assert helps["scheduler_generated_placements"] == (
        "counter",
        "[ALPHA] Number of candidate placements generated when scheduling pod groups, by scheduler profile.",
    )


def test_resource_claim_creations_are_counted_as_kube_controller_manager_counts_them() -> None:
    obs = PrometheusObserver()
    obs.resource_claim_created(True, False)
    obs.resource_claim_created(True, False)
    obs.resource_claim_created(False, False)
    name = "dynamic_resource_allocation_resourceclaim_creates_total"
    assert sample(obs, name, status="success", admin_access="false") == 2
    assert sample(obs, name, status="failure", admin_access="false") == 1
    assert (
        "# HELP dynamic_resource_allocation_resourceclaim_creates_total [ALPHA] Number of ResourceClaims creation "
        "requests, categorized by creation status and admin access\n"
    ) in obs.exposition().decode()
