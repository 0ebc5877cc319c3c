"""The limits a CustomResourceDefinition's CEL rules must keep: each rule's estimated cost times
how often it may run within the per-rule limit, a version's total within the per-CRD limit, the
refusals worded and placed as kube-apiserver's."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.cluster.custom_resources import CustomResourceRegistry
from kubesched.sim.apiserver.customresources import admit_definition
from kubesched.sim.apiserver.errors import APIError
from kubesched.sim.apiserver.validation.celcost.limits import (
    STATIC_ESTIMATED_COST_LIMIT,
    cost_error_message,
    schema_cost_causes,
)

Obj = dict[str, Any]
ROOT = "spec.versions[0].schema.openAPIV3Schema"
HINT = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
CONTRIBUTED = "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"
TOTAL = "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of"


def definition(schema: Obj) -> Obj:
    """The definition of ``things.example.io`` with ``schema`` as its one version's schema."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "things.example.io"},
        "spec": {
            "group": "example.io",
            "names": {"plural": "things", "kind": "Thing"},
            "scope": "Namespaced",
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


def spec(schema: Obj) -> Obj:
    return {"type": "object", "properties": {"spec": schema}}


def with_rule(schema: Obj, rule: str, **extra: Any) -> Obj:
    return {**schema, "x-kubernetes-validations": [{"rule": rule, **extra}]}


def ints(most: int | None = None) -> Obj:
    out: Obj = {"type": "array", "items": {"type": "integer"}}
    if most is not None:
        out["maxItems"] = most
    return out


def test_three_nested_loops_over_an_unbounded_list_are_refused() -> None:
    rule = "self.a.all(x, self.a.all(y, self.a.all(z, x == y)))"
    schema = spec(with_rule({"type": "object", "properties": {"a": ints()}}, rule))
    at = f"{ROOT}.properties[spec].x-kubernetes-validations[0].rule"
    assert schema_cost_causes(schema, ROOT) == [
        (
            at,
            "FieldValueForbidden",
            f"Forbidden: estimated rule cost exceeds budget by factor of more than 100x {HINT}",
        ),
        (at, "FieldValueForbidden", CONTRIBUTED),
        (ROOT, "FieldValueForbidden", f"{TOTAL} more than 100x {HINT}"),
    ]
    bounded = spec(with_rule({"type": "object", "properties": {"a": ints(100)}}, rule))
    assert schema_cost_causes(bounded, ROOT) == []


def test_a_rule_runs_once_for_each_item_it_may_be_found_in() -> None:
    # 302 per list of 100 numbers: 33 thousand such lists fit the limit, not 34 thousand.
    item = with_rule({"type": "array", "maxItems": 100, "items": {"type": "number"}}, "self.all(x, true)")
    fits = spec({"type": "array", "maxItems": 33_000, "items": item})
    assert schema_cost_causes(fits, ROOT) == []
    over = spec({"type": "array", "maxItems": 34_000, "items": item})
    at = f"{ROOT}.properties[spec].items.x-kubernetes-validations[0].rule"
    assert schema_cost_causes(over, ROOT) == [
        (at, "FieldValueForbidden", f"Forbidden: estimated rule cost exceeds budget by factor of 1.026800x {HINT}")
    ]
    # Without maxItems above: as many as fit in a request (3 MiB / 3 bytes for "[]," each).
    unbounded = spec({"type": "array", "items": item})
    assert [c[0] for c in schema_cost_causes(unbounded, ROOT)][0] == at


def test_the_total_of_a_schema_has_its_own_limit() -> None:
    # Twelve rules of 9,443,720 each: each within its limit, together past 100 million.
    rule = "self.all(x, self.all(y, self.all(z, true)))"
    props = {f"f{i}": with_rule(ints(146), rule) for i in range(12)}
    causes = schema_cost_causes(spec({"type": "object", "properties": props}), ROOT)
    assert [c for c in causes if "estimated rule cost exceeds" in c[2]] == []
    contributed = [c[0] for c in causes if c[2] == CONTRIBUTED]
    assert len(contributed) == 4  # the four dearest are named
    assert causes[-1] == (ROOT, "FieldValueForbidden", f"{TOTAL} 1.133246x {HINT}")


def test_a_message_expression_building_text_of_unknown_length_is_refused() -> None:
    # As kube-apiserver refuses it: string() of a number has no bound it knows.
    rule = {"rule": "self.n < 3", "messageExpression": "'n is ' + string(self.n)"}
    schema = spec({"type": "object", "properties": {"n": {"type": "integer"}}, "x-kubernetes-validations": [rule]})
    at = f"{ROOT}.properties[spec].x-kubernetes-validations[0].messageExpression"
    causes = schema_cost_causes(schema, ROOT)
    assert causes[0] == (
        at,
        "FieldValueForbidden",
        f"Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x {HINT}",
    )
    assert (at, "FieldValueForbidden", CONTRIBUTED) in causes
    bounded = {"rule": "self.n < 3", "messageExpression": "'n is too large'"}
    schema["properties"]["spec"]["x-kubernetes-validations"] = [bounded]
    assert schema_cost_causes(schema, ROOT) == []


@pytest.mark.parametrize(
    ("cost", "shown"),
    [(10_000_001, "1.000000x"), (14_000_000, "1.400000x"), (15_000_000, "1.5x"), (999_000_000, "99.9x")],
)
def test_the_factor_is_printed_as_upstream_prints_it(cost: int, shown: str) -> None:
    assert cost_error_message("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT) == (
        f"estimated rule cost exceeds budget by factor of {shown} {HINT}"
    )


def test_rules_that_are_not_cel_or_on_untyped_schemas_are_left_to_compilation() -> None:
    schema = spec({"type": "object", "x-kubernetes-validations": [{"rule": "self.a =="}, {"rule": 5}]})
    assert schema_cost_causes(schema, ROOT) == []
    untyped = spec({"x-kubernetes-preserve-unknown-fields": True, "x-kubernetes-validations": [{"rule": "true"}]})
    assert schema_cost_causes(untyped, ROOT) == []


def test_an_update_leaving_a_schema_as_it_was_is_held_to_the_total_alone() -> None:
    # About 24 million: past the per-rule limit, within the total one.
    pricey = spec(
        with_rule(
            {"type": "object", "properties": {"a": ints(200)}}, "self.a.all(x, self.a.all(y, self.a.all(z, true)))"
        )
    )
    crd = definition(pricey)
    with pytest.raises(APIError) as err:
        admit_definition(copy.deepcopy(crd), None, CustomResourceRegistry())
    assert err.value.code == 422 and "estimated rule cost exceeds budget by factor of 2.4x" in err.value.message
    # A definition stored with it (as one stored before the limits were kept) may still be
    # updated, as long as that schema stays as it was.
    stored = copy.deepcopy(crd)
    relabeled = copy.deepcopy(crd)
    relabeled["metadata"]["labels"] = {"tier": "gold"}
    assert admit_definition(relabeled, stored, CustomResourceRegistry())["metadata"]["labels"] == {"tier": "gold"}
    changed = copy.deepcopy(crd)
    changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["description"] = "now"
    with pytest.raises(APIError) as err:
        admit_definition(changed, stored, CustomResourceRegistry())
    assert err.value.code == 422 and "estimated rule cost exceeds budget" in err.value.message


def test_a_lookup_in_a_list_literal_is_unbounded_and_one_in_a_map_literal_is_not() -> None:
    # As reported of kube-apiserver: indexOf over a list literal is refused, with or without
    # maxLength (the literal's items have no bound it knows); the same lookup in a map is cheap.
    for most in (None, 10):
        size: Obj = {"type": "string"} if most is None else {"type": "string", "maxLength": most}
        listed = spec(with_rule(size, "['small', 'medium', 'large'].indexOf(self) >= 0"))
        assert [c[2] for c in schema_cost_causes(listed, ROOT)][0] == (
            f"Forbidden: estimated rule cost exceeds budget by factor of more than 100x {HINT}"
        )
        mapped = spec(with_rule(size, "{'small': 0, 'medium': 1, 'large': 2}[self] >= 0"))
        assert schema_cost_causes(mapped, ROOT) == []
