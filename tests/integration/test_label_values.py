"""Label values in selectors, as upstream treats them: a node affinity value no label can have
makes its term match no node (the pod stays pending with the usual reason), on the batch path
and node by node; a label selector with such a value is refused."""

from __future__ import annotations

import asyncio

import pytest

from kubesched.config import load_config
from kubesched.framework.selectors import LabelSelector, SelectorError
from kubesched.sim.run.simulate import SimulationSettings, simulate
from kubesched.sim.scenario.reading import parse_scenario
from kubesched.testing import make_node, make_pod

INVALID = "invalid value: ___@#$%^"


def affinity(*terms: list[dict]) -> dict:
    return {"nodeSelectorTerms": [{"matchExpressions": t} for t in terms]}


@pytest.mark.parametrize("batch", [True, False], ids=["batch", "node-by-node"])
def test_an_invalid_not_in_value_matches_no_node(batch: bool) -> None:
    nodes = [make_node(f"n{i}").label("foo", "bar").obj() for i in range(3)]
    pods = [
        make_pod("invalid").required_node_affinity(
            affinity([{"key": "foo", "operator": "NotIn", "values": [INVALID]}])
        ),
        make_pod("valid-alternative").required_node_affinity(
            affinity(
                [{"key": "foo", "operator": "NotIn", "values": [INVALID]}],
                [{"key": "foo", "operator": "In", "values": ["bar"]}],
            )
        ),
    ]
    scenario = parse_scenario([*nodes, *(p.obj() for p in pods)])
    result = asyncio.run(simulate(load_config(None).profiles, scenario, SimulationSettings(batch=batch)))
    by_name = {p["name"]: p for p in result.pods}
    assert by_name["invalid"]["phase"] == "Unschedulable"
    assert "3 node(s) didn't match Pod's node affinity/selector" in by_name["invalid"]["message"]
    assert by_name["valid-alternative"]["node"] in {"n0", "n1", "n2"}


@pytest.mark.parametrize(
    "expression",
    [
        {"key": "app", "operator": "In", "values": ["a b"]},
        {"key": "app", "operator": "NotIn", "values": ["x" * 64]},
    ],
    ids=["space", "too-long"],
)
def test_a_label_selector_with_an_invalid_value_is_refused(expression: dict) -> None:
    with pytest.raises(SelectorError, match="Invalid value"):
        LabelSelector.compile({"matchExpressions": [expression]})
