"""The documentation's text as the tests read it: a page of the docs site (docs/) or the README,
and a section of a page by its heading. Tests that run a page's examples read them from here, so
an example moved to another page is followed by changing the page's name alone."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
_FENCE = re.compile(r"^(```|~~~)")
_HEADING = re.compile(r"^(#{1,6}) \S")


def page_path(name: str) -> Path:
    """``README.md`` is the README at the root; any other name is a page of docs/."""
    return ROOT / name if name == "README.md" else DOCS / name


def page(name: str) -> str:
    """The text of a page (see ``page_path``)."""
    return page_path(name).read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """The section of ``text`` under the line ``heading`` (written with its ``#``s): from that line
    to the next heading of its level or above, headings inside code fences not counted."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = text.split("\n")
    inside = False
    start = None
    for i, line in enumerate(lines):
        if _FENCE.match(line):
            inside = not inside
            continue
        if inside:
            continue
        m = _HEADING.match(line)
        if start is None:
            if line == heading:
                start = i
        elif m and len(m.group(1)) <= level:
            return "\n".join(lines[start:i])
    if start is None:
        raise LookupError(f"no heading {heading!r}")
    return "\n".join(lines[start:])
