"""kubesched.extender: the client and the kit extender authors import, under the error root;
the scheduler's loops over extenders live in the scheduler, which the package never imports."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kubesched.extender
from kubesched import errors
from kubesched.extender import ExtenderError

PUBLIC = {
    "DEFAULT_EXTENDER_TIMEOUT",
    "MAX_EXTENDER_PRIORITY",
    "MIN_EXTENDER_PRIORITY",
    "ExtenderError",
    "ExtenderServer",
    "ExtenderSpec",
    "HTTPExtender",
    "NodeInfoLister",
    "Victims",
    "make_extender_app",
    "run_extender",
    "serve_extender",
}


def test_the_package_exports_what_extender_authors_and_the_scheduler_import() -> None:
    assert set(kubesched.extender.__all__) == PUBLIC
    for name in PUBLIC:
        assert getattr(kubesched.extender, name) is not None


def test_an_extender_error_is_a_kubesched_error() -> None:
    err = ExtenderError("no answer", extender="http://x", verb="filter")
    assert isinstance(err, errors.ExtenderError)
    assert isinstance(err, errors.KubeschedError)
    assert (err.extender, err.verb, str(err)) == ("http://x", "filter", "no answer")
    with pytest.raises(errors.KubeschedError):
        raise err


@pytest.mark.parametrize("module", ["__init__", "client", "kit", "wire"])
def test_the_package_does_not_reach_up_into_the_scheduler(module: str) -> None:
    path = Path(kubesched.extender.__file__).parent / f"{module}.py"
    imported = {
        node.module
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module is not None
    }
    assert not {m for m in imported if m.startswith(("kubesched.scheduler", "kubesched.runtime", "kubesched.backend"))}


def test_the_scheduler_loops_over_extenders_are_the_schedulers() -> None:
    from kubesched.scheduler import extenders

    for name in ("binder_for", "find_nodes_that_pass_extenders", "preempt_with_extenders", "prioritize_with_extenders"):
        assert callable(getattr(extenders, name))
        assert not hasattr(kubesched.extender, name)
