"""The cost budget of evaluating a custom object's ``x-kubernetes-validations`` rules.

kube-apiserver counts the actual cost of each evaluation, stops one past
:data:`~.limits.PER_CALL_LIMIT` and all of an object's past :data:`~.limits.RUNTIME_CEL_COST_BUDGET`.
The ``cel`` library evaluating the rules here counts nothing and cannot be interrupted (nor does
it let go of the interpreter while it runs), so the cost is bounded before evaluating instead:
the rule's estimate (:mod:`.estimate`) with the sizes of this object's actual lists, maps and
strings in place of the schema's bounds. That is the most the evaluation can cost (every
comprehension run to its end); a rule whose bound is past the per-call limit, or past what is left
of the object's budget, is not evaluated and answered in upstream's words, and no further rule
runs. Upstream, stopping at the actual cost, may let through an evaluation that ends early
(``all`` at its first false) where this bound does not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kubesched.sim.apiserver.validation.celcost import decltypes as t
from kubesched.sim.apiserver.validation.celcost.estimate import Sizer, schema_sizer
from kubesched.sim.apiserver.validation.celcost.limits import PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET, most, parsed
from kubesched.sim.apiserver.validation.celcost.ranges import Range
from kubesched.sim.apiserver.validation.meta import go_quote

OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"
_MESSAGE_OUT_OF_BUDGET = (
    "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"
)
_PER_CALL = "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: "


@dataclass
class Budget:
    """What is left of one object's budget; ``stopped`` once a rule ran out of it. ``largest``
    bounds a size the estimate cannot tell (the text ``string(self.n)`` makes): the object's
    serialized size, which no value computed from it by a bounded rule exceeds in practice."""

    largest: int
    remaining: int = RUNTIME_CEL_COST_BUDGET
    stopped: bool = False

    def charge(
        self, rule: dict[str, Any], schema: dict[str, Any], resource: bool, values: dict[str, Any]
    ) -> str | None:
        """Charge the bound of evaluating ``rule`` over ``values`` (``self``, ``oldSelf``); the
        error detail when it may not run (then nothing further runs)."""
        if self.remaining <= 0:
            self.stopped = True
            return OUT_OF_BUDGET
        bound = rule_bound(rule["rule"], schema, resource, values, self.largest)
        if bound is None:
            return None
        if bound > PER_CALL_LIMIT:
            self.stopped = True
            message = rule.get("message")
            shown = message.strip() if isinstance(message, str) and message else str(rule["rule"]).strip()
            return _PER_CALL + shown
        if bound > self.remaining:
            self.stopped = True
            return OUT_OF_BUDGET
        self.remaining -= bound
        return None

    def charge_message(
        self, rule: dict[str, Any], schema: dict[str, Any], resource: bool, values: dict[str, Any]
    ) -> str | None:
        """As :meth:`charge`, for the ``messageExpression`` of a rule that failed."""
        text = rule.get("messageExpression")
        if not isinstance(text, str) or not text:
            return None
        bound = rule_bound(text, schema, resource, values, self.largest)
        if bound is None:
            return None
        if bound > PER_CALL_LIMIT:
            self.stopped = True
            return f"no further validation rules will be run due to call cost exceeds limit for messageExpression: {go_quote(text)}"
        if bound > self.remaining:
            self.stopped = True
            return _MESSAGE_OUT_OF_BUDGET
        self.remaining -= bound
        return None


_DECLARED: dict[tuple[int, bool], tuple[dict[str, Any], t.DeclType | None]] = {}


def _declared(schema: dict[str, Any], resource: bool) -> t.DeclType | None:
    key = (id(schema), resource)
    kept = _DECLARED.get(key)
    if kept is None or kept[0] is not schema:
        if len(_DECLARED) > 1024:
            _DECLARED.clear()
        try:
            kept = (schema, t.decl_type(schema, resource))
        except RecursionError:  # nested deeper than can be walked: not bounded
            kept = (schema, None)
        _DECLARED[key] = kept
    return kept[1]


def rule_bound(
    expression: str, schema: dict[str, Any], resource: bool, values: dict[str, Any], largest: int
) -> int | None:
    """The most evaluating ``expression`` over ``values`` can cost (``None``: not estimated, the
    expression not CEL or its schema not shown to CEL)."""
    tree = parsed(expression)
    declared = _declared(schema, resource)
    if tree is None or declared is None:
        return None
    return most(tree, declared, value_sizer(declared, values), (0, largest))


def _size(value: Any) -> int:
    if isinstance(value, str | bytes | list | dict):
        return len(value)
    return 0 if value is None else 1


def value_sizer(declared: t.DeclType, values: dict[str, Any]) -> Sizer:
    """Sizes from the values themselves: the largest of the values a path reaches (the schema's
    bound for a path that starts elsewhere than at a variable)."""
    static = schema_sizer(declared)
    seen: dict[tuple[str, ...], Range] = {}

    def sizer(path: tuple[str, ...]) -> Range | None:
        if path[0] not in values:
            return static(path)
        if path in seen:
            return seen[path]
        current = [values[path[0]]]
        for name in path[1:]:
            reached: list[Any] = []
            for v in current:
                if name == "@items" and isinstance(v, list):
                    reached += v
                elif name == "@values" and isinstance(v, dict):
                    reached += v.values()
                elif name == "@keys" and isinstance(v, dict):
                    reached += v.keys()
                elif isinstance(v, dict):
                    key = name if name in v else t.unescape(name)
                    if key in v:
                        reached.append(v[key])
            current = reached
        seen[path] = (0, max((_size(v) for v in current), default=0))
        return seen[path]

    return sizer
