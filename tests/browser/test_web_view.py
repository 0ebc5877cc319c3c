"""The web view in a real browser: Chromium (Debian's, driven by Playwright) against a running
``kubesched sim serve --with-scheduler``. A person builds a small cluster with the YAML box, sees
a pod placed, reads why, changes the scheduler configuration and sees the next pod placed
differently. A screenshot is saved next to the test's temporary files when a step fails."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubesched.testing import sim_serve_process

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
try:
    from playwright.sync_api import Page, expect, sync_playwright
except ImportError:  # pragma: no cover - the test extra installs it
    sync_playwright = None  # type: ignore[assignment]

pytestmark = [
    pytest.mark.skipif(
        not Path(CHROMIUM).exists(),
        reason="Chromium is not installed: run `sh tools/test-setup.sh` (apt-get install chromium) as the README says",
    ),
    pytest.mark.skipif(sync_playwright is None, reason="playwright is not installed: pip install -e '.[test]'"),
]

# Chromium as this machine needs it: no sandbox as root, no calls home on a closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

NODES = """\
apiVersion: v1
kind: Node
metadata: {name: small}
status: {allocatable: {cpu: "2", memory: 2Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: big}
status: {allocatable: {cpu: "8", memory: 8Gi, pods: "10"}}
"""

POD = """\
apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  containers: [{name: c, image: nginx, resources: {requests: {cpu: "1", memory: 1Gi}}}]
"""

MOST_ALLOCATED = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
"""


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    with sim_serve_process(tmp_path, "--with-scheduler") as printed:
        yield printed["web"]


@pytest.fixture
def page(url: str, tmp_path: Path, request: Any) -> Iterator[Page]:
    assert sync_playwright is not None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pg = browser.new_page(viewport={"width": 1280, "height": 900})
        pg.set_default_timeout(15_000)
        pg.goto(url)
        try:
            yield pg
        finally:
            report = getattr(request.node, "rep_call", None)
            if report is None or report.failed:
                shot = tmp_path / "web-view-failure.png"
                pg.screenshot(path=str(shot), full_page=True)
                print(f"screenshot: {shot}")
            browser.close()


def apply_yaml(page: Page, text: str) -> None:
    page.click("#new-object")
    page.fill("[data-testid=yaml-text]", text)
    page.click("#apply-yaml")
    expect(page.locator("#editor")).not_to_be_visible()


def test_build_a_cluster_read_why_and_reconfigure(page: Page) -> None:
    expect(page.get_by_test_id("status")).to_have_text("live")
    apply_yaml(page, NODES)
    expect(page.locator(".node")).to_have_count(2)
    apply_yaml(page, POD % "first")
    # LeastAllocated (the default) prefers the emptier node.
    placed = page.locator('.node[data-node="big"] .pod[data-pod="first"]')
    expect(placed).to_be_visible()
    expect(page.locator('.node[data-node="big"] .bar').first).to_contain_text("cpu 1 / 8")

    placed.click()
    table = page.get_by_test_id("results-table")
    expect(table.locator('tr.chosen[data-node="big"]')).to_be_visible()
    expect(table.locator("th", has_text="filter NodeResourcesFit")).to_be_visible()
    expect(table.locator("th", has_text="final NodeResourcesFit")).to_be_visible()
    expect(table.locator('tr[data-node="small"]')).to_be_visible()
    expect(page.get_by_test_id("results-points")).to_contain_text("Bind: DefaultBinder success")
    table.locator("th", has_text="total").click()  # sortable
    page.locator("#results button[value=close]").click()

    page.click("#show-config")
    expect(page.get_by_test_id("config-text")).to_have_value(re.compile("default-scheduler"))
    page.fill("[data-testid=config-text]", MOST_ALLOCATED)
    page.click("#apply-config")
    expect(page.get_by_test_id("config-message")).to_contain_text("applied")
    expect(page.get_by_test_id("config-text")).to_have_value(re.compile("MostAllocated"))
    page.click("#show-cluster")

    apply_yaml(page, POD % "second")
    # MostAllocated packs: the fuller node now.
    expect(page.locator('.node[data-node="small"] .pod[data-pod="second"]')).to_be_visible(timeout=20_000)


def test_a_pod_that_fits_nowhere_is_listed_pending_with_its_reason(page: Page) -> None:
    apply_yaml(page, NODES)
    apply_yaml(page, (POD % "huge").replace('cpu: "1"', 'cpu: "64"'))
    row = page.get_by_test_id("pending").locator('tr[data-pod="huge"]')
    expect(row).to_contain_text("Insufficient cpu")
    row.locator(".pod").click()
    expect(page.get_by_test_id("results-table").locator("td.rejected").first).to_contain_text("Insufficient cpu")


def test_a_broken_yaml_is_reported_in_the_editor(page: Page) -> None:
    page.click("#new-object")
    page.fill(
        "[data-testid=yaml-text]",
        "kind: Pod\nmetadata: {name: x}\nspec: {containers: [{name: c, image: x, resoures: {}}]}\n",
    )
    page.click("#apply-yaml")
    expect(page.get_by_test_id("yaml-message")).to_contain_text('unknown field "spec.containers[0].resoures"')
