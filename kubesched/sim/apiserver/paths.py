"""The one path a request is served by: authentication, fault injection and routing all read it.

A path is made canonical before anything looks at it, as Go's ``path.Clean`` makes it: empty
segments (``//``, and ``/%2F`` once decoded) and ``.`` go, ``..`` takes the segment before it
away (never above the root), and a trailing slash goes. A request whose path changes is served
as the canonical path, so no check can read one path while the router serves another.
"""

from __future__ import annotations

from urllib.parse import quote

from aiohttp import web
from yarl import URL

#: characters a path segment keeps unescaped when the canonical path is put back into the URL
_SEGMENT_SAFE = "/:@!$&'()*+,;=~"


def canonical_path(path: str) -> str:
    """``path`` cleaned: no empty, ``.`` or ``..`` segments and no trailing slash; ``/`` at least."""
    parts: list[str] = []
    for segment in path.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if parts:
                parts.pop()
            continue
        parts.append(segment)
    return "/" + "/".join(parts)


def canonical_request(request: web.Request) -> web.Request:
    """``request`` served as its canonical path: itself when its path is canonical already (no
    empty, ``.`` or ``..`` segment, no trailing slash), else a clone with the path cleaned."""
    path = request.path
    if path.startswith("/") and "//" not in path and "/." not in path and (path == "/" or path[-1] != "/"):
        return request  # nothing canonical_path would change
    clean = canonical_path(path)
    if clean == path:
        return request
    query = request.rel_url.raw_query_string
    url = URL(quote(clean, safe=_SEGMENT_SAFE) + (f"?{query}" if query else ""), encoded=True)
    return request.clone(rel_url=url)
