"""The test suite's plugin installs never touch the user's environment: a plugin package the
user pip-installed is shadowed while a test installs its own copy, never uninstalled."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

from conftest import installed_package

from kubesched.runtime.registry import default_registry, reset_default_registry


def plugin_package(root: Path, token: str) -> tuple[Path, str, str]:
    """A QueueSort plugin package whose distribution, module and plugin names are unique to this
    run, so no package already installed where the tests run can answer for it. Gives its folder,
    distribution name and plugin name."""
    distribution, module, plugin = f"kubesched-probe-{token}", f"kubesched_probe_{token}", f"Probe{token}"
    (root / module).mkdir(parents=True)
    (root / module / "__init__.py").write_text(
        f"class {plugin}:\n"
        f"    name = {plugin!r}\n\n"
        "    def __init__(self, args, handle):\n"
        "        pass\n\n"
        "    def less(self, a, b):\n"
        "        return False\n"
    )
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
        f'[project]\nname = "{distribution}"\nversion = "0.1.0"\n\n'
        f'[project.entry-points."kubesched.plugins"]\n{plugin} = "{module}:{plugin}"\n\n'
        f'[tool.setuptools]\npackages = ["{module}"]\n'
    )
    return root, distribution, plugin


def test_the_tests_leave_a_users_own_install_alone(tmp_path: Path) -> None:
    """A user who pip-installed a plugin package keeps it after the tests that install their own
    copy: theirs is shadowed meanwhile, never uninstalled."""
    import importlib
    import importlib.metadata

    from conftest import _pip

    package, distribution, plugin = plugin_package(tmp_path / "package", uuid.uuid4().hex[:12])
    users = tmp_path / "site"
    out = _pip("install", "--no-deps", "--no-build-isolation", "--target", str(users), str(package))
    assert out.returncode == 0, out.stderr
    sys.path.append(str(users))  # after the interpreter's own site-packages, as a user install
    importlib.invalidate_caches()
    try:
        assert str(users) in str(importlib.metadata.distribution(distribution).locate_file(""))
        with installed_package(package, distribution):
            ours = importlib.metadata.distribution(distribution)
            assert str(users) not in str(ours.locate_file(""))  # the test's copy, first on the path
            assert plugin in default_registry()
        importlib.invalidate_caches()
        reset_default_registry()
        mine = importlib.metadata.distribution(distribution)
        assert str(users) in str(mine.locate_file(""))
        assert plugin in default_registry()
    finally:
        sys.path.remove(str(users))
        importlib.invalidate_caches()
        reset_default_registry()
