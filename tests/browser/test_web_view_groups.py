"""The web view's pod groups (scheduling.k8s.io PodGroups, 1.37) in a real browser, with
GenericWorkload on: the feature gates changed, a gang's pods listed together, held (none on a
node) with the scheduler's PodGroupInitiallyScheduled condition, then placed whole once a node
is added."""

from __future__ import annotations

import json
import shutil
import urllib.request
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
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"]

GANG = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: scheduling.k8s.io/v1beta1
kind: PodGroup
metadata: {name: trainers}
spec:
  schedulingPolicy: {gang: {minCount: 3}}
""" + "".join(
    f"""---
apiVersion: v1
kind: Pod
metadata: {{name: trainer-{i}}}
spec:
  schedulingGroup: {{podGroupName: trainers}}
  containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1"}}}}}}]
"""
    for i in range(3)
)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[dict[str, str]]:
    with sim_serve_process(tmp_path, "--with-scheduler", "--feature-gates", "GenericWorkload=true") as printed:
        yield printed


@pytest.fixture
def page(served: dict[str, str], tmp_path: Path, request: Any) -> Iterator[Page]:
    assert sync_playwright is not None
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pg = browser.new_page(viewport={"width": 1280, "height": 900})
        pg.set_default_timeout(15_000)
        pg.goto(served["web"])
        try:
            yield pg
        finally:
            report = getattr(request.node, "rep_call", None)
            if report is None or report.failed:
                pg.screenshot(path=str(tmp_path / "web-view-failure.png"), full_page=True)
            browser.close()


def test_a_gang_is_held_whole_then_placed_whole(page: Page, served: dict[str, str]) -> None:
    expect(page.get_by_test_id("status")).to_have_text("live")
    expect(page.get_by_test_id("gates")).to_contain_text("GenericWorkload=true")
    page.click("#new-object")
    page.fill("[data-testid=yaml-text]", GANG)
    page.click("#apply-yaml")
    row = page.get_by_test_id("groups").locator('tr[data-group="default/trainers"]')
    expect(row).to_contain_text("gang, minCount 3")
    for i in range(3):
        expect(row.locator(f'.pod[data-pod="trainer-{i}"]')).to_be_visible()
    # One node of 2 cpus holds two of the three: the gang waits whole, and says why.
    expect(row).to_contain_text(
        "Unschedulable: minCount (3) cannot be satisfied: 2 scheduled, 0 remaining", timeout=20_000
    )
    expect(row).to_contain_text("0/3 on a node")

    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n2"},
        "status": {"allocatable": {"cpu": "2", "memory": "4Gi", "pods": "10"}},
    }
    req = urllib.request.Request(
        served["url"] + "/api/v1/nodes",
        data=json.dumps(node).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(req, timeout=10).close()
    expect(row).to_contain_text("3/3 on a node", timeout=20_000)
    expect(row).to_contain_text("scheduled")
