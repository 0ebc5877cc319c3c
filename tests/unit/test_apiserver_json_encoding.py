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

from kubesched.cluster.store import Store, json_copy
from kubesched.decoding import DecodeError, Limits, load_json
from kubesched.sim.apiserver.responses import (
    DERIVED_FROM,
    EncodedObjects,
    compact_json,
    derived_json,
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
    assert [k for keys, _ in split.parts() for k in keys] == list(obj)
    assert all(text == compact_json(dict((k, obj[k]) for k in keys))[1:-1] for keys, text in split.parts())
    # The member encoded again after it changed: the whole object's JSON as it is now.
    obj[key] = data.draw(values)
    assert split.text(member_json(key, obj[key])) == dumps(obj)


def _changed(old: Any, data: st.DataObject, depth: int = 0) -> Any:
    """A newer version of ``old`` as a write makes one: some members the same objects, some
    replaced, some gone, some added, objects within changed the same way."""
    if type(old) is not dict:
        return data.draw(values) if data.draw(st.booleans()) else old
    new: dict[str, Any] = {}
    for k, v in old.items():
        how = data.draw(st.sampled_from(["same", "same", "changed", "gone"]))
        if how == "same":
            new[k] = v
        elif how == "changed":
            new[k] = _changed(v, data, depth + 1) if depth < 2 else data.draw(values)
    for k, v in data.draw(st.dictionaries(st.text(max_size=5), values, max_size=2)).items():
        new.setdefault(k, v)
    return new


big = st.dictionaries(
    st.text(max_size=5), st.one_of(values, st.text(min_size=DERIVED_FROM, max_size=DERIVED_FROM + 2)), max_size=6
)
#: objects with objects (long and short) as members, as stored objects have
stored = st.dictionaries(st.text(max_size=5), st.one_of(values, big), max_size=6)


@settings(max_examples=500, deadline=None)
@given(stored, st.data())
def test_an_object_made_from_its_older_versions_json_is_its_json(old: dict[str, Any], data: st.DataObject) -> None:
    # The old encoder's text (json.dumps) and the new one's, made from the older version's.
    key = data.draw(st.sampled_from(sorted(old)) if old else st.just("metadata"))
    split = split_json(old, key)
    if split is None:
        return
    new = _changed(old, data)
    made = derived_json(new, old, split.parts())
    assert made is None or made == dumps(new)
    if list(new)[: len(old)] == list(old):
        assert made == dumps(new)
    encoded = EncodedObjects()
    encoded.remember(old, split.parts())
    assert encoded.text(new, remember=False, before=old) == dumps(new)


def test_a_bound_pods_json_is_made_from_the_created_ones() -> None:
    store = Store()
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "i" * DERIVED_FROM}], "schedulerName": "default-scheduler"},
        "status": {"phase": "Pending", "nominatedNodeName": "n0", "qosClass": "BestEffort"},
    }
    split = split_json(pod, "metadata")
    assert split is not None
    keys = list(pod)
    encoded = EncodedObjects()
    created = store.create("Pod", pod, owned=True)
    encoded.remember_changed(created, split, keys)
    assert encoded.text(created) == dumps(created)
    bound = store.bind("default", "p", "n1")
    # Made from the created pod's parts, not by the fallback that encodes it all again.
    parts = split.parts(member_json("metadata", created["metadata"]))
    assert derived_json(bound, created, parts) == dumps(bound)
    assert encoded.text(bound, remember=False, before=created) == dumps(bound)
    # Without the older version known, it is encoded as ever.
    assert EncodedObjects().text(bound, before=json_copy(created)) == dumps(bound)


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


def test_parts_kept_join_to_the_text_and_count_against_the_budget() -> None:
    encoded = EncodedObjects(capacity=10, largest=100, budget=30)
    a = {"metadata": {"resourceVersion": "1"}}
    b = {"metadata": {"resourceVersion": "2"}}
    encoded.remember(a, ((("kind",), "x" * 8), (("metadata",), "y" * 10)))  # 20 held
    assert encoded.text(a) == "{" + "x" * 8 + "," + "y" * 10 + "}"
    encoded.remember(b, ((("metadata",), "w" * 10),))  # 20 + 11 > 30: a goes
    assert encoded.text(a, remember=False) == dumps(a)
    assert encoded.text(b) == "{" + "w" * 10 + "}"


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
