"""CEL's grammar, read into the tree the cost estimate walks.

The whole expression syntax of the Common Expression Language: literals (ints, ``u`` uints,
doubles, strings and bytes in every quoting, raw or not), identifiers, field selection, indexing,
global and member calls, list and map literals, the unary, arithmetic, relational, ``in``,
logical and conditional operators with CEL's precedence. The macros are expanded as CEL's parser
expands them (``has`` into a presence test; ``all``, ``exists``, ``exists_one``, ``map`` and
``filter`` into comprehensions with the same accumulator, condition, step and result), since the
cost of a macro is the cost of that expansion. Operators become calls of CEL's internal function
names (``_==_``, ``_&&_``, ``@in``, ...).

Only the tree is built here: types and costs are :mod:`.estimate`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kubesched.errors import KubeschedError

#: the accumulator variable of an expanded macro (CEL's parser names it so)
ACCU = "@result"


class CELSyntaxError(KubeschedError, ValueError):
    """The expression is not CEL."""


@dataclass(eq=False)
class Expr:
    """A node; the estimate keeps its type, path and sizes on it."""


@dataclass(eq=False)
class Literal(Expr):
    value: Any
    kind: str  # int, uint, double, string, bytes, bool, null


@dataclass(eq=False)
class Ident(Expr):
    name: str


@dataclass(eq=False)
class Select(Expr):
    operand: Expr
    field: str
    test_only: bool = False


@dataclass(eq=False)
class Call(Expr):
    function: str
    args: list[Expr]
    target: Expr | None = None


@dataclass(eq=False)
class ListLit(Expr):
    items: list[Expr]


@dataclass(eq=False)
class MapLit(Expr):
    entries: list[tuple[Expr, Expr]]


@dataclass(eq=False)
class Comprehension(Expr):
    iter_var: str
    iter_range: Expr
    accu_var: str
    accu_init: Expr
    condition: Expr
    step: Expr
    result: Expr
    iter_var2: str | None = field(default=None)


_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n\f]+|//[^\n]*)
  | (?P<num>0[xX][0-9a-fA-F]+[uU]?|(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?)|[0-9]+[uU]?)
  | (?P<str>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<id>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,()\[\]{}])
    """,
    re.VERBOSE,
)
_RESERVED = frozenset(
    "as break const continue else for function if import let loop package namespace return var void while".split()
)
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'"}
_ESCAPES |= {'"': '"', "`": "`", "?": "?"}


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise CELSyntaxError(f"unexpected character {text[pos]!r} at {pos}")
        pos = m.end()
        kind = m.lastgroup or ""
        if kind != "ws":
            out.append((kind, m.group()))
    out.append(("end", ""))
    return out


def _unescape(body: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
        elif nxt in ("x", "X", "u", "U"):
            width = {"x": 2, "X": 2, "u": 4, "U": 8}[nxt]
            out.append(chr(int(body[i + 2 : i + 2 + width], 16)))
            i += 2 + width
        elif nxt.isdigit():
            out.append(chr(int(body[i + 1 : i + 4], 8)))
            i += 4
        else:
            raise CELSyntaxError(f"invalid escape \\{nxt}")
    return "".join(out)


def _string_literal(token: str) -> Literal:
    prefix = ""
    while token[0] in "rRbB":
        prefix += token[0].lower()
        token = token[1:]
    quote = 3 if token[:3] in ('"""', "'''") else 1
    body = token[quote:-quote]
    text = body if "r" in prefix else _unescape(body)
    if "b" in prefix:
        return Literal(text.encode("utf-8", "surrogatepass"), "bytes")
    return Literal(text, "string")


def _number_literal(token: str) -> Literal:
    if token[-1] in "uU":
        return Literal(int(token[:-1], 0), "uint")
    if token.lower().startswith("0x"):
        return Literal(int(token, 16), "int")
    if any(c in token for c in ".eE"):
        return Literal(float(token), "double")
    return Literal(int(token), "int")


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> tuple[str, str]:
        return self.toks[self.i]

    def take(self, value: str | None = None) -> tuple[str, str]:
        tok = self.toks[self.i]
        if value is not None and tok[1] != value:
            raise CELSyntaxError(f"expected {value!r}, found {tok[1] or 'end of expression'!r}")
        self.i += 1
        return tok

    def at(self, value: str) -> bool:
        kind, text = self.toks[self.i]
        return text == value and kind in ("op", "id")

    def parse(self) -> Expr:
        e = self.expr()
        if self.peek()[0] != "end":
            raise CELSyntaxError(f"unexpected {self.peek()[1]!r}")
        return e

    def expr(self) -> Expr:
        cond = self.binary(0)
        if self.at("?"):
            self.take()
            yes = self.binary(0)
            self.take(":")
            no = self.expr()
            return Call("_?_:_", [cond, yes, no])
        return cond

    # precedence climbing: ||, &&, relations, additive, multiplicative
    _LEVELS: tuple[tuple[str, ...], ...] = (
        ("||",),
        ("&&",),
        ("==", "!=", "<", "<=", ">", ">=", "in"),
        ("+", "-"),
        ("*", "/", "%"),
    )
    _NAMES = {"||": "_||_", "&&": "_&&_", "in": "@in", "<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_"}
    _NAMES |= {"==": "_==_", "!=": "_!=_", "+": "_+_", "-": "_-_", "*": "_*_", "/": "_/_", "%": "_%_"}

    def binary(self, level: int) -> Expr:
        if level == len(self._LEVELS):
            return self.unary()
        left = self.binary(level + 1)
        while any(self.at(op) for op in self._LEVELS[level]):
            op = self.take()[1]
            right = self.binary(level + 1)
            left = Call(self._NAMES[op], [left, right])
        return left

    def unary(self) -> Expr:
        if self.at("!"):
            self.take()
            return Call("!_", [self.unary()])
        if self.at("-"):
            self.take()
            kind, text = self.peek()
            if kind == "num" and text[-1] not in "uU":
                self.take()
                lit = _number_literal(text)
                return self.member(Literal(-lit.value, lit.kind))
            return Call("-_", [self.unary()])
        return self.member(self.primary())

    def member(self, e: Expr) -> Expr:
        while True:
            if self.at("."):
                self.take()
                kind, name = self.take()
                if kind != "id":
                    raise CELSyntaxError(f"expected a field name, found {name!r}")
                if self.at("("):
                    e = _macro(name, e, self.args(")"))
                else:
                    e = Select(e, name)
            elif self.at("["):
                self.take()
                index = self.expr()
                self.take("]")
                e = Call("_[_]", [e, index])
            else:
                return e

    def args(self, close: str) -> list[Expr]:
        self.take()  # the opening bracket
        out: list[Expr] = []
        while not self.at(close):
            out.append(self.expr())
            if not self.at(","):
                break
            self.take()
        self.take(close)
        return out

    def primary(self) -> Expr:
        kind, text = self.peek()
        if kind == "num":
            self.take()
            return _number_literal(text)
        if kind == "str":
            self.take()
            return _string_literal(text)
        if kind == "id":
            self.take()
            if text in ("true", "false"):
                return Literal(text == "true", "bool")
            if text == "null":
                return Literal(None, "null")
            if text in _RESERVED:
                raise CELSyntaxError(f"reserved identifier {text!r}")
            if self.at("("):
                return _macro(text, None, self.args(")"))
            return Ident(text)
        if text == ".":  # a leading dot: an identifier from the root scope
            self.take()
            return self.primary()
        if text == "(":
            self.take()
            e = self.expr()
            self.take(")")
            return e
        if text == "[":
            return ListLit(self.args("]"))
        if text == "{":
            self.take()
            entries: list[tuple[Expr, Expr]] = []
            while not self.at("}"):
                key = self.expr()
                self.take(":")
                entries.append((key, self.expr()))
                if not self.at(","):
                    break
                self.take()
            self.take("}")
            return MapLit(entries)
        raise CELSyntaxError(f"unexpected {text or 'end of expression'!r}")


def _accu() -> Ident:
    return Ident(ACCU)


def _macro(name: str, target: Expr | None, args: list[Expr]) -> Expr:
    """A call, or the expansion of the macro it names (as CEL's parser expands each)."""
    if target is None:
        if name == "has" and len(args) == 1:
            arg = args[0]
            if not isinstance(arg, Select):
                raise CELSyntaxError("invalid argument to has() macro")
            return Select(arg.operand, arg.field, test_only=True)
        return Call(name, args)
    if (name in _QUANTIFIERS and len(args) == 3) or (name == "transformList" and len(args) in (3, 4)):
        return _two_variables(name, target, args)
    quantifier = name in _QUANTIFIERS and len(args) == 2
    mapping = (name == "map" and len(args) in (2, 3)) or (name == "filter" and len(args) == 2)
    if not (quantifier or mapping):
        return Call(name, args, target)
    var = args[0]
    if not isinstance(var, Ident):
        raise CELSyntaxError("argument must be a simple name")
    v = var.name
    if name == "all":
        return Comprehension(
            v, target, ACCU, Literal(True, "bool"), Call("@not_strictly_false", [_accu()]),
            Call("_&&_", [_accu(), args[1]]), _accu(),
        )  # fmt: skip
    if name == "exists":
        return Comprehension(
            v, target, ACCU, Literal(False, "bool"), Call("@not_strictly_false", [Call("!_", [_accu()])]),
            Call("_||_", [_accu(), args[1]]), _accu(),
        )  # fmt: skip
    if quantifier:  # exists_one
        step = Call("_?_:_", [args[1], Call("_+_", [_accu(), Literal(1, "int")]), _accu()])
        return Comprehension(
            v, target, ACCU, Literal(0, "int"), Literal(True, "bool"), step,
            Call("_==_", [_accu(), Literal(1, "int")]),
        )  # fmt: skip
    if name == "map":
        step = Call("_+_", [_accu(), ListLit([args[-1]])])
        if len(args) == 3:
            step = Call("_?_:_", [args[1], step, _accu()])
    else:  # filter
        step = Call("_?_:_", [args[1], Call("_+_", [_accu(), ListLit([Ident(v)])]), _accu()])
    return Comprehension(v, target, ACCU, ListLit([]), Literal(True, "bool"), step, _accu())


_QUANTIFIERS = ("all", "exists", "exists_one", "existsOne")


def _two_variables(name: str, target: Expr, args: list[Expr]) -> Expr:
    """The two-variable forms (``all(k, v, p)``, ``transformList(i, v, [p,] e)``): the same
    expansions with an index or key beside each value."""
    names = [a.name if isinstance(a, Ident) else None for a in args[:2]]
    if names[0] is None or names[1] is None:
        raise CELSyntaxError("argument must be a simple name")
    key, value = names[0], names[1]
    if name == "transformList":
        step: Expr = Call("_+_", [_accu(), ListLit([args[-1]])])
        if len(args) == 4:
            step = Call("_?_:_", [args[2], step, _accu()])
        return Comprehension(key, target, ACCU, ListLit([]), Literal(True, "bool"), step, _accu(), value)
    one = _macro(name, target, [Ident(value), args[2]])
    assert isinstance(one, Comprehension)
    one.iter_var, one.iter_var2 = key, value
    return one


def parse(text: str) -> Expr:
    """The tree of ``text``; :class:`CELSyntaxError` when it is not CEL."""
    try:
        return _Parser(text).parse()
    except (IndexError, ValueError, OverflowError) as exc:
        if isinstance(exc, CELSyntaxError):
            raise
        raise CELSyntaxError(str(exc)) from None
