"""The API server's JSON: one encoder made once writes what ``json.dumps`` with compact separators
writes; an object encoded in parts around one member joins to the same text; the texts kept for
watch events are an object's own, and bounded; ``load_json``'s decoders, made once, refuse what
``json.loads`` refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.decoding import DecodeError, Limits, load_json
from kubesched.sim.apiserver.responses import (
    EncodedObjects,
    compact_json,
    event_line,
    event_line_of,
    member_json,
    split_json,
)

leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),  # any characters: non-ASCII ones are escaped, as json.dumps escapes them
)
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)
objects = st.dictionaries(st.text(max_size=5), values, max_size=6)


def dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


@settings(max_examples=300, deadline=None)
@given(values)
def test_the_compact_encoder_writes_what_json_dumps_writes(value: Any) -> None:
    assert compact_json(value) == dumps(value)


@settings(max_examples=300, deadline=None)
@given(objects, st.data())
def test_an_object_split_around_a_member_joins_to_its_json(obj: dict[str, Any], data: st.DataObject) -> None:
    key = data.draw(st.sampled_from(sorted(obj)) if obj else st.just("metadata"))
    split = split_json(obj, key)
    if key not in obj:
        assert split is None
        return
    assert split is not None
    assert split.text() == dumps(obj)
    assert split.length() == len(dumps(obj))
    # The member encoded again after it changed: the whole object's JSON as it is now.
    obj[key] = data.draw(values)
    assert split.text(member_json(key, obj[key])) == dumps(obj)


def test_a_watch_line_of_an_encoded_object_is_the_line_of_the_object() -> None:
    obj = {"kind": "Pod", "metadata": {"name": "p\u00e9", "resourceVersion": "3"}, "spec": {"n": [1, 2.5, None]}}
    for etype in ("ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"):
        assert event_line_of(etype, compact_json(obj)) == event_line(etype, obj)


def test_a_kept_text_is_that_objects_only() -> None:
    encoded = EncodedObjects()
    obj = {"metadata": {"name": "a", "resourceVersion": "1"}, "spec": {}}
    encoded.remember(obj, "KEPT")
    assert encoded.text(obj) == "KEPT"
    # An equal object is another object: encoded for itself.
    twin = {"metadata": {"name": "a", "resourceVersion": "1"}, "spec": {}}
    assert encoded.text(twin, remember=False) == dumps(twin)
    # An object of another version than the one encoded is encoded again.
    obj["metadata"] = {"name": "a", "resourceVersion": "2"}
    assert encoded.text(obj) == dumps(obj)


def test_what_is_kept_is_bounded() -> None:
    encoded = EncodedObjects(capacity=3, largest=10, budget=20)
    objs = [{"metadata": {"resourceVersion": str(i)}} for i in range(5)]
    encoded.remember(objs[0], "x" * 11)  # larger than any kept
    assert encoded.text(objs[0], remember=False) == dumps(objs[0])
    for obj in objs[1:]:
        encoded.remember(obj, "y" * 6)
    # Three at most: the oldest went.
    assert encoded.text(objs[1], remember=False) == dumps(objs[1])
    assert [encoded.text(o) for o in objs[2:]] == ["y" * 6] * 3
    encoded.remember(objs[0], "z" * 9)  # 18 + 9 > 20: the oldest two go to make room
    assert encoded.text(objs[0]) == "z" * 9
    assert encoded.text(objs[4]) == "y" * 6
    assert encoded.text(objs[2], remember=False) == dumps(objs[2])


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('\ufeff{"a":1}', "invalid character '\ufeff'"),  # json.loads refuses a BOM before decoding
        ('{"a":1} x', "invalid character 'x' after top-level value"),
        ('{"a":NaN}', "invalid character 'N' looking for beginning of value"),
        ('{"a":', "unexpected end of JSON input"),
        ('"\\x"', "invalid character 'x' in string escape code"),
    ],
)
def test_load_json_refuses_in_gos_words_call_after_call(text: str, words: str) -> None:
    for _ in range(2):  # the second time through the decoder kept from the first
        with pytest.raises(DecodeError) as refused:
            load_json(text)
        assert str(refused.value) == words


def test_load_json_bounds_integer_digits_per_limit() -> None:
    assert load_json('{"n": 12345}', Limits(max_integer_digits=5)) == {"n": 12345}
    with pytest.raises(DecodeError, match="more than the limit of 4"):
        load_json('{"n": 12345}', Limits(max_integer_digits=4))
    assert load_json('{"n": 12345}', Limits(max_integer_digits=5)) == {"n": 12345}
