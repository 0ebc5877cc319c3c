"""The soak's /healthz prober, a process of its own, as a kubelet's liveness probe is: the soak's
own loop parses lists of thousands of pods, and a probe timed there would count its pauses as
the replica's.

    python -m benchmarks.soak.prober OUT

reads commands on stdin, one a line: ``<identity> <port>`` adds a replica (its HTTPS /healthz on
loopback, certificate not checked: each replica's is self-signed), ``<identity> 0`` drops it,
``every <seconds>`` sets the
pause between two rounds (0.5 s at first); end of input stops it. Each answer (or failure) is one
JSON line appended to OUT: ``at`` (``time.monotonic()`` when asked: the system's monotonic clock,
the same in every process), ``replica``, ``ms``, ``status`` (0 when none came) and ``error``.
A probe gives up after 5 s.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
import time
from typing import IO

import aiohttp


async def _commands(ports: dict[str, int], pace: list[float], done: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    while line := await loop.run_in_executor(None, sys.stdin.readline):
        words = line.split()
        if len(words) == 2 and words[0] == "every":
            pace[0] = float(words[1])
        elif len(words) == 2 and words[1] == "0":
            ports.pop(words[0], None)
        elif len(words) == 2:
            ports[words[0]] = int(words[1])
    done.set()


async def _probe(session: aiohttp.ClientSession, out: IO[str], identity: str, port: int) -> None:
    t = time.monotonic()
    status, error = 0, ""
    try:
        async with session.get(f"https://127.0.0.1:{port}/healthz", timeout=aiohttp.ClientTimeout(total=5)) as r:
            await r.read()
            status = r.status
    except (aiohttp.ClientError, TimeoutError) as exc:
        error = repr(exc)
    took = (time.monotonic() - t) * 1000
    out.write(json.dumps({"at": t, "replica": identity, "ms": round(took, 1), "status": status, "error": error}))
    out.write("\n")
    out.flush()


async def probe_until_stopped(path: str) -> None:
    """Probe every replica named on stdin, round after round, until stdin ends."""
    ports: dict[str, int] = {}
    pace = [0.5]
    done = asyncio.Event()
    reader = asyncio.create_task(_commands(ports, pace, done), name="prober commands")
    insecure = ssl.create_default_context()
    insecure.check_hostname = False
    insecure.verify_mode = ssl.CERT_NONE
    with open(path, "a", encoding="utf-8") as out:
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=insecure)) as session:
            while not done.is_set():
                await asyncio.gather(*(_probe(session, out, i, p) for i, p in list(ports.items())))
                try:
                    await asyncio.wait_for(done.wait(), pace[0])
                except TimeoutError:
                    pass
    await reader


def main() -> None:
    asyncio.run(probe_until_stopped(sys.argv[1]))


if __name__ == "__main__":
    main()
