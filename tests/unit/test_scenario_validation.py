"""Scenario objects get the API server's validation of the fields the scheduler reads
(``kubesched.sim.apiserver.validation.scheduling_problems``): what ``sim serve`` refuses with 422, a
scenario refuses with the same field path and message."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.sim.scenario.reading import ScenarioError, parse_scenario
from kubesched.testing import make_node, make_pod

Obj = dict[str, Any]


def pod(**spec: Any) -> Obj:
    obj = make_pod("p").obj()
    obj["spec"].update(spec)
    return obj


def node(**spec: Any) -> Obj:
    obj = make_node("nodeA").obj()
    obj.setdefault("spec", {}).update(spec)
    return obj


@pytest.mark.parametrize(
    ("doc", "fragment"),
    [
        (
            pod(
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "Bogus"}]}]
                        }
                    }
                }
            ),
            "document 1: spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            '.matchExpressions[0].operator: Invalid value: "Bogus": not a valid selector operator (Pod p)',
        ),
        (
            pod(tolerations=[{"key": "k", "operator": "Exists", "effect": "Sometimes"}]),
            'spec.tolerations[0].effect: Unsupported value: "Sometimes"',
        ),
        (
            pod(
                topologySpreadConstraints=[{"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}]
            ),
            "spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
        ),
        (pod(nodeSelector={"zone": "a b"}), 'spec.nodeSelector: Invalid value: "a b"'),
        (node(taints=[{"key": "k", "effect": "Sometimes"}]), 'spec.taints[0].effect: Unsupported value: "Sometimes"'),
    ],
    ids=["node-affinity-operator", "toleration-effect", "max-skew", "node-selector-value", "taint-effect"],
)
def test_scheduling_fields_are_validated_as_the_api_server_does(doc: Obj, fragment: str) -> None:
    with pytest.raises(ScenarioError) as exc:
        parse_scenario([doc], "s.yaml")
    assert fragment in str(exc.value)


def test_names_upstream_scheduler_tests_use_are_kept() -> None:
    # "nodeA" is no valid object name for the API server, but scenarios port upstream's tests.
    sc = parse_scenario([node(), pod(nodeName="nodeA")], "s.yaml")
    assert [n["metadata"]["name"] for n in sc.nodes] == ["nodeA"]
