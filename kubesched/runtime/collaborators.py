"""What a :class:`~kubesched.runtime.framework.Framework` is given by the scheduler that runs it.

Its plugins reach them through their handle (:class:`~kubesched.runtime.handle.PluginHandle`):
they read the cached cluster objects and the pods nominated to nodes, move pods to activeQ,
start background work and, when an extender takes part in preemption, have it narrow the
candidates. The scheduler hands these in when it builds each profile's Framework
(:class:`Collaborators`); a Framework built alone (a test harness) gets inert defaults. The
types here say what each collaborator must offer, nothing more.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from kubesched.framework.interface import Listers, Nominator, PodGroups, PreemptionCandidates, PreemptWithExtenders
from kubesched.framework.types import PodInfo
from kubesched.runtime.informers import SharedInformers
from kubesched.runtime.waiting_pods import WaitingPods

__all__ = [
    "Activator",
    "Collaborators",
    "PluginObserver",
    "PreemptionCandidates",
    "PreemptWithExtenders",
    "Spawner",
]


class PluginObserver(Protocol):
    """Where a Framework reports plugin timings (sampled cycles) and Permit waits: the
    scheduler's observer (``kubesched.scheduler.observer.Observer``) is one. Plugins reach it as
    ``handle.observer`` (None when nothing observes) for their own families, each looked up with
    ``getattr`` as the observer may lack it (``volume_stage_error``, ``preemption_victims``,
    ``dra_binding_conditions``)."""

    def plugin_execution(self, plugin: str, point: str, status: str, seconds: float) -> None: ...

    def permit_waited(self, result: str, seconds: float) -> None: ...


#: ``activator(uids)`` moves the pods with these UIDs to activeQ (through their PreEnqueue gates).
Activator = Callable[[list[str]], None]
#: ``spawner(coro)`` runs ``coro`` as a task its owner waits for, and cancels, at stop.
Spawner = Callable[[Coroutine[Any, Any, None]], None]
# PreemptionCandidates and PreemptWithExtenders are the face's (the Handle offers the latter).


@dataclass(frozen=True)
class Collaborators:
    """Everything a scheduler hands one profile's Framework, each left out (``None``) by a
    Framework built alone, which then gets its inert default (see
    :class:`~kubesched.runtime.framework.Framework`)."""

    #: What the scheduler reads and writes (plugins reach it as ``handle.cluster``).
    cluster: Any = None
    #: The pods held at Permit, shared by every profile.
    waiting_pods: WaitingPods | None = None
    #: Plugin timings (sampled cycles) and Permit waits; plugins record their own families on it.
    observer: PluginObserver | None = None
    #: Cached cluster objects besides pods and nodes.
    listers: Listers | None = None
    #: Pods nominated to nodes.
    nominator: Nominator | None = None
    activator: Activator | None = None
    spawner: Spawner | None = None
    #: Given when an extender takes part in preemption.
    preempt_with_extenders: PreemptWithExtenders | None = None
    #: The pod groups and their members (the scheduler's index).
    pod_groups: PodGroups | None = None
    #: The informers plugins ask for, shared by every profile.
    informers: SharedInformers | None = None
    #: ``placed_pod(uid)``: the pod as the scheduler's cache holds it, or None once gone.
    placed_pod: Callable[[str], PodInfo | None] | None = None
