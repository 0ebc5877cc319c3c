"""A write to the embedded API server costs the same however many watches are open: the store
calls one subscriber for them all and the change reaches each watch's queue later, off the
writer's path (real HTTP watches on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp

from kubesched.cluster.store import Store
from kubesched.sim.apiserver.server import APIServer


def _pod(name: str, padding: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "annotations": {"pad": "x" * padding}},
        "spec": {"containers": [{"name": "c", "image": "i"}]},
    }


async def _next_event(resp: aiohttp.ClientResponse) -> dict[str, Any]:
    line = await asyncio.wait_for(_read_line(resp), 5)
    event: dict[str, Any] = json.loads(line)
    return event


#: what was read of each stream past its last whole line
_LEFT: dict[int, bytes] = {}


async def _read_line(resp: aiohttp.ClientResponse) -> bytes:
    """One line of the stream, however long (a watch event of a large object is one line; the
    oldest aiohttp the bounds allow refuses a ``readline`` past 64 KiB)."""
    buffer = _LEFT.pop(id(resp), b"")
    while b"\n" not in buffer:
        chunk = await resp.content.readany()
        if not chunk:
            return buffer
        buffer += chunk
    line, _, rest = buffer.partition(b"\n")
    _LEFT[id(resp)] = rest
    return line


async def _until(cond: Any) -> None:
    for _ in range(200):
        if cond():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("not reached")


async def test_a_write_does_not_fan_out_to_the_watches_itself() -> None:
    store = Store()
    async with APIServer(store) as srv, aiohttp.ClientSession() as s:
        subscribers = len(store._subscribers)
        watches = [await s.get(srv.url + "/api/v1/pods?watch=true&resourceVersion=1") for _ in range(50)]
        await _until(lambda: len(srv.watches._open) == 50)
        # One subscriber for every watch: a write calls it once, not once a watch.
        assert len(store._subscribers) <= subscribers + 1
        store.create("Pod", _pod("a"))
        # The write has returned; no watch has the change yet (it is handed out after the writer yields).
        assert all(not w.changes for w in srv.watches._open)
        events = [await _next_event(w) for w in watches]
        assert {(e["type"], e["object"]["metadata"]["name"]) for e in events} == {("ADDED", "a")}
        for w in watches:
            w.close()


async def test_a_watcher_that_does_not_read_holds_up_neither_writes_nor_other_watches() -> None:
    store = Store()
    async with APIServer(store) as srv, aiohttp.ClientSession() as s:
        # A watch whose client never reads: its socket buffers fill and its stream blocks.
        _, stuck = await asyncio.open_connection("127.0.0.1", srv.port)
        stuck.write(b"GET /api/v1/pods?watch=true HTTP/1.1\r\nHost: x\r\n\r\n")
        reader = await s.get(srv.url + "/api/v1/pods?watch=true")
        await _until(lambda: len(srv.watches._open) == 2)
        for i in range(40):  # 40 x 200 KiB: far more than the stuck client's socket buffers hold
            async with s.post(srv.url + "/api/v1/namespaces/default/pods", json=_pod(f"p{i}", 200 * 1024)) as r:
                assert r.status == 201
            event = await _next_event(reader)
            assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", f"p{i}")
        reader.close()
        stuck.close()
