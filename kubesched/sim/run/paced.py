"""A scenario's time under ``sim serve``: its Steps and its pods' lifetimes on a clock that
follows the wall clock (:class:`kubesched.sim.scenario.clock.PacedClock`, ``--speed`` times as
fast), while clients and the scheduler work on the cluster as they like.

The events are the ones ``simulate`` runs (:mod:`kubesched.sim.scenario.timeline`): a step's
objects are created (pods arrive pending, for the scheduler), patched and deleted when the clock
reaches its ``at``; a pod with ``kubesched.io/lifetime`` finishes that long after it was bound (a
Job's pod Succeeded, any other deleted). With a horizon (``--until``) the timeline stops there
and asks the server to stop.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

from kubesched.cluster.base import ClusterError, NotFound
from kubesched.cluster.store import Store
from kubesched.sim.apiserver.admission import admit_new
from kubesched.sim.scenario.clock import PacedClock, format_seconds
from kubesched.sim.scenario.loading import priority_class, ready_node
from kubesched.sim.scenario.reading import admit_pod
from kubesched.sim.scenario.steps import Step
from kubesched.sim.scenario.timeline import Agenda, Horizon, Lives, create_or_replace
from kubesched.tasks import stop_or

log = logging.getLogger(__name__)


class PacedTimeline:
    """Runs ``steps`` and pod lifetimes over ``store`` on ``clock``; ``say`` gets a line per event
    (the server prints them: where a person waits, they show simulated time passing)."""

    def __init__(
        self,
        store: Store,
        steps: list[Step],
        clock: PacedClock,
        until: Horizon | None = None,
        say: Callable[[str], None] = print,
    ) -> None:
        self.store = store
        self.clock = clock
        self.until = until
        self.say = say
        self._steps = list(steps)
        self._wake = asyncio.Event()
        self.agenda, self.life = self._fresh()
        self.events = 0
        #: Set once the clock reached the horizon.
        self.reached = False

    async def run(self, stop: asyncio.Event, ready: Callable[[], Awaitable[None]] | None = None) -> None:
        """Run events as their time comes, until ``stop`` (set here too once past the horizon).
        ``ready``: awaited first (the scheduler coming up); simulated time starts after it."""
        if ready is not None:
            await ready()
            if stop.is_set():
                return
        self.clock.restart()
        # Through self.life as it is at each write: a reset replaces it.
        unsubscribe = self.store.subscribe(lambda *change: self.life.on_write(*change))
        self._start_running_pods()
        try:
            while not stop.is_set():
                upcoming = self.agenda.next_time()
                limit = self.until.at if self.until is not None else None
                if upcoming is not None and (limit is None or upcoming <= limit):
                    delay = self.clock.wall_seconds_until(upcoming)
                    if delay <= 0:
                        self._fire()
                        await asyncio.sleep(0)
                    else:
                        await self._sleep(delay, stop)
                    continue
                if limit is None:
                    await self._sleep(None, stop)
                    continue
                delay = self.clock.wall_seconds_until(limit)
                if delay > 0:
                    await self._sleep(delay, stop)
                    continue
                assert self.until is not None
                left = f"; {len(self.agenda)} event(s) still due" if self.agenda else ""
                self.say(
                    f"simulated time reached the horizon {format_seconds(limit)} ({self.until.why}){left}: stopping"
                )
                self.reached = True
                stop.set()
        finally:
            unsubscribe()

    def restart(self) -> None:
        """Simulated time back to 0 with every step due again and the lifetimes of the pods on
        nodes counted from now: ``PUT /api/v1/reset`` after the cluster is back at its start."""
        self.agenda, self.life = self._fresh()
        self.clock.restart()
        self.reached = False
        self._start_running_pods()
        self.say(f"simulated time restarted at 0s: {len(self.agenda)} event(s) due")
        self._wake.set()

    def _fresh(self) -> tuple[Agenda, Lives]:
        agenda = Agenda(self._steps)
        life = Lives(self.store, agenda, self.clock)
        life.on_change = self._wake.set
        return agenda, life

    def _start_running_pods(self) -> None:
        """Pods on nodes run their lifetime from now."""
        for pod in self.store.list("Pod")[0]:
            if (pod.get("spec") or {}).get("nodeName"):
                self.life.started(pod)

    async def _sleep(self, seconds: float | None, stop: asyncio.Event) -> None:
        """Until ``seconds`` pass, an event is added (a pod bound), or ``stop``."""
        self._wake.clear()
        await stop_or(stop, self._wake.wait(), timeout=seconds, name="wait for an event")

    def _fire(self) -> None:
        at, what, item = self.agenda.pop()
        self.events += 1
        try:
            if what == "step":
                self._create(item)
                refused = self.life.apply_step(item)
                event = item.describe() + "".join(f"; {p.action} {p.obj} refused: {p.reason}" for p in refused)
            else:
                event = self.life.happen(what, item)
        except Exception as exc:  # one bad event must not stop the clock
            log.exception("simulated time %s: event failed", format_seconds(at))
            event = f"{what} failed: {exc}"
        self.say(f"simulated {format_seconds(at)}: {event}")

    def _create(self, step: Step) -> None:
        """A step's objects, admitted as ``sim serve`` admits a scenario's: pods pending unless
        they name a node."""
        sub = step.scenario
        if sub is None:
            return
        for ns in sub.namespaces:
            create_or_replace(self.store, "Namespace", admit_new("Namespace", "", copy.deepcopy(ns), {}))
        for pc in sub.priority_classes:
            create_or_replace(self.store, "PriorityClass", priority_class(pc))
        for obj in sub.others:
            create_or_replace(self.store, obj["kind"], copy.deepcopy(obj))
        for node in sub.nodes:
            create_or_replace(self.store, "Node", ready_node(node, datetime.now(UTC)))
        classes = {p["metadata"]["name"]: p for p in self.store.list("PriorityClass")[0]}
        for pod in [*sub.running_pods, *sub.pending_pods]:
            ns = pod["metadata"].get("namespace") or "default"
            try:
                self.store.get("Namespace", None, ns)
            except NotFound:
                self.store.create("Namespace", admit_new("Namespace", "", {"metadata": {"name": ns}}, {}))
            obj = admit_pod(copy.deepcopy(pod), classes)
            # Created now (the reader's stand-in times are years old: they would jump the queue).
            obj["metadata"]["creationTimestamp"] = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            obj.setdefault("status", {}).setdefault("phase", "Pending")
            try:
                self.store.create("Pod", obj)
            except (ClusterError, ValueError) as exc:
                self.say(f"simulated {format_seconds(step.at)}: pod {ns}/{pod['metadata']['name']} not created: {exc}")


__all__ = ["PacedTimeline"]
