"""The plugin registry: name → plugin class, filled once from the ``kubesched.plugins`` entry points.

In-tree plugins are registered by the root distribution's own entry points, so there is exactly
one way a plugin becomes known. Each entry is checked as it loads: it must be a class whose
``name`` equals the entry-point name and which implements at least one extension point. Two
distributions claiming one name is an error naming both.

The registry knows no particular package. A name nobody registered is answered with the
closest known one, or, when kubesched runs from a source checkout, with the package of its
``plugins/`` folder whose ``pyproject.toml`` declares that plugin and how to install it.
"""

from __future__ import annotations

import difflib
import functools
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from kubesched.errors import PluginError
from kubesched.framework.interface import plugin_extension_points
from kubesched.framework.names import DEFERRED_POD_SCHEDULING

ENTRY_POINT_GROUP = "kubesched.plugins"

#: Upstream plugins kubesched does not implement yet. A config that enables one is refused with
#: this explanation instead of an "unknown plugin" error.
NOT_YET_IMPLEMENTED = frozenset(
    {
        "EBSLimits",
        "GCEPDLimits",
        "AzureDiskLimits",
        "CinderLimits",
        DEFERRED_POD_SCHEDULING,
    }
)


def plugin_source_folders() -> list[Path]:
    """Folders whose sub-folders may hold plugin packages that are not installed: the
    ``plugins/`` folder of the source checkout kubesched runs from, when it runs from one
    (a wheel has none)."""
    root = Path(__file__).resolve().parents[2]
    folder = root / "plugins"
    return [folder] if (root / "pyproject.toml").is_file() and folder.is_dir() else []


@functools.lru_cache(maxsize=8)
def _packages_in(folder: Path) -> dict[str, tuple[str, str]]:
    """Plugin name → (distribution, folder as ``<folders>/<package>``) of each package under
    ``folder``, read from the ``kubesched.plugins`` entry points its ``pyproject.toml`` declares."""
    out: dict[str, tuple[str, str]] = {}
    for pyproject in sorted(folder.glob("*/pyproject.toml")):
        try:
            project = tomllib.loads(pyproject.read_text()).get("project", {})
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue  # a hint is best effort: an unreadable package is simply not named
        dist = str(project.get("name", ""))
        names = project.get("entry-points", {}).get(ENTRY_POINT_GROUP, {})
        for name in names:
            out.setdefault(str(name), (dist, f"{folder.name}/{pyproject.parent.name}"))
    return out


def uninstalled_packages(folders: Iterable[Path] | None = None) -> dict[str, tuple[str, str]]:
    """Plugin name → (distribution, folder) of the packages under ``folders`` (by default
    :func:`plugin_source_folders`), as each package declares its own plugins."""
    out: dict[str, tuple[str, str]] = {}
    for folder in plugin_source_folders() if folders is None else folders:
        for name, package in _packages_in(Path(folder)).items():
            out.setdefault(name, package)
    return out


def unknown_plugin_message(name: str, known: Iterable[str], folders: Iterable[Path] | None = None) -> str:
    """Why ``name`` cannot be found: a close known name ("did you mean"), the package of the
    source checkout that provides it but is not installed, and the plugins that are known."""
    known = sorted(known)
    msg = f"unknown plugin {name!r}"
    packages = uninstalled_packages(folders)
    candidates = {n.lower(): n for n in [*packages, *known]}
    close = [candidates[c] for c in difflib.get_close_matches(name.lower(), list(candidates), n=1, cutoff=0.75)]
    package = packages.get(name)
    if package is not None:
        dist, folder = package
        msg += (
            f": it is provided by the {dist} package ({folder} in the kubesched repository), "
            f"which is not installed; install it with `pip install ./{folder}` from a clone"
        )
    elif close:
        msg += f" (did you mean {close[0]!r}?)"
    else:
        msg += (
            ": a plugin of your own is found when its package is installed (`pip install` it; it declares the "
            f"class under the {ENTRY_POINT_GROUP!r} entry points) or named on the command line "
            "(`--plugin my_module:MyPlugin` or `--plugin path/to/file.py:MyPlugin`)"
        )
    return f"{msg}; known plugins: {', '.join(known)}"


class RegistryError(PluginError):
    """A plugin that cannot be registered, loaded or found; the message names it."""


@dataclass(frozen=True)
class PluginEntry:
    name: str
    cls: type
    distribution: str
    extension_points: tuple[str, ...]


class Registry:
    """Plugin name → :class:`PluginEntry`. Duplicates are refused."""

    def __init__(self) -> None:
        self._entries: dict[str, PluginEntry] = {}

    def register(self, cls: type, name: str | None = None, distribution: str = "") -> PluginEntry:
        name = name or str(getattr(cls, "name", ""))
        where = f" (from {distribution})" if distribution else ""
        if not isinstance(cls, type):
            raise RegistryError(f"plugin {name!r}{where}: entry point must name a class, got {cls!r}")
        declared = getattr(cls, "name", None)
        if declared != name:
            raise RegistryError(
                f"plugin {name!r}{where}: class {cls.__module__}.{cls.__qualname__} declares name {declared!r}; "
                "the entry-point name and the class's `name` must be equal"
            )
        points = tuple(plugin_extension_points(cls))
        if not points and not callable(getattr(cls, "events_to_register", None)):
            raise RegistryError(f"plugin {name!r}{where}: implements no extension point")
        if name in self._entries:
            other = self._entries[name]
            raise RegistryError(
                f"plugin {name!r} is registered twice: by {other.distribution or other.cls.__module__} "
                f"and by {distribution or cls.__module__}"
            )
        entry = PluginEntry(name, cls, distribution, points)
        self._entries[name] = entry
        return entry

    def get(self, name: str) -> PluginEntry:
        try:
            return self._entries[name]
        except KeyError:
            if name in NOT_YET_IMPLEMENTED:
                raise RegistryError(
                    f"plugin {name!r} is an upstream plugin that kubesched does not implement yet; "
                    "disable it in this profile"
                ) from None
            raise RegistryError(unknown_plugin_message(name, self._entries)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def names(self) -> list[str]:
        return sorted(self._entries)

    def entries(self) -> list[PluginEntry]:
        return [self._entries[n] for n in self.names()]

    def load_entry_points(self, entry_points: Iterable[metadata.EntryPoint] | None = None) -> None:
        """Register every plugin of the entry-point group, failing on the first bad one."""
        if entry_points is None:
            entry_points = metadata.entry_points(group=ENTRY_POINT_GROUP)
        seen: set[tuple[str, str]] = set()
        for ep in entry_points:
            dist = ep.dist.name if ep.dist is not None else ""
            # An editable install can expose the same distribution twice; one entry is enough.
            if (ep.name, ep.value) in seen:
                continue
            seen.add((ep.name, ep.value))
            try:
                cls = ep.load()
            except Exception as exc:  # any import failure is reported with its plugin
                raise RegistryError(
                    f"plugin {ep.name!r} (from {dist or '?'}): cannot load {ep.value!r}: {exc}"
                ) from exc
            self.register(cls, ep.name, dist)


_default: Registry | None = None


def default_registry() -> Registry:
    """The process-wide registry, discovered from entry points on first use."""
    global _default
    if _default is None:
        reg = Registry()
        reg.load_entry_points()
        _default = reg
    return _default


def reset_default_registry() -> None:
    """Forget the discovered registry (tests that install a plugin package call this)."""
    global _default
    _default = None
