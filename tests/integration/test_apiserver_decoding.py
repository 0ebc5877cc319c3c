"""The API server's body decoding over real HTTP: a YAML alias bomb, numbers longer than any Go
type holds and bytes that are no text are each a 400 in the decoders' words, and /healthz keeps
answering while such a body is refused."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from fuzzing import alias_bomb, alias_deep

from kubesched.sim.apiserver.requests import INLINE_BODY_BYTES
from kubesched.sim.apiserver.server import APIServer
from kubesched.testing import sim_serve_process

PODS = "/api/v1/namespaces/default/pods"
#: Generous: the outcome is asserted, not the speed; a stalled loop fails it by minutes.
PROMPTLY = 30.0
#: Python's own words, which must never reach a client.
PYTHON_TEXT = ("set_int_max_str_digits", "codec can't decode", "Exceeds the limit", "Traceback", "<unicode string>")


async def send(
    session: aiohttp.ClientSession, server: APIServer, method: str, path: str, body: bytes | None, ctype: str
) -> tuple[int, Any]:
    async with session.request(method, server.url + path, data=body, headers={"Content-Type": ctype}) as r:
        return r.status, await r.json(content_type=None)


def pod_yaml(name: str = "p") -> str:
    return f"metadata: {{name: {name}}}\nspec:\n  containers: [{{name: c, image: registry.k8s.io/pause:3.10}}]\n"


async def test_an_alias_bomb_is_a_bad_request_while_healthz_answers(server: APIServer) -> None:
    """The 9-level bomb of the issue held the loop for minutes; now it is a 400 at once."""
    bomb = (pod_yaml() + alias_bomb()).encode()

    async def scenario() -> tuple[tuple[int, Any], list[int]]:
        async with aiohttp.ClientSession() as session:

            async def healthz() -> int:
                async with session.get(server.url + "/healthz") as r:
                    return r.status

            refused = asyncio.create_task(send(session, server, "POST", PODS, bomb, "application/yaml"))
            probes = [await healthz() for _ in range(5)]
            return await refused, probes

    (status, reply), probes = await asyncio.wait_for(scenario(), PROMPTLY)
    assert probes == [200] * 5
    assert status == 400, reply
    assert reply["reason"] == "BadRequest"
    assert "document contains excessive aliasing" in reply["message"]


@pytest.mark.parametrize(
    ("body", "ctype", "fragment"),
    [
        (pod_yaml() + alias_bomb(7, 9), "application/yaml", "yaml: line 7: document contains excessive aliasing"),
        (pod_yaml() + alias_deep(300), "application/yaml", "nested too deeply: more than 200 levels"),
        (
            '{"metadata": {"name": "p"}, "spec": {"priority": ' + "9" * 5001 + "}}",
            "application/json",
            "cannot unmarshal number 999999999999999999999999999999... into Go value of type float64 "
            "(an integer of 5001 digits, more than the limit of 400)",
        ),
        (
            pod_yaml() + "x: " + "9" * 5001 + "\n",
            "application/yaml",
            "yaml: line 4: an integer of 5001 digits, more than the limit of 400",
        ),
        (b"metadata: {name: \xff}\n", "application/yaml", "yaml: invalid leading UTF-8 octet at byte 17"),
        (b"metadata: {name: \xc3}\n", "application/yaml", "yaml: invalid trailing UTF-8 octet at byte 17"),
        (b"\xfe\xff\x00m\xd8\x00", "application/yaml", "yaml: invalid UTF-16 surrogate pair at byte 4"),
        (
            '{"metadata": {"name": "p"}}'.encode("utf-16-be"),
            "application/json",
            "invalid character '\\u0000' looking for beginning of value",
        ),
        (b'\xff{"metadata": {}}', "application/json", "invalid character '\ufffd' looking for beginning of value"),
        ('{"metadata": {"name": "p"} "spec": {}}', "application/json", "invalid character '\"' after object key:value"),
        ("[1 2]", "application/json", "invalid character '2' after array element"),
        ('{"metadata": ', "application/json", "unexpected end of JSON input"),
        ("metadata: [\n", "application/yaml", "yaml: line 2: did not find expected node content"),
    ],
    ids=[
        "yaml-bomb-7-levels",
        "yaml-aliases-300-deep",
        "json-5001-digits",
        "yaml-5001-digits",
        "yaml-bad-utf-8-lead",
        "yaml-bad-utf-8-trail",
        "yaml-bad-utf-16",
        "json-utf-16",
        "json-bad-utf-8",
        "json-missing-comma",
        "json-array-missing-comma",
        "json-truncated",
        "yaml-unclosed-flow",
    ],
)
async def test_undecodable_bodies_are_a_bad_request_in_the_decoders_words(
    server: APIServer, body: str | bytes, ctype: str, fragment: str
) -> None:
    data = body.encode() if isinstance(body, str) else body
    async with aiohttp.ClientSession() as session:
        status, reply = await asyncio.wait_for(send(session, server, "POST", PODS, data, ctype), PROMPTLY)
    assert status == 400, reply
    message = reply["message"]
    assert message.startswith("the object provided is unrecognized or malformed: "), message
    assert fragment in message
    assert not any(text in message for text in PYTHON_TEXT), message


async def test_a_large_yaml_body_within_the_limits_is_created(server: APIServer) -> None:
    """A body past the inline size decodes off the loop and is created as any other."""
    pod = yaml.safe_load(pod_yaml())
    pod["metadata"]["annotations"] = {f"note-{i}": "x" * 200 for i in range(INLINE_BODY_BYTES // 200)}
    data = yaml.safe_dump(pod).encode()
    assert len(data) > INLINE_BODY_BYTES
    async with aiohttp.ClientSession() as session:
        status, created = await send(session, server, "POST", PODS, data, "application/yaml")
        assert status == 201, created
        status, got = await send(session, server, "GET", PODS + "/p", None, "application/json")
    assert status == 200
    assert got["metadata"]["annotations"] == pod["metadata"]["annotations"]


async def test_aliases_within_the_budget_are_expanded(server: APIServer) -> None:
    text = (
        "metadata: {name: p, labels: &l {app: web}, annotations: *l}\n"
        "spec:\n  containers: [&c {name: c, image: registry.k8s.io/pause:3.10}]\n"
        "  initContainers: [{<<: *c, name: init}]\n"
    )
    async with aiohttp.ClientSession() as session:
        status, created = await send(session, server, "POST", PODS, text.encode(), "application/yaml")
    assert status == 201, created
    assert created["metadata"]["annotations"] == {"app": "web"}
    assert created["spec"]["initContainers"][0]["image"] == "registry.k8s.io/pause:3.10"
    json.dumps(created)  # what was stored is plain JSON


def test_sim_serve_refuses_a_bomb_at_its_import_and_its_editor(tmp_path: Path) -> None:
    """The web view's editor posts to the scheduler configuration, scripts to the import: a real
    `sim serve --with-scheduler` process answers each bomb with a 400 and goes on serving."""
    scenario = tmp_path / "start.yaml"
    scenario.write_text("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n", encoding="utf-8")
    with sim_serve_process(tmp_path, "--with-scheduler", "--scenario", str(scenario)) as printed:
        url = printed["url"]
        for path, head in [
            ("/api/v1/import", "apiVersion: v1\nkind: Node\nmetadata: {name: n2}\n"),
            (
                "/api/v1/schedulerconfiguration",
                "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
            ),
        ]:
            status, reply = _call(url, "POST", path, (head + alias_bomb()).encode(), "application/yaml")
            assert status == 400, reply
            assert "document contains excessive aliasing" in reply["message"], reply
        assert _call(url, "GET", "/healthz", None, "application/json")[0] == 200
        status, nodes = _call(url, "GET", "/api/v1/nodes", None, "application/json")
        assert [n["metadata"]["name"] for n in nodes["items"]] == ["n1"]


def _call(url: str, method: str, path: str, data: bytes | None, ctype: str) -> tuple[int, Any]:
    req = urllib.request.Request(url + path, data=data, method=method, headers={"Content-Type": ctype})
    try:
        with urllib.request.urlopen(req, timeout=PROMPTLY) as resp:
            raw, status = resp.read(), resp.status
    except urllib.error.HTTPError as err:
        raw, status = err.read(), err.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode()
