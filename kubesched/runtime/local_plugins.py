"""``--plugin module:Class`` or ``--plugin path/to/file.py:Class``: a plugin used without packaging.

The class is imported and registered in the process-wide registry under its ``name``, exactly
as an entry point would be (same checks, same duplicate rule), before the configuration that
names it is loaded.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path

from kubesched.runtime.registry import Registry, RegistryError, default_registry


def load_plugin_class(spec: str) -> type:
    """The class ``spec`` names: ``module:Class`` (importable) or ``file.py:Class``."""
    where, sep, attr = spec.rpartition(":")
    if not sep or not where or not attr:
        raise RegistryError(f"--plugin {spec!r}: expected module:Class or path/to/file.py:Class")
    try:
        if where.endswith(".py"):
            path = Path(where)
            if not path.is_file():
                raise RegistryError(f"--plugin {spec!r}: no such file: {where}")
            name = f"kubesched_local_plugin_{path.stem}"
            module_spec = importlib.util.spec_from_file_location(name, path)
            if module_spec is None or module_spec.loader is None:
                raise RegistryError(f"--plugin {spec!r}: cannot load {where} as Python")
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[name] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(where)
    except RegistryError:
        raise
    except Exception as exc:  # any import failure is reported with the flag
        raise RegistryError(f"--plugin {spec!r}: cannot import {where}: {type(exc).__name__}: {exc}") from exc
    cls = getattr(module, attr, None)
    if cls is None:
        raise RegistryError(f"--plugin {spec!r}: {where} has no {attr!r}")
    if not isinstance(cls, type):
        raise RegistryError(f"--plugin {spec!r}: {attr!r} is not a class")
    return cls


def register_local_plugins(specs: Iterable[str] | None, registry: Registry | None = None) -> list[str]:
    """Register each ``--plugin`` spec; the plugin names registered."""
    registry = registry if registry is not None else default_registry()
    names = []
    for spec in specs or ():
        cls = load_plugin_class(spec)
        name = str(getattr(cls, "name", "") or "")
        if not name:
            raise RegistryError(f"--plugin {spec!r}: class {cls.__qualname__} has no `name`")
        registry.register(cls, name, f"--plugin {spec}")
        names.append(name)
    return names
