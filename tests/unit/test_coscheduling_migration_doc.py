"""The Coscheduling README's migration examples (scheduler-plugins' PodGroup CRD to 1.37's
scheduling.k8s.io/v1beta1 PodGroup) against kubesched's own API validation, so they cannot rot."""

from __future__ import annotations

import copy
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched import PodInfo
from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.admission import admit_new
from kubesched.sim.apiserver.errors import APIError
from kubesched.sim.apiserver.openapi.documents import unknown_fields
from kubesched.sim.apiserver.validation import scheduling as v

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "coscheduling"
sys.path.insert(0, str(PACKAGE))

from kubesched_coscheduling import POD_GROUP_LABEL, Coscheduling, PodGroupRef, pod_group_of  # noqa: E402
from kubesched_coscheduling.coscheduling import scheduling_group_of  # noqa: E402

Obj = dict[str, Any]
GATES = FeatureGates({"GenericWorkload": True})
SECTION = "### Migrating from scheduler-plugins' PodGroup CRD"


def migration_section() -> str:
    text = (PACKAGE / "README.md").read_text()
    assert SECTION in text
    rest = text.split(SECTION, 1)[1]
    return re.split(r"\n#{2,3} ", rest, maxsplit=1)[0]


def examples() -> tuple[list[Obj], list[Obj]]:
    """The section's two YAML blocks, before and after, as lists of objects."""
    blocks = re.findall(r"```yaml\n(.*?)```", migration_section(), flags=re.S)
    assert len(blocks) == 2, blocks
    before, after = ([d for d in yaml.safe_load_all(b) if d] for b in blocks)
    return before, after


def by_kind(objs: list[Obj]) -> dict[str, Obj]:
    out = {o["kind"]: o for o in objs}
    assert set(out) == {"PodGroup", "Pod"}, out
    return out


def group_of_api_version(obj: Obj) -> str:
    api_version = str(obj["apiVersion"])
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def test_after_example_uses_the_v1beta1_api() -> None:
    after = by_kind(examples()[1])
    assert after["PodGroup"]["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert after["Pod"]["apiVersion"] == "v1"


@pytest.mark.parametrize("kind", ["PodGroup", "Pod"])
def test_after_example_has_no_unknown_field(kind: str) -> None:
    obj = by_kind(examples()[1])[kind]
    assert unknown_fields(kind, group_of_api_version(obj), obj) == []


def test_after_pod_group_is_accepted_by_the_api_server() -> None:
    group = by_kind(examples()[1])["PodGroup"]
    assert v.validate_pod_group(group, GATES) == []
    admitted = admit_new("PodGroup", "scheduling.k8s.io", copy.deepcopy(group), {}, GATES)
    assert admitted["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}


def test_the_validation_used_here_refuses_a_broken_pod_group() -> None:
    group = copy.deepcopy(by_kind(examples()[1])["PodGroup"])
    group["spec"]["schedulingPolicy"]["gang"]["minCount"] = 0
    with pytest.raises(APIError) as err:
        admit_new("PodGroup", "scheduling.k8s.io", group, {}, GATES)
    assert "spec.schedulingPolicy.gang.minCount" in str(err.value.status)


def test_after_pod_is_accepted_and_keeps_its_scheduling_group() -> None:
    kinds = by_kind(examples()[1])
    admitted = admit_new("Pod", "", copy.deepcopy(kinds["Pod"]), {}, GATES)
    assert admitted["spec"]["schedulingGroup"] == {"podGroupName": kinds["PodGroup"]["metadata"]["name"]}
    assert admitted["metadata"]["namespace"] == kinds["PodGroup"]["metadata"]["namespace"]


def test_without_generic_workload_the_api_server_drops_the_scheduling_group() -> None:
    pod = copy.deepcopy(by_kind(examples()[1])["Pod"])
    admitted = admit_new("Pod", "", pod, {}, FeatureGates({"GenericWorkload": False}))
    assert "schedulingGroup" not in admitted["spec"]


def test_before_and_after_describe_the_same_group() -> None:
    before, after = (by_kind(objs) for objs in examples())
    assert before["PodGroup"]["apiVersion"] == "scheduling.x-k8s.io/v1alpha1"
    assert set(before["PodGroup"]["spec"]) == {"minMember", "minResources", "scheduleTimeoutSeconds"}
    name = before["PodGroup"]["metadata"]["name"]
    assert before["Pod"]["metadata"]["labels"] == {POD_GROUP_LABEL: name}
    assert after["PodGroup"]["metadata"]["name"] == name
    assert after["PodGroup"]["spec"]["schedulingPolicy"]["gang"]["minCount"] == before["PodGroup"]["spec"]["minMember"]
    assert "labels" not in after["Pod"]["metadata"]
    # The containers are unchanged: only the grouping moves.
    assert after["Pod"]["spec"]["containers"] == before["Pod"]["spec"]["containers"]


def test_before_pod_is_a_coscheduling_gang_and_after_pod_is_not() -> None:
    before, after = (by_kind(objs) for objs in examples())
    pg = before["PodGroup"]
    ns = before["Pod"]["metadata"]["namespace"]

    def min_member(namespace: str, name: str) -> int | None:
        meta = pg["metadata"]
        return int(pg["spec"]["minMember"]) if (namespace, name) == (meta["namespace"], meta["name"]) else None

    assert pod_group_of(ns, before["Pod"]["metadata"]["labels"], min_member) == PodGroupRef(ns, "train", 3)
    assert scheduling_group_of(before["Pod"]) == ""
    assert scheduling_group_of(after["Pod"]) == "train"
    # During the move a pod may carry both: the schedulingGroup wins and Coscheduling leaves it alone.
    both = copy.deepcopy(after["Pod"])
    both["metadata"]["labels"] = dict(before["Pod"]["metadata"]["labels"])
    cos = Coscheduling(None, None)  # type: ignore[arg-type]  # group_of needs no handle for this pod
    assert cos.group_of(PodInfo(both)) is None


@pytest.mark.parametrize(
    "field",
    [
        "`spec.minMember",
        "`spec.minResources`",
        "`spec.scheduleTimeoutSeconds`",
        "`spec.schedulingPolicy.gang.minCount",
        "`spec.schedulingGroup.podGroupName",
        "`scheduling.x-k8s.io/pod-group",
        "`scheduling.k8s.io/v1beta1`",
        "`scheduling.x-k8s.io/v1alpha1`",
    ],
)
def test_mapping_table_names_each_field(field: str) -> None:
    table = [line for line in migration_section().splitlines() if line.startswith("|")]
    assert any(field in line for line in table), field


def test_fields_without_counterpart_say_so() -> None:
    rows = {
        key: line
        for line in migration_section().splitlines()
        for key in ("minResources", "scheduleTimeoutSeconds")
        if line.startswith(f"| `spec.{key}`")
    }
    assert set(rows) == {"minResources", "scheduleTimeoutSeconds"}
    for line in rows.values():
        assert "no counterpart" in line
