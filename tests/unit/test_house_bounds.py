"""The house's bounds: no hand-written file of the code is longer than 750 lines, and kubesched's
modules import each other without a circle.

A generated file (its first lines say "Generated" and "Do not edit") is as long as what it is
generated from. An import counts as grimp reports it: one inside a function, or under
``TYPE_CHECKING``, ties two modules as much as one at the top of the module does.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The code the bound holds for (the tests are not held to it).
CODE_DIRS = ("kubesched", "plugins", "benchmarks", "tools")
MAX_LINES = 750
#: How many of a file's first lines are read for the generated-file header.
HEADER_LINES = 5


def _is_generated(path: Path) -> bool:
    with path.open(encoding="utf-8") as f:
        head = "".join(line for _, line in zip(range(HEADER_LINES), f, strict=False)).lower()
    return "generated" in head and "do not edit" in head


def _code_files() -> Iterator[Path]:
    for top in CODE_DIRS:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).parts
            if any(p.startswith(".") or p in ("build", "dist", "__pycache__") for p in parts):
                continue
            yield path


def _long_files() -> dict[str, int]:
    """Hand-written files of the code over the bound: ``{path: lines}``."""
    out = {}
    for path in _code_files():
        with path.open(encoding="utf-8") as f:
            lines = sum(1 for _ in f)
        if lines > MAX_LINES and not _is_generated(path):
            out[path.relative_to(ROOT).as_posix()] = lines
    return out


def test_no_hand_written_file_is_over_the_bound() -> None:
    over = _long_files()
    assert not over, f"over {MAX_LINES} lines (split them by job): " + ", ".join(
        f"{p} ({n})" for p, n in sorted(over.items())
    )


def test_a_generated_file_is_told_by_its_header() -> None:
    assert _is_generated(ROOT / "kubesched/sim/apiserver/openapi/types.py")
    assert not _is_generated(ROOT / "tools/gen_api_tables.py")


def _circles(edges: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion),
    each sorted, in sorted order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            nxt = next(todo, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                member = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    member.append(top)
                    if top == node:
                        break
                if len(member) > 1:
                    found.append(sorted(member))
    return sorted(found)


def _chain(edges: Mapping[str, Iterable[str]], start: str, within: set[str]) -> list[str]:
    """The shortest way from ``start`` back to itself inside ``within``: ``[start, ..., start]``."""
    came: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(edges.get(node, ())):
            if nxt not in within or nxt in came:
                continue
            came[nxt] = node
            if nxt == start:
                path = [start]
                while path[-1] != start or len(path) == 1:
                    path.append(came[path[-1]])
                return path[::-1]
            queue.append(nxt)
    raise AssertionError(f"{start} is on no circle in {sorted(within)}")


def _chains(edges: Mapping[str, Iterable[str]], circle: list[str]) -> list[str]:
    """Chains (``a -> b -> a``) that together pass through every module of ``circle``."""
    within = set(circle)
    covered: set[str] = set()
    out = []
    for module in circle:
        if module in covered:
            continue
        path = _chain(edges, module, within)
        covered.update(path)
        out.append(" -> ".join(path))
    return out


@pytest.fixture(scope="module")
def import_edges() -> dict[str, set[str]]:
    graph = grimp.build_graph("kubesched", cache_dir=None)
    return {
        m: {t for t in graph.find_modules_directly_imported_by(m) if t.startswith("kubesched.")}
        for m in graph.modules
        if m.startswith("kubesched.")
    }


def test_no_import_circle_among_kubesched_modules(import_edges: dict[str, set[str]]) -> None:
    circles = _circles(import_edges)
    assert not circles, "import circles:\n" + "\n".join(line for c in circles for line in _chains(import_edges, c))


def test_circles_are_found_and_told_as_chains() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e", "d"}}
    assert _circles(edges) == [["a", "b", "c"]]
    assert _chains(edges, ["a", "b", "c"]) == ["a -> b -> c -> a"]
    edges = {"a": {"b", "c"}, "b": {"a"}, "c": {"a"}}
    assert _chains(edges, ["a", "b", "c"]) == ["a -> b -> a", "c -> a -> c"]
