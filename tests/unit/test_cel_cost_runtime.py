"""The cost budget of evaluating a custom object's CEL rules: a rule whose evaluation may cost
more than the per-call limit over this object's actual sizes is not evaluated, nor is any rule
once the object's budget is spent; each answered in kube-apiserver's words."""

from __future__ import annotations

import time
from typing import Any

from kubesched.sim.apiserver.validation import structural
from kubesched.sim.apiserver.validation.celcost.limits import PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET
from kubesched.sim.apiserver.validation.celcost.runtime import rule_bound

Obj = dict[str, Any]
CUBIC = "self.a.all(x, self.a.all(y, self.a.all(z, x == y)))"
PER_CALL = (
    "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation rules "
    "will be run due to call cost exceeds limit for rule: "
)
OUT_OF_BUDGET = (
    'Invalid value: "object": validation failed due to running out of cost budget, no further validation rules '
    "will be run"
)


def ints(most: int) -> Obj:
    return {"type": "array", "maxItems": most, "items": {"type": "integer"}}


def test_a_rule_past_the_per_call_limit_on_this_object_is_not_evaluated() -> None:
    root_rule = "self.spec.a.all(x, self.spec.a.all(y, self.spec.a.all(z, x == y)))"
    rules = [{"rule": CUBIC, "message": "all the same"}]
    spec: Obj = {"type": "object", "properties": {"a": ints(100)}, "x-kubernetes-validations": rules}
    schema = {"type": "object", "properties": {"spec": spec}, "x-kubernetes-validations": [{"rule": root_rule}]}
    assert structural.check({"spec": {"a": [1] * 20}}, None, schema) == []
    assert structural.check({"spec": {"a": [1, 2]}}, None, schema) == [
        ("<nil>", "FieldValueInvalid", f'Invalid value: "object": failed rule: {root_rule}'),
        ("spec", "FieldValueInvalid", 'Invalid value: "object": all the same'),
    ]
    start = time.monotonic()
    causes = structural.check({"spec": {"a": [1] * 100}}, None, schema)
    assert time.monotonic() - start < 0.5  # not evaluated: it would take seconds
    # The root's rule ran out; nothing further (the spec's rule) runs.
    assert causes == [("<nil>", "FieldValueInvalid", PER_CALL + root_rule)]


def test_the_bound_follows_the_objects_sizes() -> None:
    schema = {"type": "object", "properties": {"a": ints(100)}}
    small = rule_bound(CUBIC, schema, False, {"self": {"a": [0] * 10}}, 100)
    large = rule_bound(CUBIC, schema, False, {"self": {"a": [0] * 60}}, 100)
    assert small is not None and large is not None
    assert small < 10_000 < PER_CALL_LIMIT < large
    # Strings: the characters of the longest one the path reaches.
    strings = {"type": "object", "properties": {"s": {"type": "array", "items": {"type": "string"}}}}
    short = rule_bound("self.s.all(x, x.contains('a'))", strings, False, {"self": {"s": ["ab", "abcd"]}}, 100)
    # cel-go's part: self.s 2, result 1, per item condition 2, accumulator 1, x 1, contains 1; and
    # what the library copies: self.s read (a list of 2 and its 2 short strings: 4)
    assert short == 2 + 1 + 2 * (2 + 1 + 1 + 1) + 4


def test_once_the_objects_budget_is_spent_no_rule_runs() -> None:
    # Each item's rule may cost about 0.8 million (its exists() stops at once, the bound does not).
    rule = "self.a.exists(x, x == 0) || self.a.all(x, self.a.all(y, x == y))"
    item = {"type": "object", "properties": {"a": ints(500)}, "x-kubernetes-validations": [{"rule": rule}]}
    schema = {"type": "object", "properties": {"spec": {"type": "array", "maxItems": 20, "items": item}}}
    items = [{"a": [0] + [1] * 319} for _ in range(20)]
    bound = rule_bound(rule, item, False, {"self": items[0]}, 10**6)
    assert bound is not None and PER_CALL_LIMIT // 2 < bound < PER_CALL_LIMIT
    # and each item is handed to the library once: 1 entry, a list of 320, 320 numbers
    runs = RUNTIME_CEL_COST_BUDGET // (bound + 1 + 320 + 320)
    items[-1]["a"] = [1, 2]  # would fail, but is never evaluated
    assert structural.check({"spec": items}, None, schema) == [(f"spec[{runs}]", "FieldValueInvalid", OUT_OF_BUDGET)]


def test_a_message_expression_is_bounded_too() -> None:
    text = "self.a.all(x, self.a.all(y, x == y)) ? 'all the same' : 'not all the same'"
    rule = {"rule": "size(self.a) < 3", "messageExpression": text}
    schema = {"type": "object", "properties": {"a": ints(1000)}, "x-kubernetes-validations": [rule]}
    assert structural.check({"a": [5] * 4}, None, schema) == [
        ("<nil>", "FieldValueInvalid", 'Invalid value: "object": all the same')
    ]
    assert structural.check({"a": [5] * 500}, None, schema) == [
        (
            "<nil>",
            "FieldValueInvalid",
            'Invalid value: "object": no further validation rules will be run due to call cost exceeds limit '
            f'for messageExpression: "{text}"',
        )
    ]


def test_what_the_library_copies_to_read_a_field_is_charged() -> None:
    # Reading self.o copies all of o (its 10,000 items too), at each of the 100 turns: about
    # 9 seconds unbounded; here refused at once. cel-go reads in place: about 600 units.
    schema = {
        "type": "object",
        "properties": {
            "a": ints(100),
            "o": {"type": "object", "properties": {"a": ints(10_000), "b": {"type": "integer"}}},
        },
        "x-kubernetes-validations": [{"rule": "self.a.all(x, self.o.b >= 0)"}],
    }
    obj: Obj = {"a": list(range(100)), "o": {"a": list(range(10_000)), "b": 1}}
    start = time.monotonic()
    assert structural.check(obj, None, schema) == [
        ("<nil>", "FieldValueInvalid", PER_CALL + "self.a.all(x, self.o.b >= 0)")
    ]
    assert time.monotonic() - start < 0.5
    obj["o"]["a"] = list(range(100))  # a small o: read as often, cheap to copy
    assert structural.check(obj, None, schema) == []
