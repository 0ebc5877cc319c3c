"""The unschedulable pool: pods rejected by plugins, as upstream's unschedulablePods.

A pod leaves it only on a cluster event that one of its rejecting plugins registered for (and
whose queueing hint says Queue), or after the queue's ``max_unschedulable_duration`` (5 minutes
upstream). Pods gated by a PreEnqueue plugin wait here too, until an event lets their gate's
re-check pass.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from kubesched.framework.types import PodInfo, QueuedPodInfo

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
    """The pooled pods by uid."""

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
