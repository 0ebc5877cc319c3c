"""What a profile enables, as the configuration hands it to the runtime, and the error for a
profile that cannot be built."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.errors import ConfigurationError


class FrameworkError(ConfigurationError):
    """A profile that cannot be built (bad plugin set or args); the message names profile and plugin."""


@dataclass
class PluginRef:
    """One plugin enabled at one extension point; ``weight`` counts only at Score."""

    name: str
    weight: int = 0


@dataclass
class ProfileSpec:
    """What a profile enables at each extension point (config names: ``preFilter``, ``score``, ...),
    and each plugin's validated args. Built from the configuration by ``kubesched.config``."""

    scheduler_name: str
    plugins: dict[str, list[PluginRef]]
    plugin_args: dict[str, Any] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None


def weighted_plugins(refs: Sequence[PluginRef]) -> dict[str, int]:
    """Plugin name → weight of ``refs``."""
    return {r.name: r.weight for r in refs}
