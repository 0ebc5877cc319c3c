"""What the simulated cluster's pods and nodes use (kubesched.framework.usage, the face's pod_usage): a pod's
``kubesched.io/usage`` annotation, else its requests (pod-level ones honoured); running pods only;
a node's usage the sum over its running pods; and the quantities as the metrics API prints them."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.framework.pod_requests import DEFAULT_COUNTING, Counting
from kubesched.framework.usage import (
    USAGE_ANNOTATION,
    UsageError,
    cluster_usage,
    is_running,
    pod_usage,
    share,
)
from kubesched.sim.apiserver.resource_metrics import binary_quantity, decimal_quantity, usage_list

Obj = dict[str, Any]
MILLI = 1_000_000  # nanocores in a millicore
MI = 2**20


def c(name: str, cpu: str | None = None, memory: str | None = None, *, limits: Obj | None = None, **extra: Any) -> Obj:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    resources: Obj = {"requests": requests}
    if limits:
        resources["limits"] = limits
    return {"name": name, "image": "pause", "resources": resources, **extra}


def pod(
    name: str = "p",
    node: str | None = "n1",
    containers: list[Obj] | None = None,
    *,
    usage: str | None = None,
    phase: str = "Pending",
    **spec: Any,
) -> Obj:
    meta: Obj = {"name": name, "namespace": "default"}
    if usage is not None:
        meta["annotations"] = {USAGE_ANNOTATION: usage}
    body: Obj = {"containers": containers if containers is not None else [c("app", "100m", "64Mi")], **spec}
    if node:
        body["nodeName"] = node
    return {"metadata": meta, "spec": body, "status": {"phase": phase}}


def by_container(p: Obj, counting: Counting = DEFAULT_COUNTING) -> dict[str, tuple[int, int]]:
    return {name: (a["cpu"], a["memory"]) for name, a in pod_usage(p, counting).containers}


def test_requests_are_the_default_usage_limits_standing_in_for_missing_requests() -> None:
    p = pod(containers=[c("app", "250m", "1Gi"), c("log", limits={"cpu": "50m", "memory": "32Mi"})])
    assert by_container(p) == {"app": (250 * MILLI, 1024 * MI), "log": (50 * MILLI, 32 * MI)}


def test_a_container_asking_for_nothing_uses_nothing() -> None:
    assert by_container(pod(containers=[{"name": "bare", "image": "pause"}])) == {"bare": (0, 0)}


def test_pod_level_annotation_is_shared_by_requests_and_what_it_omits_stays_the_requests() -> None:
    p = pod(containers=[c("a", "100m", "1Gi"), c("b", "300m", "1Gi")], usage='{"cpu": "2"}')
    assert by_container(p) == {"a": (500 * MILLI, 1024 * MI), "b": (1500 * MILLI, 1024 * MI)}


def test_pod_level_annotation_without_requests_is_shared_evenly_remainder_to_the_first() -> None:
    p = pod(containers=[c("a"), c("b"), c("c")], usage='{"memory": "1000"}')
    assert [m for _, m in by_container(p).values()] == [334, 333, 333]
    assert share(10, [0, 0, 0]) == [4, 3, 3]
    assert share(10, [1, 2]) == [4, 6]
    assert share(0, []) == []


def test_per_container_annotation_and_unnamed_containers_keep_their_requests() -> None:
    p = pod(
        containers=[c("main", "1", "1Gi"), c("helper", "250m", "128Mi")],
        usage='{"main": {"cpu": "3500m", "memory": "6Gi"}}',
    )
    assert by_container(p) == {"main": (3500 * MILLI, 6 * 1024 * MI), "helper": (250 * MILLI, 128 * MI)}


def test_nanocores_are_kept() -> None:
    assert by_container(pod(usage='{"cpu": "1234567n"}')) == {"app": (1234567, 64 * MI)}


def test_pod_level_requests_replace_the_containers_sum_and_are_shared_by_their_requests() -> None:
    p = pod(containers=[c("a", "100m"), c("b", "300m")], resources={"requests": {"cpu": "1", "memory": "2Gi"}})
    assert by_container(p) == {"a": (250 * MILLI, 1024 * MI), "b": (750 * MILLI, 1024 * MI)}
    # PodLevelResources off: the containers' own requests.
    assert by_container(p, Counting(pod_level_resources=False)) == {"a": (100 * MILLI, 0), "b": (300 * MILLI, 0)}


def test_sidecars_run_and_other_init_containers_have_finished() -> None:
    p = pod(
        containers=[c("app", "100m", "64Mi")],
        initContainers=[
            c("setup", "4", "8Gi"),
            c("proxy", "50m", "32Mi", restartPolicy="Always"),
        ],
    )
    assert by_container(p) == {"proxy": (50 * MILLI, 32 * MI), "app": (100 * MILLI, 64 * MI)}


@pytest.mark.parametrize(
    ("p", "running"),
    [
        pytest.param(pod(node=None), False, id="unbound"),
        pytest.param(pod(phase="Pending"), True, id="bound-pending"),
        pytest.param(pod(phase="Running"), True, id="running"),
        pytest.param(pod(phase="Succeeded"), False, id="succeeded"),
        pytest.param(pod(phase="Failed"), False, id="failed"),
    ],
)
def test_running_is_bound_and_not_finished(p: Obj, running: bool) -> None:
    assert is_running(p) is running


def test_node_usage_is_the_sum_over_its_running_pods() -> None:
    usage = cluster_usage(
        [
            pod("a", "n1", [c("x", "100m", "1Gi")]),
            pod("b", "n1", [c("x", "200m", "1Gi")], usage='{"cpu": "700m"}'),
            pod("c", "n2", [c("x", "1", "2Gi")]),
            pod("pending", None, [c("x", "8", "64Gi")]),
            pod("done", "n2", [c("x", "8", "64Gi")], phase="Succeeded"),
        ]
    )
    assert usage.nodes == {
        "n1": {"cpu": 800 * MILLI, "memory": 2048 * MI},
        "n2": {"cpu": 1000 * MILLI, "memory": 2048 * MI},
    }
    assert set(usage.pods) == {("default", "a"), ("default", "b"), ("default", "c")}
    assert usage.unknown_nodes == frozenset()
    assert usage.problems == ()


def test_a_pod_whose_usage_cannot_be_read_makes_its_node_unknown_and_says_why() -> None:
    usage = cluster_usage([pod("good", "n1"), pod("bad", "n2", usage='{"cpu": "-1"}'), pod("other", "n2")])
    assert usage.unknown_nodes == frozenset({"n2"})
    assert set(usage.pods) == {("default", "good"), ("default", "other")}
    (problem,) = usage.problems
    assert problem.startswith("pod default/bad: metadata.annotations[kubesched.io/usage][cpu]")
    assert "greater than or equal to 0" in problem


def test_a_pod_whose_containers_are_not_a_list_is_a_usage_error_not_a_crash() -> None:
    p = pod()
    p["spec"]["containers"] = 3
    with pytest.raises(UsageError, match=r"spec.containers: must be a list"):
        pod_usage(p)
    p["spec"] = "bound?"
    assert is_running(p) is False


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        pytest.param("cpu=1", "not a JSON object", id="not-json"),
        pytest.param("[1]", "must be a non-empty JSON object", id="a-list"),
        pytest.param("{}", "must be a non-empty JSON object", id="empty"),
        pytest.param('{"gpu": "1"}', "[gpu]: unsupported resource: only cpu and memory are measured", id="resource"),
        pytest.param('{"cpu": "fast"}', "[cpu]: quantities must match", id="quantity"),
        pytest.param('{"cpu": true}', "[cpu]: must be a quantity", id="boolean"),
        pytest.param('{"memory": "-1Gi"}', "[memory]: must be greater than or equal to 0", id="negative"),
        pytest.param('{"nope": {"cpu": "1"}}', "[nope]: no running container of that name (running: app)", id="name"),
        pytest.param('{"app": {"cpu": "1"}, "cpu": "1"}', "either quantities by resource or", id="mixed"),
    ],
)
def test_a_bad_annotation_names_the_field_and_the_reason(annotation: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        pod_usage(pod(usage=annotation))
    assert str(caught.value).startswith("metadata.annotations[kubesched.io/usage]")
    assert message in str(caught.value)


@pytest.mark.parametrize(
    ("value", "scale", "shown"),
    [
        (0, -9, "0"),
        (250 * MILLI, -9, "250m"),
        (2 * 10**9, -9, "2"),
        (1500 * MILLI, -9, "1500m"),
        (1234567, -9, "1234567n"),
        (1000, 0, "1k"),
        (512, 0, "512"),
    ],
)
def test_decimal_quantities_print_as_go_prints_them(value: int, scale: int, shown: str) -> None:
    assert decimal_quantity(value, scale) == shown


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0, "0"), (1000, "1k"), (2**30, "1Gi"), (1536 * MI, "1536Mi"), (123456789, "123456789"), (2048, "2Ki")],
)
def test_binary_quantities_print_as_go_prints_them(value: int, shown: str) -> None:
    assert binary_quantity(value) == shown


def test_a_usage_list_has_cpu_and_memory() -> None:
    assert usage_list({"cpu": 100 * MILLI}) == {"cpu": "100m", "memory": "0"}


def _scenario_pod(usage: str) -> Obj:
    p = pod("hot", "n1", [c("app", "100m", "64Mi")], usage=usage)
    return {"apiVersion": "v1", "kind": "Pod", **p, "status": {}}


def test_a_scenario_refuses_a_bad_usage_annotation_before_it_runs() -> None:
    from kubesched.sim.scenario.reading import ScenarioError, parse_scenario

    scenario = parse_scenario([_scenario_pod('{"cpu": "1500m"}')], "scenario.yaml")
    assert [p["metadata"]["name"] for p in scenario.running_pods] == ["hot"]
    with pytest.raises(ScenarioError) as caught:
        parse_scenario([_scenario_pod('{"cpu": "1500m", "disk": "1"}')], "scenario.yaml")
    message = str(caught.value)
    assert message.startswith("scenario.yaml")
    assert "metadata.annotations[kubesched.io/usage][disk]: unsupported resource" in message
