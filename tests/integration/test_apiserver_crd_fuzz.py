"""CustomResourceDefinitions drawn at random, against a running embedded API server over real
HTTP: schemas nested deep and wide, of every type and of none, with patterns that backtrack or do
not compile, formats, bounds, CEL rules that are slow, wrong or not strings, and any of those
values replaced by any JSON. Whatever comes in:

* the CRD is answered below 500, within a few seconds (a schema once froze the server);
* the OpenAPI documents stay served (a stored bad schema once made them 500 for every client,
  kubectl's every apply with them);
* when the CRD was taken, an object of its kind is answered below 500 too, and so is the CRD's
  deletion;
* ``/healthz`` answers meanwhile.

Bounded and derandomized (the same CRDs every run); ``KUBESCHED_FUZZ_EXAMPLES=2000`` runs that
many random ones instead."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from apiserver_thread import ServerThread
from crds import thing_definition as definition
from fuzzing import fuzz_settings
from hypothesis import event, given
from hypothesis import strategies as st

Obj = dict[str, Any]
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
THINGS = "/apis/example.io/v1/namespaces/default/things"
#: No answer may take longer (the frozen server took minutes).
SECONDS = 5.0

ANY_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=5,
)
PATTERNS = st.sampled_from(["^a+$", "^(a+)+$", "(", "[a-z", "^\\d{1,3}$", "(?i)abc", "\\p{L}+", "a{1000000}", ""])
RULES = st.sampled_from(
    [
        "self.size() > 0",
        "self.all(x, self.all(y, self.all(z, true)))",
        "self.exists(x, x == 'a')",
        "has(self.a)",
        "self.a ==",
        "1 +",
        "self.matches('^(a+)+$')",
        "size(self) < 10",
        "true",
    ]
)
FORMATS = st.sampled_from(["date-time", "int-or-string", "byte", "uuid", "bogus", "email", "quantity"])
TYPES = st.sampled_from(["object", "array", "string", "integer", "number", "boolean", "bogus", ""])


def _extras(typ: str) -> st.SearchStrategy[Obj]:
    """What a schema of ``typ`` may carry besides its children."""
    fields: dict[str, st.SearchStrategy[Any]] = {
        "description": st.text(max_size=8),
        "nullable": st.booleans(),
        "x-kubernetes-validations": st.lists(
            st.fixed_dictionaries({"rule": RULES | ANY_JSON}, optional={"message": st.text(max_size=6)}), max_size=2
        ),
    }
    if typ == "string":
        fields |= {"pattern": PATTERNS, "format": FORMATS, "maxLength": st.integers(-1, 2**40), "enum": ANY_JSON}
    elif typ in ("integer", "number"):
        fields |= {"minimum": st.integers(-5, 5) | ANY_JSON, "maximum": st.integers(-5, 5), "multipleOf": ANY_JSON}
    elif typ == "array":
        fields |= {"maxItems": st.integers(-1, 2**40), "x-kubernetes-list-type": st.sampled_from(["set", "map", "x"])}
    elif typ == "object":
        fields |= {"x-kubernetes-preserve-unknown-fields": st.booleans(), "maxProperties": st.integers(-1, 100)}
    return st.fixed_dictionaries({}, optional=fields)


@st.composite
def schemas(draw: st.DrawFn, depth: int = 0) -> Any:
    """A schema, or (now and then) any JSON where one belongs."""
    if draw(st.integers(0, 20)) == 0:
        return draw(ANY_JSON)
    typ = draw(TYPES) if depth < 12 else draw(st.sampled_from(["string", "integer"]))
    out: Obj = {"type": typ} if typ else {}
    out |= draw(_extras(typ))
    if typ == "object":
        names = draw(st.lists(st.sampled_from(["a", "b", "c", "spec", "x-y", ""]), max_size=3, unique=True))
        out["properties"] = {n: draw(schemas(depth + 1)) for n in names}
        if draw(st.booleans()) and names:
            out["required"] = names[:1]
    elif typ == "array":
        out["items"] = draw(schemas(depth + 1))
    return out


@st.composite
def deep_chain(draw: st.DrawFn) -> Obj:
    """An object nested 1..60 levels through one property, a string beside it at each level: as
    deep as the schema that froze the server (its conversion walked each level twice)."""
    leaf: Obj = {"type": "string", "pattern": draw(PATTERNS)}
    for _ in range(draw(st.integers(1, 60))):
        leaf = {"type": "object", "properties": {"a": leaf, "b": {"type": "string", "pattern": draw(PATTERNS)}}}
    return leaf


def timed(srv: ServerThread, method: str, path: str, body: Any = None) -> int:
    """The status of a request, which must come within :data:`SECONDS`."""
    data = json.dumps(body).encode() if body is not None else None
    t = time.monotonic()
    status = srv.request(method, path, data, timeout=SECONDS * 2)
    took = time.monotonic() - t
    assert took < SECONDS, f"{method} {path}: {took:.1f} s"
    assert status < 500, f"{method} {path}: {status}"
    return status


@pytest.fixture(scope="module")
def running() -> Iterator[ServerThread]:
    with ServerThread() as srv:
        yield srv


def check(srv: ServerThread, spec: Any, thing: Any) -> None:
    status = timed(srv, "POST", CRDS, definition(spec))
    event(f"CRD answered {status}")
    try:
        for path in ("/openapi/v2", "/openapi/v3", "/healthz"):
            assert timed(srv, "GET", path) == 200, path
        if status == 201:
            obj = {"apiVersion": "example.io/v1", "kind": "Thing", "metadata": {"name": "t"}, "spec": thing}
            created = timed(srv, "POST", THINGS, obj)
            event(f"object answered {created}")
            if created == 201:
                timed(srv, "DELETE", THINGS + "/t")
    finally:
        if status == 201:
            timed(srv, "DELETE", CRDS + "/things.example.io")


@fuzz_settings(150)
@given(spec=schemas(), thing=ANY_JSON)
def test_no_crd_freezes_or_breaks_the_server(running: ServerThread, spec: Any, thing: Any) -> None:
    check(running, spec, thing)


@fuzz_settings(25)
@given(spec=deep_chain(), thing=st.just({"a": {"b": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}}))
def test_deep_schemas_are_answered_in_time(running: ServerThread, spec: Any, thing: Any) -> None:
    check(running, spec, thing)
