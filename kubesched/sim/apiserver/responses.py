"""What every handler of the API server answers with: JSON bodies, success Statuses and watch
event lines, encoded as the API server encodes them (compact JSON)."""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as json_encoder
from json.encoder import encode_basestring_ascii
from operator import is_
from typing import Any, NamedTuple

from aiohttp import web

from kubesched.objects import Obj


def _compact_encoder() -> Callable[[Any], str]:
    """An encoder writing exactly what ``json.dumps(value, separators=(",", ":"))`` writes, made
    once: ``json.dumps`` with separators builds an encoder (and its C half) at every call. The
    objects served are trees decoded from JSON, never circular: no reference is tracked (one
    that was would fail as deep nesting does, with RecursionError, instead of ValueError)."""
    python = json.JSONEncoder(separators=(",", ":"))
    make = getattr(json_encoder, "c_make_encoder", None)  # CPython's C encoder, untyped
    if make is None:  # pragma: no cover - CPython has the C encoder
        return python.encode
    encode = make(None, python.default, json_encoder.encode_basestring_ascii, None, ":", ",", False, False, True)
    return lambda value: "".join(encode(value, 0))


#: ``value`` as compact JSON text (ASCII: non-ASCII characters escaped, as json.dumps escapes them).
compact_json: Callable[[Any], str] = _compact_encoder()


def json_response(
    body: Any, status: int = 200, content_type: str = "application/json", headers: Any = None
) -> web.Response:
    """``body`` as a compact JSON response with ``status`` and any extra ``headers``."""
    return text_response(compact_json(body), status, headers, content_type)


def status_success(code: int = 200, details: Obj | None = None) -> Obj:
    """A ``Status`` of ``Success`` with ``code`` (and ``details`` when given)."""
    body: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}
    if details:
        body["details"] = details
    return body


def event_line(etype: str, obj: Obj) -> bytes:
    """One watch event, as the API server streams it: a JSON object and a newline."""
    return compact_json({"type": etype, "object": obj}).encode() + b"\n"


def text_response(
    text: str, status: int = 200, headers: Any = None, content_type: str = "application/json"
) -> web.Response:
    """A JSON response whose body, ``text``, is encoded already."""
    return web.Response(
        body=text.encode(),
        status=status,
        headers={"Content-Type": content_type, **headers} if headers else {"Content-Type": content_type},
    )


def event_line_of(etype: str, text: str) -> bytes:
    """:func:`event_line` for an object whose JSON is ``text`` already: the same bytes."""
    return ('{"type":' + encode_basestring_ascii(etype) + ',"object":' + text + "}\n").encode()


# --- one encoding for an object's answer and its watch event -------------------------------------


#: Members of an object, as its JSON writes them: their keys, and their ``"key":value`` texts
#: joined by commas.
Part = tuple[tuple[str, ...], str]


class Split(NamedTuple):
    """An object's JSON in parts: its members before ``key`` (``head``, their keys
    ``head_keys``), the member ``key`` itself, and its members after (``after``: each member
    whose value is an object in a part of its own, the others in runs), each part without braces;
    ``head`` is "" when there is nothing before."""

    head: str
    head_keys: tuple[str, ...]
    key: str
    member: str
    after: tuple[Part, ...]

    def length(self) -> int:
        """The length of the object's JSON (:meth:`text`)."""
        texts = [self.member, *(text for _, text in self.after)]
        if self.head:
            texts.append(self.head)
        return 1 + sum(len(t) + 1 for t in texts)

    def text(self, member: str | None = None) -> str:
        """The object's JSON; with ``member``, that member's JSON in place of the one encoded."""
        return _joined(self.parts(member))

    def parts(self, member: str | None = None) -> tuple[Part, ...]:
        """The object's members in parts, in order (with ``member`` as in :meth:`text`)."""
        own: Part = ((self.key,), self.member if member is None else member)
        if self.head:
            return ((self.head_keys, self.head), own, *self.after)
        return (own, *self.after)


def split_json(obj: Obj, key: str) -> Split | None:
    """``obj``'s JSON in parts around its member ``key`` (None when it has none): together what
    :func:`compact_json` writes for it, so that the member can be encoded again alone, and a
    later version of the object, sharing members with this one, need not encode those again."""
    if key not in obj:
        return None
    head: Obj = {}
    after: list[Part] = []
    run: Obj = {}
    seen = False
    for k, value in obj.items():
        if k == key:
            seen = True
        elif not seen:
            head[k] = value
        elif type(value) is dict and type(k) is str:
            if run:
                after.append((tuple(run), compact_json(run)[1:-1]))
                run = {}
            after.append(((k,), member_json(k, value)))
        else:
            run[k] = value
    if run:
        after.append((tuple(run), compact_json(run)[1:-1]))
    return Split(compact_json(head)[1:-1], tuple(head), key, member_json(key, obj[key]), tuple(after))


def member_json(key: str, value: Any) -> str:
    """One member of an object, as its JSON writes it: ``"key":value``."""
    return encode_basestring_ascii(key) + ":" + compact_json(value)


#: The most members at the end of an object's older version that :func:`derived_json` encodes to
#: find where the members it shares with the newer one end.
CHANGED_AT_END = 4
#: A changed member whose older JSON is shorter than this is encoded again as a whole: finding
#: what it shares with the older one costs more than that (a pod's metadata, its status).
DERIVED_FROM = 512


def derived_json(new: Obj, old: Obj, parts: tuple[Part, ...]) -> str | None:
    """``new``'s JSON, made from ``old``'s encoded in ``parts`` (its members, in order): the
    parts whose values ``new`` holds too (the same objects, which are never changed in place) are
    taken as they are, and in a member that is an object in both (and long: :data:`DERIVED_FROM`),
    so are its members up to the first that differs. None when ``new``'s keys do not start with
    ``old``'s, in order.

    Members are compared by calls into C (``map``, ``list``): a loop in Python over an object's
    members costs more than the encoder spends on them."""
    new_keys = list(new)
    count = len(old)
    if new_keys[:count] != list(old):
        return None
    texts: list[str] = []
    for keys, text in parts:
        if len(keys) == 1:
            key = keys[0]
            value, was = new[key], old[key]
            if value is was:
                texts.append(text)
                continue
            if len(text) >= DERIVED_FROM and type(value) is dict and type(was) is dict and type(key) is str:
                name = encode_basestring_ascii(key) + ":"
                inner = _derived_object(value, was, text[len(name) :])
                if inner is not None:
                    texts.append(name + inner)
                    continue
            texts.append(member_json(key, value) if type(key) is str else compact_json({key: value})[1:-1])
            continue
        if all(map(is_, map(new.__getitem__, keys), map(old.__getitem__, keys))):
            texts.append(text)
            continue
        texts.append(_members(keys, [new[k] for k in keys]))
    if len(new_keys) > count:
        texts.append(_members(new_keys[count:], list(new.values())[count:]))
    return "{" + ",".join(texts) + "}"


def _derived_object(new: Obj, old: Obj, text: str) -> str | None:
    """``new``'s JSON from ``text``, ``old``'s: its members up to the first that differs taken
    from ``text``, the rest encoded. None when none is shared, or more than
    :data:`CHANGED_AT_END` of ``old``'s are not, or ``text`` does not end as ``old`` does."""
    old_values = list(old.values())
    new_values = list(new.values())
    same = list(map(is_, new_values, old_values))
    shared = same.index(False) if False in same else len(same)
    gone = len(old_values) - shared
    if not shared or gone > CHANGED_AT_END:
        return None
    new_keys = list(new)
    old_keys = list(old)
    if new_keys[:shared] != old_keys[:shared]:
        return None
    end = "," + _members(old_keys[shared:], old_values[shared:]) + "}" if gone else "}"
    if not text.endswith(end) or text[0] != "{":
        return None
    kept = text[: len(text) - len(end)]
    if len(new_keys) == shared:
        return kept + "}"
    return kept + "," + _members(new_keys[shared:], new_values[shared:]) + "}"


def _members(keys: list[str] | tuple[str, ...], values: list[Any]) -> str:
    """The members ``keys`` with ``values``, as an object's JSON writes them (one string member
    without a call of the encoder)."""
    if len(keys) == 1 and type(keys[0]) is str and type(values[0]) is str:
        return encode_basestring_ascii(keys[0]) + ":" + encode_basestring_ascii(values[0])
    return compact_json(dict(zip(keys, values, strict=True)))[1:-1]


class EncodedObjects:
    """The JSON of the objects answered last, kept so that the watch event of a change encodes
    none again: a pod created is written once, for its answer and for every watch that shows it;
    and kept in parts where it was encoded so (a created object), so that the event of its next
    version (a pod bound) encodes only what changed (:func:`derived_json`).

    An object is known by identity (the entry holds it, so its id is not reused meanwhile) and
    its resourceVersion. Stored objects are never changed in place — each write stores a new
    object — so what was encoded of one still is its JSON. What is kept is bounded: at most
    ``capacity`` objects, none whose JSON is over ``largest`` characters, ``budget`` characters
    in all (the oldest go first); what the watches need is what was answered moments ago, and a
    pod's binding comes after the creation of the pods queued before it (a burst of a thousand,
    a thousand pods of about 1 KiB)."""

    def __init__(self, capacity: int = 1024, largest: int = 32 * 1024, budget: int = 1 << 20) -> None:
        self.capacity = capacity
        self.largest = largest
        self.budget = budget
        #: by the object's id: (the object, its resourceVersion, its JSON — or its parts, when it
        #: was encoded in parts, the JSON they join to)
        self._texts: dict[int, tuple[Obj, Any, str | tuple[Part, ...]]] = {}
        self._held = 0

    def _entry(self, obj: Obj) -> str | tuple[Part, ...] | None:
        entry = self._texts.get(id(obj))
        if entry is not None and entry[0] is obj and entry[1] == _version(obj):
            return entry[2]
        return None

    def text(self, obj: Obj, *, remember: bool = True, before: Obj | None = None) -> str:
        """``obj``'s JSON (:func:`compact_json`), encoded now unless it is known; when ``before``
        (an older version of it) is known in parts, only what ``obj`` does not share with it is."""
        known = self._entry(obj)
        if known is not None:
            return known if isinstance(known, str) else _joined(known)
        text = None
        if before is not None:
            older = self._entry(before)
            if older is not None and not isinstance(older, str):
                text = derived_json(obj, before, older)
        if text is None:
            text = compact_json(obj)
        if remember:
            self.remember(obj, text)
        return text

    def remember(self, obj: Obj, text: str | tuple[Part, ...]) -> None:
        """Keep ``text`` (or its parts) as ``obj``'s JSON, unless it is too large to keep."""
        size = _size(text)
        if size > self.largest:
            return
        texts = self._texts
        old = texts.pop(id(obj), None)
        if old is not None:
            self._held -= _size(old[2])
        while texts and (len(texts) >= self.capacity or self._held + size > self.budget):
            gone = texts.pop(next(iter(texts)))
            self._held -= _size(gone[2])
        texts[id(obj)] = (obj, _version(obj), text)
        self._held += size

    def remember_changed(self, obj: Obj, split: Split, keys: list[str]) -> None:
        """Keep the JSON of ``obj``, encoded in ``split`` when its keys were ``keys``, of which
        only the member ``split.key`` has changed since (a created object's metadata, stamped
        by the store): nothing is remembered when its keys are not ``keys`` any more."""
        if len(obj) != len(keys) or any(key != was for key, was in zip(obj, keys, strict=False)):
            return
        self.remember(obj, split.parts(member_json(split.key, obj[split.key])))

    def clear(self) -> None:
        self._texts.clear()
        self._held = 0


def _joined(parts: tuple[Part, ...]) -> str:
    return "{" + ",".join(text for _, text in parts) + "}"


def _size(text: str | tuple[Part, ...]) -> int:
    return len(text) if isinstance(text, str) else sum(len(t) + 1 for _, t in text)


def _version(obj: Obj) -> Any:
    meta = obj.get("metadata")
    return meta.get("resourceVersion") if isinstance(meta, dict) else None
