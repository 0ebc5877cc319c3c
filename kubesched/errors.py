"""The one root of kubesched's errors, and its families.

Every error kubesched raises on purpose derives from :class:`KubeschedError`, through one of
the families below, so a program embedding kubesched (and the CLI) can catch the root once::

    KubeschedError
    ├── ConfigurationError   a KubeSchedulerConfiguration, a flag, a feature gate, a Policy
    │                        (ConfigError, FeatureGateError, PolicyError, ServingError,
    │                        TokenFileError, FaultConfigError)
    ├── PluginError          a plugin that cannot be found, loaded or constructed
    ├── ClusterError         what the cluster (real or in memory) answered: not found, conflict, ...
    ├── ScenarioError        a scenario, timeline or trace that cannot be read
    │                        (sim's ScenarioError, TimelineError, TraceError)
    ├── ExtenderError        an HTTP extender that failed or answered nonsense
    └── ResearchError        replay, compare and sweep inputs and engines
                             (ReplayError, SweepError, EngineError)

A class keeps the builtin base code catches it by (``ValueError`` through the families that have
it, ``RuntimeError`` for EngineError). Outside the tree on purpose, because none reaches a caller:
private control flow (names starting with ``_``); the contract's value parsers (QuantityError,
SelectorError, PodSpecError), turned into a Status or the boundary's own error where caught;
FitError and CycleError, a cycle's outcome on its way to a Status; the cache's invariant errors
(bugs); the API server's and the serving handlers' errors, each an HTTP response; the
DynamicResources plugin's internal failures, each its Status. ``tests/unit/test_errors.py``
lists them and checks that every other public error class is in the tree.

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
