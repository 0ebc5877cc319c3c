"""The documentation site builds: ``mkdocs build --strict`` (mkdocs.yml says strict too) succeeds
with the Material theme, every page the nav names exists, and every page of docs/ is in the nav."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


def nav_pages(entries: list[Any]) -> Iterator[str]:
    for entry in entries:
        if isinstance(entry, str):
            yield entry
        else:
            for value in entry.values():
                yield from nav_pages(value) if isinstance(value, list) else [value]


def config() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_every_page_in_the_nav_exists_and_every_page_is_in_it() -> None:
    cfg = config()
    assert cfg["theme"]["name"] == "material"
    assert cfg["strict"] is True
    pages = list(nav_pages(cfg["nav"]))
    assert len(pages) == len(set(pages)), pages
    missing = [p for p in pages if not (ROOT / "docs" / p).is_file()]
    assert not missing, missing
    on_disk = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").glob("**/*.md")}
    assert on_disk == set(pages)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    site = tmp_path / "site"
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        # without Material's notice about its successor on every build
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    for page in nav_pages(config()["nav"]):
        built = site / ("index.html" if page == "index.md" else page.removesuffix(".md") + "/index.html")
        assert built.is_file(), built
