"""kubesched.decoding builds values straight from the parser's events, without PyYAML's node graph:
what it builds (values, shared aliases) or refuses (with which words, limit and line) must be
exactly what the node path and PyYAML's safe constructor give; and a large document is decoded
without holding several copies of itself."""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest
import yaml
from fuzzing import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from kubesched import decoding
from kubesched.decoding import DecodeError, Limits, load_yaml_all

LIMITS = Limits(max_bytes=64 * 1024 * 1024)


def _canonical(value: Any) -> Any:
    """``value`` with its sharing spelled out: a dict or list met again is ("same", n)."""
    seen: dict[int, int] = {}

    def walk(item: Any) -> Any:
        if isinstance(item, dict | list):
            if id(item) in seen:
                return ("same", seen[id(item)])
            seen[id(item)] = len(seen)
            if isinstance(item, dict):
                return ("map", [(repr(k), walk(v)) for k, v in item.items()])
            return ("seq", [walk(v) for v in item])
        return (type(item).__name__, repr(item))

    return walk(value)


def _outcome(load: Any, text: str) -> Any:
    try:
        return ("ok", _canonical(load(text)))
    except DecodeError as exc:
        return ("refused", str(exc), exc.limit, exc.line)
    except Exception as exc:  # noqa: BLE001 - what PyYAML's constructor raises, passed on as it was
        return ("raised", type(exc).__name__, str(exc))


def _node_path(text: str) -> list[Any]:
    """The documents through PyYAML's nodes and the safe constructor only."""
    original = decoding._load_all

    def nodes_only(loader_class: Any, text: str, limits: Limits, size: int) -> list[Any]:
        return decoding._decode(loader_class(text), limits, objects=False)

    decoding._load_all = nodes_only
    try:
        return load_yaml_all(text, LIMITS)
    finally:
        decoding._load_all = original


def _direct(text: str) -> list[Any]:
    return load_yaml_all(text, LIMITS)


CASES = [
    "a: &x {b: [1, 2]}\nc: *x\nd: *x\n",
    "- &a x\n- *a\n- &a [y]\n- *a\n",
    "&a [&a x, *a]\n",
    "<<: {a: 1}\nb: 2\n",
    "base: &b {a: 1, c: 3}\nitem:\n  <<: *b\n  c: 4\n",
    "? [a]\n: 1\n",
    "? {a: 1}\n: 2\n",
    "x: &k [1]\ny: {*k : 1}\n",
    "a: &k key\n*k : v\n",
    "a: !!set {x, y}\nb: !!omap [{a: 1}]\nc: !!pairs [{a: 1}]\n",
    "a: !foo bar\n",
    "a: =\n",
    "=: 1\n",
    "a: !!int abc\n",
    "a: !!float x\n",
    "a: !!seq {b: 1}\n",
    "a: !!map [1]\n",
    "1: a\ntrue: b\n1.0: c\n",
    "{? ~ : 1, ~: [2], null: 3}\n",
    "a: 2001-12-14t21:59:43.10-05:00\nb: 2002-12-14\nc: !!timestamp 2002-12-14\n",
    "a: !!binary aGVsbG8=\nb: !!binary '!!!'\n",
    "a: ~\nb: null\nc: .nan\nd: -.inf\ne: 0x1F\nf: 0o17\ng: 1_000\nh: yes\ni: !!bool yes\n",
    "a: !!str 12\nb: ! 12\nc: '12'\n",
    "--- 1\n--- [2]\n---\n--- {a: *x}\n",
    "",
    "a: [1, 2\n",
    "a: *b\n",
    "&a [*a]\n",
    "{a: 1, a: 2}\n",
    "a: 1\n\x07\n",
    "a: " + "[" * 250 + "]" * 250 + "\n",
    "a: 1" + "0" * 500 + "\n",
    "a0: &a0 [x, x, x, x, x, x, x, x, x]\n"
    + "".join(f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]\n" for i in range(1, 9)),
]


@pytest.mark.parametrize("text", CASES)
def test_built_directly_as_through_nodes(text: str) -> None:
    assert _outcome(_direct, text) == _outcome(_node_path, text)


def test_an_alias_is_the_anchors_own_object() -> None:
    (doc,) = load_yaml_all("a: &x {b: [1]}\nc: *x\n")
    assert doc["a"] is doc["c"] and doc == {"a": {"b": [1]}, "c": {"b": [1]}}


def test_a_merge_key_is_still_merged() -> None:
    (doc,) = load_yaml_all("base: &b {a: 1, c: 3}\nitem:\n  <<: *b\n  c: 4\n")
    assert doc["item"] == {"a": 1, "c": 4}


_SCALARS = ["1", "true", "<<", "=", "~", "2001-01-01", "a", '"q"', "0x1f", ".nan", "aGVsbG8=", "1_0", "x y", "''"]
_TAGS = ["!!str ", "!!int ", "!!set ", "!!omap ", "!foo ", "!!map ", "!!seq ", "!!binary ", "! ", *[""] * 60]


@st.composite
def _flow(draw: st.DrawFn, depth: int = 0) -> str:
    """A flow-style YAML node: scalars, collections, anchors, aliases and tags, mostly valid."""
    anchor = draw(st.sampled_from(["&c ", "&d ", *[""] * 8]))
    if draw(st.integers(0, 7)) == 0:
        return draw(st.sampled_from(["*a", "*b", "*a", "*b", "*c"]))
    tag = draw(st.sampled_from(_TAGS))
    kind = draw(st.sampled_from(["scalar", "seq", "map"])) if depth < 4 else "scalar"
    if kind == "scalar":
        return anchor + tag + draw(st.sampled_from(_SCALARS))
    items = draw(st.lists(_flow(depth + 1), max_size=4))
    if kind == "seq":
        return f"{anchor}{tag}[{', '.join(items)}]"
    keys = [draw(_flow(depth + 1)) if draw(st.integers(0, 9)) == 0 else draw(st.sampled_from(_SCALARS)) for _ in items]
    pairs = ", ".join(f"? {k} : {v}" for k, v in zip(keys, items, strict=True))
    return f"{anchor}{tag}{{{pairs}}}"


@given(st.lists(_flow(), min_size=1, max_size=3))
@fuzz_settings(300)
def test_random_documents_built_directly_as_through_nodes(docs: list[str]) -> None:
    # anchors a and b are defined before the document that may name them
    text = "".join(f"--- [&a {{k: [1, x]}}, &b [y], {doc}]\n" for doc in docs)
    assert _outcome(_direct, text) == _outcome(_node_path, text)


def _large_steps(pods: int) -> str:
    out = ["apiVersion: kubesched.io/v1\nkind: Steps\nsteps:\n"]
    for i in range(pods):
        out.append(
            f"- at: {i}s\n  create:\n  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: pod-{i}\n"
            f"      labels: {{app: app-{i % 50}, tier: web}}\n    spec:\n      containers:\n      - name: c\n"
            "        image: registry.k8s.io/pause:3.9\n        resources:\n"
            "          requests: {cpu: 100m, memory: 128Mi}\n"
        )
    return "".join(out)


def test_a_large_document_is_held_about_once_while_decoded() -> None:
    """Memory, not time: the most held while decoding stays within twice what the decoded values
    hold (through PyYAML's nodes it was more than five times)."""
    text = _large_steps(600)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        docs = load_yaml_all(text, LIMITS)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(docs[0]["steps"]) == 600
    assert peak - before < 2 * (held - before), (peak - before, held - before)


def test_the_node_path_still_holds_several_copies() -> None:
    """The measure above can fail: the node path, kept for what only it builds, holds more."""
    text = _large_steps(600)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        docs = _node_path(text)
        held, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert docs == list(yaml.safe_load_all(text))
    assert peak - before > 3 * (held - before), (peak - before, held - before)
