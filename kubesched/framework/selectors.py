"""Label selectors, node selector terms and taint tolerations, compiled once and matched often.

Objects are Kubernetes JSON (camelCase dicts). Each selector is compiled into a small object
whose ``matches`` is cheap, because the same pod's affinity is matched against every node.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

from kubesched.framework.names import label_value_errors

Labels = Mapping[str, str]


class SelectorError(ValueError):
    """A selector that the API server would have refused (unknown operator, bad values)."""


class InvalidValue(SelectorError):
    """A node selector requirement whose values the API server lets through but a label
    requirement cannot hold (not a label value; ``Gt``/``Lt`` not an integer): upstream's
    scheduler lets such a term match no node rather than refuse the pod."""


def _label_value_problem(key: str, values: Iterable[str], where: str) -> str:
    for i, value in enumerate(values):
        errs = label_value_errors(value)
        if errs:
            return f"{where}.values[{i}]: Invalid value: {value!r}: {'; '.join(errs)} (key {key!r})"
    return ""


# --- label selectors (metav1.LabelSelector) ---------------------------------------------------


class LabelSelector:
    """``matchLabels`` and ``matchExpressions`` (In, NotIn, Exists, DoesNotExist), ANDed.

    An empty selector matches everything; use :data:`NOTHING` (or ``None`` at call sites) for
    the nil selector, which matches nothing.
    """

    __slots__ = ("requirements", "empty")

    def __init__(self, requirements: Sequence[tuple[str, str, frozenset[str]]]) -> None:
        self.requirements = tuple(requirements)
        self.empty = not self.requirements

    @classmethod
    def compile(cls, selector: Mapping[str, Any] | None) -> LabelSelector | None:
        if selector is None:
            return None
        reqs: list[tuple[str, str, frozenset[str]]] = []
        for k, v in (selector.get("matchLabels") or {}).items():
            reqs.append((k, "In", frozenset((str(v),))))
        for expr in selector.get("matchExpressions") or ():
            op = expr.get("operator")
            key = expr.get("key", "")
            values = frozenset(str(v) for v in expr.get("values") or ())
            if op in ("In", "NotIn"):
                if not values:
                    raise SelectorError(f"values: for 'In', 'NotIn' operators, values set can't be empty (key {key!r})")
            elif op in ("Exists", "DoesNotExist"):
                if values:
                    raise SelectorError(
                        f"values: may not be specified when `operator` is 'Exists' or 'DoesNotExist' (key {key!r})"
                    )
            else:
                raise SelectorError(f"operator: {op!r} is not a valid label selector operator")
            problem = _label_value_problem(key, sorted(values), "matchExpressions")
            if problem:
                raise SelectorError(problem)
            reqs.append((key, op, values))
        return cls(reqs)

    def matches(self, labels: Labels) -> bool:
        for key, op, values in self.requirements:
            if op == "In":
                v = labels.get(key)
                if v is None or v not in values:
                    return False
            elif op == "NotIn":
                v = labels.get(key)
                if v is not None and v in values:
                    return False
            elif op == "Exists":
                if key not in labels:
                    return False
            elif key in labels:  # DoesNotExist
                return False
        return True

    def __repr__(self) -> str:
        return f"LabelSelector({self.requirements!r})"


# --- node selector terms (v1.NodeSelector) ----------------------------------------------------

_NODE_OPS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})


def _as_int(text: str, what: str) -> int:
    try:
        return int(text)
    except (TypeError, ValueError):
        raise InvalidValue(f"{what}: for 'Gt', 'Lt' operators, the value must be an integer: {text!r}") from None


class NodeSelectorTerm:
    """One term: its label expressions and field expressions (only ``metadata.name``), ANDed.

    A term with no expressions matches no node, as upstream. With ``lazy`` (a pod's required
    node affinity, as upstream's LazyErrorNodeSelector) a requirement whose values no label can
    have makes the term match no node (``invalid`` says why); otherwise it is refused.
    """

    __slots__ = ("labels", "fields", "empty", "invalid")

    def __init__(self, term: Mapping[str, Any], lazy: bool = False) -> None:
        self.labels: list[tuple[str, str, Any]] = []
        self.fields: list[tuple[str, str, frozenset[str]]] = []
        self.invalid = ""
        for expr in term.get("matchExpressions") or ():
            try:
                self.labels.append(self._compile(expr, "matchExpressions"))
            except InvalidValue as exc:
                if not lazy:
                    raise
                self.invalid = self.invalid or str(exc)
        for expr in term.get("matchFields") or ():
            key = expr.get("key")
            op = expr.get("operator")
            if key != "metadata.name":
                raise SelectorError(f"matchFields.key: Invalid value: {key!r}: must be 'metadata.name'")
            if op not in ("In", "NotIn"):
                raise SelectorError(f"matchFields.operator: Invalid value: {op!r}: not a valid selector operator")
            values = frozenset(expr.get("values") or ())
            if len(values) != 1:
                raise SelectorError("matchFields.values: must have exactly one value for 'metadata.name'")
            self.fields.append((key, op, values))
        self.empty = (not self.labels and not self.fields) or bool(self.invalid)

    @staticmethod
    def _compile(expr: Mapping[str, Any], where: str) -> tuple[str, str, Any]:
        op = expr.get("operator")
        key = expr.get("key", "")
        raw = [str(v) for v in expr.get("values") or ()]
        if op not in _NODE_OPS:
            raise SelectorError(f"{where}.operator: Unsupported value: {op!r}")
        if op in ("In", "NotIn"):
            if not raw:
                raise SelectorError(
                    f"{where}.values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
                )
            problem = _label_value_problem(key, raw, where)
            if problem:
                raise InvalidValue(problem)
            return key, op, frozenset(raw)
        if op in ("Exists", "DoesNotExist"):
            if raw:
                raise SelectorError(
                    f"{where}.values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                )
            return key, op, None
        if len(raw) != 1:
            raise SelectorError(
                f"{where}.values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"
            )
        return key, op, _as_int(raw[0], f"{where}.values")

    def matches(self, labels: Labels, name: str) -> bool:
        if self.empty:
            return False
        for key, op, values in self.labels:
            if not requirement_matches(op, values, labels.get(key)):
                return False
        for _key, op, values in self.fields:
            inside = name in values
            if (op == "In") != inside:
                return False
        return True


def requirement_matches(op: str, values: Any, v: str | None) -> bool:
    """Whether a label value (``None``: the node lacks the label) meets one compiled node
    selector requirement."""
    if op == "In":
        return v is not None and v in values
    if op == "NotIn":
        return v is None or v not in values
    if op == "Exists":
        return v is not None
    if op == "DoesNotExist":
        return v is None
    # Gt / Lt compare the label as an integer; a non-integer label does not match
    if v is None:
        return False
    try:
        n = int(v)
    except ValueError:
        return False
    return cast("bool", n > values if op == "Gt" else n < values)


class NodeSelector:
    """``nodeSelectorTerms``, ORed: a node matches when any term does."""

    __slots__ = ("terms",)

    def __init__(self, terms: Sequence[NodeSelectorTerm]) -> None:
        self.terms = tuple(terms)

    @classmethod
    def compile(cls, selector: Mapping[str, Any] | None, lazy: bool = False) -> NodeSelector | None:
        """``lazy``: see :class:`NodeSelectorTerm` (a term with impossible values matches nothing)."""
        if selector is None:
            return None
        return cls([NodeSelectorTerm(t or {}, lazy) for t in selector.get("nodeSelectorTerms") or ()])

    def matches(self, labels: Labels, name: str) -> bool:
        for t in self.terms:
            if t.matches(labels, name):
                return True
        return False


class PreferredTerm:
    __slots__ = ("weight", "term")

    def __init__(self, weight: int, term: NodeSelectorTerm) -> None:
        self.weight = weight
        self.term = term


def compile_preferred(items: Iterable[Mapping[str, Any]] | None) -> list[PreferredTerm]:
    out = []
    for item in items or ():
        out.append(PreferredTerm(int(item.get("weight", 0)), NodeSelectorTerm(item.get("preference") or {})))
    return out


# --- taints and tolerations ------------------------------------------------------------------


def _decimal_int64(value: str) -> int | None:
    """``value`` as upstream's ``IsDecimalInteger`` accepts it (an optional ``-``, no leading
    zeros, no ``+``) and within int64, else ``None``."""
    digits = value[1:] if value.startswith("-") else value
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    if digits[0] == "0" and value != "0":
        return None
    n = int(value)
    return n if -(2**63) <= n < 2**63 else None


def tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any], comparison_operators: bool = False) -> bool:
    """Whether one toleration tolerates one taint (upstream ``Toleration.ToleratesTaint``).

    ``Lt`` and ``Gt`` compare the taint's value with the toleration's as integers (taint < or >
    toleration); they match nothing unless ``comparison_operators`` (the
    TaintTolerationComparisonOperators gate) is on, or when either value is not an integer."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    if op in ("Lt", "Gt") and comparison_operators:
        limit = _decimal_int64(str(toleration.get("value") or ""))
        value = _decimal_int64(str(taint.get("value") or ""))
        if limit is None or value is None:
            return False
        return value < limit if op == "Lt" else value > limit
    return False


def tolerations_tolerate(
    tolerations: Sequence[Mapping[str, Any]], taint: Mapping[str, Any], comparison_operators: bool = False
) -> bool:
    for t in tolerations:
        if tolerates(t, taint, comparison_operators):
            return True
    return False


def find_untolerated_taint(
    taints: Sequence[Mapping[str, Any]],
    tolerations: Sequence[Mapping[str, Any]],
    effects: frozenset[str] = frozenset({"NoSchedule", "NoExecute"}),
    comparison_operators: bool = False,
) -> Mapping[str, Any] | None:
    """The first taint with one of ``effects`` that no toleration tolerates, else ``None``."""
    for taint in taints:
        if taint.get("effect") in effects and not tolerations_tolerate(tolerations, taint, comparison_operators):
            return taint
    return None


def format_taint(taint: Mapping[str, Any]) -> str:
    """``{key: value}`` as upstream prints an untolerated taint in reasons."""
    value = taint.get("value") or ""
    return f"{{{taint.get('key', '')}: {value}}}"
