"""The simulated job controller counts pods that finished: parallelism at a time, never more than
the completions missing, replacements for pods deleted before they finished, and the status and
conditions kube-controller-manager writes when the Job is done."""

from __future__ import annotations

from typing import Any

from kubesched.cluster.store import Store
from kubesched.sim.controllers import ControllerManager

Obj = dict[str, Any]


def job(name: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}, **spec},
    }


def active(store: Store) -> list[Obj]:
    return [p for p in store.list("Pod", "default")[0] if p["status"].get("phase") not in ("Succeeded", "Failed")]


def finish(store: Store, pod: Obj, phase: str = "Succeeded") -> None:
    store.mutate("Pod", "default", pod["metadata"]["name"], lambda p: p["status"].__setitem__("phase", phase))


def manager(store: Store) -> ControllerManager:
    m = ControllerManager(store, now=lambda: "2024-01-01T00:01:00Z")
    m.follow()
    return m


def test_pods_run_until_the_completions_have_succeeded() -> None:
    store = Store()
    m = manager(store)
    store.create("Job", job("batch", completions=3, parallelism=2))
    m.run_pending()
    first = active(store)
    assert len(first) == 2
    finish(store, first[0])
    m.run_pending()
    # One succeeded, two missing: two run.
    assert len(active(store)) == 2
    status = store.get("Job", "default", "batch")["status"]
    assert (status["active"], status["succeeded"], status["failed"]) == (2, 1, 0)
    assert "completionTime" not in status
    for pod in active(store):
        finish(store, pod)
    m.run_pending()
    status = store.get("Job", "default", "batch")["status"]
    assert (status["active"], status["succeeded"]) == (0, 3)
    assert status["completionTime"] == "2024-01-01T00:01:00Z"
    assert [(c["type"], c["reason"], c["message"]) for c in status["conditions"]] == [
        ("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods"),
        ("Complete", "CompletionsReached", "Reached expected number of succeeded pods"),
    ]
    assert len(store.list("Pod", "default")[0]) == 3  # no pod past the completions
    # Done: deleting a finished pod makes no new one, and the status stays.
    store.delete("Pod", "default", store.list("Pod", "default")[0][0]["metadata"]["name"])
    m.run_pending()
    assert len(store.list("Pod", "default")[0]) == 2
    assert store.get("Job", "default", "batch")["status"]["succeeded"] == 3


def test_the_last_completion_makes_no_more_pods_than_missing() -> None:
    store = Store()
    m = manager(store)
    store.create("Job", job("tail", completions=3, parallelism=3))
    m.run_pending()
    pods = active(store)
    finish(store, pods[0])
    finish(store, pods[1])
    m.run_pending()
    # One is still running, which is all the one missing completion needs.
    assert len(active(store)) == 1


def test_a_pod_deleted_before_it_finished_is_replaced_and_a_failed_one_counted() -> None:
    store = Store()
    m = manager(store)
    store.create("Job", job("retry", completions=1, parallelism=1))
    m.run_pending()
    (pod,) = active(store)
    store.delete("Pod", "default", pod["metadata"]["name"])
    m.run_pending()
    (again,) = active(store)
    assert again["metadata"]["name"] != pod["metadata"]["name"]
    finish(store, again, "Failed")
    m.run_pending()
    status = store.get("Job", "default", "retry")["status"]
    assert status["failed"] == 1 and status["active"] == 1


def test_without_completions_the_first_success_ends_it_once_the_others_finish() -> None:
    store = Store()
    m = manager(store)
    store.create("Job", job("any", parallelism=2))
    m.run_pending()
    a, b = active(store)
    finish(store, a)
    m.run_pending()
    assert [p["metadata"]["name"] for p in active(store)] == [b["metadata"]["name"]]  # none new
    assert "completionTime" not in store.get("Job", "default", "any")["status"]
    finish(store, b)
    m.run_pending()
    status = store.get("Job", "default", "any")["status"]
    assert status["succeeded"] == 2 and status["completionTime"]


def test_an_indexed_job_runs_each_index_until_it_succeeds_once() -> None:
    index = "batch.kubernetes.io/job-completion-index"
    store = Store()
    m = manager(store)
    store.create("Job", job("train", completions=4, parallelism=2, completionMode="Indexed"))
    m.run_pending()
    first = sorted(active(store), key=lambda p: p["metadata"]["annotations"][index])
    assert [p["metadata"]["annotations"][index] for p in first] == ["0", "1"]
    assert [p["metadata"]["labels"][index] for p in first] == ["0", "1"]
    assert [p["spec"]["hostname"] for p in first] == ["train-0", "train-1"]
    assert all(p["metadata"]["name"].startswith(f"train-{i}-") for i, p in enumerate(first))
    finish(store, first[1])  # index 1 done; index 0 still running: 2 is next
    m.run_pending()
    assert sorted(p["metadata"]["annotations"][index] for p in active(store)) == ["0", "2"]
    store.delete("Pod", "default", first[0]["metadata"]["name"])  # index 0 lost before it finished
    m.run_pending()
    assert sorted(p["metadata"]["annotations"][index] for p in active(store)) == ["0", "2"]
    status = store.get("Job", "default", "train")["status"]
    assert (status["succeeded"], status["completedIndexes"]) == (1, "1")
    for pod in active(store):
        finish(store, pod)
    m.run_pending()
    status = store.get("Job", "default", "train")["status"]
    assert (status["succeeded"], status["completedIndexes"]) == (3, "0-2")
    assert [p["metadata"]["annotations"][index] for p in active(store)] == ["3"]
    finish(store, active(store)[0])
    m.run_pending()
    status = store.get("Job", "default", "train")["status"]
    assert (status["succeeded"], status["completedIndexes"], status["active"]) == (4, "0-3", 0)
    assert status["conditions"][-1]["type"] == "Complete"
