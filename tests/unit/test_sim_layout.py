"""The simulator's packages import only downward, and the API server is importable from its
package as well as from its module."""

from __future__ import annotations

import grimp
import pytest

#: Top to bottom: each may import only what is below it.
SIM_LAYERS = ("serve", "serve_options", "simulator_api", "run", "importer", "controllers", "scenario", "apiserver")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("kubesched", cache_dir=None)


def _part(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["kubesched", "sim"] and len(parts) > 2 else None


def test_sim_packages_import_only_downward(graph: grimp.ImportGraph) -> None:
    upward = []
    for module in graph.modules:
        source = _part(module)
        if source is None:
            continue
        for target in graph.find_modules_directly_imported_by(module):
            dest = _part(target)
            if dest is not None and dest != source and SIM_LAYERS.index(dest) < SIM_LAYERS.index(source):
                upward.append(f"{module} -> {target}")
    assert upward == []


def test_every_sim_package_is_placed(graph: grimp.ImportGraph) -> None:
    found = {p for m in graph.modules if (p := _part(m)) is not None and p != "__init__"}
    assert found == set(SIM_LAYERS)


def test_api_server_importable_from_its_package() -> None:
    from kubesched.sim.apiserver import APIServer
    from kubesched.sim.apiserver.server import APIServer as FromModule

    assert APIServer is FromModule
