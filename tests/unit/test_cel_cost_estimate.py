"""CEL's estimated cost of a rule over its schema, against the cases of kube-apiserver's own
table (apiextensions-apiserver's ``TestCostEstimation``: each rule over a schema without bounds,
then with ``maxItems``/``maxProperties``/``maxLength`` set): the same numbers, so that a
definition is refused exactly where upstream refuses it."""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.sim.apiserver.validation.celcost.decltypes import decl_type
from kubesched.sim.apiserver.validation.celcost.estimate import estimate, schema_sizer
from kubesched.sim.apiserver.validation.celcost.syntax import (
    Call,
    CELSyntaxError,
    Comprehension,
    Literal,
    Select,
    parse,
)

Obj = dict[str, Any]


def array(items: Obj, most: int | None = None) -> Obj:
    out: Obj = {"type": "array", "items": items}
    if most is not None:
        out["maxItems"] = most
    return out


def mapping(values: Obj, most: int | None = None) -> Obj:
    out: Obj = {"type": "object", "additionalProperties": values}
    if most is not None:
        out["maxProperties"] = most
    return out


def string(most: int | None = None, **extra: Any) -> Obj:
    out: Obj = {"type": "string", **extra}
    if most is not None:
        out["maxLength"] = most
    return out


NUMBER, BOOLEAN, INT_OR_STRING = {"type": "number"}, {"type": "boolean"}, {"x-kubernetes-int-or-string": True}
OBJECT_FOR_MAP = {
    "type": "object",
    "required": ["required"],
    "properties": {"required": {"type": "string"}, "optional": {"type": "string"}},
}


def nested(most: int | None, inner_bounded: bool) -> Obj:
    """An array of maps of objects (upstream's genAllMaxNestedSpecWithRootRule and its one-bound twin)."""
    inner: Obj = dict(OBJECT_FOR_MAP)
    if inner_bounded and most is not None:
        inner["maxProperties"] = most
    return array(mapping(inner, most), most if inner_bounded else None)


def replace_schema(most: int | None) -> Obj:
    return {
        "type": "object",
        "properties": {"str": string(most), "before": string(2), "after": string(4)},
    }


# (name, schema of the unbounded case, rule, its cost, schema with bounds, its cost)
CASES: list[tuple[str, Obj, str, int, Obj, int]] = [
    ("number array with all", array(NUMBER), "self.all(x, true)", 4718591, array(NUMBER, 10), 32),
    ("string array with all", array(string()), "self.all(x, true)", 3145727, array(string(), 20), 62),
    ("boolean array with all", array(BOOLEAN), "self.all(x, true)", 1887437, array(BOOLEAN, 5), 17),
    ("array of arrays with all", array(array(NUMBER)), "self.all(x, true)", 3145727, array(array(NUMBER), 100), 302),
    ("map of numbers with all", mapping(NUMBER), "self.all(x, true)", 1348169, mapping(NUMBER, 10), 32),
    ("map of strings with all", mapping(string()), "self.all(x, true)", 1179647, mapping(string(), 3), 11),
    ("map of booleans with all", mapping(BOOLEAN), "self.all(x, true)", 943718, mapping(BOOLEAN, 100), 302),
    ("string with contains", string(), "self.contains('test')", 314574, string(10), 5),
    ("string with startsWith", string(), "self.startsWith('test')", 2, string(15), 2),
    ("string with endsWith", string(), "self.endsWith('test')", 2, string(30), 2),
    ("concat string", string(), 'size(self + "hello") > size("hello")', 314578, string(4), 7),
    ("index of array with numbers", array(NUMBER), "self[1] == 0.0", 2, array(NUMBER, 5000), 2),
    ("index of array with strings", array(string()), "self[1] == self[1]", 314577, array(string(), 8), 314577),
    ("regex matches simple", string(), 'self.matches("x")', 314574, string(50), 22),
    ("regex matches empty string", string(), '"".matches("(((((((((())))))))))[0-9]")', 7, string(10), 7),
    ("regex matches empty regex", string(), 'self.matches("")', 1, string(100), 1),
    (
        "map of strings with value length",
        mapping(string()),
        "self.all(x, x.contains(self[x]))",
        2752507,
        mapping(string(10), 10),
        72,
    ),
    ("array maxItems zero", array(NUMBER), "self[3] == 0.0", 2, array(NUMBER, 0), 2),
    ("map maxProperties zero", mapping(NUMBER), 'self["x"] == 0.0', 2, mapping(NUMBER, 0), 2),
    ("string maxLength zero", string(), 'self == "x"', 2, string(0), 1),
    ("bytes maxLength zero", string(format="byte"), 'self == b"x"', 2, string(0, format="byte"), 1),
    (
        "maxItems above the estimate",
        array(NUMBER),
        "self.all(x, x == 0.0)",
        6291454,
        array(NUMBER, 3 * 1024 * 2048),
        25165826,
    ),
    (
        "nested types with root rule, all bounded",
        nested(None, True),
        'self.all(x, x["y"].required == "z")',
        7340027,
        nested(10, True),
        72,
    ),
    (
        "nested types with root rule, one bounded",
        nested(None, False),
        'self.all(x, x["y"].required == "z")',
        7340027,
        nested(10, False),
        7340027,
    ),
    ("int-or-string array with all", array(INT_OR_STRING), "self.all(x, true)", 4718591, array(INT_OR_STRING, 10), 32),
    ("index of int-or-string array", array(INT_OR_STRING), "self[0] == 5", 3, array(INT_OR_STRING, 10), 3),
    ("index of boolean array", array(BOOLEAN), "self[0] == false", 2, array(BOOLEAN, 25), 2),
    ("index of array of arrays", array(array(NUMBER)), "self[0][0] == -1.0", 3, array(array(NUMBER), 51), 3),
    (
        "duration array with all",
        array(string(format="duration")),
        "self.all(x, true)",
        2359295,
        array(string(format="duration"), 5),
        17,
    ),
    (
        "index of duration array",
        array(string(format="duration")),
        "self[0].getHours() == 2",
        4,
        array(string(format="duration"), 525),
        4,
    ),
    (
        "date array with all",
        array(string(format="date")),
        "self.all(x, true)",
        725936,
        array(string(format="date"), 15),
        47,
    ),
    (
        "date-time array with all",
        array(string(format="date-time")),
        "self.all(x, true)",
        428963,
        array(string(format="date-time"), 25),
        77,
    ),
    (
        "map of int-or-strings with all",
        mapping(INT_OR_STRING),
        "self.all(x, true)",
        1348169,
        mapping(INT_OR_STRING, 15),
        47,
    ),
    ("map of objects with all", mapping(OBJECT_FOR_MAP), "self.all(x, true)", 428963, mapping(OBJECT_FOR_MAP, 20), 62),
    (
        "map of number maps with all",
        mapping(mapping(NUMBER)),
        "self.all(x, true)",
        1179647,
        mapping(mapping(NUMBER), 10),
        32,
    ),
    (
        "map of number arrays with all",
        mapping(array(NUMBER)),
        "self.all(x, true)",
        1179647,
        mapping(array(NUMBER), 25),
        77,
    ),
    (
        "map of durations with all",
        mapping(string(format="duration")),
        "self.all(x, true)",
        1048577,
        mapping(string(format="duration"), 5),
        17,
    ),
    (
        "map of dates with all",
        mapping(string(format="date")),
        "self.all(x, true)",
        524288,
        mapping(string(format="date"), 10),
        32,
    ),
    (
        "map of date-times with all",
        mapping(string(format="date-time")),
        "self.all(x, true)",
        349526,
        mapping(string(format="date-time"), 25),
        77,
    ),
    ("library find", string(), "self.find('[0-9]+') == ''", 629147, string(10), 11),
    (
        "library join",
        array(string()),
        "self.join(' ') == 'aa bb'",
        329853068905,
        array(string(10), 10),
        43,
    ),
    (
        "library isSorted",
        array(string()),
        "self.isSorted() == true",
        329854432052,
        array(string(10), 10),
        52,
    ),
    (
        "library replace",
        replace_schema(None),
        "self.str.replace(self.before, self.after) == 'does not matter'",
        629154,
        replace_schema(4),
        12,
    ),
    (
        "library split",
        {"type": "object", "properties": {"str": string(), "separator": string()}},
        "self.str.split(self.separator) == []",
        629160,
        {"type": "object", "properties": {"str": string(10), "separator": string(10)}},
        22,
    ),
    ("library lowerAscii", string(), "self.lowerAscii() == 'lower!'", 314575, string(10), 6),
    (
        "size call",
        mapping({"type": "integer"}),
        "oldSelf.size() == self.size()",
        5,
        mapping({"type": "integer"}, 10),
        5,
    ),
    (
        "timestamp comparison",
        mapping(string(format="date-time")),
        'self["a"] == self["b"]',
        8,
        mapping(string(format="date-time"), 7),
        8,
    ),
    (
        "duration comparison",
        mapping(string(format="duration")),
        'self["c"] == self["d"]',
        8,
        mapping(string(format="duration"), 42),
        8,
    ),
    (
        "enum bounds the length",
        string(enum=["A", "B", "C", "LongValue"]),
        "self.contains('A')",
        2,
        string(1000, enum=["A", "B", "C", "LongValue"]),
        401,
    ),
]


def cost(schema: Obj, rule: str) -> int:
    root = decl_type(schema)
    assert root is not None
    return estimate(parse(rule), root, schema_sizer(root))[1]


@pytest.mark.parametrize(
    ("name", "schema", "rule", "want", "bounded", "want_bounded"), CASES, ids=[c[0] for c in CASES]
)
def test_the_estimate_is_upstreams(
    name: str, schema: Obj, rule: str, want: int, bounded: Obj, want_bounded: int
) -> None:
    assert cost(schema, rule) == want
    assert cost(bounded, rule) == want_bounded


def test_loops_multiply_and_unbounded_loops_pass_the_limit() -> None:
    # Upstream's table: bounded, 352 and 3552; unbounded, past the per-rule limit.
    assert cost(array(NUMBER, 10), "self.all(x, self.all(y, true))") == 352
    assert cost(array(NUMBER, 10), "self.all(x, self.all(y, self.all(z, true)))") == 3552
    assert cost(array(NUMBER), "self.all(x, self.all(y, true))") > 10_000_000
    assert cost(array(NUMBER), "self.all(x, self.all(y, self.all(z, true)))") > 10_000_000


def test_macros_expand_as_cels_parser_expands_them() -> None:
    tree = parse("self.exists_one(x, x > 1)")
    assert isinstance(tree, Comprehension)
    assert isinstance(tree.accu_init, Literal) and tree.accu_init.value == 0
    assert isinstance(tree.result, Call) and tree.result.function == "_==_"
    has = parse("has(self.a)")
    assert isinstance(has, Select) and has.test_only and has.field == "a"


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("'a\\u00e9\\n'", "string", "aé\n"),
        ('r"\\d+"', "string", "\\d+"),
        ('"""x"y"""', "string", 'x"y'),
        ("b'\\x00\\377'", "bytes", b"\x00\xc3\xbf"),
        ("0x1F", "int", 31),
        ("7u", "uint", 7),
        ("-2.5e1", "double", -25.0),
    ],
)
def test_literals(text: str, kind: str, value: Any) -> None:
    lit = parse(text)
    assert isinstance(lit, Literal) and lit.kind == kind
    if kind != "bytes":
        assert lit.value == value


@pytest.mark.parametrize("text", ["self.a ==", "1 +", "has(self)", "self.all(1, true)", "(", "a @ b", "if"])
def test_what_is_not_cel_is_refused(text: str) -> None:
    with pytest.raises(CELSyntaxError):
        parse(text)


def test_properties_are_found_by_their_escaped_names() -> None:
    schema = {"type": "object", "properties": {"x-y": ints_bounded(10), "namespace": ints_bounded(10)}}
    assert cost(schema, "self.x__dash__y.all(x, true)") == 2 + 1 + 10 * 3
    assert cost(schema, "self.__namespace__.all(x, true)") == 33
    # A name the schema does not declare has no known bound.
    assert cost(schema, "self.other.all(x, true)") > 10**18


def ints_bounded(most: int) -> Obj:
    return array({"type": "integer"}, most)


def test_two_variable_forms_iterate_as_the_one_variable_ones() -> None:
    ten = ints_bounded(10)
    # per inner item: condition 2, accumulator 1, i == j 3 (two indices of size 1)
    assert cost(ten, "self.all(i, x, self.all(j, y, i == j))") == 2 + 10 * (2 + 1 + (2 + 10 * (2 + 1 + 3)))
    assert cost(ten, "self.all(i, x, true)") == cost(ten, "self.all(x, true)")
    # transformList: self 1, [] 10, result 1, then per item append 1 + accumulator 1 + [...] 10 +
    # v * 2 2; size() 1 and > 1 on top
    assert cost(ten, "self.transformList(i, v, v * 2).size() > 0") == 1 + 10 + 1 + 10 * (1 + 1 + 10 + 2) + 1 + 1
