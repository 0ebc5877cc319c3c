"""The web view's files (``kubesched/sim/apiserver/web``), served by the API server at ``/`` and ``/ui/``.
They ship inside the package; nothing is fetched from anywhere else."""

from __future__ import annotations

from importlib import resources

from aiohttp import web

from kubesched.sim.apiserver.errors import APIError

#: The files, and the type each is served as.
FILES = {"index.html": "text/html", "app.js": "text/javascript", "style.css": "text/css"}


def is_ui_path(path: str) -> bool:
    return path in ("/", "/ui") or path.startswith("/ui/")


def response(path: str) -> web.Response:
    name = "index.html" if path in ("/", "/ui") else path.removeprefix("/ui/")
    if name not in FILES:
        raise APIError(404, "NotFound", "the server could not find the requested resource")
    text = resources.files("kubesched.sim.apiserver").joinpath("web", name).read_text(encoding="utf-8")
    # No caching: a restarted server may serve a newer page.
    return web.Response(text=text, content_type=FILES[name], headers={"Cache-Control": "no-cache"})
