"""The docs' "Testing your plugin" (docs/testing-a-plugin.md) runs: its Python blocks, in order,
are one test module that pytest runs in another project's way (kubesched's pytest plugin and
pytest-asyncio, nothing else)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from docs_pages import page, section

ROOT = Path(__file__).resolve().parents[3]


def section_blocks() -> list[str]:
    text = section(page("testing-a-plugin.md"), "# Testing your plugin")
    return re.findall(r"```python\n(.*?)```", text, re.DOTALL)


def test_the_section_has_a_test_for_each_kind_of_plugin() -> None:
    code = "\n".join(section_blocks())
    for method in ("def filter(", "def score(", "def less(", "def pre_enqueue(", "def permit(", "def reserve("):
        assert method in code, method
    for method in ("def bind(", "def post_filter(", "def generate_placements(", "def score_placement("):
        assert method in code, method
    for call in ("placement_generate(", "placement_feasible(", "placement_scores(", "wait_pod_group_scheduled("):
        assert call in code, call
    for fixture in ("kubesched_framework", "kubesched_builders", "kubesched_scheduler"):
        assert fixture in code, fixture


def test_the_sections_tests_pass(tmp_path: Path) -> None:
    blocks = section_blocks()
    # The blocks as written, in a project of their own whose pytest configuration says nothing of
    # asyncio (so not this repository's asyncio_mode = "auto"): pytest-asyncio's default strict
    # mode, where an unmarked coroutine test fails, as it does in a plugin author's project.
    (tmp_path / "test_readme_testing_section.py").write_text("\n\n".join(blocks))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "pytest_asyncio.plugin", "-p", "kubesched.testing.pytest_plugin"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    tests = sum(block.count("def test_") for block in blocks)
    assert tests >= 9
    assert f"{tests} passed" in run.stdout
