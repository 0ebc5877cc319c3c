"""What every handler of the API server answers with: JSON bodies, success Statuses and watch
event lines, encoded as the API server encodes them (compact JSON)."""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as json_encoder
from json.encoder import encode_basestring_ascii
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


class Split(NamedTuple):
    """An object's JSON in three parts: its members before ``key``, the member ``key`` itself,
    and its members after (each part without braces, "" when there is none)."""

    head: str
    key: str
    member: str
    tail: str

    def length(self) -> int:
        """The length of the object's JSON (:meth:`text`)."""
        parts = (self.head, self.member, self.tail)
        return 2 + sum(len(p) for p in parts) + sum(1 for p in parts if p) - 1

    def text(self, member: str | None = None) -> str:
        """The object's JSON; with ``member``, that member's JSON in place of the one encoded."""
        member = self.member if member is None else member
        return "{" + ",".join(p for p in (self.head, member, self.tail) if p) + "}"


def split_json(obj: Obj, key: str) -> Split | None:
    """``obj``'s JSON in parts around its member ``key`` (None when it has none): together what
    :func:`compact_json` writes for it, so that the member can be encoded again alone."""
    if key not in obj:
        return None
    head: Obj = {}
    tail: Obj = {}
    side = head
    for k, value in obj.items():
        if k == key:
            side = tail
        else:
            side[k] = value
    return Split(compact_json(head)[1:-1], key, member_json(key, obj[key]), compact_json(tail)[1:-1])


def member_json(key: str, value: Any) -> str:
    """One member of an object, as its JSON writes it: ``"key":value``."""
    return encode_basestring_ascii(key) + ":" + compact_json(value)


class EncodedObjects:
    """The JSON of the objects answered last, kept so that the watch event of a change encodes
    none again: a pod created is written once, for its answer and for every watch that shows it.

    An object is known by identity (the entry holds it, so its id is not reused meanwhile) and
    its resourceVersion. Stored objects are never changed in place — each write stores a new
    object — so what was encoded of one still is its JSON. What is kept is bounded: at most
    ``capacity`` objects, none whose JSON is over ``largest`` characters, ``budget`` in all (the
    oldest go first); what the watches need is only what was answered moments ago."""

    def __init__(self, capacity: int = 256, largest: int = 32 * 1024, budget: int = 1 << 20) -> None:
        self.capacity = capacity
        self.largest = largest
        self.budget = budget
        self._texts: dict[int, tuple[Obj, Any, str]] = {}
        self._held = 0

    def text(self, obj: Obj, *, remember: bool = True) -> str:
        """``obj``'s JSON (:func:`compact_json`), encoded now unless it is known."""
        entry = self._texts.get(id(obj))
        if entry is not None and entry[0] is obj and entry[1] == _version(obj):
            return entry[2]
        text = compact_json(obj)
        if remember:
            self.remember(obj, text)
        return text

    def remember(self, obj: Obj, text: str) -> None:
        """Keep ``text`` as ``obj``'s JSON, unless it is too large to keep."""
        size = len(text)
        if size > self.largest:
            return
        texts = self._texts
        old = texts.pop(id(obj), None)
        if old is not None:
            self._held -= len(old[2])
        while texts and (len(texts) >= self.capacity or self._held + size > self.budget):
            gone = texts.pop(next(iter(texts)))
            self._held -= len(gone[2])
        texts[id(obj)] = (obj, _version(obj), text)
        self._held += size

    def remember_changed(self, obj: Obj, split: Split, keys: list[str]) -> None:
        """Keep the JSON of ``obj``, encoded in ``split`` when its keys were ``keys``, of which
        only the member ``split.key`` has changed since (a created object's metadata, stamped
        by the store): nothing is remembered when its keys are not ``keys`` any more."""
        if len(obj) != len(keys) or any(key != was for key, was in zip(obj, keys, strict=False)):
            return
        self.remember(obj, split.text(member_json(split.key, obj[split.key])))

    def clear(self) -> None:
        self._texts.clear()
        self._held = 0


def _version(obj: Obj) -> Any:
    meta = obj.get("metadata")
    return meta.get("resourceVersion") if isinstance(meta, dict) else None
