"""CEL's estimated cost of an expression, as cel-go's checker estimates it with Kubernetes'
size and call estimators (the estimate kube-apiserver compares with its limits).

Costs are ranges (``min``, ``max``) of cost units, sizes ranges of elements, both saturating at
2**64-1 as cel-go's unsigned arithmetic does. The model, fact for fact:

* a literal costs 0, an identifier 1, a field selection 1 more on a message or map (none on a
  dynamic value), a presence test (``has``) nothing more than its operand;
* a call costs its arguments and target plus 1, except: ``&&``/``||`` cost their operands (the
  minimum the left one alone), ``?:`` the condition plus the dearer branch, ``==``/``!=`` and the
  ordering of strings one tenth of the smaller operand's size (rounded up), ``+`` of strings a
  tenth of the result's size (of lists 1), ``in`` a list its size, ``contains`` the product of
  the tenths of both strings, ``startsWith``/``endsWith`` a tenth of the argument, ``matches``
  a tenth of (string + 1) times a quarter of the pattern's length; Kubernetes' string functions
  (``lowerAscii``, ``upperAscii``, ``trim``, ``substring``, ``replace``, ``split``, ``join``,
  ``indexOf``, ``find``...) a tenth of the string per traversal, its list functions
  (``isSorted``, ``sum``, ``min``, ``max``, ``indexOf``) 1 per item;
* a list literal costs 10 more than its items, a map literal 30;
* a comprehension (the expanded macros) costs its range, initial value and result plus, for
  each element the range may have, its condition and step.

A size comes from the expression when it shows it (a literal, a concatenation, the result of a
comprehension), else from the field the expression reads (through :class:`Sizer`), else 1 for a
scalar, else unknown (anything up to 2**64-1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kubesched.sim.apiserver.validation.celcost import decltypes as t
from kubesched.sim.apiserver.validation.celcost.calls import call_cost
from kubesched.sim.apiserver.validation.celcost.ranges import U64, UNKNOWN, Entry, Range, add, mul, union
from kubesched.sim.apiserver.validation.celcost.syntax import (
    ACCU,
    Call,
    Comprehension,
    Expr,
    Ident,
    ListLit,
    Literal,
    MapLit,
    Select,
)

#: the size of the field a path names (``("self", "spec", "@items")``), or ``None`` if unknown
Sizer = Callable[[tuple[str, ...]], Range | None]
_SCALARS = ("bool", "double", "duration", "int", "timestamp", "uint")


@dataclass
class _Var:
    path: tuple[str, ...] | None
    size: Range | None
    entry: Entry | None
    typ: t.DeclType


#: what reading the field a path names copies (evaluators that copy what they read), in cost units
Copies = Callable[[tuple[str, ...]], int]


class Estimator:
    """Estimates expressions over ``self`` (and ``oldSelf``) of type ``root``; ``sizer`` tells
    the size of the field a path names. With ``copies``, each field read (a selection or an
    index) also costs what the evaluator copies to read it, and each step of a comprehension
    building a list or map the accumulator it copies."""

    def __init__(self, root: t.DeclType, sizer: Sizer, unknown: Range = UNKNOWN, copies: Copies | None = None) -> None:
        self.root = root
        self.sizer = sizer
        self.unknown = unknown
        self.copies = copies
        self.locals: dict[str, list[_Var]] = {}
        self.types: dict[int, t.DeclType] = {}
        self.paths: dict[int, tuple[str, ...]] = {}
        self.sizes: dict[int, Range] = {}
        self.entries: dict[int, Entry] = {}

    # --- what is known of a node -------------------------------------------------------------
    def typ(self, e: Expr) -> t.DeclType:
        return self.types.get(id(e), t.DYN)

    def path(self, e: Expr) -> tuple[str, ...]:
        if isinstance(e, Ident) and self.locals.get(e.name):
            return self.locals[e.name][-1].path or ()
        return self.paths.get(id(e), ())

    def size(self, e: Expr) -> Range | None:
        if id(e) in self.sizes:
            return self.sizes[id(e)]
        if isinstance(e, Literal):
            if e.kind in ("string", "bytes"):
                return len(e.value), len(e.value)
            return (1, 1)
        if isinstance(e, ListLit):
            return len(e.items), len(e.items)
        if isinstance(e, MapLit):
            return len(e.entries), len(e.entries)
        path = self.path(e)
        if path and path[0] not in (ACCU, "__result__"):
            found = self.sizer(path)
            if found is not None:
                self.sizes[id(e)] = found
                return found
        if self.typ(e).kind in _SCALARS:
            return (1, 1)
        if isinstance(e, Ident) and self.locals.get(e.name):
            return self.locals[e.name][-1].size
        return None

    def known(self, e: Expr) -> Range:
        return self.size(e) or self.unknown

    def entry(self, e: Expr) -> Entry | None:
        if id(e) in self.entries:
            return self.entries[id(e)]
        if isinstance(e, Ident) and self.locals.get(e.name):
            return self.locals[e.name][-1].entry
        return None

    # --- costs -------------------------------------------------------------------------------
    def cost(self, e: Expr) -> Range:
        if isinstance(e, Literal):
            self.types[id(e)] = _LITERAL_TYPES[e.kind]
            return (0, 0)
        if isinstance(e, Ident):
            return self._ident(e)
        if isinstance(e, Select):
            return self._select(e)
        if isinstance(e, Call):
            return self._call(e)
        if isinstance(e, ListLit):
            return self._list(e)
        if isinstance(e, MapLit):
            return self._map(e)
        if isinstance(e, Comprehension):
            return self._comprehension(e)
        return (0, 0)

    def _ident(self, e: Ident) -> Range:
        var = self.locals.get(e.name)
        if var:
            self.types[id(e)] = var[-1].typ
        else:
            self.paths[id(e)] = (e.name,)
            self.types[id(e)] = self.root if e.name in ("self", "oldSelf") else t.DYN
        return (1, 1)

    def _select(self, e: Select) -> Range:
        operand = self.cost(e.operand)
        if e.test_only:  # has(): Kubernetes charges nothing for the test itself
            self.types[id(e)] = t.BOOL
            return operand
        typ = self.typ(e.operand)
        if typ.kind == "object":
            self.types[id(e)] = typ.fields.get(e.field, t.DYN)
        elif typ.kind == "map":
            self.types[id(e)] = typ.elem or t.DYN
        else:
            self.types[id(e)] = t.DYN
        self.paths[id(e)] = (*self.path(e.operand), e.field)
        cost = add(operand, (1, 1)) if typ.kind in ("object", "map") else operand
        return self._copied(e, cost)

    def _copied(self, e: Expr, cost: Range) -> Range:
        """``cost`` plus what reading the field ``e`` names copies, when copies are counted."""
        if self.copies is None:
            return cost
        found = self.copies(self.path(e))
        return add(cost, (found, found))

    def _list(self, e: ListLit) -> Range:
        total: Range = (0, 0)
        item: Range = (U64, 0) if e.items else (0, 0)
        for x in e.items:
            total = add(total, self.cost(x))
            item = union(item, self.known(x))
        self.entries[id(e)] = Entry("list", (1, 1), item)
        self.types[id(e)] = t.list_of(self.typ(e.items[0]) if e.items else t.DYN, len(e.items))
        return add(total, (10, 10))

    def _map(self, e: MapLit) -> Range:
        total: Range = (0, 0)
        keys: Range = (U64, 0) if e.entries else (0, 0)
        vals: Range = (U64, 0) if e.entries else (0, 0)
        for k, v in e.entries:
            total = add(add(total, self.cost(k)), self.cost(v))
            keys, vals = union(keys, self.known(k)), union(vals, self.known(v))
        self.entries[id(e)] = Entry("map", keys, vals)
        first = e.entries[0] if e.entries else None
        self.types[id(e)] = t.map_of(
            self.typ(first[1]) if first else t.DYN, len(e.entries), self.typ(first[0]) if first else t.STRING
        )
        return add(total, (30, 30))

    def _push(self, name: str, var: _Var) -> None:
        self.locals.setdefault(name, []).append(var)

    def _pop(self, name: str) -> None:
        self.locals[name].pop()

    def _comprehension(self, e: Comprehension) -> Range:
        total = add(self.cost(e.iter_range), self.cost(e.accu_init))
        self._push(
            e.accu_var,
            _Var(self.path(e.accu_init), self.size(e.accu_init), self.entry(e.accu_init), self.typ(e.accu_init)),
        )
        rng, entry = self.typ(e.iter_range), self.entry(e.iter_range)
        kind = entry.kind if entry is not None else rng.kind
        path = self.path(e.iter_range)
        keys = _Var((*path, "@indices" if kind == "list" else "@keys"), entry.key if entry else None, None, t.INT)
        if kind != "list":
            keys.typ = rng.key or t.DYN
        values = _Var((*path, "@items" if kind == "list" else "@values"), entry.val if entry else None, None, t.DYN)
        values.typ = rng.elem or t.DYN
        if e.iter_var2 is not None:
            self._push(e.iter_var, keys)
            self._push(e.iter_var2, values)
        else:  # one variable: a list's items, a map's keys
            self._push(e.iter_var, values if kind == "list" else keys)
        loop = self.cost(e.condition)
        step = self.cost(e.step)
        self._pop(e.iter_var)
        if e.iter_var2 is not None:
            self._pop(e.iter_var2)
        total = add(total, self.cost(e.result))
        self._pop(e.accu_var)
        count = self.known(e.iter_range)
        total = add(total, mul(count, add(step, loop)))
        if self.copies is not None and isinstance(e.accu_init, ListLit | MapLit):
            total = add(total, mul(count, count))  # each step copies the list built so far
        if isinstance(e.accu_init, Literal):
            init_size = self.size(e.accu_init)
            if init_size is not None:
                self.sizes[id(e)] = init_size
            self.types[id(e)] = self.typ(e.result)
        else:
            self.sizes[id(e)] = count
            step_entry = self.entry(e.step)
            if step_entry is not None:
                self.entries[id(e)] = step_entry
            step_type = self.typ(e.step)
            self.types[id(e)] = step_type if step_type.kind in ("list", "map") else self.typ(e.result)
        return total

    def _call(self, e: Call) -> Range:
        if e.function == "dyn" and len(e.args) == 1 and e.target is None:
            arg = e.args[0]
            cost = add((1, 1), self.cost(arg))
            found = self.size(arg)
            if found is not None:
                self.sizes[id(e)] = found
            if self.entry(arg) is not None:
                self.entries[id(e)] = self.entry(arg)  # type: ignore[assignment]
            self.types[id(e)] = t.DYN
            return cost
        arg_costs = [self.cost(a) for a in e.args]
        total: Range = (0, 0)
        if e.target is not None:
            total = self.cost(e.target)
        args_sum: Range = (0, 0)
        for c in arg_costs:
            args_sum = add(args_sum, c)
        fn_cost, result_size = call_cost(self, e, arg_costs, args_sum)
        if result_size is None:
            result_size = self.size(e)
        if result_size is not None:
            self.sizes[id(e)] = result_size
        if e.function == "_[_]" and id(e) in self.paths:
            fn_cost = self._copied(e, fn_cost)
        return add(total, fn_cost)


_LITERAL_TYPES = {
    "int": t.INT,
    "uint": t.UINT,
    "double": t.DOUBLE,
    "string": t.STRING,
    "bytes": t.BYTES,
    "bool": t.BOOL,
    "null": t.NULL,
}


def estimate(
    expression: Expr, root: t.DeclType, sizer: Sizer, unknown: Range = UNKNOWN, copies: Copies | None = None
) -> Range:
    """The (min, max) cost of ``expression`` over ``self`` of type ``root``; ``unknown`` stands
    for a size nothing tells (anything, unless the caller knows better); ``copies``, what reading
    a field copies (nothing, for cel-go)."""
    return Estimator(root, sizer, unknown, copies).cost(expression)


def schema_sizer(root: t.DeclType) -> Sizer:
    """Sizes from the schema's bounds: the field's ``max_elements`` (0 for a scalar), found
    from the type of ``self`` along the path (its first step, the variable, skipped)."""

    def sizer(path: tuple[str, ...]) -> Range | None:
        node: t.DeclType | None = root
        for name in path[1:]:
            if node is None:
                return None
            if name in ("@items", "@values"):
                node = node.elem
            elif name == "@keys":
                node = node.key
            else:
                node = node.fields.get(name)
        return None if node is None else (0, node.max_elements)

    return sizer
