"""Hypothesis strategies shared by the loader fuzz tests: hostile values and mutations of documents.

``mutated(base, values)`` takes a valid decoded document (mappings, lists, scalars, as YAML gives
them) and breaks it in one to three places: a value replaced by ``values``, a key deleted or
added, a value wrapped in a list or a mapping, a list item duplicated. Every path of the
document is a candidate, so each field meets every kind of wrong value.
"""

from __future__ import annotations

import copy
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

Path = tuple[str | int, ...]

#: ``KUBESCHED_FUZZ_EXAMPLES=5000`` runs every fuzz test that many times, with a fresh random seed
#: each run; unset, the tests run their own bounded, derandomized count (the same examples in CI).
_EXAMPLES = os.environ.get("KUBESCHED_FUZZ_EXAMPLES")


def fuzz_settings(max_examples: int) -> settings:
    """Bounded and reproducible by default; longer and random with ``KUBESCHED_FUZZ_EXAMPLES``."""
    return settings(
        max_examples=int(_EXAMPLES) if _EXAMPLES else max_examples,
        derandomize=not _EXAMPLES,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


#: Values that have broken loaders before, or that sit on a limit.
SPECIAL_NUMBERS: list[Any] = [
    0,
    -1,
    1,
    2**31 - 1,
    2**31,
    -(2**31) - 1,
    2**63,
    10**30,
    1e308,
    float("inf"),
    float("-inf"),
    float("nan"),
    0.5,
    -0.0,
]
SPECIAL_STRINGS: list[str] = [
    "",
    " ",
    "*",
    "lots",
    "0",
    "-1",
    "1e999",
    "NaN",
    "true",
    "null",
    "15s",
    "-5s",
    "1h",
    "1m30s",
    "9" * 40 + "h",
    "ü∂ß🙂",
    "\x00",
    "a/b/c",
    "example.com/gpu",
    "kubernetes.io/x",
]


def scalars(extra: list[Any] | None = None) -> st.SearchStrategy[Any]:
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.sampled_from(SPECIAL_NUMBERS),
        st.floats(),
        st.text(max_size=12),
        st.sampled_from(SPECIAL_STRINGS + list(extra or ())),
    )


def values(keys: list[str], extra: list[Any] | None = None) -> st.SearchStrategy[Any]:
    """Any YAML-decodable value: scalars, and lists and mappings of them (keys from ``keys`` or any text)."""
    key = st.one_of(st.sampled_from(keys), st.text(max_size=8)) if keys else st.text(max_size=8)
    return st.recursive(
        scalars(extra),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(key, inner, max_size=3),
        max_leaves=8,
    )


def paths(doc: Any, prefix: Path = ()) -> list[Path]:
    """Every path of ``doc``, the root ``()`` included, parents before children."""
    out: list[Path] = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.extend(paths(v, (*prefix, i)))
    return out


def _get(doc: Any, path: Path) -> Any:
    for p in path:
        doc = doc[p]
    return doc


def _set(doc: Any, path: Path, value: Any) -> Any:
    if not path:
        return value
    _get(doc, path[:-1])[path[-1]] = value
    return doc


OPERATIONS = ("replace", "replace", "replace", "delete", "add_key", "wrap_list", "wrap_map", "duplicate", "null")


@st.composite
def mutated(draw: st.DrawFn, base: Any, value: st.SearchStrategy[Any], keys: list[str], max_mutations: int = 3) -> Any:
    """``base`` (not modified) with one to ``max_mutations`` mutations."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, max_mutations))):
        path = draw(st.sampled_from(paths(doc)))
        op = draw(st.sampled_from(OPERATIONS))
        target = _get(doc, path)
        if op == "replace":
            doc = _set(doc, path, draw(value))
        elif op == "null":
            doc = _set(doc, path, None)
        elif op == "delete" and path:
            parent = _get(doc, path[:-1])
            del parent[path[-1]]
        elif op == "add_key" and isinstance(target, dict):
            target[draw(st.one_of(st.sampled_from(keys), st.text(max_size=8)))] = draw(value)
        elif op == "wrap_list":
            doc = _set(doc, path, [target])
        elif op == "wrap_map":
            doc = _set(doc, path, {draw(st.sampled_from(keys)): target})
        elif op == "duplicate" and isinstance(target, list) and target:
            i = draw(st.integers(0, len(target) - 1))
            target.insert(i, copy.deepcopy(target[i]))
    return doc


def field_names(docs: list[Any]) -> list[str]:
    """Every mapping key used in ``docs``, sorted: the keys mutations add where they do not belong."""
    names: set[str] = set()
    for doc in docs:
        for path in paths(doc):
            names.update(p for p in path if isinstance(p, str))
    return sorted(names)


#: What :func:`spliced` puts into a file: YAML syntax, nesting deeper than a recursive parser
#: survives, an integer longer than Python converts, bytes that are not UTF-8.
SPLICES: list[bytes] = [
    *(b"", b"x", b":", b"\t", b"[", b"\n  - ", b"\n---\n", b"\xff\xfe", b"\xc3"),
    b"\nk: " + b"9" * 5000 + b"\n",
    b"\nk: " + b"[" * 150 + b"]" * 150 + b"\n",
    b"\nk: " + b"[" * 3000 + b"]" * 3000 + b"\n",
]


@st.composite
def spliced(draw: st.DrawFn, texts: st.SearchStrategy[str]) -> bytes:
    """The bytes of a file: one of ``texts`` with one of :data:`SPLICES` put in at any offset."""
    data = draw(texts).encode("utf-8")
    at = draw(st.integers(0, len(data)))
    return data[:at] + draw(st.sampled_from(SPLICES)) + data[at:]


# --- what a hostile file holds: aliases, depth, counts, long numbers ---------------------------------


def alias_bomb(levels: int = 9, width: int = 9, head: str = "") -> str:
    """A "billion laughs" YAML: ``levels`` anchors, each a list of ``width`` aliases of the one
    before, so the last expands to ``width ** levels`` scalars. With the defaults it is the
    ~300-byte document that froze the API server (387 million nodes)."""
    names = [chr(ord("a") + i) for i in range(levels)]
    lines = [f"{head}a: &a [" + ",".join(["x"] * width) + "]"]
    lines += [f"{n}: &{n} [" + ",".join([f"*{p}"] * width) + "]" for p, n in zip(names, names[1:], strict=False)]
    return "\n".join(lines) + "\n"


def alias_deep(levels: int, head: str = "") -> str:
    """YAML that is shallow as written but nests ``levels`` deep once its aliases are expanded."""
    lines = [head + "d0: &d0 [x]"]
    lines += [f"d{i}: &d{i} [*d{i - 1}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


#: What :func:`hostile` puts at a value's place in a YAML document: an alias bomb, aliases that
#: nest deep, plain nesting past the decoder's limit, an integer past its digits, long lists (of
#: more entries than a configuration's profiles or plugins may have).
HOSTILE_VALUES: list[str] = [
    "[&b0 [x, x, x, x, x, x, x, x, x], "
    + ", ".join(f"&b{i} [" + ", ".join([f"*b{i - 1}"] * 9) + "]" for i in range(1, 9))
    + "]",
    "[" * 250 + "]" * 250,
    "9" * 401,
    "-" + "9" * 5001,
    "[" + ", ".join(["0"] * 2000) + "]",
    "[" + ", ".join(["{}"] * 1001) + "]",
]


@st.composite
def hostile(draw: st.DrawFn, text: str) -> bytes:
    """``text`` (a YAML document of ``key: value`` lines) with one line's value replaced by a
    hostile one, or an alias bomb, deep aliases or a huge number appended."""
    lines = text.rstrip("\n").split("\n")
    choice = draw(st.integers(0, 4))
    if choice == 0:
        return (text + alias_bomb(draw(st.integers(4, 9)), draw(st.integers(2, 9)))).encode()
    if choice == 1:
        return (text + alias_deep(draw(st.integers(150, 400)))).encode()
    if choice == 2:
        return (text + "huge: " + "9" * draw(st.sampled_from([400, 401, 4300, 4301, 5001])) + "\n").encode()
    at = draw(st.integers(0, len(lines) - 1))
    key, sep, _ = lines[at].partition(": ")
    if sep:
        lines[at] = f"{key}: {draw(st.sampled_from(HOSTILE_VALUES))}"
    return ("\n".join(lines) + "\n").encode()
