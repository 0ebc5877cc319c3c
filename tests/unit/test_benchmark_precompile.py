"""The paired benchmark byte-compiles each side's sources before it measures them: a fresh
interpreter that finds no bytecode (``PYTHONDONTWRITEBYTECODE``, a tree never imported) compiles
every module it imports, and that CPU would be counted per pod against the side with more code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from benchmarks.against import Side, precompile

PROBE = """
import sys
compiled = []
sys.addaudithook(lambda event, args: compiled.append(args[1]) if event == "compile" else None)
import kubesched.mod, benchmarks.bmod
print(sorted(f for f in compiled if isinstance(f, str) and f.endswith(".py")))
"""


def compiled_on_import(root: Path) -> str:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(root)}
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=root, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def tree(tmp_path: Path) -> Path:
    for pkg, mod in (("kubesched", "mod"), ("benchmarks", "bmod")):
        (tmp_path / pkg).mkdir()
        (tmp_path / pkg / "__init__.py").write_text("")
        (tmp_path / pkg / f"{mod}.py").write_text("VALUE = 1\n")
    return tmp_path


def test_without_it_every_run_compiles_the_modules_it_imports(tmp_path: Path) -> None:
    root = tree(tmp_path)
    assert "mod.py" in compiled_on_import(root)
    assert "mod.py" in compiled_on_import(root)  # and again: nothing was written


def test_after_it_no_run_compiles_the_sides_sources(tmp_path: Path) -> None:
    root = tree(tmp_path)
    precompile(Side("test", root, sys.executable))
    assert compiled_on_import(root) == "[]"
