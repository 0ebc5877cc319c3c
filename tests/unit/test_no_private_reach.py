"""No module of kubesched (nor of the plugin packages under ``plugins/``) uses a private name of
another module: each goes through what the other module offers publicly.

What the scan forbids, in every module:

* ``from m import _name`` (and ``import m._name``): a private name of another module;
* ``x._name`` (and ``getattr(x, "_name")``, ``setattr``, ``hasattr``, ``delattr``) on anything
  but ``self`` or ``cls``, unless ``x`` is a plain name and this module itself defines ``_name``
  as a member of one of its classes (``self._name = ...``, a class attribute or ``__slots__``
  entry, a ``def``): an object of the module's own class may read another's (``other._values``
  in ``__eq__``, ``c._data`` in ``clone``), while ``self.transport._name`` reaches whatever
  ``transport`` is, whatever the module defines;
* ``super()._name``: a private hook of a base class.

What a library offers only privately is read in one small documented helper each, allowed below
by module, function and expression with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

#: (module, enclosing function, expression) -> why a library's private name is read there.
ALLOWED = {
    ("kubesched/server/flags.py", "parser_actions", "parser._actions"): (
        "argparse lists no parser's actions publicly (add_argument returns each, nothing gives them back)"
    ),
    ("kubesched/sim/apiserver/connections.py", "APIRunner._make_server", "super()._make_server"): (
        "aiohttp's runner makes its server in this subclass hook; there is no public way to choose the server class"
    ),
    ("kubesched/sim/apiserver/connections.py", "connection_settings", "server._loop"): (
        "aiohttp's web.Server keeps the loop its connections run on private, with no accessor"
    ),
    ("kubesched/sim/apiserver/connections.py", "connection_settings", "server._kwargs"): (
        "aiohttp's web.Server keeps the arguments it makes each connection with private, with no accessor"
    ),
    ("kubesched/bench/scheduler_side.py", "SchedulerProcess.__init__", "os._exit"): (
        "a forked child ends without running its parent's exit handlers or flushing its buffers: "
        "os._exit is the documented way (the underscore is historical)"
    ),
    ("kubesched/cluster/kube/transport.py", "client_tls_context", 'getattr(connector, "_ssl")'): (
        "kubernetes_asyncio hands its TLS context to aiohttp's connector alone, which keeps it private"
    ),
}

_ATTR_FUNCTIONS = ("getattr", "setattr", "hasattr", "delattr")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _modules() -> Iterator[Path]:
    yield from sorted((ROOT / "kubesched").rglob("*.py"))
    for package in sorted((ROOT / "plugins").glob("*/")):
        yield from sorted(p for p in package.rglob("*.py") if not {"build", "dist"} & set(p.parts))


def _own_members(tree: ast.Module) -> set[str]:
    """The members the module's own classes define: methods, class attributes, ``__slots__``
    entries, and whatever is assigned as ``self.X``/``cls.X``."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    own.add(stmt.name)
                elif isinstance(stmt, ast.Assign | ast.AnnAssign):
                    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                    names = {t.id for t in targets if isinstance(t, ast.Name)}
                    own |= names
                    if "__slots__" in names and stmt.value is not None:
                        own |= {
                            c.value
                            for c in ast.walk(stmt.value)
                            if isinstance(c, ast.Constant) and isinstance(c.value, str)
                        }
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and _is_self(node.value):
            own.add(node.attr)
    return own


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _is_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


class _Scan(ast.NodeVisitor):
    def __init__(self, where: str, own: set[str]) -> None:
        self.where = where
        self.own = own
        self.scope: list[str] = []
        self.found: list[tuple[str, str, int, str]] = []

    def _report(self, node: ast.AST, what: str) -> None:
        self.found.append((self.where, ".".join(self.scope), getattr(node, "lineno", 0), what))

    def _scoped(self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()

    visit_ClassDef = visit_FunctionDef = visit_AsyncFunctionDef = _scoped

    def _reach(self, node: ast.AST, obj: ast.expr, name: str, what: str) -> None:
        if not _private(name) or _is_self(obj):
            return
        # Another object of the module's own classes is named (``other``, ``c``); reached through
        # an attribute or a call (``self.transport._x``) it may be any module's object.
        if not (isinstance(obj, ast.Name) and name in self.own):
            self._report(node, what)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        self._reach(node, node.value, node.attr, ast.unparse(node))
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func, args = node.func, node.args
        if isinstance(func, ast.Name) and func.id in _ATTR_FUNCTIONS and len(args) >= 2:
            name = args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                self._reach(node, args[0], name.value, f'{func.id}({ast.unparse(args[0])}, "{name.value}")')
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if _private(alias.name):
                self._report(node, f"from {module} import {alias.name}")
        if any(_private(part) for part in (node.module or "").split(".")):
            self._report(node, f"from {module} import ...")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if any(_private(part) for part in alias.name.split(".")):
                self._report(node, f"import {alias.name}")


def _reaches(source: str, where: str) -> list[tuple[str, str, int, str]]:
    """Where ``source`` reaches a private name of another module: (module, enclosing
    function, line, expression)."""
    tree = ast.parse(source, where)
    scan = _Scan(where, _own_members(tree))
    scan.visit(tree)
    return scan.found


def _offences(found: list[tuple[str, str, int, str]]) -> list[str]:
    return [
        f"{where}:{line} in {scope or '<module>'}: {what}"
        for where, scope, line, what in found
        if (where, scope, what) not in ALLOWED
    ]


def _scan_all() -> list[tuple[str, str, int, str]]:
    return [hit for path in _modules() for hit in _reaches(path.read_text(), path.relative_to(ROOT).as_posix())]


def test_no_module_reaches_a_private_name_of_another() -> None:
    offences = _offences(_scan_all())
    assert offences == [], "\n".join(offences)


def test_every_allowance_is_used_and_says_why() -> None:
    used = {(where, scope, what) for where, scope, _, what in _scan_all()}
    assert set(ALLOWED) <= used, f"allowed but no longer used: {set(ALLOWED) - used}"
    assert all(len(reason) > 20 for reason in ALLOWED.values())


def test_the_scan_covers_kubesched_and_the_plugin_packages() -> None:
    seen = {p.relative_to(ROOT).as_posix() for p in _modules()}
    assert "kubesched/backend/cache.py" in seen
    assert "plugins/coscheduling/kubesched_coscheduling/__init__.py" in seen


def test_the_scan_catches_each_forbidden_form() -> None:
    source = (
        "from kubesched.plugins.volume.pv_binding import _with_phase, bind_claim_to_volume\n"
        "from . import _sibling\n"
        "from kubesched._internal import thing\n"
        "import kubesched._internal\n"
        "class Runner(web.AppRunner):\n"
        "    async def _make_server(self):\n"
        "        return await super()._make_server()\n"
        "def f(snapshot, other):\n"
        "    snapshot._relist([])\n"
        "    other.transport._connections\n"
        "    getattr(site, '_server', None)\n"
        "    hasattr(other, '_hidden')\n"
        "class Cluster:\n"
        "    def _client(self):\n"
        "        return self.transport._client()\n"
    )
    found = [(scope, what) for _, scope, _, what in _reaches(source, "probe.py")]
    assert found == [
        ("", "from kubesched.plugins.volume.pv_binding import _with_phase"),
        ("", "from . import _sibling"),
        ("", "from kubesched._internal import ..."),
        ("", "import kubesched._internal"),
        ("Runner._make_server", "super()._make_server"),
        ("f", "snapshot._relist"),
        ("f", "other.transport._connections"),
        ("f", 'getattr(site, "_server")'),
        ("f", 'hasattr(other, "_hidden")'),
        ("Cluster._client", "self.transport._client"),
    ]


def test_the_scan_passes_what_is_allowed() -> None:
    source = (
        "from kubesched.objects import Obj\n"
        "class Gates:\n"
        "    __slots__ = ('_slot',)\n"
        "    _table = {}\n"
        "    def __init__(self):\n"
        "        self._values = {}\n"
        "        self._slot = 0\n"
        "        getattr(self, '_values')\n"
        "    def __eq__(self, other):\n"
        "        return self._values == other._values and other._slot == self._slot\n"
        "    def clone(self):\n"
        "        c = Gates()\n"
        "        c._values = dict(self._values)\n"
        "        c._helper()\n"
        "        return c._table, cls._table\n"
        "    def _helper(self):\n"
        "        return self.__class__.__name__\n"
    )
    assert _reaches(source, "probe.py") == []


def test_an_allowance_holds_for_its_own_place_only() -> None:
    elsewhere = "def flag_names(parser):\n    return parser._actions\n"
    found = _reaches(elsewhere, "kubesched/server/flags.py")
    assert _offences(found) == ["kubesched/server/flags.py:2 in flag_names: parser._actions"]
    there = "def parser_actions(parser):\n    return list(parser._actions)\n"
    assert (
        _reaches(there, "kubesched/server/flags.py") != []
        and _offences(_reaches(there, "kubesched/server/flags.py")) == []
    )
