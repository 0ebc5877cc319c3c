"""kube-scheduler's debugging pages: ``/configz``, ``/flagz`` and ``/statusz``.

``/configz`` answers ``{"componentconfig": {...}}``: the running KubeSchedulerConfiguration
with every default applied, as kube-scheduler registers it under that name. kube-scheduler
serializes its internal Go struct there; this serves the same configuration in its v1 form (the
one ``--write-config-to`` writes), whose field names are the ones users write.

``/flagz`` and ``/statusz`` are served by default since kube-scheduler 1.36 (the component-base
gates ComponentFlagz and ComponentStatusz went to beta, on), in upstream's text format, which
says of itself that it is not meant to be parsed: a header naming the component, then the flags
sorted by name (``/flagz``) or the start time, uptime, versions and the served paths
(``/statusz``), each with a separator picked at random from upstream's four so that scripts are
not written against it. Asked with ``Accept: application/json;as=Flagz;v=v1beta1;g=config.k8s.io``
(or ``as=Statusz``), they answer the structured ``config.k8s.io/v1beta1`` object instead.

None of these paths is in ``--authorization-always-allow-paths``: on the secure port, reading
them takes a token the cluster authorizes for ``get`` on the path (kube-scheduler's rule; the
``system:monitoring`` role grants ``/flagz`` and ``/statusz``).
"""

from __future__ import annotations

import datetime
import json
import platform
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from aiohttp import web

from kubesched import __version__

COMPONENT = "kube-scheduler"
#: The kube-scheduler release this one answers as (statusz's emulation version).
EMULATED_VERSION = "1.37"
ZPAGES_GROUP = "config.k8s.io"
ZPAGES_VERSIONS = ("v1beta1", "v1alpha1")
#: Upstream's separators between a name and its value, one picked per response.
DELIMITERS = (":", ": ", "=", " ")
_WARNING = (
    "Warning: This endpoint is not meant to be machine parseable, has no formatting compatibility guarantees "
    "and is for debugging purposes only."
)
_TEXT = "text/plain; charset=utf-8"


def header(page: str) -> str:
    return f"\n{COMPONENT} {page}\n{_WARNING}\n"


def flagz_text(flags: Mapping[str, str], delimiter: str) -> str:
    return header("flagz") + "".join(f"{name}{delimiter}{flags[name]}\n" for name in sorted(flags))


def uptime(seconds: float) -> str:
    s = max(0, int(seconds))
    return f"{s // 3600} hr {(s // 60) % 60:02d} min {s % 60:02d} sec"


def unix_date(ts: float) -> str:
    """Go's ``time.UnixDate`` layout (``Mon Jan _2 15:04:05 MST 2006``), in local time."""
    t = datetime.datetime.fromtimestamp(ts).astimezone()
    return f"{t:%a %b} {t.day:>2} {t:%H:%M:%S} {t.tzname()} {t.year}"


def top_paths(paths: list[str]) -> list[str]:
    """The first segment of each served path, sorted (upstream's aggregation), but /statusz:
    upstream lists the paths served before it installs /statusz itself."""
    tops = {"/" + p.split("/")[1] for p in paths if len(p.split("/")) > 1 and p.split("/")[1]}
    return sorted(tops - {"/statusz"})


def statusz_text(started: float, now: float, paths: list[str], delimiter: str) -> str:
    d = delimiter
    return header("statusz") + (
        f"\nStarted{d} {unix_date(started)}\nUp{d} {uptime(now - started)}\n"
        f"Go version{d} none, Python {platform.python_version()}\nBinary version{d} kubesched {__version__}\n"
        f"Emulation version{d} {EMULATED_VERSION}\nPaths{d} {' '.join(top_paths(paths))}\n"
    )


#: What an Accept header asks a page for: a structured version, text, or nothing acceptable.
_TEXT_ASKED, _NOTHING_ACCEPTABLE = "", None


def _structured(request: web.Request, kind: str) -> str | None:
    """The v1beta1/v1alpha1 version the Accept header asks for as ``kind``; ``""`` for text;
    None when nothing acceptable is asked for."""
    accept = request.headers.get("Accept", "").strip()
    if not accept:
        return _TEXT_ASKED
    for item in accept.split(","):
        media, *params = (p.strip() for p in item.split(";"))
        if media in ("text/plain", "text/*", "*/*"):
            return _TEXT_ASKED
        if media != "application/json":
            continue
        kv = dict(p.split("=", 1) for p in params if "=" in p)
        if kv.get("as") == kind and kv.get("g") == ZPAGES_GROUP and kv.get("v") in ZPAGES_VERSIONS:
            return kv["v"]
    return _NOTHING_ACCEPTABLE


def _not_acceptable(kind: str) -> web.Response:
    wanted = f"text/plain, application/json;as={kind};v=v1beta1;g={ZPAGES_GROUP}"
    return web.Response(status=406, text=f"only the following media types are accepted: {wanted}\n")


class ZPages:
    """The three pages over what ``kubesched run`` was started with."""

    def __init__(
        self,
        componentconfig: Mapping[str, Any],
        flags: Mapping[str, str],
        paths: Callable[[], list[str]],
        started: float | None = None,
        rng: random.Random | None = None,
    ) -> None:
        self.componentconfig = componentconfig
        self.flags = dict(flags)
        self.paths = paths
        self.started = started if started is not None else time.time()
        self.rng = rng or random.Random()

    def install(self, app: web.Application, flagz: bool = True, statusz: bool = True) -> None:
        app.router.add_get("/configz", self.configz)
        if flagz:
            app.router.add_get("/flagz", self.flagz)
        if statusz:
            app.router.add_get("/statusz", self.statusz)

    async def configz(self, request: web.Request) -> web.Response:
        return web.Response(text=json.dumps({"componentconfig": self.componentconfig}), content_type="application/json")

    async def flagz(self, request: web.Request) -> web.Response:
        version = _structured(request, "Flagz")
        if version is None:
            return _not_acceptable("Flagz")
        if not version:
            return web.Response(
                text=flagz_text(self.flags, self.rng.choice(DELIMITERS)), headers={"Content-Type": _TEXT}
            )
        body = {
            "kind": "Flagz",
            "apiVersion": f"{ZPAGES_GROUP}/{version}",
            "metadata": {"name": COMPONENT},
            "flags": self.flags,
        }
        return _json(body, version, "flagz")

    async def statusz(self, request: web.Request) -> web.Response:
        version = _structured(request, "Statusz")
        if version is None:
            return _not_acceptable("Statusz")
        now = time.time()
        if not version:
            text = statusz_text(self.started, now, self.paths(), self.rng.choice(DELIMITERS))
            return web.Response(text=text, headers={"Content-Type": _TEXT})
        start = datetime.datetime.fromtimestamp(int(self.started), datetime.UTC)
        body = {
            "kind": "Statusz",
            "apiVersion": f"{ZPAGES_GROUP}/{version}",
            "metadata": {"name": COMPONENT},
            "startTime": start.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "uptimeSeconds": max(0, int(now - self.started)),
            "goVersion": f"none, Python {platform.python_version()}",
            "binaryVersion": f"kubesched {__version__}",
            "emulationVersion": EMULATED_VERSION,
            "paths": top_paths(self.paths()),
        }
        return _json(body, version, "statusz")


def _json(body: dict[str, Any], version: str, page: str) -> web.Response:
    headers = {}
    if version == "v1alpha1":
        headers["Warning"] = f'299 - "This version of the {page} endpoint is deprecated. Please use a newer version."'
    return web.Response(text=json.dumps(body), content_type="application/json", headers=headers)
