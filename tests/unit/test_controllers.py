"""The simulated cluster's workload controllers over a store: the pods each workload makes, keeps
and removes, as kube-controller-manager's controllers would (no kubelet: bound stands for ready)."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.cluster.store import Store
from kubesched.sim.controllers import ControllerManager
from kubesched.sim.controllers.deployment import TEMPLATE_HASH
from kubesched.testing import make_node

Obj = dict[str, Any]


def template(app: str, **spec: Any) -> Obj:
    return {
        "metadata": {"labels": {"app": app}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
    }


def workload(kind: str, name: str, **spec: Any) -> Obj:
    api = {"Job": "batch/v1"}.get(kind, "apps/v1")
    return {"apiVersion": api, "kind": kind, "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def pods(store: Store, prefix: str = "") -> list[Obj]:
    items, _ = store.list("Pod", "default")
    return sorted((p for p in items if p["metadata"]["name"].startswith(prefix)), key=lambda p: p["metadata"]["name"])


def bind(store: Store, pod: Obj, node: str = "n1") -> None:
    store.update("Pod", {**pod, "spec": {**pod["spec"], "nodeName": node}})


@pytest.fixture
def env() -> tuple[Store, ControllerManager]:
    store = Store()
    manager = ControllerManager(store)
    manager.follow()
    return store, manager


def test_a_replica_set_keeps_its_count_and_replaces_a_deleted_pod(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    rs = store.create("ReplicaSet", workload("ReplicaSet", "web", replicas=3, selector={}, template=template("web")))
    manager.run_pending()
    made = pods(store, "web-")
    assert len(made) == 3
    for p in made:
        assert p["metadata"]["labels"] == {"app": "web"}
        (ref,) = p["metadata"]["ownerReferences"]
        assert (ref["kind"], ref["uid"], ref["controller"]) == ("ReplicaSet", rs["metadata"]["uid"], True)
        assert len(p["metadata"]["name"]) == len("web-") + 5
        assert p["spec"]["schedulerName"] == "default-scheduler"  # admitted as the API server admits pods
    gone = made[0]["metadata"]["name"]
    store.delete("Pod", "default", gone)  # say, preempted
    manager.run_pending()
    after = [p["metadata"]["name"] for p in pods(store, "web-")]
    assert len(after) == 3 and gone not in after
    assert store.get("ReplicaSet", "default", "web")["status"]["replicas"] == 3


def test_scaling_down_removes_pods_not_on_a_node_first(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create("ReplicaSet", workload("ReplicaSet", "web", replicas=3, selector={}, template=template("web")))
    manager.run_pending()
    first, second, third = pods(store, "web-")
    bind(store, first)
    bind(store, third)
    rs = store.get("ReplicaSet", "default", "web")
    store.update("ReplicaSet", {**rs, "spec": {**rs["spec"], "replicas": 2}})
    manager.run_pending()
    assert [p["metadata"]["name"] for p in pods(store, "web-")] == sorted(
        [first["metadata"]["name"], third["metadata"]["name"]]
    )
    rs = store.get("ReplicaSet", "default", "web")
    assert (rs["status"]["replicas"], rs["status"]["readyReplicas"]) == (2, 2)


def test_a_deployment_owns_one_replica_set_per_template(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create(
        "Deployment",
        workload("Deployment", "web", replicas=2, selector={"matchLabels": {"app": "web"}}, template=template("web")),
    )
    manager.run_pending()
    (rs,) = store.list("ReplicaSet", "default")[0]
    h = rs["metadata"]["labels"][TEMPLATE_HASH]
    assert rs["metadata"]["name"] == f"web-{h}"
    assert rs["spec"]["selector"]["matchLabels"] == {"app": "web", TEMPLATE_HASH: h}
    assert all(p["metadata"]["labels"][TEMPLATE_HASH] == h for p in pods(store))
    assert len(pods(store)) == 2
    deploy = store.get("Deployment", "default", "web")
    new_template = template("web", priorityClassName="")
    new_template["spec"]["containers"][0]["image"] = "nginx:2"
    store.update("Deployment", {**deploy, "spec": {**deploy["spec"], "template": new_template}})
    manager.run_pending()
    sets = {r["metadata"]["name"]: r["spec"]["replicas"] for r in store.list("ReplicaSet", "default")[0]}
    assert sets[rs["metadata"]["name"]] == 0 and sorted(sets.values()) == [0, 2]
    images = {p["spec"]["containers"][0]["image"] for p in pods(store)}
    assert images == {"nginx:2"}
    assert store.get("Deployment", "default", "web")["status"]["updatedReplicas"] == 2


def test_a_job_runs_its_parallelism_with_upstreams_labels(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    job = store.create("Job", workload("Job", "batch", parallelism=2, completions=5, template=template("b")))
    manager.run_pending()
    made = pods(store, "batch-")
    assert len(made) == 2
    assert made[0]["metadata"]["labels"]["job-name"] == "batch"
    assert made[0]["metadata"]["labels"]["batch.kubernetes.io/controller-uid"] == job["metadata"]["uid"]
    assert store.get("Job", "default", "batch")["status"]["active"] == 2


def test_a_stateful_set_creates_ordinals_in_order(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create(
        "StatefulSet", workload("StatefulSet", "db", replicas=3, serviceName="db", selector={}, template=template("db"))
    )
    manager.run_pending()
    assert [p["metadata"]["name"] for p in pods(store)] == ["db-0"]  # db-1 waits for db-0 to run
    (db0,) = pods(store)
    assert db0["spec"]["hostname"] == "db-0" and db0["spec"]["subdomain"] == "db"
    assert db0["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == "0"
    bind(store, db0)
    manager.run_pending()
    assert [p["metadata"]["name"] for p in pods(store)] == ["db-0", "db-1"]
    sts = store.get("StatefulSet", "default", "db")
    store.update("StatefulSet", {**sts, "spec": {**sts["spec"], "replicas": 1}})
    manager.run_pending()
    assert [p["metadata"]["name"] for p in pods(store)] == ["db-0"]


def test_parallel_stateful_sets_create_every_ordinal_at_once(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    spec = {"replicas": 3, "podManagementPolicy": "Parallel", "selector": {}, "template": template("db")}
    store.create("StatefulSet", workload("StatefulSet", "db", **spec))
    manager.run_pending()
    assert [p["metadata"]["name"] for p in pods(store)] == ["db-0", "db-1", "db-2"]


def test_a_daemon_set_pins_one_pod_to_each_node_that_should_run_it(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create("Node", make_node("n1").label("role", "worker").obj())
    store.create("Node", make_node("n2").label("role", "worker").taint("dedicated", "gpu").obj())
    store.create("Node", make_node("n3").label("role", "control").obj())
    store.create(
        "DaemonSet",
        workload("DaemonSet", "agent", selector={}, template=template("agent", nodeSelector={"role": "worker"})),
    )
    manager.run_pending()
    (pod,) = pods(store, "agent-")  # n2 has an untolerated NoSchedule taint, n3 the wrong role
    terms = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
    }
    assert {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"} in pod["spec"][
        "tolerations"
    ]
    store.create("Node", make_node("n4").label("role", "worker").obj())
    manager.run_pending()
    assert len(pods(store, "agent-")) == 2
    store.delete("Node", None, "n1")
    manager.run_pending()
    (left,) = pods(store, "agent-")
    assert left["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ][0]["matchFields"][0]["values"] == ["n4"]
    assert store.get("DaemonSet", "default", "agent")["status"]["desiredNumberScheduled"] == 1


def test_orphans_matching_the_selector_are_adopted_not_duplicated(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    for i in range(2):
        store.create(
            "Pod",
            {
                "metadata": {"name": f"old-{i}", "namespace": "default", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        )
    rs = store.create(
        "ReplicaSet",
        workload("ReplicaSet", "web", replicas=3, selector={"matchLabels": {"app": "web"}}, template=template("web")),
    )
    manager.run_pending()
    made = pods(store)
    assert len(made) == 3  # the two orphans adopted, one made
    adopted = [p for p in made if p["metadata"]["name"].startswith("old-")]
    assert all(p["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"] for p in adopted)


def test_a_scenario_workload_without_replicas_only_selects(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create("ReplicaSet", workload("ReplicaSet", "web", selector={"matchLabels": {"app": "web"}}))
    manager.run_pending()
    assert pods(store) == []


async def test_simulate_makes_the_pods_of_a_scenarios_workloads() -> None:
    from kubesched.config import load_config
    from kubesched.sim.run.simulate import simulate
    from kubesched.sim.scenario.reading import parse_scenario

    node = make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").obj()
    rs = workload("ReplicaSet", "web", replicas=3, selector={"matchLabels": {"app": "web"}}, template=template("web"))
    sts = workload("StatefulSet", "db", replicas=2, selector={"matchLabels": {"app": "db"}}, template=template("db"))
    result = await simulate(load_config(None).profiles, parse_scenario([node, rs, sts]))
    placed = sorted(p["name"] for p in result.pods if p["node"] == "n1")
    assert len([n for n in placed if n.startswith("web-")]) == 3
    assert [n for n in placed if n.startswith("db-")] == ["db-0", "db-1"]


@pytest.mark.parametrize(
    ("budget", "healthy", "allowed"),
    [
        ({"minAvailable": 2}, 3, 1),
        ({"minAvailable": "50%"}, 3, 1),  # 50% of 4 pods, rounded up: 2 must stay
        ({"maxUnavailable": 1}, 3, 0),  # 4 - 1 = 3 must stay
        ({"maxUnavailable": "50%"}, 3, 1),
        ({}, 3, 0),
    ],
)
def test_a_budgets_status_counts_its_pods(
    env: tuple[Store, ControllerManager], budget: Obj, healthy: int, allowed: int
) -> None:
    store, manager = env
    for i in range(4):
        p = store.create(
            "Pod",
            {
                "metadata": {"name": f"p{i}", "namespace": "default", "labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]},
            },
        )
        if i < 3:
            bind(store, p)
    store.create(
        "PodDisruptionBudget",
        {
            "metadata": {"name": "b", "namespace": "default"},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, **budget},
        },
    )
    manager.run_pending()
    status = store.get("PodDisruptionBudget", "default", "b")["status"]
    assert (status["expectedPods"], status["currentHealthy"], status["disruptionsAllowed"]) == (4, healthy, allowed)


def test_a_budget_status_written_by_hand_is_kept(env: tuple[Store, ControllerManager]) -> None:
    store, manager = env
    store.create(
        "PodDisruptionBudget",
        {
            "metadata": {"name": "b", "namespace": "default"},
            "spec": {"selector": {}, "minAvailable": 0},
            "status": {"disruptionsAllowed": 0},
        },
    )
    manager.run_pending()
    assert store.get("PodDisruptionBudget", "default", "b")["status"] == {"disruptionsAllowed": 0}
