"""Bounded decoding of YAML and JSON: every door where outside input enters goes through here.

A document is refused, with a :class:`DecodeError` that names the limit and the line, when:

* it is larger than ``Limits.max_bytes`` (callers pass their own cap: the API server's 3 MiB
  body, a configuration's, a scenario's); :func:`read_text` refuses a file by its size, unread;
* it nests deeper than ``Limits.max_depth`` (counted through aliases);
* an integer has more than ``Limits.max_integer_digits`` digits;
* its aliases expand too much. The rule is go-yaml's (the decoder behind sigs.k8s.io/yaml and so
  behind kube-apiserver): every node decoded counts, and so does every node decoded inside an
  alias; once more than 100 come from aliases and more than 1000 are decoded, the share from
  aliases may be at most 99% up to 400,000 nodes, falling linearly to 10% at 4,000,000. A
  "billion laughs" document is refused after a few thousand nodes.

YAML is read event by event without recursion, and each collection's expanded size and height
are computed once, when it closes: an alias then costs one addition (it is the anchor's own
object, never a copy), so a bomb is refused in the time it takes to read its few hundred bytes.
The values are built straight from the events, as PyYAML's safe constructor builds them, without
its node graph (which held five times the memory of the values); a document holding what only
that constructor builds or refuses (a merge key, ``!!set``, a local tag, a collection as a key)
is read again as nodes and constructed by it, so its values and refusals are PyYAML's.

Messages follow the decoders kube-apiserver uses (go-yaml's ``yaml: line 3: ...``, Go's JSON
scanner's ``invalid character 'x' looking for beginning of value``); callers put their own
prefix (the file, the request) in front.

This module is the ground floor: it imports nothing of kubesched.
"""

from __future__ import annotations

import gc
import json
import os
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.events import (
    AliasEvent,
    CollectionStartEvent,
    DocumentEndEvent,
    MappingEndEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = [
    "MAX_DEPTH",
    "MAX_INTEGER_DIGITS",
    "DecodeError",
    "Limits",
    "load_json",
    "load_yaml",
    "load_yaml_all",
    "load_yaml_or_json",
    "read_text",
]

#: How deeply a document may nest. Real manifests and configurations nest a dozen levels; the
#: loaders' own checks refuse more than 100 with the field's path, so this only has to keep
#: recursive code (copies, validation, responses) far from Python's stack limit.
MAX_DEPTH = 200
#: The most digits an integer may have: more than any Go integer or float64 holds (an int64 has
#: 19, the largest float64 309), far below Python's own 4300.
MAX_INTEGER_DIGITS = 400
#: kube-apiserver's request body limit, the default size cap.
MAX_DOCUMENT_BYTES = 3 * 1024 * 1024

# go-yaml's alias budget (decode.go, allowedAliasRatio), the same numbers.
_ALIAS_FLOOR = 100
_DECODE_FLOOR = 1000
_RATIO_LOW = 400_000
_RATIO_HIGH = 4_000_000
#: how many events are composed between two looks at the clock
_CLOCK_EVERY = 1024

_INT_TAG = "tag:yaml.org,2002:int"
#: libyaml's parser when PyYAML was built with it (three times faster on large documents), else
#: PyYAML's own; both feed the same composer and the safe constructor.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: What libyaml says (from 0.2.6 on) when its scanner, reading ahead of the parser in a flow
#: collection, passes its own nesting limit (1000 levels) before the composer has seen our far
#: lower one. The document is then read again with PyYAML's own scanner, which has no limit of
#: its own, so the composer refuses it at our limit, with our words and line, whichever libyaml
#: is installed.
_LIBYAML_NESTING = "exceeded maximum nesting depth"


class DecodeError(ValueError):
    """A document refused while decoding; ``limit`` names the bound it broke (``bytes``,
    ``depth``, ``digits``, ``aliases``, ``deadline``) or is empty for malformed input, ``line``
    is 1-based (0 when unknown). A value parser's error, outside the KubeschedError tree: each
    caller turns it into its own (a ConfigError, a ScenarioError, a 400), naming the file or
    request."""

    def __init__(self, message: str, limit: str = "", line: int = 0) -> None:
        super().__init__(message)
        self.limit = limit
        self.line = line


@dataclass(frozen=True)
class Limits:
    """The bounds of one decoding. ``deadline`` is seconds of wall time the decoding may take
    (None: no deadline), checked while composing."""

    max_bytes: int = MAX_DOCUMENT_BYTES
    max_depth: int = MAX_DEPTH
    max_integer_digits: int = MAX_INTEGER_DIGITS
    deadline: float | None = None


DEFAULT = Limits()


def allowed_alias_ratio(decoded: int) -> float:
    """The share of decoded nodes that may come from aliases, after ``decoded`` nodes (go-yaml)."""
    if decoded <= _RATIO_LOW:
        return 0.99
    if decoded >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


#: Documents from this size on are decoded with the cycle collector paused (see _collector_paused).
_PAUSE_COLLECTOR_BYTES = 64 * 1024
_collector_lock = threading.Lock()
_collector_holds = 0
_collector_was_enabled = False


@contextmanager
def _collector_paused(size: int) -> Iterator[None]:
    """Pause Python's cycle collector while a large document is decoded. Its full collections
    come more often as the heap grows, each scanning every object with every thread stopped: a
    3 MiB YAML body decoded in a thread stalled the event loop for up to a second. What decoding
    makes holds no cycles (an anchor that contains itself is refused), so reference counting
    frees it all; the collector resumes when the last decoding in progress ends."""
    global _collector_holds, _collector_was_enabled
    if size < _PAUSE_COLLECTOR_BYTES:
        yield
        return
    with _collector_lock:
        if _collector_holds == 0:
            _collector_was_enabled = gc.isenabled()
            gc.disable()
        _collector_holds += 1
    try:
        yield
    finally:
        with _collector_lock:
            _collector_holds -= 1
            if _collector_holds == 0 and _collector_was_enabled:
                gc.enable()


def _size_error(size: int, limit: int) -> DecodeError:
    return DecodeError(f"the document is {size} bytes, more than the limit of {limit} bytes", "bytes")


def read_text(path: str | os.PathLike[str], max_bytes: int) -> str:
    """A UTF-8 file's text; a file larger than ``max_bytes``, or bytes that are not UTF-8, are
    refused (:class:`DecodeError`), the size before the file is read. ``OSError`` is the caller's."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        if size > max_bytes:
            raise _size_error(size, max_bytes)
        # Its size and a byte more (not the limit: reading asks for that much memory at once);
        # a file that grew meanwhile (or a pipe, of size 0) is read on, cut off at the limit too.
        want = min(size, max_bytes) + 1
        data = fh.read(want)
        if len(data) == want and want <= max_bytes:
            data += fh.read(max_bytes + 1 - want)
    if len(data) > max_bytes:
        raise _size_error(len(data), max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DecodeError(f"not UTF-8 text: byte {exc.start} cannot be decoded") from None


def _check_size(data: str | bytes, limits: Limits) -> None:
    # A str is measured in characters: at most as many as its UTF-8 bytes, so never stricter.
    if len(data) > limits.max_bytes:
        raise _size_error(len(data), limits.max_bytes)


# --- YAML -----------------------------------------------------------------------------------------

_UTF8_PROBLEMS = {
    "invalid start byte": "invalid leading UTF-8 octet",
    "invalid continuation byte": "invalid trailing UTF-8 octet",
    "unexpected end of data": "incomplete UTF-8 octet sequence",
}


def _yaml_text(data: str | bytes) -> str:
    """Bytes as the YAML reader reads them: UTF-16 after its byte order mark, else UTF-8; bytes
    that are neither get libyaml's words rather than Python's codec message."""
    if isinstance(data, str):
        return data
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        codec = "utf-16-le" if data.startswith(b"\xff\xfe") else "utf-16-be"
        try:
            return data[2:].decode(codec)
        except UnicodeDecodeError as exc:
            problem = "incomplete UTF-16 character" if "truncated" in exc.reason else "invalid UTF-16 surrogate pair"
            raise DecodeError(f"yaml: {problem} at byte {exc.start + 2}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = _UTF8_PROBLEMS.get(exc.reason, "invalid UTF-8 octet")
        raise DecodeError(f"yaml: {problem} at byte {exc.start}") from None


#: The tags the direct construction builds, each as PyYAML's safe constructor does. Any other
#: tag (``!!set``, ``!!omap``, a local ``!tag``, the ``<<`` merge key, ``=``), a tag on the
#: wrong kind of node, a key that is a collection or a scalar the constructor refuses sends the
#: document down the node path instead, which builds or refuses it exactly as PyYAML does.
_MAP_TAG = "tag:yaml.org,2002:map"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_STR_TAG = "tag:yaml.org,2002:str"
_SCALAR_TAGS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "binary", "timestamp"))
#: A mapping being filled that waits for its next key; a sequence (whose frames hold no key).
_NO_KEY: Any = object()
_SEQUENCE: Any = object()


class _Unusual(Exception):
    """Something the direct construction leaves to the node path."""


class _Anchored:
    """What an anchor names: the node (or the value), the nodes decoded for it with aliases
    expanded, its height in collections, and whether it is still open (being composed)."""

    __slots__ = ("height", "open", "size", "value")

    def __init__(self, value: Any, size: int, height: int, open_: bool) -> None:
        self.value, self.size, self.height, self.open = value, size, height, open_


class _Composer:
    """Composes YAML documents from the parser's events with the limits applied as each node
    opens or closes. Sizes count what go-yaml's decoder would visit: a node, its children, and
    for an alias one node plus everything its anchor expands to.

    With ``objects`` it builds the Python values directly (dicts, lists, the safe constructor's
    scalars; an alias is the anchor's own object), never holding a node: the node graph of a
    large document, its marks and the constructor's table of every node took five times the
    memory of the values it became. Whatever it does not build raises :class:`_Unusual`.
    Without ``objects`` it makes PyYAML's nodes, for the safe constructor."""

    def __init__(self, loader: Any, limits: Limits, objects: bool) -> None:
        # PyYAML's parser and resolver methods are untyped: the composer holds them as Any.
        self.loader: Any = loader
        self.limits = limits
        self.objects = objects
        self.start = time.monotonic()
        self.events = 0

    def _fail(self, message: str, limit: str, line: int) -> DecodeError:
        return DecodeError(f"yaml: line {line}: {message}", limit, line)

    def documents(self) -> list[Any]:
        loader = self.loader
        loader.get_event()  # StreamStart
        out: list[Any] = []
        while not loader.check_event(StreamEndEvent):
            out.append(self._document())
        loader.get_event()
        return out

    def _document(self) -> Any:
        loader, limits, objects = self.loader, self.limits, self.objects
        loader.get_event()  # DocumentStart
        anchors: dict[str, _Anchored] = {}
        decoded = aliased = 0
        # each frame: the collection (its node, or the dict or list being filled), its children
        # (the node's flat key, value, ... list; a mapping's pending key when building values),
        # the nodes decoded so far inside it, its tallest child, and its anchor's entry
        stack: list[list[Any]] = []
        root: Any = None
        done = False
        while not done:
            self.events += 1
            if self.events % _CLOCK_EVERY == 0 and limits.deadline is not None:
                if time.monotonic() - self.start > limits.deadline:
                    raise DecodeError(f"yaml: decoding took longer than the limit of {limits.deadline:g}s", "deadline")
            event: Any = loader.get_event()
            line = event.start_mark.line + 1 if event.start_mark else 0
            value: Any
            if isinstance(event, AliasEvent):
                target = anchors.get(event.anchor or "")
                if target is None:
                    raise self._fail(f"unknown anchor '{event.anchor}' referenced", "", line)
                if target.open:
                    raise self._fail(f"anchor '{event.anchor}' value contains itself", "", line)
                expanded = target.size
                if len(stack) + target.height > limits.max_depth:
                    raise self._fail(f"nested too deeply: more than {limits.max_depth} levels", "depth", line)
                # go-yaml counts the alias node as decoded, and everything under it as aliased
                decoded += 1 + expanded
                aliased += expanded
                if (
                    aliased > _ALIAS_FLOOR
                    and decoded > _DECODE_FLOOR
                    and aliased / decoded > allowed_alias_ratio(decoded)
                ):
                    raise self._fail(
                        f"document contains excessive aliasing: aliases expand to {aliased} of {decoded} nodes "
                        f"(at most {allowed_alias_ratio(decoded):.0%} may come from aliases)",
                        "aliases",
                        line,
                    )
                self._add(stack, target.value, 1 + expanded, target.height)
                continue
            if isinstance(event, ScalarEvent):
                tag = event.tag
                if tag is None or tag == "!":
                    tag = loader.resolve(ScalarNode, event.value, event.implicit)
                if tag == _INT_TAG and _digits(event.value) > limits.max_integer_digits:
                    raise self._fail(
                        f"an integer of {_digits(event.value)} digits, more than the limit of "
                        f"{limits.max_integer_digits}",
                        "digits",
                        line,
                    )
                if objects:
                    value = event.value if tag == _STR_TAG else self._scalar(tag, event)
                else:
                    marks: Any = (event.start_mark, event.end_mark)  # libyaml's or PyYAML's
                    value = ScalarNode(tag, event.value, marks[0], marks[1], event.style)
                decoded += 1
                if event.anchor is not None:
                    anchors[event.anchor] = _Anchored(value, 1, 0, False)
                if stack:
                    self._add(stack, value, 1, 0)
                else:
                    root, done = value, True
                continue
            if isinstance(event, CollectionStartEvent):
                if len(stack) >= limits.max_depth:
                    raise self._fail(f"nested too deeply: more than {limits.max_depth} levels", "depth", line)
                tag = event.tag
                sequence = isinstance(event, SequenceStartEvent)
                cls: Any = SequenceNode if sequence else MappingNode
                if tag is None or tag == "!":
                    tag = loader.resolve(cls, None, event.implicit)
                children: Any
                if not objects:
                    value = cls(tag, [], event.start_mark, None, flow_style=event.flow_style)
                    children = []
                elif tag != (_SEQ_TAG if sequence else _MAP_TAG):
                    raise _Unusual(tag)
                else:
                    value, children = ([], _SEQUENCE) if sequence else ({}, _NO_KEY)
                decoded += 1
                entry = None
                if event.anchor is not None:
                    entry = anchors[event.anchor] = _Anchored(value, 0, 0, True)
                stack.append([value, children, 1, 0, entry])
                continue
            if isinstance(event, SequenceEndEvent | MappingEndEvent):
                value, children, count, tallest, entry = stack.pop()
                if not objects:
                    value.end_mark = event.end_mark
                    if isinstance(value, MappingNode):
                        value.value = list(zip(children[0::2], children[1::2], strict=True))
                    else:
                        value.value = children
                if entry is not None:
                    entry.size, entry.height, entry.open = count, tallest + 1, False
                if stack:
                    self._add(stack, value, count, tallest + 1)
                else:
                    root, done = value, True
                continue
            raise self._fail(f"unexpected {type(event).__name__}", "", line)  # pragma: no cover
        end = loader.get_event()
        assert isinstance(end, DocumentEndEvent)
        return root

    def _scalar(self, tag: str, event: Any) -> Any:
        """A scalar's value as the safe constructor makes it (the node it reads is dropped)."""
        if tag not in _SCALAR_TAGS:
            raise _Unusual(tag)
        node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style)
        try:
            return self.loader.yaml_constructors[tag](self.loader, node)
        except Exception as exc:  # the constructor's refusal, in its words, from the node path
            raise _Unusual(tag) from exc

    def _add(self, stack: list[list[Any]], child: Any, count: int, child_height: int) -> None:
        frame = stack[-1]
        if not self.objects:
            frame[1].append(child)
        elif frame[1] is _SEQUENCE:
            frame[0].append(child)
        elif frame[1] is _NO_KEY:
            if isinstance(child, dict | list):  # unhashable: the constructor's error
                raise _Unusual("key")
            frame[1] = child
        else:
            frame[0][frame[1]] = child
            frame[1] = _NO_KEY
        frame[2] += count
        frame[3] = max(frame[3], child_height)


def _dismantle(nodes: list[Node]) -> None:
    """Free a composed node graph a piece at a time: dropped at once, its millions of objects
    are freed in one cascade that holds the interpreter (and so every other thread) throughout."""
    stack: list[Any] = list(nodes)
    nodes.clear()
    while stack:
        node = stack.pop()
        value = node.value
        if isinstance(value, list):
            node.value = None
            for item in value:
                if isinstance(item, tuple):
                    stack.extend(item)
                else:
                    stack.append(item)


def _digits(value: str) -> int:
    return sum(ch.isdigit() for ch in value)


def load_yaml_all(data: str | bytes, limits: Limits = DEFAULT) -> list[Any]:
    """Every document of a YAML stream, bounded by ``limits``; a :class:`DecodeError` for a
    broken limit (``limit`` says which) and for malformed YAML (``limit`` empty), in go-yaml's
    words (``yaml: line 2: did not find expected node content``)."""
    _check_size(data, limits)
    text = _yaml_text(data)
    try:
        return _load_all(_LOADER, text, limits, len(data))
    except DecodeError as exc:
        if _LOADER is yaml.SafeLoader or _LIBYAML_NESTING not in str(exc):
            raise
    return _load_all(yaml.SafeLoader, text, limits, len(data))


def _load_all(loader_class: Any, text: str, limits: Limits, size: int) -> list[Any]:
    """The documents built directly; when they hold what only the node path builds (or
    refuses), read again through PyYAML's nodes and safe constructor."""
    with _collector_paused(size):
        try:
            return _decode(loader_class(text), limits, objects=True)
        except _Unusual:
            pass
        return _decode(loader_class(text), limits, objects=False)


def _decode(loader: Any, limits: Limits, objects: bool) -> list[Any]:
    try:
        if objects:
            return _Composer(loader, limits, True).documents()
        nodes = _Composer(loader, limits, False).documents()
        docs = [loader.construct_document(node) for node in nodes]
        _dismantle(nodes)
        return docs
    except yaml.MarkedYAMLError as exc:
        # libyaml's problem (go-yaml's is a port of it) in go-yaml's form, not PyYAML's report
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise DecodeError(f"yaml: {where}{exc.problem or exc.context}", "", mark.line + 1 if mark else 0) from None
    except yaml.reader.ReaderError as exc:
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "?")
        raise DecodeError(
            f"yaml: control characters are not allowed (#x{code:04x} at character {exc.position})"
        ) from None
    finally:
        loader.dispose()


def load_yaml(data: str | bytes, limits: Limits = DEFAULT) -> Any:
    """One YAML document (None for an empty stream), as ``yaml.safe_load`` but bounded."""
    docs = load_yaml_all(data, limits)
    if len(docs) > 1:
        raise DecodeError("yaml: expected a single document in the stream, but found another document")
    return docs[0] if docs else None


# --- JSON -----------------------------------------------------------------------------------------


def _go_char(ch: str) -> str:
    if ch == "'":
        return "'\\''"
    if ch == '"':
        return "'\"'"
    return "'" + json.dumps(ch, ensure_ascii=False)[1:-1] + "'"


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = re.compile(r"[\[\]{}]")


def _innermost(doc: str) -> str:
    """The kind of container open at the end of ``doc``: '{', '[' or ''."""
    open_: list[str] = []
    for ch in _BRACKETS.findall(_STRINGS.sub("", doc)):
        if ch in "[{":
            open_.append(ch)
        elif open_:
            open_.pop()
    return open_[-1] if open_ else ""


def _go_json_message(exc: json.JSONDecodeError) -> str:
    """Python's JSON error in the words of Go's encoding/json, which kube-apiserver answers with."""
    doc, pos, msg = exc.doc, exc.pos, exc.msg
    if pos >= len(doc) or msg.startswith("Unterminated string"):
        return "unexpected end of JSON input"
    ch = _go_char(doc[pos])
    if msg == "Expecting value":
        return f"invalid character {ch} looking for beginning of value"
    if msg.startswith("Expecting property name"):
        return f"invalid character {ch} looking for beginning of object key string"
    if msg == "Expecting ':' delimiter":
        return f"invalid character {ch} after object key"
    if msg == "Expecting ',' delimiter":
        where = "object key:value pair" if _innermost(doc[:pos]) == "{" else "array element"
        return f"invalid character {ch} after {where}"
    if msg == "Extra data":
        return f"invalid character {ch} after top-level value"
    if msg.startswith("Invalid control character"):
        return f"invalid character {ch} in string literal"
    if msg.startswith("Invalid \\u"):
        return f"invalid character {ch} in \\u hexadecimal character escape"
    if msg.startswith("Invalid \\escape"):
        return f"invalid character {_go_char(doc[pos + 1 : pos + 2] or ' ')} in string escape code"
    return f"invalid character {ch}"


def _no_constant(name: str) -> Any:
    # Python's json reads NaN and Infinity; JSON (and Go's decoder) has no such literals.
    raise DecodeError(f"invalid character {_go_char(name[0])} looking for beginning of value")


def load_json(data: str | bytes, limits: Limits = DEFAULT, *, constants: bool = False, walk: bool = True) -> Any:
    """A JSON document bounded by ``limits``. Bytes are read as UTF-8 as Go reads them
    (invalid sequences become U+FFFD); ``NaN`` and ``Infinity`` are refused unless
    ``constants``. Every refusal is a :class:`DecodeError` in Go's words. ``walk=False`` leaves
    the walk over the value for its depth to the caller (:func:`check_depth`), which walks it anyway."""
    _check_size(data, limits)
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    decoder = _json_decoder(limits.max_integer_digits, constants)
    try:
        if text.startswith("\ufeff"):  # what json.loads refuses before decoding
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        if len(text) < _PAUSE_COLLECTOR_BYTES:
            value = decoder.decode(text)
        else:
            with _collector_paused(len(text)):
                value = decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise DecodeError(_go_json_message(exc), "", exc.lineno) from None
    except RecursionError:
        raise DecodeError(f"nested too deeply: more than {limits.max_depth} levels", "depth") from None
    if walk:
        check_depth(value, limits)
    return value


#: The decoders :func:`load_json` reads with, by (integer digits allowed, constants allowed):
#: ``json.loads`` given hooks builds a decoder, and its scanner, at every call. A decoder keeps
#: nothing from one document to the next (json's own module-level decoder is shared alike).
_JSON_DECODERS: dict[tuple[int, bool], json.JSONDecoder] = {}


def _json_decoder(max_digits: int, constants: bool) -> json.JSONDecoder:
    decoder = _JSON_DECODERS.get((max_digits, constants))
    if decoder is not None:
        return decoder

    def parse_int(literal: str) -> int:
        digits = len(literal) - literal.startswith("-")
        if digits > max_digits:
            raise DecodeError(
                f"json: cannot unmarshal number {literal[:30]}... into Go value of type float64 "
                f"(an integer of {digits} digits, more than the limit of {max_digits})",
                "digits",
            )
        return int(literal)

    decoder = json.JSONDecoder(parse_int=parse_int, parse_constant=None if constants else _no_constant)
    if len(_JSON_DECODERS) >= 64:  # limits are a handful; never let odd ones pile up
        _JSON_DECODERS.clear()
    _JSON_DECODERS[(max_digits, constants)] = decoder
    return decoder


def check_depth(value: Any, limits: Limits = DEFAULT) -> None:
    """:class:`DecodeError` when decoded JSON ``value`` nests deeper than ``limits`` allow."""
    if _depth(value) > limits.max_depth:
        raise DecodeError(f"nested too deeply: more than {limits.max_depth} levels", "depth")


def _depth(value: Any) -> int:
    """How many collections deep ``value`` goes; iterative (JSON has no aliases: no sharing)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list):
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in item if isinstance(child, dict | list))
    return deepest


def load_yaml_or_json(data: str | bytes, limits: Limits = DEFAULT) -> Any:
    """A file that is JSON or YAML (a configuration): JSON when it parses as JSON, else YAML
    (YAML's flow style starts with "{" too, so a JSON error is not final)."""
    text = data if isinstance(data, str) else _yaml_text(data)
    if text.lstrip().startswith("{"):
        try:
            # NaN and Infinity read as numbers, so that the loader's checks name their field
            return load_json(text, limits, constants=True)
        except DecodeError as exc:
            if exc.limit:
                raise
    return load_yaml(text, limits)
