"""The cost budget of evaluating a custom object's ``x-kubernetes-validations`` rules.

kube-apiserver counts the actual cost of each evaluation, stops one past
:data:`~.limits.PER_CALL_LIMIT` and all of an object's past :data:`~.limits.RUNTIME_CEL_COST_BUDGET`.
The ``cel`` library evaluating the rules here counts nothing and cannot be interrupted (nor does
it let go of the interpreter while it runs), so the cost is bounded before evaluating instead:
the rule's estimate (:mod:`.estimate`) with the sizes of this object's actual lists, maps and
strings in place of the schema's bounds, plus what the library copies where cel-go does not
(:class:`Reach`). That is the most the evaluation can cost (every comprehension run to its end,
every copy made; measured, at most about 0.07 s per million units); a rule whose bound is past
the per-call limit, or past what is left of the object's budget, is not evaluated and answered
in upstream's words, and no further rule runs. Upstream, stopping at the actual cost, may let
through an evaluation that ends early (``all`` at its first false), or that reads a large field
in a loop, where this bound does not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.sim.apiserver.validation.celcost import decltypes as t
from kubesched.sim.apiserver.validation.celcost.estimate import schema_sizer
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
    #: the values already handed to the library (converted once for all the rules of a field)
    handed: set[int] = field(default_factory=set)

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
        bound += self._hand_over(values, "oldSelf" in rule["rule"])
        if bound > self.remaining:
            self.stopped = True
            return OUT_OF_BUDGET
        self.remaining -= bound
        return None

    def _hand_over(self, values: dict[str, Any], old: bool) -> int:
        """What converting the variables not yet handed to the library costs (once per field: its
        rules share them); counted in the object's budget, not in any one call's."""
        cost = 0
        for name in ("self", "oldSelf") if old else ("self",):
            if id(values[name]) not in self.handed:
                self.handed.add(id(values[name]))
                cost += Reach(SIZED_NOTHING, values).copies((name,))
        return cost

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
    expression not CEL or its schema not shown to CEL): cel-go's estimate over the values' sizes,
    plus what the ``cel`` library copies (:class:`Reach`)."""
    tree = parsed(expression)
    declared = _declared(schema, resource)
    if tree is None or declared is None:
        return None
    reach = Reach(declared, values)
    return most(tree, declared, reach.size, (0, largest), reach.copies)


#: a type of nothing, for a :class:`Reach` asked only what values copy
SIZED_NOTHING = t.DYN


#: characters of a string copied for one cost unit (a copy is a memcpy, not a traversal)
_CHARS_PER_UNIT = 100


class Reach:
    """The values a path reaches (``("self", "spec", "@items")``: the items of ``self.spec``) in
    ``values``; for a path that starts elsewhere than at a variable, the schema's bounds.

    The ``cel`` library copies what it reads: each selection or index copies the value it reads,
    all of it (a list of lists, every inner list), so reading ``self.spec`` in a loop costs the
    size of ``spec`` at each turn, where cel-go reads it in place. :meth:`copies` is that size,
    one cost unit per value (per hundred characters of a string)."""

    def __init__(self, declared: t.DeclType, values: dict[str, Any]) -> None:
        self.values = values
        self.static = schema_sizer(declared)
        self._sizes: dict[tuple[str, ...], Range | None] = {}
        self._copies: dict[tuple[str, ...], int] = {}
        self._deep: dict[int, int] = {}

    def reached(self, path: tuple[str, ...]) -> list[Any]:
        current = [self.values[path[0]]]
        for name in path[1:]:
            found: list[Any] = []
            for v in current:
                if name == "@items" and isinstance(v, list):
                    found += v
                elif name == "@values" and isinstance(v, dict):
                    found += v.values()
                elif name == "@keys" and isinstance(v, dict):
                    found += v.keys()
                elif isinstance(v, dict):
                    key = name if name in v else t.unescape(name)
                    if key in v:
                        found.append(v[key])
            current = found
        return current

    def size(self, path: tuple[str, ...]) -> Range | None:
        """The largest size (items, entries, characters) of the values ``path`` reaches."""
        if path[0] not in self.values:
            return self.static(path)
        if path not in self._sizes:
            self._sizes[path] = (0, max((_size(v) for v in self.reached(path)), default=0))
        return self._sizes[path]

    def copies(self, path: tuple[str, ...]) -> int:
        """What copying the largest of the values ``path`` reaches costs (0 for no such path)."""
        if not path or path[0] not in self.values:
            return 0
        if path not in self._copies:
            self._copies[path] = max((self._deep_size(v) for v in self.reached(path)), default=0)
        return self._copies[path]

    def _deep_size(self, value: Any) -> int:
        if id(value) in self._deep:
            return self._deep[id(value)]
        total, stack = 0, [value]
        while stack:
            v = stack.pop()
            if isinstance(v, dict):
                total += len(v)
                stack += v.values()
            elif isinstance(v, list):
                total += len(v)
                stack += v
            elif isinstance(v, str | bytes):
                total += 1 + len(v) // _CHARS_PER_UNIT
            else:
                total += 1
        self._deep[id(value)] = total
        return total


def _size(value: Any) -> int:
    if isinstance(value, str | bytes | list | dict):
        return len(value)
    return 0 if value is None else 1
