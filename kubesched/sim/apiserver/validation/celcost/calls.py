"""The estimated cost of one call (operator, function or method) and the size and type of its
result: cel-go's estimates for its standard overloads, with Kubernetes' for the string and list
functions of its CEL libraries; any other call costs 1 plus its arguments."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

from kubesched.sim.apiserver.validation.celcost import decltypes as t
from kubesched.sim.apiserver.validation.celcost.ranges import U64, Entry, Range, add, factor, mul, union
from kubesched.sim.apiserver.validation.celcost.syntax import Call, Expr, Literal


class Estimator(Protocol):
    """What a call's estimate reads of the estimator walking the expression (its nodes' types,
    paths, sizes, container entries) and writes back (the call's type, path, entries)."""

    types: dict[int, t.DeclType]
    paths: dict[int, tuple[str, ...]]
    entries: dict[int, Entry]
    sizer: Callable[[tuple[str, ...]], Range | None]
    unknown: Range

    def typ(self, e: Expr) -> t.DeclType: ...
    def path(self, e: Expr) -> tuple[str, ...]: ...
    def size(self, e: Expr) -> Range | None: ...
    def known(self, e: Expr) -> Range: ...
    def entry(self, e: Expr) -> Entry | None: ...


_T, _R = 0.1, 0.25
_STRINGY = ("string", "bytes")
_ORDER = ("_<_", "_<=_", "_>_", "_>=_")
_K8S_STRING = ("lowerAscii", "upperAscii", "substring", "trim")
_K8S_LIST = ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf")
_NOMINAL = frozenset(
    {"sign", "asInteger", "isInteger", "asApproximateFloat", "isGreaterThan", "isLessThan", "compareTo", "add"}
    | {"sub", "major", "minor", "patch", "getScheme", "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery"}
)
_RESULT_TYPES: dict[str, t.DeclType] = {
    **dict.fromkeys(("size", "int", "indexOf", "lastIndexOf", "getPort"), t.INT),
    **dict.fromkeys(("lowerAscii", "upperAscii", "substring", "trim", "replace", "join", "string"), t.STRING),
    **dict.fromkeys(("format", "find", "getScheme", "getHostname", "getHost", "getEscapedPath"), t.STRING),
    **dict.fromkeys(("contains", "startsWith", "endsWith", "matches", "isSorted", "bool"), t.BOOL),
    **dict.fromkeys(("!_", "@not_strictly_false", "@in", "_==_", "_!=_", "_&&_", "_||_", *_ORDER), t.BOOL),
    **dict.fromkeys(("isQuantity", "isURL", "isInteger", "isGreaterThan", "isLessThan", "isSemver"), t.BOOL),
    "double": t.DOUBLE,
    "uint": t.UINT,
    "bytes": t.BYTES,
    "duration": t.DURATION,
    "timestamp": t.TIMESTAMP,
    "type": t.TYPE,
}


def _equality(est: Estimator, args: list[Expr], args_sum: Range) -> Range:
    lhs, rhs = est.known(args[0]), est.known(args[1])
    smallest = min(lhs[1], rhs[1])
    return add(factor((1 if smallest > 0 else 0, smallest), _T), args_sum)


def _kinds(est: Estimator, args: list[Expr]) -> set[str]:
    return {est.typ(a).kind for a in args}


def _result_type(est: Estimator, e: Call) -> t.DeclType:
    fn, args = e.function, e.args
    if fn in _RESULT_TYPES:
        return _RESULT_TYPES[fn]
    if fn in ("_+_", "_-_", "_*_", "_/_", "_%_", "-_") and args:
        first = est.typ(args[0])
        return first if first.kind != "dyn" or len(args) < 2 else est.typ(args[1])
    if fn == "_?_:_":
        return est.typ(args[1])
    if fn == "_[_]":
        container = est.typ(args[0])
        return (container.elem or t.DYN) if container.kind in ("list", "map") else t.DYN
    if fn in ("split", "findAll"):
        return t.list_of(t.STRING, 0)
    if fn in ("sum", "max", "min") and e.target is not None:
        return est.typ(e.target).elem or t.DYN
    return t.DYN


def call_cost(est: Estimator, e: Call, arg_costs: list[Range], args_sum: Range) -> tuple[Range, Range | None]:
    """The cost of ``e`` (its target's cost left out) and the size of its result when known."""
    est.types[id(e)] = _result_type(est, e)
    fn, args, target = e.function, e.args, e.target
    plain = add((1, 1), args_sum)
    if fn in ("_&&_", "_||_") and len(arg_costs) == 2:
        lhs, rhs = arg_costs
        return (lhs[0], add(lhs, rhs)[1]), None
    if fn == "_?_:_" and len(args) == 3:
        size = union(est.known(args[1]), est.known(args[2]))
        a, b = est.entry(args[1]), est.entry(args[2])
        if a is not None and a.union(b) is not None:
            est.entries[id(e)] = a.union(b)  # type: ignore[assignment]
        return add(arg_costs[0], union(arg_costs[1], arg_costs[2])), size
    if fn == "_[_]" and len(args) == 2:
        container = est.typ(args[0])
        if container.kind in ("list", "map"):
            entry = est.entry(args[0])
            est.paths[id(e)] = (*est.path(args[0]), "@items" if container.kind == "list" else "@values")
            return plain, entry.val if entry is not None else None
        return plain, None
    if fn in ("_==_", "_!=_") and len(args) == 2:
        return _equality(est, args, args_sum), None
    if fn in _ORDER and len(args) == 2:
        kinds = _kinds(est, args)
        if kinds & set(_STRINGY):
            return _equality(est, args, args_sum), None
        if "dyn" in kinds:
            return union(_equality(est, args, args_sum), plain), None
        return plain, None
    if fn == "_+_" and len(args) == 2:
        return _plus(est, e, args, args_sum, plain)
    if fn == "@in" and len(args) == 2:
        kind = est.typ(args[1]).kind
        in_list = add(factor(est.known(args[1]), 1), args_sum)
        if kind == "list":
            return in_list, None
        return (union(in_list, plain) if kind == "dyn" else plain), None
    if target is not None:
        found = _method_cost(est, e, target, args, args_sum)
        if found is not None:
            return found
    if fn in ("bytes", "string") and len(args) == 1 and target is None:
        kind = est.typ(args[0]).kind
        if (fn, kind) in (("bytes", "string"), ("string", "bytes")):
            sz = est.known(args[0])
            result = (sz[0], min(sz[1] * 4, U64)) if fn == "bytes" else (sz[0] // 4, sz[1])
            return add(factor(sz, _T), args_sum), result
    if fn in ("url", "jsonpatch.escapeKey") and len(args) == 1:
        sz = est.known(args[0])
        return add(factor(sz, _T), args_sum), sz
    return plain, None


def _plus(est: Estimator, e: Call, args: list[Expr], args_sum: Range, plain: Range) -> tuple[Range, Range | None]:
    kinds = _kinds(est, args)
    size = add(est.known(args[0]), est.known(args[1]))
    a, b = est.entry(args[0]), est.entry(args[1])
    if a is not None and a.union(b) is not None:
        est.entries[id(e)] = a.union(b)  # type: ignore[assignment]
    if kinds & set(_STRINGY):
        return add(factor(size, _T), args_sum), size
    if "list" in kinds:
        if "list" == est.typ(args[0]).kind and est.typ(args[0]).elem in (None, t.DYN) and args:
            est.types[id(e)] = est.typ(args[1])
        return plain, size
    if "dyn" in kinds:
        return union(add(factor(size, _T), args_sum), plain), size
    return plain, None


def _method_cost(
    est: Estimator, e: Call, target: Expr, args: list[Expr], args_sum: Range
) -> tuple[Range, Range | None] | None:
    fn = e.function
    sz = est.known(target)
    kind = est.typ(target).kind
    if fn == "matches" and len(args) == 1:
        string = factor(add(sz, (1, 1)), _T)
        return add(mul(string, factor(est.known(args[0]), _R)), args_sum), None
    if fn == "contains" and len(args) == 1 and kind != "list":
        return add(mul(factor(sz, _T), factor(est.known(args[0]), _T)), args_sum), None
    if fn in ("startsWith", "endsWith") and len(args) == 1:
        return add(factor(est.known(args[0]), _T), args_sum), None
    if fn == "format":
        return add(factor(sz, _T), args_sum), None
    if fn in _K8S_LIST and kind == "list":
        each: Range = (1, 1)
        if (est.typ(target).elem or t.DYN).kind in _STRINGY:
            each = add(each, factor(_item_size(est, target), _T))
        return add(mul(sz, each), args_sum), None
    if fn in ("indexOf", "lastIndexOf"):
        return add(factor(sz, _T), args_sum), None
    if fn in _K8S_STRING:
        return add(factor(sz, _T), args_sum), sz
    if fn == "replace" and len(args) >= 2:
        return add(factor(sz, 2 * _T), args_sum), _replaced(sz, est.known(args[0]), est.known(args[1]))
    if fn == "split":
        most = sz[1]
        if len(args) > 1 and isinstance(args[1], Literal) and args[1].kind == "int":
            most = int(args[1].value)
        return add(factor(sz, 2 * _T), args_sum), (0, most)
    if fn == "join":
        size: Range = mul(sz, _item_size(est, target)) if est.typ(target).elem is not None else (0, 0)
        if args:
            size = add(size, mul(est.known(args[0]), (max(sz[0] - 1, 0), max(sz[1] - 1, 0))))
        return add(factor(size, _T), args_sum), size
    if fn in ("find", "findAll") and args:
        string = factor(add(sz, (1, 1)), _T)
        return add(mul(string, factor(est.known(args[0]), _R)), args_sum), (0, sz[1])
    if fn in ("quantity", "isQuantity", "semver", "isSemver") and args:
        return add(factor(est.known(args[0]), _T), args_sum), None
    if fn in _NOMINAL:
        return add((1, 1), args_sum), None
    return None


def _item_size(est: Estimator, target: Expr) -> Range:
    """The size of a list's items, looked up by the path of the list (unknown without one)."""
    path = est.path(target)
    return (est.sizer((*path, "@items")) if path else None) or est.unknown


def _replaced(sz: Range, old: Range, new: Range) -> Range:
    """The size of ``replace``'s result (Kubernetes' estimate)."""
    if old[0] == 0:
        most_count, most_kept = (sz[1] + 1 if sz[1] < U64 else sz[1]), sz[1]
    elif new[1] <= old[0]:
        most_count, most_kept = 0, sz[1]
    else:
        most_count, most_kept = math.ceil(sz[1] / old[0]), 0
    if old[1] == 0:
        least_count, least_kept = (sz[0] + 1 if sz[0] < U64 else sz[0]), sz[0]
    elif old[1] <= new[0]:
        least_count, least_kept = 0, sz[0]
    else:
        least_count, least_kept = math.ceil(sz[0] / old[1]), 0
    return add(mul((least_count, most_count), new), (least_kept, most_kept))
