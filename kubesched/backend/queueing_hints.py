"""Which cluster events may make a waiting pod schedulable, and which updates of a pending pod
matter: upstream's isEventOfInterest and isPodWorthRequeuing (the events the plugins register,
with their queueing hints), and its isPodUpdated.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable, Mapping
from typing import Any

from kubesched.framework.events import (
    FORCE_ACTIVATE,
    UNSCHEDULABLE_TIMEOUT,
    ClusterEvent,
    ClusterEventWithHint,
    EventResource,
    PodKeysFn,
    QueueingHint,
)
from kubesched.runtime.framework import Framework

#: The queue's logger, which the hints' failures were logged to before they had a module of their own.
log = logging.getLogger("kubesched.backend.queue")

#: Per plugin, the (key, pod keys) pairs of its screened registrations for one event.
Screens = dict[str, list[tuple[Hashable, PodKeysFn]]]

#: Told ``(plugin, event, hint, seconds)`` each time a queueing hint runs.
HintObserver = Callable[[str, str, str, float], None]

#: Annotations the scheduler itself writes (per-plugin results); changing them is no reason
#: to try a pod again.
RESULT_ANNOTATION_PREFIX = "kubesched.io/"


def _own_annotations_stripped(annotations: dict[str, str] | None) -> dict[str, str]:
    return {k: v for k, v in (annotations or {}).items() if not k.startswith(RESULT_ANNOTATION_PREFIX)}


#: What of a pod's status may change a scheduling decision (upstream's isPodUpdated keeps them):
#: the claims made from its ResourceClaimTemplates, and the claim made for its extended resources.
_STATUS_THAT_COUNTS = ("resourceClaimStatuses", "extendedResourceClaimStatus")


def spec_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    """Whether an update could change a scheduling decision: as upstream's isPodUpdated,
    anything but status, resourceVersion and the scheduler's own result annotations — but for
    the claim statuses DynamicResources waits for (:data:`_STATUS_THAT_COUNTS`)."""
    om, nm = old.get("metadata") or {}, new.get("metadata") or {}
    os_, ns = old.get("status") or {}, new.get("status") or {}
    return (
        old.get("spec") != new.get("spec")
        or any(os_.get(k) != ns.get(k) for k in _STATUS_THAT_COUNTS)
        or om.get("labels") != nm.get("labels")
        or _own_annotations_stripped(om.get("annotations")) != _own_annotations_stripped(nm.get("annotations"))
    )


class EventHints:
    """The events the plugins of ``frameworks`` register, and their hints."""

    def __init__(self, frameworks: Mapping[str, Framework]) -> None:
        self._events_map: dict[str, list[ClusterEventWithHint] | None] = {}
        for fw in frameworks.values():
            for plugin, regs in fw.events_to_register().items():
                self._events_map.setdefault(plugin, regs)
        self._matching: dict[tuple[Any, int], dict[str, list[ClusterEventWithHint] | None]] = {}
        #: :meth:`of_interest`'s answers, by the same key (they too never change).
        self._interest: dict[tuple[Any, int], bool] = {}

    def of_interest(self, event: ClusterEvent) -> bool:
        """Upstream's isEventOfInterest: a wildcard, or an event some plugin registers for."""
        if event is FORCE_ACTIVATE or event is UNSCHEDULABLE_TIMEOUT or event.resource is EventResource.WILDCARD:
            return True
        key = (event.resource, event.bits)
        known = self._interest.get(key)
        if known is None:
            registrations = self._matching_registrations(event).values()
            known = self._interest[key] = any(regs is None or regs for regs in registrations)
        return known

    def may_help(
        self, pod: Any, plugins: set[str], event: ClusterEvent, old: Any, new: Any, on_hint: HintObserver | None
    ) -> bool:
        """Whether ``event`` may make ``pod``, rejected by ``plugins``, schedulable (upstream's
        isPodWorthRequeuing); ``on_hint`` is told of each hint run, and times them when given."""
        if event is FORCE_ACTIVATE:
            # Activation names one pod (in ``new``); it is not a broadcast.
            return new is None or (new.get("metadata") or {}).get("uid") == (pod.get("metadata") or {}).get("uid")
        if event is UNSCHEDULABLE_TIMEOUT or event.resource is EventResource.WILDCARD:
            return True
        if not plugins:
            return True
        matching = self._matching_registrations(event)
        for plugin in plugins:
            regs = matching.get(plugin)
            if regs is None:  # not registered, or registered for every event
                return True
            for reg in regs:
                if reg.hint is None:
                    return True
                started = time.perf_counter() if on_hint is not None else 0.0
                try:
                    hint = reg.hint(pod, old, new)
                except Exception:  # a failing hint errs on the side of retrying (logged)
                    log.exception("queueing hint of %s failed; requeueing", plugin)
                    if on_hint is not None:
                        on_hint(plugin, str(event), "Error", time.perf_counter() - started)
                    return True
                if on_hint is not None:
                    on_hint(plugin, str(event), hint.value, time.perf_counter() - started)
                if hint is QueueingHint.QUEUE:
                    return True
        return False

    def screens(self, event: ClusterEvent, old: Any, new: Any) -> Screens:
        """Per plugin whose every registration covering ``event`` screens it (see
        ``ClusterEventWithHint.screen``), the keys a pod must hold for one of its hints to be
        worth asking; a plugin absent here must be asked. Empty for the events every pod hears
        (activation, the unschedulable timeout, wildcards)."""
        if event is FORCE_ACTIVATE or event is UNSCHEDULABLE_TIMEOUT or event.resource is EventResource.WILDCARD:
            return {}
        out: Screens = {}
        for plugin, regs in self._matching_registrations(event).items():
            if regs is None:
                continue
            keys: list[tuple[Hashable, PodKeysFn]] = []
            for reg in regs:
                if reg.hint is None or reg.screen is None or reg.pod_keys is None:
                    break
                key = reg.screen(old, new)
                if key is None:
                    break
                keys.append((key, reg.pod_keys))
            else:
                out[plugin] = keys
        return out

    def screened_key_fns(self) -> dict[str, tuple[PodKeysFn, ...]]:
        """Per plugin, the ``pod_keys`` of its registrations that screen (what a pool indexes its
        pods by for :meth:`screens`)."""
        out: dict[str, tuple[PodKeysFn, ...]] = {}
        for plugin, regs in self._events_map.items():
            fns = tuple(dict.fromkeys(r.pod_keys for r in regs or () if r.hint and r.screen and r.pod_keys))
            if fns:
                out[plugin] = fns
        return out

    @staticmethod
    def screened_out(pod: Any, plugins: set[str], screens: Screens) -> bool:
        """Whether every hint :meth:`may_help` would ask for ``pod`` (rejected by ``plugins``)
        is one its screen says answers SKIP: then the pod is passed over unasked."""
        if not plugins or not screens:
            return False
        for plugin in plugins:
            keys = screens.get(plugin)
            if keys is None:
                return False
            for key, pod_keys in keys:
                try:
                    if key in pod_keys(pod):
                        return False
                except Exception:  # noqa: BLE001 - the hint is asked then, and errs as it errs
                    return False
        return True

    def _matching_registrations(self, event: ClusterEvent) -> dict[str, list[ClusterEventWithHint] | None]:
        """Per plugin, its registrations that cover ``event`` (``None``: it registers for
        everything); computed once per kind of event."""
        key = (event.resource, event.bits)
        found = self._matching.get(key)
        if found is None:
            found = self._matching[key] = {
                plugin: None if regs is None else [r for r in regs if r.event.matches(event)]
                for plugin, regs in self._events_map.items()
            }
        return found
