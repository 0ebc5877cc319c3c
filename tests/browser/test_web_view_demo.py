"""The web view at demo size in a real browser: ``sim serve --with-scheduler`` with the shipped demo
(``config/scenarios/demo.yaml``, 37 nodes, its two profiles from ``config/kubesched.yaml``) and a
1600x900 window. What a person meets first: the pending pods above the nodes, each with why it
waits and a link to its results; the cordoned and tainted nodes marked on their cards; a pod's
score table inside its pane, the total in view. Screenshots of each step are kept beside the
test's temporary files."""

from __future__ import annotations

import json
import re
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.testing import sim_serve_process

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
try:
    from playwright.sync_api import Locator, Page, expect, sync_playwright
except ImportError:  # pragma: no cover - the test extra installs it
    sync_playwright = None  # type: ignore[assignment]

pytestmark = [
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="Chromium is not installed: run `sh tools/test-setup.sh` (apt-get install chromium) as the README says",
    ),
    pytest.mark.skipif(sync_playwright is None, reason="playwright is not installed: pip install -e '.[test]'"),
]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"]

CONFIG = Path(__file__).resolve().parents[2] / "config"
WIDTH, HEIGHT = 1600, 900


@pytest.fixture
def served(tmp_path: Path) -> Iterator[dict[str, str]]:
    with sim_serve_process(
        tmp_path,
        "--with-scheduler",
        "--scenario",
        str(CONFIG / "scenarios" / "demo.yaml"),
        "--config",
        str(CONFIG / "kubesched.yaml"),
    ) as printed:
        yield printed


@pytest.fixture
def page(served: dict[str, str], tmp_path: Path, request: Any) -> Iterator[Page]:
    assert sync_playwright is not None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pg = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        pg.set_default_timeout(30_000)
        pg.goto(served["web"])
        try:
            yield pg
        finally:
            report = getattr(request.node, "rep_call", None)
            if report is None or report.failed:
                pg.screenshot(path=str(tmp_path / "web-view-failure.png"), full_page=True)
            browser.close()


def screenshot(page: Page, tmp_path: Path, name: str) -> None:
    shot = tmp_path / f"web-view-{name}.png"
    page.screenshot(path=str(shot))
    print(f"screenshot: {shot}")


def box(locator: Locator) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not laid out"
    return {
        "left": found["x"],
        "top": found["y"],
        "right": found["x"] + found["width"],
        "bottom": found["y"] + found["height"],
    }


def test_the_pending_pods_come_first_each_with_why_and_a_link_to_its_results(page: Page, tmp_path: Path) -> None:
    # Once the scheduler has tried every pod: none left untried.
    expect(page.get_by_test_id("pending-summary")).to_have_text(
        re.compile(r"^\d+ unschedulable, 1 gated$"), timeout=60_000
    )
    pending = page.get_by_test_id("pending")
    too_big = pending.locator('tr[data-pod="too-big-0"]')
    expect(too_big).to_contain_text("Unschedulable")
    expect(too_big).to_contain_text("Insufficient cpu")
    expect(pending.locator('tr[data-pod="gated"]')).to_contain_text("SchedulingGated")
    expect(pending.locator('tr[data-pod="gated"]')).to_contain_text("example.com/approval")
    # The refused lead the list, before the gated.
    expect(pending.locator("tbody tr").first).to_contain_text("0/37 nodes are available")
    expect(pending.locator("tbody tr").last).to_contain_text("SchedulingGated")

    # Above every node card, and on the first screen.
    expect(page.locator(".node")).to_have_count(37)
    section = box(page.get_by_test_id("pending-section"))
    assert section["bottom"] <= box(page.locator(".node").first)["top"]
    assert section["top"] < HEIGHT
    screenshot(page, tmp_path, "pending")

    link = too_big.locator("a.pod")
    expect(link).to_have_attribute("href", "#pod=default/too-big-0")
    link.click()
    expect(page.locator("#results-title")).to_have_text("default/too-big-0")
    expect(page.locator("#results-summary")).to_have_text("not placed")
    expect(
        page.get_by_test_id("results-table").locator("td.rejected", has_text="Insufficient cpu").first
    ).to_be_visible()
    page.locator("#results button[value=close]").click()
    # Closed, the same link opens it again.
    link.click()
    expect(page.locator("#results")).to_be_visible()


def test_cordoned_and_tainted_nodes_are_marked_on_their_cards(
    page: Page, served: dict[str, str], tmp_path: Path
) -> None:
    expect(page.locator(".node")).to_have_count(37)

    def marked(badge: str) -> list[str]:
        cards = page.locator(f".node:has(.badge.{badge})")
        return sorted(cards.evaluate_all("cards => cards.map((c) => c.dataset.node)"))

    assert marked("cordoned") == ["cordoned-0", "cordoned-1"]
    assert marked("tainted") == ["gpu-0", "gpu-1", "gpu-2", "gpu-3", "preempt-node"]
    expect(page.locator('.node[data-node="gpu-0"] .badge')).to_have_text(["tainted: dedicated=gpu:NoSchedule"])
    expect(page.locator('.node[data-node="preempt-node"] .badge')).to_have_text(["tainted: demo=preemption:NoSchedule"])
    expect(page.locator('.node[data-node="cordoned-0"] .badge')).to_have_text(["cordoned"])
    expect(page.locator('.node[data-node="node-00"] .badge')).to_have_count(0)
    # The taints in the card's tooltip; a cordoned card looks unlike an empty one (hatched, greyed).
    expect(page.locator('.node[data-node="gpu-0"]')).to_have_attribute("title", "taint dedicated=gpu:NoSchedule")
    expect(page.locator('.node[data-node="cordoned-0"]')).to_have_attribute("title", re.compile("^cordoned"))
    hatched = re.compile("repeating-linear-gradient")
    expect(page.locator('.node[data-node="cordoned-0"]')).to_have_css("background-image", hatched)
    expect(page.locator('.node[data-node="node-00"]')).to_have_css("background-image", "none")
    expect(page.locator("#nodes-count")).to_have_text("(37: 2 cordoned, 5 tainted)")
    screenshot(page, tmp_path, "nodes")

    # Cordoned and tainted live: the card follows the node.
    patch = {"spec": {"unschedulable": True, "taints": [{"key": "maintenance", "effect": "NoExecute"}]}}
    req = urllib.request.Request(
        served["url"] + "/api/v1/nodes/node-05",
        data=json.dumps(patch).encode(),
        method="PATCH",
        headers={"Content-Type": "application/merge-patch+json"},
    )
    urllib.request.urlopen(req, timeout=10).close()
    expect(page.locator('.node[data-node="node-05"] .badge')).to_have_text(
        ["cordoned", "tainted: maintenance:NoExecute"]
    )


def test_a_pods_score_table_fits_its_pane_with_the_total_in_view(page: Page, tmp_path: Path) -> None:
    # A pod on a node far down the list: its row is brought into the pane.
    chip = page.locator('.node[data-node="node-21"] .pod').first
    chip.click()
    table = page.get_by_test_id("results-table")
    expect(table.locator('tr.chosen[data-node="node-21"]')).to_be_visible()
    expect(table.locator("th", has_text="final NodeResourcesFit")).to_be_attached()
    pane = page.get_by_test_id("results-pane")
    total = table.locator("th").last
    expect(total).to_have_text("total")

    def in_view(width: int) -> None:
        inside = box(pane)
        assert inside["right"] <= width
        for cell in (total, table.locator("tr.chosen td").last):
            assert inside["left"] <= box(cell)["left"] and box(cell)["right"] <= inside["right"] + 1
        first = box(table.locator("th").first)
        assert abs(first["left"] - inside["left"]) <= 2
        # The dialog itself does not scroll sideways: its pane does.
        assert page.locator("#results").evaluate("(d) => d.scrollWidth <= d.clientWidth")

    in_view(WIDTH)
    chosen, header = box(table.locator("tr.chosen")), box(total)
    assert header["bottom"] <= chosen["top"] and chosen["bottom"] <= box(pane)["bottom"]
    screenshot(page, tmp_path, "results")

    # Narrower, the table outgrows its pane, which scrolls by itself: the node and the total stay.
    page.set_viewport_size({"width": 1000, "height": HEIGHT})
    assert pane.evaluate("(p) => p.scrollWidth > p.clientWidth")
    in_view(1000)
    pane.evaluate("(p) => { p.scrollLeft = p.scrollWidth / 2; }")
    in_view(1000)
    screenshot(page, tmp_path, "results-narrow")
