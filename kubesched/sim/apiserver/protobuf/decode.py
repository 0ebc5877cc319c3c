"""Request bodies in Kubernetes' protobuf encoding, as the real kubectl sends them.

kubectl's typed clients (``kubectl create namespace|priorityclass|configmap|secret``, the
eviction ``kubectl drain`` posts) send ``application/vnd.kubernetes.protobuf``: the four bytes
``k8s\\x00``, then a ``runtime.Unknown`` message whose ``raw`` field holds the object. This module
reads the protocol buffers wire format and turns an object into the JSON the API server would
have received, from a table of the messages kubectl sends (:mod:`kubesched.sim.apiserver.protobuf.schema`).
A field number the table does not know is refused, naming it, rather than dropped.
"""

from __future__ import annotations

import base64
import struct
from datetime import UTC, datetime
from typing import Any

from kubesched.sim.apiserver.protobuf.schema import KIND_MESSAGES, MESSAGES, Field

MAGIC = b"k8s\x00"


class ProtobufError(ValueError):
    """A body that is not protobuf kubesched can read; the message says why."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ProtobufError("varint too long")


def fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """``(field number, wire type, value)`` of each field of one message, in order: a varint
    as an int, a length-delimited field as bytes, fixed64/fixed32 as raw bytes."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(buf, pos)
        elif wire == 2:
            size, pos = _varint(buf, pos)
            if pos + size > len(buf):
                raise ProtobufError(f"field {number}: truncated")
            value, pos = buf[pos : pos + size], pos + size
        elif wire == 1:
            value, pos = buf[pos : pos + 8], pos + 8
        elif wire == 5:
            value, pos = buf[pos : pos + 4], pos + 4
        else:
            raise ProtobufError(f"field {number}: unsupported wire type {wire}")
        out.append((number, wire, value))
    return out


def _signed64(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _time(buf: bytes) -> str | None:
    seconds = 0
    for number, _, value in fields(buf):
        if number == 1:
            seconds = _signed64(value)
    if seconds == 0:
        return None  # the zero time Go writes for an unset one
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _scalar(f: Field, value: Any, path: str) -> Any:
    t = f.type
    if t == "string":
        return bytes(value).decode()
    if t == "bytes":
        return base64.b64encode(bytes(value)).decode()
    if t in ("int32", "int64"):
        # A negative int32 travels sign-extended to 64 bits, as an int64 does.
        return _signed64(value)
    if t == "bool":
        return bool(value)
    if t == "double":
        return struct.unpack("<d", value)[0]
    if t == "time":
        return _time(bytes(value))
    if t == "quantity":
        return next((bytes(v).decode() for n, _, v in fields(bytes(value)) if n == 1), "0")
    if t == "intorstring":
        parts = {n: v for n, _, v in fields(bytes(value))}
        return bytes(parts[3]).decode() if parts.get(1) == 1 else _signed64(parts.get(2, 0))
    raise ProtobufError(f"{path}: no reader for type {t!r}")


def decode_message(name: str, buf: bytes, path: str = "") -> dict[str, Any]:
    """Message ``name`` (a key of :data:`MESSAGES`) as the JSON object it stands for."""
    schema = MESSAGES.get(name)
    if schema is None:
        raise ProtobufError(f"{path or name}: message {name} is not supported")
    out: dict[str, Any] = {}
    for number, wire, value in fields(buf):
        f = schema.get(number)
        if f is None:
            raise ProtobufError(f"{path or name}: field number {number} of {name} is not supported")
        where = f"{path}.{f.json}" if path else f.json
        if f.kind == "map":
            entry = {n: v for n, _, v in fields(bytes(value))}
            key = bytes(entry.get(1, b"")).decode()
            item = entry.get(2, b"")
            out.setdefault(f.json, {})[key] = (
                decode_message(f.type, bytes(item), f"{where}[{key}]")
                if f.type in MESSAGES
                else _scalar(f, item, where)
            )
            continue
        if f.type in MESSAGES:
            item = decode_message(f.type, bytes(value), where)
        elif f.kind == "repeated" and wire == 2 and f.type in ("int32", "int64", "bool"):
            # A packed repeated scalar.
            pos, items = 0, []
            data = bytes(value)
            while pos < len(data):
                v, pos = _varint(data, pos)
                items.append(_scalar(f, v, where))
            out.setdefault(f.json, []).extend(items)
            continue
        else:
            item = _scalar(f, value, where)
        if f.kind == "repeated":
            out.setdefault(f.json, []).append(item)
        else:
            out[f.json] = item
    # Go writes every non-pointer field, empty or not; JSON leaves empty ones out.
    return {k: v for k, v in out.items() if v is not None and v != "" and v != {} and v != []}


def decode_object(body: bytes, kind: str, api_version: str) -> dict[str, Any]:
    """A protobuf request body (magic, runtime.Unknown, the object) as a JSON object of
    ``kind``; :class:`ProtobufError` when it is not one kubesched can read."""
    if not body.startswith(MAGIC):
        raise ProtobufError("the body does not start with the Kubernetes protobuf prefix")
    envelope = {n: v for n, _, v in fields(body[len(MAGIC) :])}
    try:
        type_meta = {n: bytes(v).decode() for n, _, v in fields(bytes(envelope.get(1, b"")))}
    except (ValueError, TypeError):
        raise ProtobufError("the body's type metadata is not a valid encoding of a TypeMeta") from None
    sent_kind = type_meta.get(2) or kind
    if envelope.get(3):
        encoding = bytes(envelope[3]).decode("utf-8", errors="replace")
        raise ProtobufError(f'content encoding "{encoding}" is not supported')
    message = KIND_MESSAGES.get(sent_kind)
    if message is None:
        raise ProtobufError(f"{sent_kind} objects in protobuf are not supported; send JSON")
    try:
        obj = decode_message(message, bytes(envelope.get(2, b"")))
    except ProtobufError:
        raise
    except (ValueError, TypeError, KeyError, IndexError, OverflowError):
        # Bytes that are no valid encoding of the message (a string that is not UTF-8, a length
        # where a number belongs): refused as undecodable, not failed with Python's text.
        raise ProtobufError(f"the body is not a valid encoding of a {sent_kind}") from None
    obj["kind"] = sent_kind
    obj["apiVersion"] = type_meta.get(1) or api_version
    return obj
