"""The cost limits kube-apiserver puts on ``x-kubernetes-validations`` rules.

When a CustomResourceDefinition is created or updated, each rule's estimated cost (:mod:`.estimate`,
over the schema's bounds) times the number of times the rule may run (the product of the
``maxItems``/``maxProperties`` of the lists and maps above it; where one is missing, how many of
its values fit in a request) must stay within :data:`STATIC_ESTIMATED_COST_LIMIT`, a
``messageExpression``'s estimate too, and all of a version's schema together within
:data:`STATIC_ESTIMATED_CRD_COST_LIMIT`; otherwise the definition is refused with upstream's
``Forbidden`` errors (``... x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds
budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties,
and maxLength where arrays, maps, and strings are declared)``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kubesched.sim.apiserver.validation.celcost import decltypes as t
from kubesched.sim.apiserver.validation.celcost.estimate import Copies, Sizer, estimate, schema_sizer
from kubesched.sim.apiserver.validation.celcost.ranges import U64, UNKNOWN, Range
from kubesched.sim.apiserver.validation.celcost.syntax import CELSyntaxError, Expr, parse
from kubesched.sim.apiserver.validation.meta import Cause, forbidden_cause

#: the largest estimated cost of one rule (times its cardinality) a definition may declare
STATIC_ESTIMATED_COST_LIMIT = 10_000_000
#: the largest total estimated cost of the rules of one version's schema
STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000
#: the cost one evaluation of a rule may take
PER_CALL_LIMIT = 1_000_000
#: the cost all rules of one custom object may take together
RUNTIME_CEL_COST_BUDGET = 10_000_000

_HINT = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
_CONTRIBUTED = "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"


def cost_error_message(name: str, cost: int, limit: int) -> str:
    """Upstream's words for a cost over its limit, with the factor as it prints it."""
    factor = cost / limit
    if factor > 100.0:
        shown = "more than 100x"
    elif factor < 1.5:
        shown = f"{factor:f}x"
    else:
        shown = f"{factor:.1f}x"
    return f"{name} exceeds budget by factor of {shown} {_HINT}"


_PARSED: dict[str, Expr | None] = {}


def parsed(expression: str) -> Expr | None:
    """The tree of ``expression`` (``None`` when it is not CEL: compilation reports that)."""
    if expression not in _PARSED:
        if len(_PARSED) > 1024:
            _PARSED.clear()
        try:
            _PARSED[expression] = parse(expression)
        except (CELSyntaxError, RecursionError, OverflowError):
            _PARSED[expression] = None
    return _PARSED[expression]


def most(
    tree: Expr, declared: t.DeclType, sizer: Sizer, unknown: Range = UNKNOWN, copies: Copies | None = None
) -> int | None:
    """The maximum of the estimate (``None`` for an expression nested too deep to walk)."""
    try:
        return estimate(tree, declared, sizer, unknown, copies)[1]
    except RecursionError:
        return None


def _times(cost: int, cardinality: int) -> int:
    if cost == 0:
        return 0
    return U64 if U64 // cost < cardinality else cost * cardinality


def _fan_out(schema: dict[str, Any]) -> int | None:
    """By how much ``schema`` multiplies how often its children's rules run (``None``: no bound)."""
    typ = schema.get("type")
    bound: Any = None
    if typ == "object":
        if schema.get("additionalProperties") is None:
            return 1
        bound = schema.get("maxProperties")
    elif typ == "array":
        bound = schema.get("maxItems")
    else:
        return 1
    if isinstance(bound, bool) or not isinstance(bound, int | float) or bound != bound:
        return None
    return min(int(max(min(bound, 2.0**63), 0.0)) if isinstance(bound, float) else max(bound, 0), 2**63 - 1)


@dataclass
class _Total:
    total: int = 0
    dearest: list[tuple[int, str]] = field(default_factory=list)

    def observe(self, where: str, cost: int) -> None:
        self.total = min(self.total + cost, U64)
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT // 100:
            return
        self.dearest.append((cost, where))
        self.dearest.sort(key=lambda c: -c[0])
        del self.dearest[4:]


def schema_cost_causes(schema: dict[str, Any], path: str, per_expression: bool = True) -> list[Cause]:
    """The cost errors of the rules of an ``openAPIV3Schema`` found at ``path`` (without
    ``per_expression``, as for a schema an update leaves unchanged, only the total's)."""
    causes: list[Cause] = []
    total = _Total()
    # (node, its path, how often it may occur or None, whether it is a resource's root)
    stack: list[tuple[Any, str, int | None, bool]] = [(schema, path, 1, True)]
    while stack:
        node, where, cardinality, resource = stack.pop()
        if not isinstance(node, dict):
            continue
        rules = node.get("x-kubernetes-validations")
        if isinstance(rules, list) and rules:
            _node_costs(node, rules, (where, cardinality, resource), causes if per_expression else [], total)
        fan_out = _fan_out(node)
        child = None if cardinality is None or fan_out is None else _times(cardinality, fan_out)
        props = node.get("properties")
        for key, sub in (props if isinstance(props, dict) else {}).items():
            embedded = isinstance(sub, dict) and sub.get("x-kubernetes-embedded-resource") is True
            stack.append((sub, f"{where}.properties[{key}]", child, embedded))
        for key in ("items", "additionalProperties"):
            sub = node.get(key)
            if isinstance(sub, dict):
                stack.append((sub, f"{where}.{key}", child, sub.get("x-kubernetes-embedded-resource") is True))
    if total.total > STATIC_ESTIMATED_CRD_COST_LIMIT:
        causes += [forbidden_cause(where, _CONTRIBUTED) for _, where in total.dearest]
        name = "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema"
        causes.append(forbidden_cause(path, cost_error_message(name, total.total, STATIC_ESTIMATED_CRD_COST_LIMIT)))
    return causes


def _node_costs(
    node: dict[str, Any],
    rules: list[Any],
    at_node: tuple[str, int | None, bool],
    causes: list[Cause],
    total: _Total,
) -> None:
    """The per-expression errors of the rules of ``node`` (found at a path, occurring so often,
    a resource's root or not) into ``causes``, their costs into ``total``."""
    where, cardinality, resource = at_node
    try:
        declared = t.decl_type(node, resource)
    except RecursionError:  # a schema nested deeper than can be walked: left to the other checks
        return
    if declared is None:
        return
    sizer = schema_sizer(declared)
    times = cardinality if cardinality is not None else t.max_cardinality(declared.min_size)
    for i, rule in enumerate(rules):
        if not isinstance(rule, dict):
            continue
        at = f"{where}.x-kubernetes-validations[{i}]"
        tree = parsed(rule["rule"]) if isinstance(rule.get("rule"), str) else None
        found = most(tree, declared, sizer) if tree is not None else None
        if found is not None:
            cost = _times(found, times)
            if cost > STATIC_ESTIMATED_COST_LIMIT:
                message = cost_error_message("estimated rule cost", cost, STATIC_ESTIMATED_COST_LIMIT)
                causes.append(forbidden_cause(f"{at}.rule", message))
            total.observe(f"{at}.rule", cost)
        text = rule.get("messageExpression")
        tree = parsed(text) if isinstance(text, str) and text.strip() else None
        found = most(tree, declared, sizer) if tree is not None else None
        if found is not None:
            if found > STATIC_ESTIMATED_COST_LIMIT:
                message = cost_error_message("estimated messageExpression cost", found, STATIC_ESTIMATED_COST_LIMIT)
                causes.append(forbidden_cause(f"{at}.messageExpression", message))
            total.observe(f"{at}.messageExpression", found)
