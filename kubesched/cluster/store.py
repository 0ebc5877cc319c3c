"""An in-memory object store with resourceVersions and watch fan-out.

This is the cluster the simulator runs, and what the embedded API server serves. Every write
bumps one store-wide resourceVersion (as etcd's revision does), stamps it on the object, and
appends a watch event to a bounded history so that a watcher can resume from a version or be
told it is too old (410 Gone).
"""

from __future__ import annotations

import base64
import bisect
import builtins
import copy
import itertools
import json
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from kubesched.cluster.base import ClusterError, Conflict, Invalid, NotFound
from kubesched.cluster.custom_resources import CRD_API_VERSION, CRD_KIND, CustomResourceRegistry
from kubesched.objects import Obj, namespaced_name

if TYPE_CHECKING:
    from kubesched.framework.features import FeatureGates

WatchEvent = tuple[int, str, str, Obj, Obj | None]  # (rv, ADDED|MODIFIED|DELETED, kind, obj, old)
Subscriber = Callable[[str, str, Obj, "Obj | None"], None]

CLUSTER_SCOPED = frozenset(
    {
        "Node",
        "Namespace",
        "PriorityClass",
        "PersistentVolume",
        "StorageClass",
        "CSINode",
        "CSIDriver",
        "DeviceClass",
        "ResourceSlice",
        "DeviceTaintRule",
        "ClusterRole",
        "ClusterRoleBinding",
        CRD_KIND,
    }
)

API_VERSIONS = {
    "Pod": "v1",
    "Node": "v1",
    "Namespace": "v1",
    "Event": "v1",
    "PriorityClass": "scheduling.k8s.io/v1",
    "Lease": "coordination.k8s.io/v1",
    "PersistentVolume": "v1",
    "PersistentVolumeClaim": "v1",
    "StorageClass": "storage.k8s.io/v1",
    "CSINode": "storage.k8s.io/v1",
    "CSIDriver": "storage.k8s.io/v1",
    "CSIStorageCapacity": "storage.k8s.io/v1",
    "PodDisruptionBudget": "policy/v1",
    "Service": "v1",
    "ReplicationController": "v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
    "ConfigMap": "v1",
    "Secret": "v1",
    "Deployment": "apps/v1",
    "DaemonSet": "apps/v1",
    "Job": "batch/v1",
    "DeviceClass": "resource.k8s.io/v1",
    "ResourceSlice": "resource.k8s.io/v1",
    "DeviceTaintRule": "resource.k8s.io/v1",
    "ResourceClaim": "resource.k8s.io/v1",
    "ResourceClaimTemplate": "resource.k8s.io/v1",
    # Workload-aware scheduling (1.37): stored as v1beta1, CompositePodGroup (alpha) as v1alpha3.
    "Workload": "scheduling.k8s.io/v1beta1",
    "PodGroup": "scheduling.k8s.io/v1beta1",
    "CompositePodGroup": "scheduling.k8s.io/v1alpha3",
    CRD_KIND: CRD_API_VERSION,
}


_last_second: list[Any] = [None, ""]


def now_rfc3339() -> str:
    """The current time as the API server stamps it (whole seconds, UTC)."""
    second = int(time.time())
    if _last_second[0] != second:
        _last_second[0] = second
        _last_second[1] = datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(_last_second[1])


def json_copy(obj: Any) -> Any:
    """A deep copy of a JSON-shaped value (dicts, lists, immutable leaves): what ``copy.deepcopy``
    gives for one, without its memo bookkeeping (several times faster). Other containers are
    copied by ``copy.deepcopy``."""
    t = type(obj)
    if t is dict:
        return {k: json_copy(v) if type(v) in _CONTAINERS else v for k, v in obj.items()}
    if t is list:
        return [json_copy(v) if type(v) in _CONTAINERS else v for v in obj]
    if t in _IMMUTABLE:
        return obj
    return copy.deepcopy(obj)


_CONTAINERS = (dict, list)
_IMMUTABLE = frozenset({str, int, float, bool, type(None)})


class Gone(ClusterError):
    """The requested resourceVersion is older than the history kept (HTTP 410)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, 410)


#: How long the first page of a list keeps its snapshot for the pages after it (kube-apiserver
#: serves continue tokens until etcd compacts their revision, every five minutes by default).
LIST_SNAPSHOT_SECONDS = 300.0
#: Snapshots kept at once (the oldest dropped first): each is one reference per object listed.
LIST_SNAPSHOTS_KEPT = 16
#: kube-apiserver's answer to a continue token whose snapshot is gone.
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter."
)


class BadContinue(ClusterError):
    """A continue token this store did not issue (HTTP 400)."""

    def __init__(self, message: str) -> None:
        super().__init__(f"continue key is not valid: {message}", 400)


@dataclass
class ListPage:
    """One page of a list: its objects, the resourceVersion of the whole list (the first
    page's), and the token of the next page ("" on the last)."""

    items: builtins.list[Obj]
    resource_version: int
    continue_token: str


def _sort_key(obj: Obj) -> tuple[str, str]:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


class Store:
    """Objects by kind and ``namespace/name``; writes notify subscribers synchronously."""

    def __init__(self, history: int = 10_000) -> None:
        self._objects: dict[str, dict[str, Obj]] = {}
        self._rv = itertools.count(1)
        self.resource_version = 0
        self._history: deque[WatchEvent] = deque(maxlen=history)
        self._subscribers: list[Subscriber] = []
        self._compacted = 0
        #: Paged lists' snapshots by (kind, namespace, resourceVersion): (made at, sort keys,
        #: objects), so that every page of one list shows the cluster as of its first page. Lists
        #: at one version share one (two replicas relisting at once); so none is dropped at its
        #: last page, only when too old or too many.
        self._snapshots: OrderedDict[tuple[str, str, int], tuple[float, list[tuple[str, str]], list[Obj]]] = (
            OrderedDict()
        )
        #: The custom resources the stored CustomResourceDefinitions declare; their objects are
        #: kept under ``plural.group`` (kubesched.cluster.custom_resources).
        self.custom_resources = CustomResourceRegistry()
        #: kube-apiserver's ClearingNominatedNodeNameAfterBinding gate (beta, on since 1.35): a
        #: binding clears ``status.nominatedNodeName``; with the gate off it is kept.
        self.clear_nominated_on_bind = True
        #: How a deleted pod bound to a node ends (kubesched.cluster.termination): "immediate",
        #: removed at once, as by a kubelet that stops it that moment; "graceful", marked and
        #: kept Terminating for its grace period until something removes it.
        self.pod_termination = "immediate"

    def follow_gates(self, gates: FeatureGates | None) -> None:
        """Behave as kube-apiserver does under ``gates`` (``None``: 1.37's defaults)."""
        if gates is not None:
            self.clear_nominated_on_bind = gates.enabled("ClearingNominatedNodeNameAfterBinding")

    def cluster_scoped(self, kind: str) -> bool:
        """Whether objects of ``kind`` (a built-in kind or a custom resource's key) have no namespace."""
        return kind in CLUSTER_SCOPED or ("." in kind and self.custom_resources.is_cluster_scoped(kind))

    # --- keys ---------------------------------------------------------------------------------
    def object_key(self, kind: str, namespace: str | None, name: str) -> str:
        """Where an object is kept in its kind's bucket: its name (cluster scoped, custom
        resources' scope as their definitions say), else ``namespace/name``."""
        return name if self.cluster_scoped(kind) else namespaced_name(namespace or "default", name)

    def _key_of(self, kind: str, obj: Obj) -> str:
        meta = obj.get("metadata") or {}
        return self.object_key(kind, meta.get("namespace"), meta.get("name", ""))

    # --- reads --------------------------------------------------------------------------------
    def get(self, kind: str, namespace: str | None, name: str) -> Obj:
        try:
            return self._objects[kind][self.object_key(kind, namespace, name)]
        except KeyError:
            raise NotFound(f'{kind.lower()}s "{name}" not found') from None

    def find(self, kind: str, namespace: str | None, name: str) -> Obj | None:
        """The object, or None when there is none (:meth:`get` without the exception, for
        callers to whom absence is the usual answer)."""
        return self._objects.get(kind, {}).get(self.object_key(kind, namespace, name))

    def list(self, kind: str, namespace: str | None = None) -> tuple[list[Obj], int]:
        objs = self._objects.get(kind, {})
        if namespace is None or self.cluster_scoped(kind):
            items = list(objs.values())
        else:
            items = [o for o in objs.values() if (o["metadata"].get("namespace") or "default") == namespace]
        return items, self.resource_version

    def list_page(
        self, kind: str, namespace: str | None, match: Callable[[Obj], bool], limit: int, token: str = ""
    ) -> ListPage:
        """Up to ``limit`` objects that ``match``, in (namespace, name) order, from the start or
        from where ``token`` (the previous page's) left off; as kube-apiserver pages a list.

        Every page of one list is cut from the snapshot its first page took, so a client that
        pages through sees one consistent state at one resourceVersion. Raises
        :class:`BadContinue` for a token this store did not issue, :class:`Gone` when its
        snapshot is no longer kept."""
        ns = "" if namespace is None or self.cluster_scoped(kind) else namespace
        now = time.monotonic()
        for key, (made, _, _) in builtins.list(self._snapshots.items()):
            if now - made > LIST_SNAPSHOT_SECONDS:
                del self._snapshots[key]
        if token:
            rv, start = _decode_continue(token)
            snap = self._snapshots.get((kind, ns, rv))
            if snap is None:
                raise Gone(CONTINUE_EXPIRED)
            _, keys, objs = snap
            pos = bisect.bisect_left(keys, start)
        else:
            items, rv = self.list(kind, namespace)
            objs = sorted(items, key=_sort_key)
            keys = [_sort_key(o) for o in objs]
            pos = 0
        page: builtins.list[Obj] = []
        while pos < len(objs) and len(page) < limit:
            if match(objs[pos]):
                page.append(objs[pos])
            pos += 1
        # Only a page with objects after it has a next one (kube-apiserver looks one further).
        while pos < len(objs) and not match(objs[pos]):
            pos += 1
        if pos >= len(objs):
            return ListPage(page, rv, "")
        self._snapshots[(kind, ns, rv)] = (now if not token else self._snapshots[(kind, ns, rv)][0], keys, objs)
        self._snapshots.move_to_end((kind, ns, rv))
        while len(self._snapshots) > LIST_SNAPSHOTS_KEPT:
            self._snapshots.popitem(last=False)
        return ListPage(page, rv, _encode_continue(rv, keys[pos]))

    def count(self, kind: str) -> int:
        return len(self._objects.get(kind, {}))

    # --- writes -------------------------------------------------------------------------------
    def _stamp(self, obj: Obj) -> int:
        rv = next(self._rv)
        self.resource_version = rv
        obj["metadata"]["resourceVersion"] = str(rv)
        return rv

    def _notify(self, rv: int, etype: str, kind: str, obj: Obj, old: Obj | None) -> None:
        if kind == CRD_KIND:
            self.custom_resources.observe(etype, obj)
        self._history.append((rv, etype, kind, obj, old))
        for sub in list(self._subscribers):
            sub(etype, kind, obj, old)

    def create(self, kind: str, obj: Obj, *, owned: bool = False) -> Obj:
        """Store a new object: a copy of ``obj``, or ``obj`` itself when the caller hands it over
        (``owned``: nothing else holds or will change it, as a request's decoded body)."""
        if not owned:
            obj = json_copy(obj)
        meta = obj.setdefault("metadata", {})
        if not meta.get("name"):
            if meta.get("generateName"):
                meta["name"] = f"{meta['generateName']}{uuid.uuid4().hex[:5]}"
            else:
                raise Invalid(f"{kind}: metadata.name: Required value: name or generateName is required")
        if not self.cluster_scoped(kind):
            meta["namespace"] = meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        custom = self.custom_resources.kind_for_key(kind) if "." in kind else None
        obj.setdefault("kind", custom[1] if custom else kind)
        obj.setdefault("apiVersion", custom[0] if custom else API_VERSIONS.get(kind, "v1"))
        key = self.object_key(kind, meta.get("namespace"), meta["name"])
        bucket = self._objects.setdefault(kind, {})
        if key in bucket:
            raise Conflict(f'{kind.lower()}s "{meta["name"]}" already exists')
        # Made only when absent (setdefault would make them for every object, given or not).
        if "uid" not in meta:
            meta["uid"] = str(uuid.uuid4())
        if "creationTimestamp" not in meta:
            meta["creationTimestamp"] = now_rfc3339()
        rv = self._stamp(obj)
        bucket[key] = obj
        self._notify(rv, "ADDED", kind, obj, None)
        return obj

    def update(self, kind: str, obj: Obj, check_version: bool = False) -> Obj:
        """Replace an object. With ``check_version`` a stale resourceVersion is a Conflict."""
        key = self._key_of(kind, obj)
        bucket = self._objects.get(kind, {})
        old = bucket.get(key)
        if old is None:
            raise NotFound(f'{kind.lower()}s "{obj["metadata"].get("name")}" not found')
        if check_version:
            want = (obj.get("metadata") or {}).get("resourceVersion")
            if want and want != old["metadata"]["resourceVersion"]:
                raise Conflict(
                    f'Operation cannot be fulfilled on {kind.lower()}s "{old["metadata"]["name"]}": '
                    "the object has been modified; please apply your changes to the latest version and try again"
                )
        return self._replace(kind, key, json_copy(obj), old)

    def _replace(self, kind: str, key: str, new: Obj, old: Obj) -> Obj:
        """Store ``new`` (owned by the store from now on) in place of ``old``."""
        new["metadata"]["uid"] = old["metadata"]["uid"]
        new["metadata"]["creationTimestamp"] = old["metadata"].get("creationTimestamp")
        if not self.cluster_scoped(kind):
            new["metadata"]["namespace"] = old["metadata"]["namespace"]
        new.setdefault("kind", kind)
        new.setdefault("apiVersion", old.get("apiVersion"))
        rv = self._stamp(new)
        self._objects[kind][key] = new
        self._notify(rv, "MODIFIED", kind, new, old)
        return new

    def mutate(
        self, kind: str, namespace: str | None, name: str, fn: Callable[[Obj], None], members: tuple[str, ...] = ()
    ) -> Obj:
        """Read-modify-write one object with ``fn`` applied to a copy. ``members``: ``fn``
        changes only the object's own members and the own members of these (and of its
        metadata): only those are copied, what is below them is shared (see
        :meth:`_mutate_members`); by default the whole object is copied."""
        if members:
            shallow = members if "metadata" in members else ("metadata", *members)
            return self._mutate_members(kind, namespace, name, shallow, fn)
        key = self.object_key(kind, namespace, name)
        old = self._objects.get(kind, {}).get(key)
        if old is None:
            raise NotFound(f'{kind.lower()}s "{name}" not found')
        obj = json_copy(old)
        fn(obj)
        return self._replace(kind, key, obj, old)

    def _mutate_members(
        self, kind: str, namespace: str | None, name: str, members: tuple[str, ...], fn: Callable[[Obj], None]
    ) -> Obj:
        """:meth:`mutate` for an ``fn`` that changes only the object's own members and the own
        members of ``members`` (a pod's binding): those are copied, what is below them is shared
        with the object replaced, as nothing changes a stored object in place."""
        key = self.object_key(kind, namespace, name)
        old = self._objects.get(kind, {}).get(key)
        if old is None:
            raise NotFound(f'{kind.lower()}s "{name}" not found')
        obj = dict(old)
        for member in members:
            if member in obj:
                value = obj[member]
                obj[member] = dict(value) if type(value) is dict else json_copy(value)
        fn(obj)
        return self._replace(kind, key, obj, old)

    def delete(self, kind: str, namespace: str | None, name: str) -> Obj:
        if kind == CRD_KIND:
            # As the API server's cleanup finalizer: a definition's objects go before it does.
            resource = self.custom_resources.by_definition(name)
            if resource is not None:
                for obj in builtins.list(self._objects.get(resource.key, {}).values()):
                    meta = obj["metadata"]
                    self.delete(resource.key, meta.get("namespace"), meta["name"])
        key = self.object_key(kind, namespace, name)
        bucket = self._objects.get(kind, {})
        old = bucket.pop(key, None)
        if old is None:
            raise NotFound(f'{kind.lower()}s "{name}" not found')
        gone = copy.copy(old)
        gone["metadata"] = dict(old["metadata"])
        rv = self._stamp(gone)
        self._notify(rv, "DELETED", kind, gone, old)
        return gone

    def bind(self, namespace: str, name: str, node_name: str) -> Obj:
        """The pods/binding subresource: set ``spec.nodeName`` once; a second bind conflicts."""

        def assign(p: Obj) -> None:
            current = (p.get("spec") or {}).get("nodeName")
            if current:
                raise Conflict(f'pod {name} is already assigned to node "{current}"')
            # The API server accepts a binding to any node name; kubelets never start such a pod.
            p["spec"]["nodeName"] = node_name
            status = p.setdefault("status", {})
            conds = [c for c in status.get("conditions") or () if c.get("type") != "PodScheduled"]
            conds.append(
                {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": now_rfc3339()}
            )
            status["conditions"] = conds
            # kube-apiserver clears it on binding (ClearingNominatedNodeNameAfterBinding, on
            # since 1.35): the pod is where it is going.
            if self.clear_nominated_on_bind:
                status.pop("nominatedNodeName", None)

        return self._mutate_members("Pod", namespace, name, ("metadata", "spec", "status"), assign)

    # --- watch --------------------------------------------------------------------------------
    def kinds(self) -> builtins.list[str]:
        """Every kind the store has held an object of."""
        return builtins.list(self._objects)

    def subscribe(self, fn: Subscriber) -> Callable[[], None]:
        """Call ``fn(type, kind, obj, old)`` after every write, until the returned callable is called."""
        self._subscribers.append(fn)

        def unsubscribe() -> None:
            if fn in self._subscribers:
                self._subscribers.remove(fn)

        return unsubscribe

    def events_since(self, resource_version: int, kinds: Iterable[str] | None = None) -> builtins.list[WatchEvent]:
        """History after ``resource_version``; raises :class:`Gone` when it was compacted away."""
        oldest = self._history[0][0] - 1 if self._history else self.resource_version
        floor = max(oldest, self._compacted) if (self._history or self._compacted) else 0
        if resource_version < floor:
            raise Gone(f"too old resource version: {resource_version} ({floor})")
        wanted = set(kinds) if kinds is not None else None
        return [e for e in self._history if e[0] > resource_version and (wanted is None or e[2] in wanted)]

    def discard(self) -> None:
        """Forget every object, the watch history and the kept list pages, telling no subscriber:
        for a store no one reads again (a finished simulation), whose objects so go at once."""
        self._objects.clear()
        self._history.clear()
        self._snapshots.clear()

    def compact(self) -> int:
        """Forget the watch history up to now (as etcd compaction does); returns the revision
        below which watches now get :class:`Gone`."""
        self._history.clear()
        self._compacted = self.resource_version
        return self._compacted


def _encode_continue(rv: int, start: tuple[str, str]) -> str:
    """A continue token in kube-apiserver's shape: its version, the list's revision, the key
    the next page starts at."""
    key = f"{start[0]}/{start[1]}" if start[0] else start[1]
    body = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": key}, separators=(",", ":"))
    return base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
    except ValueError:
        raise BadContinue("invalid format") from None
    if not isinstance(data, dict) or data.get("v") != "meta.k8s.io/v1":
        raise BadContinue("server does not recognize this encoded version")
    rv, key = data.get("rv"), data.get("start")
    if not isinstance(rv, int) or isinstance(rv, bool) or rv <= 0 or not isinstance(key, str) or not key:
        raise BadContinue("incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    ns, _, name = key.rpartition("/")
    return rv, (ns, name)
