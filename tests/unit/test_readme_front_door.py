"""The README's examples for each kind of user hold: the plugin and its configuration, written out
as shown, schedule the demo with the command it gives, and its sim serve, kubectl and replay
commands are the guides' own (the guides' tests run those)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from docs_pages import ROOT, page

from kubesched.cli import main


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.DOTALL)


def test_the_plugin_example_schedules_the_demo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = page("README.md")
    files = {}
    for body in blocks(readme, "python") + blocks(readme, "yaml"):
        first = body.partition("\n")[0]
        if first.startswith("# my"):
            files[first[2:].strip()] = body
    assert set(files) == {"my_plugins/gpu_first.py", "my-config.yaml"}
    for name, body in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(body)
    lines = readme.splitlines()
    (command,) = [c for c in lines if c.startswith("python -m kubesched simulate") and "--plugin" in c]
    # the README's relative paths, written out under tmp_path; the demo is found from the root
    argv = [a.replace("my-config.yaml", f"{tmp_path}/my-config.yaml") for a in shlex.split(command)[3:]]
    argv = [a.replace("my_plugins/", f"{tmp_path}/my_plugins/") for a in argv]
    monkeypatch.chdir(ROOT)
    assert main([*argv, "--output", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    scored = [p for p in out["pods"] if p["node"] and p.get("finalScore")]
    assert scored and all("PreferGPUNodes" in next(iter(p["finalScore"].values())) for p in scored)


def test_the_other_examples_are_the_guides_own() -> None:
    readme = page("README.md")
    commands = [line for body in blocks(readme, "sh") for line in body.splitlines()]
    simulator, research = page("simulator.md"), page("research.md")
    for line in commands:
        if line.startswith(("python -m kubesched sim serve", "kubectl ", "export KUBECONFIG")):
            assert line in simulator, line
        if "kubesched replay" in line or line.startswith(("T=", "pip install -e . ./plugins", "    --config")):
            assert line in research, line
    assert any("sim serve" in line for line in commands) and any("replay" in line for line in commands)
