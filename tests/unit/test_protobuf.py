"""Kubernetes protobuf request bodies read into JSON objects (kubesched.sim.apiserver.protobuf.decode), against
bytes built here with the wire format's rules."""

from __future__ import annotations

import pytest

from kubesched.sim.apiserver.protobuf.decode import MAGIC, ProtobufError, decode_object


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number: int, value: bytes | int | str) -> bytes:
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    data = value.encode() if isinstance(value, str) else value
    return varint(number << 3 | 2) + varint(len(data)) + data


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = field(1, api_version) + field(2, kind)
    return MAGIC + field(1, type_meta) + field(2, raw) + field(3, b"") + field(4, b"")


def meta(name: str, **extra: bytes) -> bytes:
    # Go writes every non-pointer field, empty ones included.
    body = field(1, name) + field(2, "") + field(3, "") + field(7, 0) + field(8, b"")
    for key, value in extra.items():
        body += field(11, field(1, key) + field(2, value))
    return body


def test_a_priority_class_as_kubectl_sends_it() -> None:
    raw = field(1, meta("high")) + field(2, 1000) + field(3, 0) + field(4, "important")
    obj = decode_object(envelope("scheduling.k8s.io/v1", "PriorityClass", raw), "PriorityClass", "")
    assert obj == {
        "kind": "PriorityClass",
        "apiVersion": "scheduling.k8s.io/v1",
        "metadata": {"name": "high", "generation": 0},
        "value": 1000,
        "globalDefault": False,
        "description": "important",
    }


def test_maps_bytes_negative_numbers_and_times() -> None:
    secret = field(1, meta("creds", app=b"web")) + field(2, field(1, "password") + field(2, b"\x00\xffpw"))
    obj = decode_object(envelope("v1", "Secret", secret), "Secret", "v1")
    assert obj["metadata"]["labels"] == {"app": "web"}
    assert obj["data"] == {"password": "AP9wdw=="}  # bytes travel base64 in JSON
    pc = decode_object(envelope("scheduling.k8s.io/v1", "PriorityClass", field(1, meta("low")) + field(2, -5)), "", "")
    assert pc["value"] == -5
    eviction = field(1, meta("web-1")) + field(2, field(1, 30))
    assert decode_object(envelope("policy/v1", "Eviction", eviction), "Eviction", "")["deleteOptions"] == {
        "gracePeriodSeconds": 30
    }
    timed = field(1, field(1, "ns") + field(8, field(1, 1_700_000_000)))
    assert decode_object(envelope("v1", "Namespace", timed), "Namespace", "v1")["metadata"]["creationTimestamp"] == (
        "2023-11-14T22:13:20Z"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            envelope("v1", "ConfigMap", field(1, meta("c")) + field(9, "x")),
            "field number 9 of ConfigMap is not supported",
        ),
        (envelope("batch/v1", "CronJob", b""), "CronJob objects in protobuf are not supported; send JSON"),
        (b"\x0a\x00", "does not start with the Kubernetes protobuf prefix"),
        (MAGIC + field(2, b"\x0a\x05ab"), "truncated"),
    ],
    ids=["unknown-field", "unknown-kind", "no-magic", "truncated"],
)
def test_what_cannot_be_read_is_refused_saying_why(body: bytes, message: str) -> None:
    with pytest.raises(ProtobufError, match=message):
        decode_object(body, "ConfigMap", "v1")
