"""Custom objects against their structural schema: pruning, null pruning, defaulting, the value
validations (worded as the API server words them) and the CEL rules."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.sim.apiserver.validation import structural

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["replicas"],
            "properties": {
                "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
                "name": {"type": "string", "minLength": 2, "maxLength": 5, "pattern": "^[a-z]+$"},
                "port": {"x-kubernetes-int-or-string": True},
                "tags": {"type": "array", "maxItems": 2, "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}},
                },
                "nested": {
                    "type": "object",
                    "default": {},
                    "properties": {"depth": {"type": "integer", "default": 3}},
                },
                "optional": {"type": "string", "nullable": True},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "template": {
                    "type": "object",
                    "x-kubernetes-embedded-resource": True,
                    "properties": {"spec": {"type": "object"}},
                },
            },
        },
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
    },
}


def obj(**spec: Any) -> dict[str, Any]:
    return {"apiVersion": "example.io/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": {"replicas": 2, **spec}}


def test_pruning_drops_unknown_fields_and_keeps_the_root_and_embedded_meta() -> None:
    o = obj(
        extra=1,
        free={"anything": {"goes": True}},
        template={"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}, "junk": 1},
    )
    o["other"] = 2
    dropped = structural.prune(o, SCHEMA)
    assert sorted(dropped) == ["other", "spec.extra", "spec.template.junk"]
    assert o["metadata"] == {"name": "t"} and o["spec"]["free"] == {"anything": {"goes": True}}
    assert o["spec"]["template"]["metadata"] == {"name": "p"}


def test_defaults_fill_absent_fields_from_the_root_down_and_nulls_are_pruned() -> None:
    o = obj(optional=None, name=None)
    structural.normalize(o, SCHEMA)
    assert o["spec"]["mode"] == "fast"
    assert o["spec"]["nested"] == {"depth": 3}  # the default {} then its own field's default
    assert o["spec"]["optional"] is None  # nullable: kept
    assert "name" not in o["spec"]  # not nullable, no default: pruned


def test_a_null_where_a_default_exists_is_defaulted() -> None:
    o = obj(mode=None)
    structural.normalize(o, SCHEMA)
    assert o["spec"]["mode"] == "fast"


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {"replicas": "2"},
            ("spec.replicas", 'Invalid value: "string": spec.replicas in body must be of type integer: "string"'),
        ),
        (
            {"replicas": 0},
            ("spec.replicas", "Invalid value: 0: spec.replicas in body should be greater than or equal to 1"),
        ),
        (
            {"replicas": 11},
            ("spec.replicas", "Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
        ),
        ({"mode": "medium"}, ("spec.mode", 'Unsupported value: "medium": supported values: "fast", "slow"')),
        ({"name": "a"}, ("spec.name", 'Invalid value: "a": spec.name in body should be at least 2 chars long')),
        ({"name": "abcdef"}, ("spec.name", "Too long: may not be more than 5 bytes")),
        ({"name": "AB"}, ("spec.name", "Invalid value: \"AB\": spec.name in body should match '^[a-z]+$'")),
        (
            {"port": 1.5},
            ("spec.port", 'Invalid value: "number": spec.port in body must be of type integer,string: "number"'),
        ),
        ({"tags": ["a", "b", "c"]}, ("spec.tags", "Too many: 3: must have at most 2 items")),
        ({"tags": ["a", "a"]}, ("spec.tags[1]", 'Duplicate value: "a"')),
        (
            {"ports": [{"name": "x", "n": 1}, {"name": "x", "n": 2}]},
            ("spec.ports[1]", 'Duplicate value: map[string]interface {}{"name":"x"}'),
        ),
        (
            {"labels": {"a": 1}},
            ("spec.labels.a", 'Invalid value: "integer": spec.labels.a in body must be of type string: "integer"'),
        ),
        ({"template": {"spec": {}}}, ("spec.template.apiVersion", "Required value: must not be empty")),
    ],
)
def test_value_validations_are_worded_as_upstream(spec: dict[str, Any], expected: tuple[str, str]) -> None:
    causes = structural.validate(obj(**spec), SCHEMA)
    assert expected in [(f, m) for f, _, m in causes]


def test_required_and_valid_objects() -> None:
    o = obj()
    del o["spec"]["replicas"]
    assert structural.validate(o, SCHEMA) == [("spec.replicas", "FieldValueRequired", "Required value")]
    assert structural.validate(obj(port="http", port2=1, tags=["a"], optional=None), SCHEMA) == []
    assert structural.validate(obj(port=8080), SCHEMA) == []


RULES: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.min <= self.max", "message": "min must not exceed max"},
                {"rule": "self.max >= oldSelf.max", "message": "max may not shrink", "reason": "FieldValueForbidden"},
            ],
            "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
        }
    },
}


def test_cel_rules_and_transition_rules() -> None:
    new = {"spec": {"min": 3, "max": 2}}
    assert structural.check(new, None, RULES) == [
        ("spec", "FieldValueInvalid", 'Invalid value: "object": min must not exceed max')
    ]
    # oldSelf: only on update.
    assert structural.check({"spec": {"min": 1, "max": 2}}, {"spec": {"min": 1, "max": 5}}, RULES) == [
        ("spec", "FieldValueForbidden", "Forbidden: max may not shrink")
    ]
    assert structural.check({"spec": {"min": 1, "max": 6}}, {"spec": {"min": 1, "max": 5}}, RULES) == []


def test_a_message_expression_words_the_failure() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.n < 3", "messageExpression": "'n is ' + string(self.n)", "message": "unused"}
        ],
        "properties": {"n": {"type": "integer"}},
    }
    assert structural.check({"n": 5}, None, schema) == [
        ("<nil>", "FieldValueInvalid", 'Invalid value: "object": n is 5')
    ]


def test_rules_are_not_evaluated_on_an_object_of_the_wrong_shape() -> None:
    causes = structural.check({"spec": {"min": "x", "max": 2}}, None, RULES)
    assert causes[0][0] == "spec.min"
    assert "some validation rules were not checked" in causes[-1][2]
    assert not any("min must not exceed max" in m for _, _, m in causes)


def test_a_schema_without_rules_reports_only_the_value_errors() -> None:
    causes = structural.check(obj(replicas="x"), None, SCHEMA)
    assert len(causes) == 1 and causes[0][1] == "FieldValueTypeInvalid"
