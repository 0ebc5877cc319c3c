"""The test suite's plugin installs never touch the user's environment: a plugin package the
user pip-installed is shadowed while a test installs its own copy, never uninstalled."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import installed_package

from kubesched.runtime.registry import default_registry, reset_default_registry

PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "qos-sort"


def test_the_tests_leave_a_users_own_install_alone(tmp_path: Path) -> None:
    """A user who pip-installed a plugin package keeps it after the tests that install their own
    copy: theirs is shadowed meanwhile, never uninstalled."""
    import importlib
    import importlib.metadata

    from conftest import _pip

    users = tmp_path / "site"
    out = _pip("install", "--no-deps", "--no-build-isolation", "--target", str(users), str(PACKAGE))
    assert out.returncode == 0, out.stderr
    sys.path.append(str(users))  # after the interpreter's own site-packages, as a user install
    importlib.invalidate_caches()
    try:
        assert importlib.metadata.distribution("kubesched-qos-sort") is not None
        with installed_package(PACKAGE, "kubesched-qos-sort"):
            assert "QOSSort" in default_registry()
        importlib.invalidate_caches()
        reset_default_registry()
        mine = importlib.metadata.distribution("kubesched-qos-sort")
        assert str(users) in str(mine.locate_file(""))
        assert "QOSSort" in default_registry()
    finally:
        sys.path.remove(str(users))
        importlib.invalidate_caches()
        reset_default_registry()
