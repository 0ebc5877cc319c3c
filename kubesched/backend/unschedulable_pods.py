"""The unschedulable pool: pods rejected by plugins, as upstream's unschedulablePods.

A pod leaves it only on a cluster event that one of its rejecting plugins registered for (and
whose queueing hint says Queue), or after the queue's ``max_unschedulable_duration`` (5 minutes
upstream). Pods gated by a PreEnqueue plugin wait here too, until an event lets their gate's
re-check pass.

An event a plugin screens (``ClusterEventWithHint.screen``) concerns only the pooled pods whose
keys (its ``pod_keys``) hold the event's key, or that wait for a plugin it does not screen: the
pool keeps its pods indexed so (:meth:`UnschedulablePods.screened_candidates`), and the queue
looks at those alone rather than at every pooled pod (a claim made for a pod concerns that pod).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from kubesched.framework.events import PodKeysFn
from kubesched.framework.types import PodInfo, QueuedPodGroupInfo, QueuedPodInfo

#: A namespace's labels, by its name (the listers' view).
NamespaceLabels = Callable[[str], Mapping[str, str]]

#: The plugin whose rejected pods a bound pod may help across nodes, as upstream's queue names it.
POD_TOPOLOGY_SPREAD = "PodTopologySpread"


def waits_for(entity: QueuedPodInfo, q: QueuedPodInfo) -> set[str]:
    """The plugins whose events may move ``q`` (a pooled pod, or a member of a pooled group
    ``entity``): those that rejected it, and the gate holding it (a pod gated after a failed
    attempt, its preemption still under way, waits for both). Read, not to be changed."""
    plugins = q.unschedulable_plugins | q.pending_plugins if q.pending_plugins else q.unschedulable_plugins
    if entity.gated and entity.gating_plugin:
        plugins = plugins | {entity.gating_plugin}
    return plugins


class UnschedulablePods(dict[str, QueuedPodInfo]):
    """The pooled pods by uid (a group by its key), in the order they entered; indexed by the
    plugins they wait for and the keys of the screened registrations of those plugins
    (:meth:`index_keys`). A pod changed in place while pooled is indexed again by :meth:`refresh`."""

    def __init__(self) -> None:
        super().__init__()
        #: Per plugin, the ``pod_keys`` of its screened registrations.
        self._key_fns: Mapping[str, tuple[PodKeysFn, ...]] = {}
        #: When each pooled entry entered (its place in the pool's order).
        self._seq: dict[str, int] = {}
        self._next = 0
        #: Entries every screened event must look at: groups, pods waiting for no plugin, pods
        #: whose keys could not be had.
        self._open: set[str] = set()
        self._by_plugin: dict[str, set[str]] = {}
        self._by_key: dict[tuple[PodKeysFn, Hashable], set[str]] = {}
        #: What each entry is indexed under: its plugins and its (pod_keys, key) pairs.
        self._entries: dict[str, tuple[frozenset[str], tuple[tuple[PodKeysFn, Hashable], ...]]] = {}

    def index_keys(self, fns: Mapping[str, tuple[PodKeysFn, ...]]) -> None:
        """Index by ``fns`` (per plugin, its screened registrations' ``pod_keys``) from now on."""
        self._key_fns = fns
        for key in list(self):
            self.refresh(key)

    def __setitem__(self, key: str, q: QueuedPodInfo) -> None:
        if key in self:
            self._unindex(key)  # as a dict keeps its place, so does the order
        else:
            self._seq[key] = self._next
            self._next += 1
        super().__setitem__(key, q)
        self._index(key, q)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self._unindex(key)
        del self._seq[key]

    def pop(self, key: str, default: QueuedPodInfo | None = None) -> QueuedPodInfo | None:  # type: ignore[override]
        if key not in self:
            return default
        self._unindex(key)
        del self._seq[key]
        return super().pop(key)

    def refresh(self, key: str) -> None:
        """Index entry ``key`` again (its pod, or what it waits for, changed in place)."""
        q = self.get(key)
        if q is not None:
            self._unindex(key)
            self._index(key, q)

    def screened_candidates(self, screens: Mapping[str, list[tuple[Hashable, PodKeysFn]]]) -> list[QueuedPodInfo]:
        """The pooled entries, in pool order, that an event with these ``screens`` (per plugin,
        the event's key and the ``pod_keys`` to look it up by) may concern: those waiting for a
        plugin not screened, those whose keys hold the event's key, and the :attr:`_open` ones.
        Every other entry is one :meth:`EventHints.screened_out` passes over."""
        found = set(self._open)
        for plugin, keys in self._by_plugin.items():
            if plugin not in screens:
                found |= keys
        for pairs in screens.values():
            for key, fn in pairs:
                hit = self._by_key.get((fn, key))
                if hit:
                    found |= hit
        return [self[k] for k in sorted(found, key=self._seq.__getitem__)]

    def _index(self, key: str, q: QueuedPodInfo) -> None:
        plugins = frozenset(waits_for(q, q))
        pairs: list[tuple[PodKeysFn, Hashable]] = []
        opened = isinstance(q, QueuedPodGroupInfo) or not plugins
        if not opened:
            try:
                for plugin in plugins:
                    for fn in self._key_fns.get(plugin, ()):
                        pairs.extend((fn, k) for k in fn(q.pod))
            except Exception:  # noqa: BLE001 - the pod's hints are asked then (screened_out errs so too)
                opened, pairs = True, []
        if opened:
            self._open.add(key)
        for plugin in plugins:
            self._by_plugin.setdefault(plugin, set()).add(key)
        for pair in pairs:
            self._by_key.setdefault(pair, set()).add(key)
        self._entries[key] = (plugins, tuple(pairs))

    def _unindex(self, key: str) -> None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return
        self._open.discard(key)
        for plugin in entry[0]:
            _drop(self._by_plugin, plugin, key)
        for pair in entry[1]:
            _drop(self._by_key, pair, key)

    def gated_count(self) -> int:
        """The pods held by a PreEnqueue gate."""
        return sum(1 for q in self.values() if q.gated)

    def by_plugin(self) -> dict[tuple[str, str], int]:
        """Pods per (rejecting plugin, profile); a pod counts once for each plugin that rejected
        it, or gates it."""
        out: dict[tuple[str, str], int] = {}
        for q in self.values():
            for plugin in waits_for(q, q):
                key = (plugin, q.pod_info.scheduler_name)
                out[key] = out.get(key, 0) + 1
        return out

    def left_over(self, now: float, max_duration: float) -> list[QueuedPodInfo]:
        """The pods not gated that have waited longer than ``max_duration`` at ``now``."""
        return [q for q in self.values() if not q.gated and now - q.timestamp > max_duration]

    def cross_topology(self, pod: PodInfo, ns_labels: NamespaceLabels | None) -> list[QueuedPodInfo]:
        """Upstream's getUnschedulablePodsWithCrossTopologyTerm (the namespace's labels looked
        up once, and only if a pooled pod has an affinity term to match)."""
        labels: Mapping[str, str] | None = None
        found = []
        for q in self.values():
            if POD_TOPOLOGY_SPREAD in q.unschedulable_plugins and q.pod_info.namespace == pod.namespace:
                found.append(q)
                continue
            for term in q.pod_info.required_affinity:
                if labels is None:
                    labels = ns_labels(pod.namespace) if ns_labels is not None else {}
                if term.matches(pod, labels):
                    found.append(q)
                    break
        return found


def _drop(index: dict[Any, set[str]], at: Any, key: str) -> None:
    held = index.get(at)
    if held is not None:
        held.discard(key)
        if not held:
            del index[at]
