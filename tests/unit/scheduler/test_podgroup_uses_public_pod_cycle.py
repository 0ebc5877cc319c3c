"""The pod-group cycle (``kubesched/scheduler/podgroup/``) drives the pod cycle through its
public interface alone: from the pod cycle's module it imports only :class:`PodPlacer` (the
protocol naming what a group uses of a pod cycle, which mypy --strict then holds it to) and
``Tentative`` (a pod placed tentatively), and no module of the package reaches a private name
of another object or module (``x._name`` on anything but ``self``/``cls``, ``from m import
_name``)."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import kubesched.scheduler.podgroup
import kubesched.scheduler.schedule_one as pod_cycle
from kubesched.scheduler.schedule_one import PodPlacer, PodSchedulingCycle

PACKAGE = Path(kubesched.scheduler.podgroup.__file__).parent
POD_CYCLE = "kubesched.scheduler.schedule_one"
#: What the pod-group package may import from the pod cycle's module.
PUBLIC = {"PodPlacer", "Tentative"}


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _modules() -> list[Path]:
    found = sorted(PACKAGE.glob("*.py"))
    assert {p.name for p in found} >= {"cycle.py", "algorithm.py", "composite.py"}
    return found


def _reaches(source: str, where: str) -> list[str]:
    """Where the module ``source`` reaches past another object's or module's public face."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source, where)):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
            if not own:
                out.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                if _private(alias.name):
                    out.append(f"{where}:{node.lineno}: from {node.module} import {alias.name}")
                elif node.module == POD_CYCLE and alias.name not in PUBLIC:
                    out.append(f"{where}:{node.lineno}: {alias.name} of the pod cycle's module")
        elif isinstance(node, ast.Import):
            out += [f"{where}:{node.lineno}: import {a.name}" for a in node.names if a.name == POD_CYCLE]
    return out


def test_no_podgroup_module_reaches_a_private_name_of_the_pod_cycle_or_another() -> None:
    offences = [o for path in _modules() for o in _reaches(path.read_text(), path.relative_to(PACKAGE).as_posix())]
    assert offences == [], "\n".join(offences)


def test_the_scan_sees_what_it_forbids() -> None:
    """The scan itself: each way of reaching past the interface is caught, ``self._x`` is not."""
    source = (
        "from kubesched.scheduler.schedule_one import PodCycle, PodPlacer\n"
        "from kubesched.scheduler.context import _hidden\n"
        "import kubesched.scheduler.schedule_one\n"
        "async def f(self, pc):\n"
        "    self._mine = 1\n"
        "    await pc._schedule_pod(None)\n"
        "    await self.algorithm._revert(None, [])\n"
    )
    found = _reaches(source, "probe.py")
    assert [f.split(": ", 1)[1] for f in found] == [
        "PodCycle of the pod cycle's module",
        "from kubesched.scheduler.context import _hidden",
        "import kubesched.scheduler.schedule_one",
        "pc._schedule_pod",
        "self.algorithm._revert",
    ]


def test_the_interface_is_public_documented_and_the_pod_cycle_provides_it() -> None:
    names = [n for n, v in vars(PodPlacer).items() if inspect.iscoroutinefunction(v)]
    assert names and not [n for n in names if _private(n)]
    for name in names:
        assert inspect.getdoc(getattr(PodPlacer, name)), f"PodPlacer.{name} has no docstring"
        assert inspect.iscoroutinefunction(getattr(PodSchedulingCycle, name)), name
        assert inspect.signature(getattr(PodSchedulingCycle, name)) == inspect.signature(getattr(PodPlacer, name))
    assert pod_cycle.__doc__ is not None and "PodPlacer" in pod_cycle.__doc__
