"""``sim serve --import-from KUBECONFIG``: copy a live cluster into the simulated one, as
kube-scheduler-simulator's importer does, and with ``--sync`` keep following it (its syncer).

What is copied: namespaces, priority classes, storage classes, CSI nodes, CSI drivers and the
storage capacity they report (CSIStorageCapacity, where the source serves them), persistent
volumes and claims, PodDisruptionBudgets, the DRA kinds (device classes, resource slices, claim templates and
claims, where the source serves resource.k8s.io/v1), Workloads, PodGroups and CompositePodGroups
(where the source serves scheduling.k8s.io v1beta1, or v1alpha3 for the last; status included),
nodes and pods (a pod's ``spec.schedulingGroup`` kept) (bound ones stay on their
nodes; pending ones stay pending, for the simulator's scheduler to place). ``--selector`` (a label selector) narrows the
pods and nodes copied. Objects lose what the source server set (uid, resourceVersion, managed
fields); pods owned by a controller keep their owner references only as labels carry them (the
simulator's controllers do not take over a live cluster's workloads). A ResourceClaim keeps its
owner reference to a pod copied here, pointed at that pod's uid here (the claims a pod's
templates made must be its own, or the pod waits); its allocation and reservations stay.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable, Iterable

from kubesched.cluster.base import Conflict, NotFound
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.store import Store
from kubesched.objects import Obj
from kubesched.tasks import TaskSet

log = logging.getLogger(__name__)


#: kind → (list path, whether --selector applies), in the order objects are created.
IMPORTED: dict[str, tuple[str, bool]] = {
    "Namespace": ("/api/v1/namespaces", False),
    "PriorityClass": ("/apis/scheduling.k8s.io/v1/priorityclasses", False),
    "StorageClass": ("/apis/storage.k8s.io/v1/storageclasses", False),
    "CSINode": ("/apis/storage.k8s.io/v1/csinodes", False),
    "CSIDriver": ("/apis/storage.k8s.io/v1/csidrivers", False),
    "CSIStorageCapacity": ("/apis/storage.k8s.io/v1/csistoragecapacities", False),
    "PersistentVolume": ("/api/v1/persistentvolumes", False),
    "PersistentVolumeClaim": ("/api/v1/persistentvolumeclaims", False),
    "PodDisruptionBudget": ("/apis/policy/v1/poddisruptionbudgets", False),
    "DeviceClass": ("/apis/resource.k8s.io/v1/deviceclasses", False),
    "ResourceSlice": ("/apis/resource.k8s.io/v1/resourceslices", False),
    "ResourceClaimTemplate": ("/apis/resource.k8s.io/v1/resourceclaimtemplates", False),
    # Workload-aware scheduling (1.37): a pod's group before the pod.
    "Workload": ("/apis/scheduling.k8s.io/v1beta1/workloads", False),
    "PodGroup": ("/apis/scheduling.k8s.io/v1beta1/podgroups", False),
    "CompositePodGroup": ("/apis/scheduling.k8s.io/v1alpha3/compositepodgroups", False),
    "Node": ("/api/v1/nodes", True),
    "Pod": ("/api/v1/pods", True),
    # After the pods: a claim's owner is pointed at the pod's uid here.
    "ResourceClaim": ("/apis/resource.k8s.io/v1/resourceclaims", False),
}
#: Kinds a cluster may not serve (a 404 on their list): then there is nothing of them to copy.
OPTIONAL = frozenset(
    {
        "CSIDriver",
        "CSIStorageCapacity",
        "DeviceClass",
        "ResourceSlice",
        "ResourceClaimTemplate",
        "ResourceClaim",
        # Served only where kube-apiserver has GenericWorkload (CompositePodGroup) and the API on.
        "Workload",
        "PodGroup",
        "CompositePodGroup",
    }
)

_SERVER_FIELDS = ("uid", "resourceVersion", "managedFields", "selfLink", "generation")


def copied(kind: str, obj: Obj, pod_uid: Callable[[str, str], str | None] | None = None) -> Obj:
    """``obj`` as the simulated cluster stores it; ``pod_uid(namespace, name)``: the uid here of
    a pod copied here (None for another), for a ResourceClaim's owner."""
    out = copy.deepcopy(obj)
    out["kind"] = kind
    meta = out.setdefault("metadata", {})
    for key in _SERVER_FIELDS:
        meta.pop(key, None)
    owners = meta.pop("ownerReferences", None) or ()  # their uids would mean nothing here
    if kind == "ResourceClaim" and pod_uid is not None:
        mine = []
        for ref in owners:
            uid = pod_uid(meta.get("namespace") or "", ref.get("name", "")) if ref.get("kind") == "Pod" else None
            if uid:
                mine.append({**ref, "uid": uid})
        if mine:
            meta["ownerReferences"] = mine
    if kind == "Pod" and not (out.get("spec") or {}).get("nodeName"):
        # Pending: the simulator's scheduler decides, from a clean slate.
        status = out.setdefault("status", {})
        status.pop("nominatedNodeName", None)
        status["conditions"] = [c for c in status.get("conditions") or () if c.get("type") != "PodScheduled"]
    return out


class Importer:
    """Copies a cluster reachable with ``kubeconfig`` into ``store``; :meth:`sync` follows it."""

    def __init__(self, store: Store, kubeconfig: str, selector: str = "", context: str | None = None) -> None:
        self.store = store
        self.selector = selector
        self.source = KubeCluster(kubeconfig=kubeconfig, context=context)
        self.versions: dict[str, str] = {}
        self.copied = 0
        #: What came from the source, per kind: only these are deleted when the source drops them.
        self.imported: dict[str, set[tuple[str, str]]] = {kind: set() for kind in IMPORTED}
        #: Optional kinds the source does not serve: neither copied nor followed.
        self.unserved: set[str] = set()
        #: Called with ("ADDED" | "MODIFIED" | "DELETED", kind, object as copied) for everything
        #: seen of the source, whether or not it lands here (``--record``).
        self.observers: list[Callable[[str, str, Obj], None]] = []

    def _notify(self, etype: str, kind: str, obj: Obj) -> None:
        if not self.observers:
            return
        path = IMPORTED[kind][0].split("/")
        obj.setdefault("apiVersion", "v1" if path[1] == "api" else f"{path[2]}/{path[3]}")
        for observer in self.observers:
            observer(etype, kind, obj)

    async def run_once(self) -> int:
        """Copy every imported kind; the number of objects copied."""
        for kind, (path, selected) in IMPORTED.items():
            query = [("labelSelector", self.selector)] if selected and self.selector else []
            try:
                listed = await self.source.request("GET", path, query=query)
            except NotFound:
                if kind not in OPTIONAL:
                    raise
                self.unserved.add(kind)
                continue
            self.versions[kind] = (listed.get("metadata") or {}).get("resourceVersion", "")
            for item in listed.get("items") or ():
                self._put(kind, item)
        return self.copied

    def _put(self, kind: str, obj: Obj) -> None:
        local = copied(kind, obj, self._pod_uid)
        meta = local["metadata"]
        ns = meta.get("namespace")
        try:
            current = self.store.get(kind, ns, meta["name"])
        except NotFound:
            current = None
        self._notify("MODIFIED" if _key(local) in self.imported[kind] else "ADDED", kind, copy.deepcopy(local))
        if current is not None and kind == "Pod":
            here = (current.get("spec") or {}).get("nodeName")
            if here and not (local.get("spec") or {}).get("nodeName"):
                return  # placed here by the simulator's scheduler: the source's pending copy is older news
        try:
            if current is None:
                self.store.create(kind, local)
            else:
                local["metadata"]["uid"] = current["metadata"].get("uid")
                self.store.update(kind, local)
            self.copied += 1
            self.imported[kind].add(_key(local))
        except (Conflict, ValueError) as exc:
            log.warning("import: %s %s/%s not copied: %s", kind, ns or "", meta.get("name"), exc)

    def _pod_uid(self, namespace: str, name: str) -> str | None:
        """The uid here of a pod copied from the source."""
        if (namespace, name) not in self.imported["Pod"]:
            return None
        try:
            return str(self.store.get("Pod", namespace, name)["metadata"].get("uid") or "") or None
        except NotFound:
            return None

    def _drop(self, kind: str, obj: Obj) -> None:
        if _key(obj) not in self.imported[kind]:
            return  # made here, not imported: not the source's to delete
        self.imported[kind].discard(_key(obj))
        self._notify("DELETED", kind, copied(kind, obj))
        meta = obj.get("metadata") or {}
        try:
            self.store.delete(kind, meta.get("namespace"), meta.get("name", ""))
        except NotFound:
            pass

    async def sync(self, stop: asyncio.Event) -> None:
        """Follow the source's changes (watches, re-listing when one ends) until ``stop``."""
        async with TaskSet("import sync", log) as tasks:
            for kind in IMPORTED:
                if kind not in self.unserved:
                    tasks.spawn(self._follow(kind, stop), name=f"import follow {kind}")
            await stop.wait()

    async def _follow(self, kind: str, stop: asyncio.Event) -> None:
        path, selected = IMPORTED[kind]
        while not stop.is_set():
            query = [("watch", "true"), ("resourceVersion", self.versions.get(kind, ""))]
            if selected and self.selector:
                query.append(("labelSelector", self.selector))
            try:
                resp = await self.source.open("GET", path, query=query, timeout=None)
                try:
                    async for line in resp.content:
                        if line.strip():
                            self._apply(kind, line)
                finally:
                    resp.release()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the source may go away for a while
                log.warning("sync of %s: %s; listing again", kind, exc)
                await asyncio.sleep(1.0)
                try:
                    await self._relist(kind)
                except Exception:  # noqa: BLE001 - still away: the next round tries again
                    continue

    def _apply(self, kind: str, line: bytes) -> None:
        import json

        event = json.loads(line)
        obj = event.get("object") or {}
        version = (obj.get("metadata") or {}).get("resourceVersion")
        if version:
            self.versions[kind] = version
        if event.get("type") in ("ADDED", "MODIFIED"):
            self._put(kind, obj)
        elif event.get("type") == "DELETED":
            self._drop(kind, obj)

    async def _relist(self, kind: str) -> None:
        path, selected = IMPORTED[kind]
        query = [("labelSelector", self.selector)] if selected and self.selector else []
        listed = await self.source.request("GET", path, query=query)
        self.versions[kind] = (listed.get("metadata") or {}).get("resourceVersion", "")
        names = set()
        for item in listed.get("items") or ():
            self._put(kind, item)
            names.add(_key(item))
        gone: Iterable[Obj] = [o for o in self.store.list(kind)[0] if _key(o) not in names]
        for obj in gone:
            self._drop(kind, obj)

    async def close(self) -> None:
        await self.source.stop()


def _key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace") or "", meta.get("name", "")


__all__ = ["IMPORTED", "Importer", "copied"]
