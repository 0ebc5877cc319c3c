"""The layering of DESIGN.md, enforced: import-linter contracts from pyproject.toml, and the
public API of the framework package."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_import_layers_hold() -> None:
    exe = shutil.which("lint-imports")
    if exe is None:
        pytest.fail("lint-imports (import-linter) is not installed; it is part of the [test] extra")
    out = subprocess.run([exe, "--config", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "broken" not in out.stdout.split("Contracts:")[-1].lower() or "0 broken" in out.stdout


def test_the_layers_contract_names_every_module_of_the_package() -> None:
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    # The package's own contract (the layers within one of its parts have containers).
    (layers,) = [c for c in contracts if c["type"] == "layers" and not c.get("containers")]
    named = {module.strip() for layer in layers["layers"] for module in layer.split("|")}
    package = ROOT / "kubesched"
    present = {
        f"kubesched.{path.stem}"
        for path in package.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py") or (path / "__init__.py").is_file()
    }
    assert named == present, f"missing from the layers: {sorted(present - named)}; gone: {sorted(named - present)}"


def test_the_contract_package_re_exports_nothing() -> None:
    """One face: ``kubesched`` re-exports the contract; ``kubesched/framework/__init__.py`` holds
    its docstring only, and every module imports a contract name from the module defining it."""
    tree = ast.parse((ROOT / "kubesched/framework/__init__.py").read_text())
    assert [type(node).__name__ for node in tree.body] == ["Expr"]


def test_the_object_alias_is_defined_once() -> None:
    """``Obj`` (a Kubernetes object's JSON) is defined in ``kubesched/objects.py`` alone."""
    offenders = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "kubesched").rglob("*.py")
        if path != ROOT / "kubesched/objects.py"
        and re.search(r"^Obj\s*(:\s*TypeAlias\s*)?=", path.read_text(), re.MULTILINE)
    )
    assert offenders == []


#: Where pod groups are keyed: the index, the queue's group entities, the pod-group cycle, the
#: plugins that walk hierarchies. A group is named there by its ``GroupKey``, whose parts are fields.
POD_GROUP_MODULES = [
    "kubesched/framework/podgroup.py",
    "kubesched/backend/pod_groups.py",
    "kubesched/backend/pod_group_members.py",
    "kubesched/backend/pod_group_queue.py",
    "kubesched/scheduler/podgroup",
    "kubesched/scheduler/eventhandlers.py",
    "kubesched/plugins/gangscheduling.py",
    "kubesched/plugins/helper.py",
    "kubesched/plugins/preemption",
    "kubesched/runtime/framework.py",
    "kubesched/testing/placement.py",
]


def _slash_splits(path: Path) -> list[tuple[int, int | None]]:
    """Each ``<text>.split("/", n)`` / ``.rsplit("/", n)`` in ``path``: its line and ``n``."""
    found: list[tuple[int, int | None]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("split", "rsplit")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "/"
        ):
            limit = node.args[1] if len(node.args) > 1 else None
            found.append((node.lineno, limit.value if isinstance(limit, ast.Constant) else None))
    return found


def test_group_keys_are_typed_and_never_cut_back_out_of_text() -> None:
    """``GroupKey`` (kubesched/framework/podgroup.py) is the one key of a pod group: defined once,
    its parts read as fields. No code cuts a key's parts out of its text (``PodGroup/<ns>/<name>``):
    no three-part ``split("/", 2)`` anywhere in the package or in plugins/, and no ``split("/")``
    at all where pod groups are keyed."""
    files = [*(ROOT / "kubesched").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")]
    three_part = [f"{p.relative_to(ROOT)}:{line}" for p in files for line, n in _slash_splits(p) if n == 2]
    assert three_part == []
    keyed = [
        path
        for entry in POD_GROUP_MODULES
        for path in ([ROOT / entry] if entry.endswith(".py") else sorted((ROOT / entry).rglob("*.py")))
    ]
    assert all(p.is_file() for p in keyed) and len(keyed) > len(POD_GROUP_MODULES)
    cut = [f"{p.relative_to(ROOT)}:{line}" for p in keyed for line, _ in _slash_splits(p)]
    assert cut == []
    defined = sorted(
        str(path.relative_to(ROOT))
        for path in files
        if re.search(r"^(class GroupKey\b|def group_key\()", path.read_text(), re.MULTILINE)
    )
    assert defined == ["kubesched/framework/podgroup.py"]


def test_an_objects_namespace_and_name_are_joined_in_one_place() -> None:
    """``namespace/name`` of an object is :func:`kubesched.objects.namespaced_name` (and
    ``object_key`` of an object's metadata): no other module of the package defines its own."""
    defined = sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "kubesched").rglob("*.py")
        if re.search(r"^def (object_key|namespaced_name)\(", path.read_text(), re.MULTILINE)
    )
    assert defined == ["kubesched/objects.py"]


def test_only_cluster_package_may_import_kubernetes_client() -> None:
    offenders = []
    for path in (ROOT / "kubesched").rglob("*.py"):
        if "cluster" in path.relative_to(ROOT / "kubesched").parts[:1]:
            continue
        text = path.read_text()
        if re.search(r"^\s*(from|import)\s+kubernetes_asyncio", text, re.MULTILINE):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_python_version() -> None:
    assert sys.version_info >= (3, 11)


def _tool(name: str) -> str:
    exe = shutil.which(name)
    if exe is None:
        pytest.fail(f"{name} is not installed; it is part of the [test] extra")
    return exe


def test_ruff_lint_and_format_are_clean() -> None:
    paths = ["kubesched", "tests", "benchmarks", "plugins", "tools"]
    lint = subprocess.run([_tool("ruff"), "check", *paths], cwd=ROOT, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    fmt = subprocess.run([_tool("ruff"), "format", "--check", *paths], cwd=ROOT, capture_output=True, text=True)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr


def test_mypy_is_clean_on_the_package() -> None:
    out = subprocess.run([_tool("mypy"), "kubesched"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
