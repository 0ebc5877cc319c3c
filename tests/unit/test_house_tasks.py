"""The house's tasks: every task kubesched starts has an owner. ``asyncio.create_task``,
``ensure_future`` and the ``Task`` constructor are called in ``kubesched/tasks.py`` alone; the
rest of the package starts tasks through a :class:`kubesched.tasks.TaskSet` (an ``async with``
scope, or an object's own set closed at its stop). A TaskSet a function keeps in a variable of
its own is entered with ``async with`` there, or handed on (to an object, an attribute, a
call): one that is neither is a scope nobody closes.

A method named so on anything (``loop.create_task``, ``group.create_task``) counts: the rule is
about where tasks come from, not which object is asked.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The one module that may start a task by hand.
OWNER = ROOT / "kubesched/tasks.py"
BARE = frozenset({"create_task", "ensure_future"})


def bare_task_calls(source: str) -> list[int]:
    """The lines of ``source`` that start a task without a TaskSet."""
    lines: list[int] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        constructs = (
            isinstance(func, ast.Attribute)
            and func.attr == "Task"
            and isinstance(func.value, ast.Name)
            and func.value.id == "asyncio"
        )
        if name in BARE or constructs:
            lines.append(node.lineno)
    return lines


def unscoped_task_sets(source: str) -> list[int]:
    """The lines where a function keeps a TaskSet in a variable it neither enters with
    ``async with`` nor hands on."""
    lines: list[int] = []
    for func in ast.walk(ast.parse(source)):
        if not isinstance(func, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        made: dict[str, int] = {}
        for node in ast.walk(func):
            if (
                isinstance(node, ast.Assign)
                and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Name)
                and node.value.func.id == "TaskSet"
            ):
                made.update({t.id: node.lineno for t in node.targets if isinstance(t, ast.Name)})
        kept: set[str] = set()
        for node in ast.walk(func):
            if isinstance(node, ast.AsyncWith):
                kept.update(i.context_expr.id for i in node.items if isinstance(i.context_expr, ast.Name))
            elif isinstance(node, ast.Call):
                args = [*node.args, *(k.value for k in node.keywords)]
                kept.update(a.id for a in args if isinstance(a, ast.Name))
            elif isinstance(node, ast.Assign) and not all(isinstance(t, ast.Name) for t in node.targets):
                kept.update(v.id for v in ast.walk(node.value) if isinstance(v, ast.Name))
        lines.extend(line for name, line in made.items() if name not in kept)
    return sorted(lines)


def test_no_task_is_started_outside_a_task_set() -> None:
    offenders = [
        f"{path.relative_to(ROOT).as_posix()}:{line}"
        for path in sorted((ROOT / "kubesched").rglob("*.py"))
        if path != OWNER
        for line in bare_task_calls(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "tasks started without an owner (spawn them from a kubesched.tasks.TaskSet): " + ", ".join(
        offenders
    )


def test_the_scan_finds_each_way_of_starting_a_task() -> None:
    source = """
import asyncio
from asyncio import ensure_future
async def f(loop, group, coro):
    asyncio.create_task(coro)
    loop.create_task(coro)
    ensure_future(coro)
    asyncio.Task(coro)
    group.create_task(coro)
    await asyncio.sleep(0)
    tasks.spawn(coro, name="owned")
"""
    assert bare_task_calls(source) == [5, 6, 7, 8, 9]


def test_the_owner_module_is_where_tasks_are_started() -> None:
    assert bare_task_calls(OWNER.read_text(encoding="utf-8")), (
        "kubesched/tasks.py no longer starts tasks: move the rule"
    )


def test_every_task_set_in_a_variable_is_a_scope_or_handed_on() -> None:
    offenders = [
        f"{path.relative_to(ROOT).as_posix()}:{line}"
        for path in sorted((ROOT / "kubesched").rglob("*.py"))
        for line in unscoped_task_sets(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "TaskSets nobody closes (use `async with`): " + ", ".join(offenders)


def test_the_scope_scan_tells_a_forgotten_set_from_a_kept_one() -> None:
    source = """
async def f(ctx):
    forgotten = TaskSet("a")
    forgotten.spawn(work(), name="w")
    scoped = TaskSet("b")
    async with scoped:
        pass
    handed = TaskSet("c")
    ctx.run(handed)
    kept = TaskSet("d")
    ctx.tasks = kept
    async with TaskSet("e") as inline:
        inline.spawn(work(), name="w")
"""
    assert unscoped_task_sets(source) == [3]
