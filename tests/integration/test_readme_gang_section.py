"""The docs' "Workloads and gang scheduling" (docs/workloads.md) walks through real commands: the
files it names exist, the simulate command it shows prints the table it quotes, and the messages
it quotes for sim serve are the ones test_gang_sim_serve.py asserts."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from docs_pages import page, section

from kubesched.cli import main

ROOT = Path(__file__).resolve().parents[2]


def section_text() -> str:
    return section(page("workloads.md"), "# Workloads and gang scheduling")


def test_the_files_it_names_exist() -> None:
    paths = set(re.findall(r"config/[\w./-]+\.yaml", section_text()))
    assert {
        "config/examples/gang-job.yaml",
        "config/examples/gang-nodes.yaml",
        "config/examples/gang-more-room.yaml",
        "config/scenarios/gangs.yaml",
    } <= paths
    assert all((ROOT / p).is_file() for p in paths), paths


def test_the_simulate_command_prints_the_table_it_quotes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = section_text()
    command = next(line for line in text.splitlines() if line.startswith("python -m kubesched simulate"))
    argv = shlex.split(command)[3:]
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("COLUMNS", "160")
    assert main(argv) == 0
    out = capsys.readouterr().out
    quoted = text[text.index("```text\n") + len("```text\n") :]
    quoted = quoted[: quoted.index("```")]
    rows = [line.strip() for line in quoted.splitlines() if line.startswith("│")]
    assert len(rows) == 7
    for row in rows:
        assert row in (line.strip() for line in out.splitlines()), row


def test_the_sim_serve_messages_it_quotes_are_the_tested_ones() -> None:
    text = section_text()
    e2e = (ROOT / "tests" / "integration" / "test_gang_sim_serve.py").read_text()
    for message in (
        "minCount (8) cannot be satisfied: 7 scheduled, 0 remaining, pod group preemption: No preemption victims found for incoming preemptor",
        "0/2 nodes are available: 2 Insufficient cpu. pod group preemption: No preemption victims found for incoming preemptor",
    ):
        assert message in text and f'"{message}"' in e2e
    assert "--feature-gates GenericWorkload=true,WorkloadWithJob=true" in text
    assert 'SERVER_GATES = "GenericWorkload=true,WorkloadWithJob=true"' in e2e
