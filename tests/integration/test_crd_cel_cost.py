"""The cost of CEL rules bounded as kube-apiserver bounds it, over real HTTP against a server on
an event loop of its own: a definition whose rule may cost more than the per-rule limit (three
nested ``all`` over a list without ``maxItems``: 11.5 s for 200 items once) is refused at once
with upstream's errors; with ``maxItems`` it is taken, and its objects are validated, the one
whose evaluation would pass the per-call limit refused in upstream's words without being
evaluated; ``/healthz`` answers meanwhile."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from apiserver_thread import ServerThread
from crds import thing_definition as definition

from kubesched.testing import sim_serve_process

Obj = dict[str, Any]
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
THINGS = "/apis/example.io/v1/namespaces/default/things"
ROOT = "spec.versions[0].schema.openAPIV3Schema"
RULE = "self.a.all(x, self.a.all(y, self.a.all(z, x == y)))"
HINT = "(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
#: what an answer, and /healthz meanwhile, may take at most
SECONDS = 1.0


def spec_schema(max_items: int | None) -> Obj:
    items: Obj = {"type": "array", "items": {"type": "integer"}}
    if max_items is not None:
        items["maxItems"] = max_items
    return {"type": "object", "properties": {"a": items}, "x-kubernetes-validations": [{"rule": RULE}]}


def thing(name: str, items: list[int]) -> Obj:
    return {"apiVersion": "example.io/v1", "kind": "Thing", "metadata": {"name": name}, "spec": {"a": items}}


def send(srv: ServerThread, method: str, path: str, body: Obj | None = None) -> tuple[int, Obj, float]:
    """Status, decoded body and seconds taken of one request."""
    req = urllib.request.Request(srv.server.url + path, method=method)
    req.add_header("Content-Type", "application/json")
    data = json.dumps(body).encode() if body is not None else None
    start = time.monotonic()
    try:
        with urllib.request.urlopen(req, data=data, timeout=30) as r:
            status, raw = int(r.status), r.read()
    except urllib.error.HTTPError as exc:
        status, raw = int(exc.code), exc.read()
    took = time.monotonic() - start
    return status, (json.loads(raw) if raw.startswith(b"{") else {}), took


def causes(body: Obj) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


@pytest.fixture
def served() -> Iterator[ServerThread]:
    with ServerThread() as srv:
        yield srv


class Healthz:
    """Asks ``/healthz`` over and over from a thread of its own; the slowest answer is kept."""

    def __init__(self, srv: ServerThread) -> None:
        self.srv, self.slowest, self.asked = srv, 0.0, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._done.is_set():
            status, _, took = send(self.srv, "GET", "/healthz")
            assert status == 200
            self.slowest, self.asked = max(self.slowest, took), self.asked + 1
            time.sleep(0.01)

    def __enter__(self) -> Healthz:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._done.set()
        self._thread.join(30)


def test_a_rule_that_may_cost_too_much_is_refused_at_once(served: ServerThread) -> None:
    with Healthz(served) as health:
        status, body, took = send(served, "POST", CRDS, definition(spec_schema(None)))
    assert status == 422, body
    assert took < SECONDS and health.slowest < SECONDS
    at = f"{ROOT}.properties[spec].x-kubernetes-validations[0].rule"
    assert causes(body) == [
        (at, f"Forbidden: estimated rule cost exceeds budget by factor of more than 100x {HINT}"),
        (at, "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"),
        (
            ROOT,
            "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds "
            f"budget by factor of more than 100x {HINT}",
        ),
    ]
    assert body["reason"] == "Invalid" and body["details"]["name"] == "things.example.io"
    status, listed, _ = send(served, "GET", CRDS)
    assert status == 200 and listed["items"] == []


def test_with_max_items_the_rule_is_taken_and_each_call_is_bounded(served: ServerThread) -> None:
    status, body, _ = send(served, "POST", CRDS, definition(spec_schema(100)))
    assert status == 201, body
    # The rule holds when every item equals every other, and fails otherwise.
    status, body, _ = send(served, "POST", THINGS, thing("same", [7] * 10))
    assert status == 201, body
    status, body, _ = send(served, "POST", THINGS, thing("mixed", list(range(10))))
    assert status == 422
    assert causes(body) == [("spec", f'Invalid value: "object": failed rule: {RULE}')]
    # 100 equal items: a million comparisons, past the per-call limit: refused, not evaluated.
    with Healthz(served) as health:
        status, body, took = send(served, "POST", THINGS, thing("many", [7] * 100))
    assert status == 422, body
    assert causes(body) == [
        (
            "spec",
            "Invalid value: \"object\": 'operation cancelled: actual cost limit exceeded': no further validation "
            f"rules will be run due to call cost exceeds limit for rule: {RULE}",
        )
    ]
    assert took < SECONDS and health.slowest < SECONDS and health.asked > 0
    # Past maxItems, the object is refused for that, and the rule is not run.
    status, body, _ = send(served, "POST", THINGS, thing("toomany", [7] * 101))
    assert status == 422
    assert ("spec.a", "Too many: 101: must have at most 100 items") in causes(body)


KUBECTL = shutil.which("kubectl")
ISSUE_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.io}
spec:
  group: example.io
  names: {plural: things, kind: Thing}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.a.all(x, self.a.all(y, self.a.all(z, x == y)))"
            properties:
              a: {type: array, items: {type: integer}}
"""


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_kubectl_shows_the_refusals(tmp_path: Path) -> None:
    with sim_serve_process(tmp_path / "srv") as printed:
        kc, cache = printed["kubeconfig"], tmp_path / "cache"

        def kubectl(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
            command = [KUBECTL or "kubectl", "--kubeconfig", kc, "--cache-dir", str(cache), *args]
            return subprocess.run(command, capture_output=True, text=True, timeout=60, input=stdin)

        refused = kubectl("apply", "-f", "-", stdin=ISSUE_CRD)
        assert refused.returncode != 0
        assert (
            f"{ROOT}.properties[spec].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds "
            f"budget by factor of more than 100x {HINT}"
        ) in refused.stderr
        bounded = ISSUE_CRD.replace("a: {type: array,", "a: {type: array, maxItems: 100,")
        taken = kubectl("apply", "-f", "-", stdin=bounded)
        assert taken.returncode == 0, taken.stderr
        thing = "apiVersion: example.io/v1\nkind: Thing\nmetadata: {name: t}\nspec: {a: %s}\n"
        created = kubectl("apply", "-f", "-", stdin=thing % json.dumps([3] * 5))
        assert created.returncode == 0, created.stderr
        many = kubectl("apply", "-f", "-", stdin=thing % json.dumps([3] * 100))
        assert many.returncode != 0
        assert "no further validation rules will be run due to call cost exceeds limit for rule" in many.stderr
