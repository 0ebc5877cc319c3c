"""The README and the docs render as they read: parsed by a CommonMark parser, every line written
as a heading is a heading (a code fence left open would swallow the sections after it), and every
fence is closed where it was meant to be."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md"))]
FENCE = re.compile(r"^(```|~~~)")


def written_headings(text: str) -> list[str]:
    """Lines that start with ``#`` outside a fence, the fences counted as a reader counts them:
    one that opens, the next at the start of a line that closes."""
    out: list[str] = []
    inside = False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
            continue
        if not inside and re.match(r"^#{1,6} \S", line):
            out.append(line.lstrip("#").strip())
    return out


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_heading_renders_as_a_heading(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").parse(text)
    rendered = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert rendered == written_headings(text)


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_fence_closes_on_a_line_of_its_own(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    bad = [n for n, line in enumerate(text.splitlines(), 1) if re.match(r"^```\S*\s+\S", line)]
    assert not bad, f"{page.name}: a fence with text after it at lines {bad}"
    tokens = MarkdownIt("commonmark").parse(text)
    fences = [t for t in tokens if t.type == "fence"]
    opened = sum(1 for line in text.splitlines() if FENCE.match(line))
    assert opened == 2 * len(fences), f"{page.name}: {opened} fence lines for {len(fences)} code blocks"
