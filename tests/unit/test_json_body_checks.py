"""A JSON request body is checked in place (depth, non-finite numbers) with the very errors, in the
very order, of the walk that rebuilt it: property-checked against that walk."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.sim.apiserver.validation.decode import MAX_BODY_DEPTH, json_body


def rebuilt(value: Any, depth: int = 0) -> Any:
    """The walk JSON bodies went through before: every container copied on the way."""
    if depth > MAX_BODY_DEPTH:
        raise ValueError(f"nested more than {MAX_BODY_DEPTH} levels deep")
    if isinstance(value, dict):
        return {k: rebuilt(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [rebuilt(v, depth + 1) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"unsupported value: {value}")
    return value


def outcome(fn: Any, value: Any) -> tuple[str, Any]:
    try:
        return "ok", fn(value)
    except ValueError as exc:
        return "error", str(exc)


leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
)
trees = st.recursive(
    leaves, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3)
)


def nest(value: Any, levels: int, as_dict: bool) -> Any:
    for _ in range(levels):
        value = {"k": value} if as_dict else [value]
    return value


@settings(max_examples=300, deadline=None)
@given(trees, st.integers(min_value=0, max_value=MAX_BODY_DEPTH + 3), st.booleans(), trees)
def test_checked_in_place_as_the_rebuilding_walk_decides(tree, levels, as_dict, sibling):
    value = [sibling, nest(tree, levels, as_dict)]
    kind, got = outcome(json_body, value)
    want_kind, want = outcome(rebuilt, value)
    assert kind == want_kind
    if kind == "error":
        assert got == want
    else:
        assert got is value  # nothing rebuilt: the decoded body itself


def test_the_limits_themselves():
    at_limit = nest(1, MAX_BODY_DEPTH, True)
    assert json_body(at_limit) is at_limit
    for over in (nest(1, MAX_BODY_DEPTH + 1, True), nest({}, MAX_BODY_DEPTH + 1, False)):
        assert outcome(json_body, over) == outcome(rebuilt, over)
    assert outcome(json_body, nest([], MAX_BODY_DEPTH, False)) == ("ok", nest([], MAX_BODY_DEPTH, False))
    assert outcome(json_body, {"a": [1.0, float("-inf")]}) == ("error", "unsupported value: -inf")


def test_a_request_body_is_refused_with_the_first_bound_it_breaks() -> None:
    """Through the API server's body decoding: the decoder's own depth bound (200) speaks first,
    then the stricter bound on bodies (100), then a number JSON cannot hold."""
    import pytest

    from kubesched.sim.apiserver.errors import APIError
    from kubesched.sim.apiserver.requests import _decode_body

    def refusal(text: str) -> str:
        with pytest.raises(APIError) as err:
            _decode_body(text.encode(), False)
        return err.value.message

    assert "nested too deeply: more than 200 levels" in refusal('{"x": ' + "[" * 250 + "1e999" + "]" * 250 + "}")
    assert "nested more than 100 levels deep" in refusal('{"x": ' + "[" * 150 + "]" * 150 + "}")
    assert "unsupported value: inf" in refusal('{"a": [1e999], "x": ' + "[" * 150 + "]" * 150 + "}")
    assert _decode_body(b'{"a": [1, {"b": 2.5}]}', False) == {"a": [1, {"b": 2.5}]}


def test_the_store_keeps_a_handed_over_object_itself_and_copies_any_other() -> None:
    from kubesched.cluster.store import Store

    store = Store()
    mine = {"metadata": {"name": "a", "namespace": "default"}, "spec": {"containers": []}}
    copied = store.create("Pod", mine)
    assert copied is not mine and copied["spec"] is not mine["spec"] and "uid" not in mine["metadata"]
    handed = {"metadata": {"name": "b", "namespace": "default"}, "spec": {"containers": []}}
    kept = store.create("Pod", handed, owned=True)
    assert kept is handed and kept["metadata"]["uid"] and store.get("Pod", "default", "b") is handed
