"""SySched: prefer the nodes where a pod adds the fewest extraneous system calls.

scheduler-plugins' ``pkg/sysched``, point by point:

* **Score** — the ExS (extraneous system calls) metric. With ``P`` the pod's system calls
  (:mod:`.profiles`), ``H`` the union of those of the pods seen on the node and ``p_i`` each of
  theirs: ``|H - P| + sum_i |(H | P) - p_i|``, the calls the node's other pods could make that
  the pod never does, plus, for each pod already there, those it would then be exposed to. A node
  with no pod seen scores 0; a pod of no system call at all (no profile of its own, the default
  one unreadable) scores the largest int64 everywhere.
* **NormalizeScore** — upstream's ``DefaultNormalizeScore`` reversed: ``100 - 100 * s / max``
  (Go's int64 arithmetic: for the largest int64 the product wraps, and every node gets 100), all
  100 when the highest score is 0. Fewer extraneous calls, a higher score.
* **the pods on each node** — kept from the pod informer, as upstream's handlers do
  (:mod:`.hosts`): a pod added while ``Running``; a pod updated whose *old* state was ``Pending``
  with a ``status.hostIP`` (its kubelet has taken it: the old object is what is added); a pod
  deleted leaves its node, whose set is recomputed. A pod is not counted at Reserve or bind: only
  once its kubelet reports it. In the simulator no kubelet does, so a pod placed during a run
  counts once something sets its ``hostIP`` (see the README).

The SeccompProfile objects come from the cluster through ``handle.informer_for``; a pod event
that arrives before their first list has been delivered is held until it has (upstream's client
waits for its cache to sync before its first read).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from kubesched import MAX_NODE_SCORE, CycleState, GroupVersionResource, Handle, NodeInfo, NodeScore, PodInfo, Status

from .args import SySchedArgs
from .hosts import Hosts
from .profiles import SECCOMP_PROFILES, pod_syscalls

log = logging.getLogger(__name__)

NAME = "SySched"
PODS = GroupVersionResource("", "v1", "pods")
#: Go's ``math.MaxInt64``: the score of a pod with no system call.
MAX_INT64 = 2**63 - 1


def _int64(value: int) -> int:
    """``value`` as Go's int64 arithmetic leaves it (two's complement wrap-around)."""
    return (value + 2**63) % 2**64 - 2**63


def _go_div(a: int, b: int) -> int:
    """``a / b`` on Go integers: truncated toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """kube-scheduler's ``helper.DefaultNormalizeScore`` in int64 arithmetic, in place."""
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        value = _go_div(_int64(max_priority * s.score), max_count)
        s.score = max_priority - value if reverse else value


def calc_score(syscalls: set[str]) -> int:
    """The ExS contribution of a set of extraneous system calls: their number (upstream weighs
    no call as critical yet: every one counts 1)."""
    return len(syscalls)


class SySched:
    """Score (with NormalizeScore) by the extraneous system calls a pod would add to a node."""

    name = NAME
    Args = SySchedArgs

    def __init__(self, args: SySchedArgs | None = None, handle: Handle | None = None) -> None:
        self.args = args if args is not None else SySchedArgs.model_validate({})
        self.handle = handle
        self.default_profile_namespace = self.args.default_profile_namespace
        self.default_profile_name = self.args.default_profile_name
        #: SeccompProfile objects by ``(namespace, name)``, for a handle without informers (tests).
        self.profiles: dict[tuple[str, str], Mapping[str, Any]] = {}
        self.hosts = Hosts(self.get_syscalls)
        #: The running mean of the ExS scores given (upstream keeps it, for its logs).
        self.exs_avg = 0.0
        self.exs_avg_count = 1
        self._lister: Any = None
        self._synced: Callable[[], bool] = lambda: True
        #: Pod events that arrived before the SeccompProfiles were listed.
        self._held: list[Callable[[], None]] = []
        informer_for = getattr(handle, "informer_for", None)
        if informer_for is not None:
            informer = informer_for(SECCOMP_PROFILES)
            self._lister = informer.lister
            self._synced = informer.has_synced
            informer_for(PODS).add_event_handler(
                on_add=lambda pod: self._when_synced(lambda: self.pod_added(pod)),
                on_update=lambda old, new: self._when_synced(lambda: self.pod_updated(old, new)),
                on_delete=lambda pod: self._when_synced(lambda: self.pod_deleted(pod)),
            )

    # --- the profiles ----------------------------------------------------------------------------
    def lookup(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        """SeccompProfile ``namespace/name`` as the cluster has it now."""
        if self._lister is not None:
            found: Mapping[str, Any] | None = self._lister.get(namespace, name)
            return found
        return self.profiles.get((namespace, name))

    def add_profile(self, obj: Mapping[str, Any]) -> None:
        """Give a SeccompProfile directly (a harness without informers)."""
        meta = obj.get("metadata") or {}
        self.profiles[(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))] = obj

    def get_syscalls(self, pod: Mapping[str, Any]) -> set[str]:
        """The system calls ``pod`` is taken to make (:func:`~.profiles.pod_syscalls`)."""
        return pod_syscalls(pod, self.lookup, self.default_profile_namespace, self.default_profile_name)

    # --- the pods on each node -------------------------------------------------------------------
    def _when_synced(self, event: Callable[[], None]) -> None:
        self._held.append(event)
        self._drain()

    def _drain(self) -> None:
        if not self._held or not self._synced():
            return
        held, self._held = self._held, []
        for event in held:
            event()

    def pod_added(self, pod: Mapping[str, Any]) -> None:
        """A pod already running when seen (the scheduler started after it) is counted."""
        if (pod.get("status") or {}).get("phase") == "Running":
            log.debug("POD ADDED: %s", _key(pod))
            self.hosts.add_pod(pod)

    def pod_updated(self, old: Mapping[str, Any], new: Mapping[str, Any] | None) -> None:
        """A pod whose old state was Pending with a host IP (its kubelet has it) is counted, as
        that old state."""
        status = old.get("status") or {}
        if status.get("phase") == "Pending" and status.get("hostIP"):
            log.debug("POD UPDATED. %s", _key(old))
            self.hosts.add_pod(old)

    def pod_deleted(self, pod: Mapping[str, Any]) -> None:
        log.debug("POD DELETED: %s", _key(pod))
        self.hosts.remove_pod(pod)

    # --- Score -----------------------------------------------------------------------------------
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status | None]:
        self._drain()
        if node.node is None:
            return 0, None
        pod_calls = self.get_syscalls(pod.pod)
        if not pod_calls:
            return MAX_INT64, None
        _, host_calls = self.hosts.host_syscalls_of(node.name)
        if host_calls is None:
            return 0, None
        total = calc_score(host_calls - pod_calls)
        with_pod = host_calls | pod_calls
        for other in self.hosts.host_to_pods.get(node.name, ()):
            total += calc_score(with_pod - self.get_syscalls(other))
        self.exs_avg += (total - self.exs_avg) / self.exs_avg_count
        self.exs_avg_count += 1
        log.debug("Score: totalDiffs %d ExSAvg %s pod %s node %s", total, self.exs_avg, pod.name, node.name)
        return total, None

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, True, scores)
        return None


def _key(pod: Mapping[str, Any]) -> str:
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
