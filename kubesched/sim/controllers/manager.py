"""Runs the workload controllers over a store: every write that may concern a workload queues
it (a pod queues its controller, a ReplicaSet its Deployment, a node every DaemonSet), and
:meth:`ControllerManager.run_pending` reconciles what is queued, until nothing is left."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store, now_rfc3339
from kubesched.framework.features import FeatureGates
from kubesched.objects import Obj
from kubesched.sim.controllers.common import Names
from kubesched.sim.controllers.daemonset import reconcile_daemonset
from kubesched.sim.controllers.deployment import reconcile_deployment
from kubesched.sim.controllers.disruption import reconcile_budget
from kubesched.sim.controllers.job import reconcile_job
from kubesched.sim.controllers.replicaset import reconcile_replicaset
from kubesched.sim.controllers.resourceclaim import (
    ClaimOwners,
    claims_of_group,
    pod_group_needs_claims,
    pod_needs_claims,
    reconcile_claim,
    reconcile_pod_claims,
    reconcile_pod_group_claims,
)
from kubesched.sim.controllers.statefulset import reconcile_statefulset
from kubesched.sim.controllers.workloads import KINDS as SCHEDULING_KINDS
from kubesched.sim.controllers.workloads import POD_GROUP, collect_garbage, dependents, pod_group_of, protect
from kubesched.tasks import TaskSet

log = logging.getLogger(__name__)

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "Job", "StatefulSet", "DaemonSet", "ReplicationController")

#: Workloads whose size is spec.replicas.
_COUNTED = frozenset({"Deployment", "ReplicaSet", "ReplicationController", "StatefulSet"})

#: Reconciles per run before giving up on a workload that never settles (a bug, not a state).
_MAX_ROUNDS = 100_000


class ControllerManager:
    """The simulated kube-controller-manager. ``feature_gates`` are the simulator's: with
    GenericWorkload on, PodGroups are protected and Workloads and PodGroups garbage-collected
    with their owners; with WorkloadWithJob too, Jobs get their Workload and PodGroup; with
    GenericWorkload off, nothing of workload-aware scheduling happens. ``now`` is the time the
    controllers write (RFC 3339): the simulated clock's where time is simulated."""

    def __init__(
        self, store: Store, feature_gates: FeatureGates | None = None, now: Callable[[], str] = now_rfc3339
    ) -> None:
        self.store = store
        #: The time the controllers stamp (a Job's startTime, completionTime): the simulated clock's.
        self.now = now
        self.feature_gates = feature_gates if feature_gates is not None else FeatureGates()
        self.workloads = self.feature_gates.enabled("GenericWorkload")
        #: The Job controller's integration has a gate of its own (WorkloadWithJob, alpha in
        #: 1.37), on top of GenericWorkload's API.
        self.jobs_get_workloads = self.workloads and self.feature_gates.enabled("WorkloadWithJob")
        #: ResourceClaims shared by a PodGroup (DRAWorkloadResourceClaims, on GenericWorkload's API).
        self.group_claims = self.workloads and self.feature_gates.enabled("DRAWorkloadResourceClaims")
        self.names = Names(store)
        self._queue: dict[tuple[str, str, str], None] = {}
        self._wake = asyncio.Event() if _has_loop() else None
        #: The reconciling task's owner (:meth:`start` to :meth:`stop`).
        self._tasks = TaskSet("controllers", log)
        self._unsubscribe: Callable[[], None] | None = None
        #: The claims of each owner, while following the store (see :meth:`_owners`).
        self.claim_owners = ClaimOwners()
        self._reconcilers: dict[str, Callable[[Obj], None]] = {
            "Deployment": lambda o: reconcile_deployment(store, o),
            # Pods are admitted under the simulator's gates, as the API server admits them.
            "ReplicaSet": lambda o: reconcile_replicaset(store, o, self.names, gates=self.feature_gates),
            "ReplicationController": lambda o: reconcile_replicaset(
                store, o, self.names, "ReplicationController", self.feature_gates
            ),
            "Job": lambda o: reconcile_job(store, o, self.names, self.jobs_get_workloads, self.now, self.feature_gates),
            "StatefulSet": lambda o: reconcile_statefulset(store, o, self.feature_gates),
            "DaemonSet": lambda o: reconcile_daemonset(store, o, self.names, self.feature_gates),
            "PodDisruptionBudget": lambda o: reconcile_budget(store, o),
            # The resource-claim controller: claims from a pod's templates, reservations of
            # pods that are gone.
            "Pod": lambda o: reconcile_pod_claims(store, o, self.feature_gates, self._owners()),
            "ResourceClaim": lambda o: reconcile_claim(store, o, self.feature_gates),
        }
        if self.workloads:
            # The garbage collector's part for the scheduling kinds: gone when their owners are.
            for kind in SCHEDULING_KINDS:
                self._reconcilers[kind] = functools.partial(self._collect, kind)

    # --- following the store -----------------------------------------------------------------
    def follow(self) -> None:
        """Queue every workload the store holds now, and whatever changes from now on."""
        self._unsubscribe = self.store.subscribe(self._on_write)
        for claim in self.store.list("ResourceClaim")[0]:
            self.claim_owners.observe("ADDED", claim)
        kinds = (*WORKLOAD_KINDS, "PodDisruptionBudget", *(SCHEDULING_KINDS if self.workloads else ()))
        for kind in kinds:
            items, _ = self.store.list(kind)
            for obj in items:
                self._enqueue(kind, obj)
        for pod in self.store.list("Pod")[0]:
            if pod_needs_claims(pod):
                self._enqueue("Pod", pod)

    def _enqueue(self, kind: str, obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        self._queue[(kind, meta.get("namespace") or "", meta.get("name", ""))] = None
        if self._wake is not None:
            self._wake.set()

    def _owners(self) -> ClaimOwners | None:
        """The claims by owner, kept only while following the store (otherwise each lookup
        reads the namespace's claims)."""
        return self.claim_owners if self._unsubscribe is not None else None

    def _on_write(self, etype: str, kind: str, obj: Obj, old: Obj | None) -> None:
        if kind == "ResourceClaim":
            self.claim_owners.observe(etype, obj)
        if kind in WORKLOAD_KINDS or kind == "PodDisruptionBudget":
            self._enqueue(kind, obj)
        if self.workloads:
            if etype == "DELETED":
                for dep_kind, dep in dependents(self.store, obj):
                    self._enqueue(dep_kind, dep)
            elif kind in SCHEDULING_KINDS:
                self._enqueue(kind, obj)  # an owner may be gone already
            if kind in SCHEDULING_KINDS:
                # A Job finds its objects again when they change or go.
                self._enqueue_controller(obj)
            if kind == POD_GROUP and self.group_claims:
                self._on_pod_group_write(etype, obj)
            if kind == "Pod" and (group := pod_group_of(obj)) is not None:
                # Protection: a pod that finished or went may have been its group's last user.
                finished = (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed")
                if etype == "DELETED" or finished:
                    ns = (obj.get("metadata") or {}).get("namespace") or ""
                    self._queue[(POD_GROUP, ns, group)] = None
                    if self._wake is not None:
                        self._wake.set()
        if kind == "Pod":
            self._on_pod_write(etype, obj)
            # Budgets count the pods they select: any pod change in a namespace with budgets.
            items, _ = self.store.list("PodDisruptionBudget", (obj.get("metadata") or {}).get("namespace"))
            for pdb in items:
                self._enqueue("PodDisruptionBudget", pdb)
        if kind in ("Pod", "ReplicaSet"):
            self._enqueue_controller(obj)
        elif kind == "ResourceClaimTemplate" and etype != "DELETED":
            for pod in self.store.list("Pod", (obj.get("metadata") or {}).get("namespace"))[0]:
                if pod_needs_claims(pod):
                    self._enqueue("Pod", pod)
            if self.group_claims:
                for pg in self.store.list(POD_GROUP, (obj.get("metadata") or {}).get("namespace"))[0]:
                    if pod_group_needs_claims(pg):
                        self._enqueue(POD_GROUP, pg)
        elif kind == "Node":
            items, _ = self.store.list("DaemonSet")
            for ds in items:
                self._enqueue("DaemonSet", ds)

    def _enqueue_controller(self, obj: Obj) -> None:
        for ref in (obj.get("metadata") or {}).get("ownerReferences") or ():
            if ref.get("controller") and ref.get("kind") in WORKLOAD_KINDS:
                ns = (obj.get("metadata") or {}).get("namespace") or ""
                self._queue[(ref["kind"], ns, ref.get("name", ""))] = None
                if self._wake is not None:
                    self._wake.set()

    def _collect(self, kind: str, obj: Obj) -> None:
        collect_garbage(self.store, kind, obj)
        if kind == POD_GROUP:
            try:
                current = self.store.get(kind, obj["metadata"].get("namespace"), obj["metadata"]["name"])
            except NotFound:
                return
            protect(self.store, current)
            if self.group_claims:
                # The resource-claim controller's part: the group's claims from its templates.
                reconcile_pod_group_claims(self.store, current, self.feature_gates, self._owners())

    def _on_pod_group_write(self, etype: str, group: Obj) -> None:
        """DRAWorkloadResourceClaims: a group gone takes its claims and reservations along; a
        group whose claims were made lets its waiting members record them."""
        ns = (group.get("metadata") or {}).get("namespace") or ""
        if etype == "DELETED":
            for claim in claims_of_group(self.store, group):
                self._queue[("ResourceClaim", ns, claim["metadata"]["name"])] = None
        else:
            name = (group.get("metadata") or {}).get("name")
            for pod in self.store.list("Pod", ns or None)[0]:
                if pod_group_of(pod) == name and pod_needs_claims(pod):
                    self._queue[("Pod", ns, pod["metadata"]["name"])] = None
        if self._wake is not None:
            self._wake.set()

    def _on_pod_write(self, etype: str, pod: Obj) -> None:
        """A pod's template claims to make, or the claims it used to release."""
        spec = pod.get("spec") or {}
        if not spec.get("resourceClaims"):
            return
        if etype != "DELETED" and pod_needs_claims(pod):
            self._enqueue("Pod", pod)
        if etype == "DELETED" or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            ns = (pod.get("metadata") or {}).get("namespace") or ""
            for status in (pod.get("status") or {}).get("resourceClaimStatuses") or ():
                if status.get("resourceClaimName"):
                    self._queue[("ResourceClaim", ns, status["resourceClaimName"])] = None
            for claim in spec.get("resourceClaims") or ():
                if claim.get("resourceClaimName"):
                    self._queue[("ResourceClaim", ns, claim["resourceClaimName"])] = None
            if self._wake is not None:
                self._wake.set()

    # --- reconciling --------------------------------------------------------------------------
    def pending(self) -> bool:
        return bool(self._queue)

    def run_pending(self) -> int:
        """Reconcile until the queue is empty; how many reconciles ran."""
        rounds = 0
        while self._queue and rounds < _MAX_ROUNDS:
            key = next(iter(self._queue))
            del self._queue[key]
            kind, ns, name = key
            try:
                obj = self.store.get(kind, ns or None, name)
            except NotFound:
                continue  # deleted: its pods stay, as with orphaning (no garbage collector)
            if kind in _COUNTED and (obj.get("spec") or {}).get("replicas") is None:
                # The API server always defaults it; a scenario's workload without one only
                # selects pods (for spreading), as scenarios have always used them.
                continue
            try:
                self._reconcilers[kind](obj)
            except Exception:  # one broken workload must not stop the others
                log.exception("reconciling %s %s/%s failed", kind, ns, name)
            rounds += 1
        return rounds

    async def run(self) -> None:
        """Reconcile whenever something is queued, until cancelled."""
        assert self._wake is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            self.run_pending()
            await asyncio.sleep(0)

    def start(self) -> None:
        self.follow()
        self._tasks.spawn(self.run(), name="controllers")

    async def stop(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
            self.claim_owners = ClaimOwners()
        await self._tasks.cancel()


def _has_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


__all__ = ["WORKLOAD_KINDS", "ControllerManager"]
