"""The one root of kubesched's errors, and its families.

Every error kubesched raises on purpose derives from :class:`KubeschedError`, through one of
the families below, so a program embedding kubesched (and the CLI) can catch the root once::

    KubeschedError
    ├── ConfigurationError   a KubeSchedulerConfiguration, a flag, a feature gate, a Policy
    ├── PluginError          a plugin that cannot be found, loaded or constructed
    ├── ClusterError         what the cluster (real or in memory) answered: not found, conflict, ...
    ├── ScenarioError        a scenario, timeline or trace that cannot be read
    ├── ExtenderError        an HTTP extender that failed or answered nonsense
    └── ResearchError        replay, compare and sweep inputs and engines

Outcomes of scheduling are never exceptions: plugins return a ``Status``. These are for input
that is wrong and for faults at a boundary, raised with ``raise Ours(...) from exc``.

This module is the ground floor: it imports nothing, so every layer may import it.
"""

from __future__ import annotations

__all__ = [
    "ClusterError",
    "ConfigurationError",
    "ExtenderError",
    "KubeschedError",
    "PluginError",
    "ResearchError",
    "ScenarioError",
]


class KubeschedError(Exception):
    """The root: anything kubesched raises on purpose."""


class ConfigurationError(KubeschedError, ValueError):
    """A configuration refused before anything is scheduled; the message names the field."""


class PluginError(KubeschedError):
    """A plugin that cannot be found, loaded or constructed; the message names the plugin."""


class ClusterError(KubeschedError):
    """A request to the cluster failed; subclasses say how (not found, conflict, invalid)."""


class ScenarioError(KubeschedError, ValueError):
    """A scenario, timeline or trace that cannot be read; the message names the document and field."""


class ExtenderError(KubeschedError):
    """An HTTP extender failed or gave an answer that cannot be used."""


class ResearchError(KubeschedError, ValueError):
    """A replay, comparison or sweep that cannot run as asked."""
