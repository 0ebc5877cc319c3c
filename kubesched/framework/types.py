"""PodInfo, NodeInfo and QueuedPodInfo: Kubernetes objects with what the scheduler derives from them.

Objects arrive as Kubernetes JSON (plain dicts, camelCase). Everything a plugin would otherwise
recompute per node — effective requests, tolerations, compiled affinity, host ports — is derived
once when the object enters the scheduler. ``NodeInfo`` keeps running totals that are adjusted
as pods come and go, and a ``generation`` that lets the snapshot copy only what changed.
What ``PodInfo`` says of a pod's status (its nominated node, its phase) it reads off the object
when asked: a status moves without a re-derive. Code reads these fields, not the object.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from kubesched.framework.pod_requests import (
    DEFAULT_COUNTING,
    Counting,
    counts_plainly,
    fit_requests,
    has_status_resources,
    node_requests,
    resource_status,
    score_requests,
)
from kubesched.framework.resources import CPU, MEMORY, Resource, quantity_of
from kubesched.framework.selectors import LabelSelector, NodeSelector, PreferredTerm, compile_preferred
from kubesched.objects import Obj, namespaced_name

_generation = itertools.count(1)


def next_generation() -> int:
    """A process-wide, strictly increasing number stamped on every NodeInfo change."""
    return next(_generation)


def parse_time(value: str | None) -> float:
    """An RFC 3339 timestamp as seconds since the epoch (0.0 when absent or malformed)."""
    if not value:
        return 0.0
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def pod_key(pod: Mapping[str, Any]) -> str:
    """A pod's ``namespace/name`` (:func:`~kubesched.objects.namespaced_name`), its namespace
    ``default`` when it names none, as :attr:`PodInfo.key`."""
    meta = pod.get("metadata") or {}
    return namespaced_name(meta.get("namespace") or "default", str(meta.get("name", "")))


def node_taints(node: Mapping[str, Any] | None) -> list[Obj]:
    """A node's ``spec.taints`` (a new list), what :attr:`NodeInfo.taints` is, read off a node
    object not derived (an informer's old or new node)."""
    return list(((node or {}).get("spec") or {}).get("taints") or ())


def node_unschedulable(node: Mapping[str, Any] | None) -> bool:
    """Whether a node says ``spec.unschedulable``: :attr:`NodeInfo.unschedulable` of a node
    object not derived."""
    return bool(((node or {}).get("spec") or {}).get("unschedulable"))


def pod_uid(pod: Mapping[str, Any]) -> str:
    """A pod's ``metadata.uid``, its :func:`pod_key` without one: what :attr:`PodInfo.uid` is,
    read off a pod not derived."""
    uid: str = (pod.get("metadata") or {}).get("uid") or pod_key(pod)
    return uid


class PodSpecError(ValueError):
    """A pod whose spec cannot be understood (a bad quantity, an invalid selector).

    The scheduler reports it on that pod and keeps serving the others.
    """


def _qos_class(spec: Mapping[str, Any]) -> str:
    """Guaranteed, Burstable or BestEffort, from requests and limits of cpu and memory."""
    containers = list(spec.get("containers") or ()) + list(spec.get("initContainers") or ())
    any_set = False
    guaranteed = True
    for c in containers:
        res = c.get("resources") or {}
        req = res.get("requests") or {}
        lim = res.get("limits") or {}
        for name in (CPU, MEMORY):
            r = req.get(name, lim.get(name))
            lv = lim.get(name)
            if r is not None and quantity_of(name, r) != 0 or lv is not None and quantity_of(name, lv) != 0:
                any_set = True
            if lv is None or r is None or quantity_of(name, r) != quantity_of(name, lv):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _kind_of(value: Any) -> str:
    return "a list" if isinstance(value, list) else "a mapping" if isinstance(value, dict) else repr(value)


def _mapping(obj: Mapping[str, Any], key: str, path: str) -> dict[str, Any]:
    """``obj[key]`` when it is a mapping or unset; plugins call ``.items()``/``.get()`` on it."""
    value = obj.get(key) or {}
    if not isinstance(value, dict):
        raise ValueError(f"{path}: must be a mapping, got {_kind_of(value)}")
    return value


def _mappings(spec: Mapping[str, Any], key: str) -> list[Obj]:
    """``spec[key]`` as a list of mappings (a null entry is an empty one, as Go decodes it)."""
    value = spec.get(key)
    if not value:
        return []
    if not isinstance(value, list | tuple):
        raise ValueError(f"spec.{key}: must be a list, got {_kind_of(value)}")
    out = [{} if v is None else v for v in value]
    for i, v in enumerate(out):
        if not isinstance(v, dict):
            raise ValueError(f"spec.{key}[{i}]: must be a mapping, got {_kind_of(v)}")
    return out


def _host_port(port: Mapping[str, Any], host_port: Any) -> tuple[str, str, int]:
    """``(hostIP, protocol, hostPort)`` of a container port; the node's port table hashes them."""
    ip = port.get("hostIP") or "0.0.0.0"
    protocol = port.get("protocol") or "TCP"
    for name, value in (("hostIP", ip), ("protocol", protocol)):
        if not isinstance(value, str):
            raise ValueError(f"containers[].ports[].{name}: must be a string, got {value!r}")
    return ip, protocol, int(host_port)


class AffinityTerm:
    """A pod (anti-)affinity term compiled: namespaces, selectors and topology key."""

    __slots__ = ("namespaces", "selector", "namespace_selector", "topology_key", "weight")

    def __init__(self, term: Mapping[str, Any], pod_namespace: str, weight: int = 0) -> None:
        self.topology_key: str = term.get("topologyKey", "")
        self.selector = LabelSelector.compile(term.get("labelSelector"))
        self.namespace_selector = LabelSelector.compile(term.get("namespaceSelector"))
        ns = set(term.get("namespaces") or ())
        if not ns and term.get("namespaceSelector") is None:
            ns = {pod_namespace}
        self.namespaces = frozenset(ns)
        self.weight = weight

    def matches(self, pod: PodInfo, ns_labels: Mapping[str, str] | None = None) -> bool:
        """Whether ``pod`` is selected by this term (namespace, then labels)."""
        if pod.namespace not in self.namespaces:
            if self.namespace_selector is None or ns_labels is None or not self.namespace_selector.matches(ns_labels):
                return False
        return self.selector is not None and self.selector.matches(pod.labels)


#: What of a pod's metadata PodInfo derives anything from.
_DERIVED_METADATA = ("name", "namespace", "uid", "labels", "creationTimestamp", "deletionTimestamp")


class PodInfo:
    """A pod and everything derived from it once (see module docstring)."""

    __slots__ = (
        "pod",
        "uid",
        "name",
        "namespace",
        "key",
        "labels",
        "scheduler_name",
        "node_name",
        "priority",
        "preemption_policy",
        "creation",
        "requests",
        "non_zero_requests",
        "counting",
        "counts_plainly",
        "_counts",
        "tolerations",
        "node_selector",
        "required_node_affinity",
        "preferred_node_affinity",
        "host_ports",
        "images",
        "scheduling_gates",
        "pod_group",
        "required_affinity",
        "required_anti_affinity",
        "preferred_affinity",
        "preferred_anti_affinity",
        "topology_spread_constraints",
        "volumes",
        "deleting",
        "_qos",
    )

    def __init__(self, pod: Obj, counting: Counting = DEFAULT_COUNTING) -> None:
        #: How this scheduler's feature gates count resources (``Counting.of(gates)``).
        self.counting = counting
        self.update(pod)

    def update(self, pod: Obj) -> None:
        """(Re)derive everything from ``pod``; raises :class:`PodSpecError` on what cannot be read."""
        try:
            self._derive(pod)
        except PodSpecError:
            raise
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            raise PodSpecError(f"pod {pod_key(pod)}: {exc}") from exc

    def _derive(self, pod: Obj) -> None:
        meta = pod.get("metadata") or {}
        spec = pod.get("spec") or {}
        self.pod = pod
        self.name = meta.get("name", "")
        self.namespace = meta.get("namespace") or "default"
        self.key = namespaced_name(self.namespace, self.name)
        self.uid = meta.get("uid") or self.key
        self.labels: dict[str, str] = _mapping(meta, "labels", "metadata.labels")
        self.scheduler_name: str = spec.get("schedulerName") or "default-scheduler"
        self.node_name: str = spec.get("nodeName") or ""
        self.priority: int = int(spec.get("priority") or 0)
        self.preemption_policy: str = spec.get("preemptionPolicy") or "PreemptLowerPriority"
        self.creation = parse_time(meta.get("creationTimestamp"))
        self.deleting = bool(meta.get("deletionTimestamp"))
        # What the pod takes on its node, as NodeInfo accounts it (in-place resizes and
        # pod-level resources included); Filter and the scorers may count otherwise, see
        # fit_requests and score_requests.
        self.requests, self.non_zero_requests = node_requests(pod, self.counting)
        #: Whether every count is ``requests`` (no pod-level resources, nothing in the status).
        self.counts_plainly = counts_plainly(pod)
        self._counts: dict[tuple[Counting, int], Resource] = {}
        self.tolerations: list[Obj] = _mappings(spec, "tolerations")
        self.node_selector: dict[str, str] = _mapping(spec, "nodeSelector", "spec.nodeSelector")
        affinity = spec.get("affinity")
        if affinity:
            self._derive_affinity(affinity)
        else:  # what an empty one compiles to (most pods have none)
            self.required_node_affinity: NodeSelector | None = None
            self.preferred_node_affinity: list[PreferredTerm] = []
            self.required_affinity: list[AffinityTerm] = []
            self.required_anti_affinity: list[AffinityTerm] = []
            self.preferred_affinity: list[AffinityTerm] = []
            self.preferred_anti_affinity: list[AffinityTerm] = []
        self.topology_spread_constraints: list[Obj] = _mappings(spec, "topologySpreadConstraints")
        self.volumes: list[Obj] = _mappings(spec, "volumes")
        ports: list[tuple[str, str, int]] = []
        images: list[str] = []
        for c in itertools.chain(spec.get("initContainers") or (), spec.get("containers") or ()):
            if c.get("image"):
                images.append(c["image"])
            if c in (spec.get("initContainers") or ()) and c.get("restartPolicy") != "Always":
                continue  # ports of a regular init container are free again once it exits
            for p in c.get("ports") or ():
                hp = p.get("hostPort")
                if hp:
                    ports.append(_host_port(p, hp))
        self.host_ports = ports
        self.images = images
        self.scheduling_gates: list[Obj] = _mappings(spec, "schedulingGates")
        group = spec.get("schedulingGroup") or {}
        #: The pod group it belongs to (``spec.schedulingGroup.podGroupName``), or ``""``.
        self.pod_group: str = (group.get("podGroupName") or "") if isinstance(group, dict) else ""
        self._qos: str | None = None

    def _derive_affinity(self, affinity: Mapping[str, Any]) -> None:
        node_aff = affinity.get("nodeAffinity") or {}
        required = node_aff.get("requiredDuringSchedulingIgnoredDuringExecution")
        self.required_node_affinity = NodeSelector.compile(required, lazy=True)
        self.preferred_node_affinity = compile_preferred(
            node_aff.get("preferredDuringSchedulingIgnoredDuringExecution")
        )
        pod_aff = affinity.get("podAffinity") or {}
        anti = affinity.get("podAntiAffinity") or {}
        ns = self.namespace
        self.required_affinity = [
            AffinityTerm(t, ns) for t in pod_aff.get("requiredDuringSchedulingIgnoredDuringExecution") or ()
        ]
        self.required_anti_affinity = [
            AffinityTerm(t, ns) for t in anti.get("requiredDuringSchedulingIgnoredDuringExecution") or ()
        ]
        self.preferred_affinity = [
            AffinityTerm(t.get("podAffinityTerm") or {}, ns, int(t.get("weight", 0)))
            for t in pod_aff.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        ]
        self.preferred_anti_affinity = [
            AffinityTerm(t.get("podAffinityTerm") or {}, ns, int(t.get("weight", 0)))
            for t in anti.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
        ]

    def _twin(self) -> PodInfo:
        """A new PodInfo holding this one's every slot (the derived data shared): one load and
        store a slot, five times quicker than a ``getattr``/``setattr`` loop over them."""
        c = PodInfo.__new__(PodInfo)
        c.pod = self.pod
        c.uid = self.uid
        c.name = self.name
        c.namespace = self.namespace
        c.key = self.key
        c.labels = self.labels
        c.scheduler_name = self.scheduler_name
        c.node_name = self.node_name
        c.priority = self.priority
        c.preemption_policy = self.preemption_policy
        c.creation = self.creation
        c.requests = self.requests
        c.non_zero_requests = self.non_zero_requests
        c.counting = self.counting
        c.counts_plainly = self.counts_plainly
        c._counts = self._counts
        c.tolerations = self.tolerations
        c.node_selector = self.node_selector
        c.required_node_affinity = self.required_node_affinity
        c.preferred_node_affinity = self.preferred_node_affinity
        c.host_ports = self.host_ports
        c.images = self.images
        c.scheduling_gates = self.scheduling_gates
        c.pod_group = self.pod_group
        c.required_affinity = self.required_affinity
        c.required_anti_affinity = self.required_anti_affinity
        c.preferred_affinity = self.preferred_affinity
        c.preferred_anti_affinity = self.preferred_anti_affinity
        c.topology_spread_constraints = self.topology_spread_constraints
        c.volumes = self.volumes
        c.deleting = self.deleting
        c._qos = self._qos
        return c

    def with_node(self, node_name: str) -> PodInfo:
        """A copy bound to ``node_name`` (what the cache assumes), sharing the derived data."""
        c = self._twin()
        pod = dict(self.pod)
        pod["spec"] = {**(self.pod.get("spec") or {}), "nodeName": node_name}
        c.pod = pod
        c.node_name = node_name
        return c

    def with_nomination(self, node_name: str) -> PodInfo:
        """A copy whose ``status.nominatedNodeName`` is ``node_name`` (none when empty), sharing
        the derived data: the scheduler's own status write, seen before its watch event."""
        c = self._twin()
        pod = dict(self.pod)
        status = {k: v for k, v in (self.pod.get("status") or {}).items() if k != "nominatedNodeName"}
        if node_name:
            status["nominatedNodeName"] = node_name
        pod["status"] = status
        c.pod = pod
        return c

    def rebased(self, pod: Obj) -> PodInfo | None:
        """A PodInfo for ``pod`` sharing this one's derived data, when ``pod`` differs from
        this one's object only where nothing is derived from (``spec.nodeName``, status, the
        resourceVersion, annotations...): a bind confirmed, a status written. ``None`` when
        something derived may differ, and ``pod`` must be derived afresh."""
        mine = self.pod
        m1 = mine.get("metadata") or {}
        m2 = pod.get("metadata") or {}
        for key in _DERIVED_METADATA:
            if m1.get(key) != m2.get(key):
                return None
        s1 = mine.get("spec") or {}
        s2 = pod.get("spec") or {}
        for key in s1.keys() | s2.keys():
            if key != "nodeName" and s1.get(key) != s2.get(key):
                return None
        if not (self.counts_plainly and counts_plainly(pod)) and resource_status(mine) != resource_status(pod):
            return None  # an in-place resize moved: the requests differ
        c = self._twin()
        c.pod = pod
        c.node_name = s2.get("nodeName") or ""
        c._qos = None  # status.qosClass may have been set
        return c

    def fit_requests(self, counting: Counting | None = None) -> Resource:
        """What NodeResourcesFit's Filter checks for this pod (the spec's requests)."""
        return self._count(counting or self.counting, 0)

    def score_requests(self, counting: Counting | None = None, non_zero: bool = False) -> Resource:
        """What the resource scorers count for this pod, with the non-zero defaults when
        ``non_zero``."""
        return self._count(counting or self.counting, 2 if non_zero else 1)

    def _count(self, counting: Counting, kind: int) -> Resource:
        if self.counts_plainly:
            # One count for all: the non-zero one differs only by the defaults.
            return self.non_zero_requests if kind == 2 else self.requests
        if kind < 2 and counting == self.counting and not has_status_resources(self.pod):
            # Pod-level requests and nothing in the status: Filter and plain scoring count
            # what NodeInfo counts.
            return self.requests
        found = self._counts.get((counting, kind))
        if found is None:
            if kind == 0:
                found = fit_requests(self.pod, counting)
            else:
                found = score_requests(self.pod, counting, non_zero=kind == 2)
            self._counts[(counting, kind)] = found
        return found

    @property
    def qos_class(self) -> str:
        if self._qos is None:
            status_qos = (self.pod.get("status") or {}).get("qosClass")
            self._qos = status_qos or _qos_class(self.pod.get("spec") or {})
        return self._qos

    # The status moves without a re-derive (a nomination written, a phase reached): what is
    # read of it is read from the object when asked, as cheap as the look-up it names.
    @property
    def nominated_node_name(self) -> str:
        """``status.nominatedNodeName``, or ``""``."""
        name: str = (self.pod.get("status") or {}).get("nominatedNodeName") or ""
        return name

    @property
    def phase(self) -> str:
        """``status.phase``, or ``""``."""
        phase: str = (self.pod.get("status") or {}).get("phase") or ""
        return phase

    @property
    def is_terminal(self) -> bool:
        """Whether the pod has finished: phase ``Succeeded`` or ``Failed``."""
        return (self.pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")

    @property
    def has_affinity(self) -> bool:
        return bool(
            self.required_affinity
            or self.required_anti_affinity
            or self.preferred_affinity
            or self.preferred_anti_affinity
        )

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"


class ImageStateSummary:
    """Size of an image and on how many nodes it is present (shared across NodeInfos)."""

    __slots__ = ("size", "nodes")

    def __init__(self, size: int) -> None:
        self.size = size
        self.nodes: set[str] = set()

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)


class NodeInfo:
    """A node, the pods on it, and running totals kept current as pods are added and removed.

    Its pods and labels change only through :meth:`add_pod`, :meth:`remove_pod` and
    :meth:`set_node`, and each of them gives it a new ``generation``: plugins may cache what they
    derive from a NodeInfo under its name and generation.
    """

    __slots__ = (
        "node",
        "name",
        "labels",
        "taints",
        "unschedulable",
        "allocatable",
        "requested",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "used_ports",
        "image_states",
        "images",
        "generation",
        "_declared",
    )

    def __init__(self, node: Obj | None = None) -> None:
        self.node: Obj | None = None
        self.name = ""
        self.labels: dict[str, str] = {}
        self.taints: list[Obj] = []
        self.unschedulable = False
        self.allocatable = Resource()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports: dict[str, set[tuple[str, int]]] = {}
        self.image_states: dict[str, ImageStateSummary] = {}
        self.images: dict[str, int] = {}
        self.generation = next_generation()
        self._declared: frozenset[str] | None = None
        if node is not None:
            self.set_node(node)

    def set_node(self, node: Obj) -> None:
        meta = node.get("metadata") or {}
        status = node.get("status") or {}
        self.node = node
        self.name = meta.get("name", "")
        self.labels = meta.get("labels") or {}
        self.taints = node_taints(node)
        self.unschedulable = node_unschedulable(node)
        self.allocatable = Resource.from_list(status.get("allocatable") or status.get("capacity") or {})
        images: dict[str, int] = {}
        for img in status.get("images") or ():
            if img is None:
                continue  # a null entry decodes to an image with no names
            size = int(img.get("sizeBytes") or 0)
            for n in img.get("names") or ():
                images[n] = size
        self.images = images
        self.generation = next_generation()
        self._declared = None

    @property
    def declared_features(self) -> frozenset[str]:
        """The features the node's kubelet declares (``status.declaredFeatures``), read from the
        node once (on first use: a node's features are read by few profiles)."""
        if self._declared is None:
            declared = ((self.node or {}).get("status") or {}).get("declaredFeatures") or ()
            self._declared = frozenset(str(f) for f in declared)
        return self._declared

    # --- pods ---------------------------------------------------------------------------------
    def add_pod(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_affinity:
            self.pods_with_affinity.append(pi)
        if pi.required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pi)
        self._account(pi, 1)

    def remove_pod(self, pi: PodInfo) -> bool:
        """Remove the pod with ``pi``'s uid; ``False`` when it was not here."""
        for i, p in enumerate(self.pods):
            if p.uid == pi.uid:
                del self.pods[i]
                self.pods_with_affinity = [q for q in self.pods_with_affinity if q.uid != pi.uid]
                self.pods_with_required_anti_affinity = [
                    q for q in self.pods_with_required_anti_affinity if q.uid != pi.uid
                ]
                self._account(p, -1)
                return True
        return False

    def _account(self, pi: PodInfo, sign: int) -> None:
        self.requested.add_resource(pi.requests, sign)
        nz = self.non_zero_requested
        nz.milli_cpu += sign * pi.non_zero_requests.milli_cpu
        nz.memory += sign * pi.non_zero_requests.memory
        for ip, proto, port in pi.host_ports:
            if sign > 0:
                self.used_ports.setdefault(ip, set()).add((proto, port))
            else:
                used = self.used_ports.get(ip)
                if used is not None:
                    used.discard((proto, port))
                    if not used:
                        del self.used_ports[ip]
        self.generation = next_generation()

    def port_in_use(self, ip: str, protocol: str, port: int) -> bool:
        """Whether hostPort ``port`` conflicts, with 0.0.0.0 overlapping every address."""
        if ip == "0.0.0.0":
            for used in self.used_ports.values():
                if (protocol, port) in used:
                    return True
            return False
        for key in (ip, "0.0.0.0"):
            hit = self.used_ports.get(key)
            if hit is not None and (protocol, port) in hit:
                return True
        return False

    def clone(self) -> NodeInfo:
        """A copy whose lists and totals can change without touching this one."""
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.labels = self.labels
        c.taints = self.taints
        c.unschedulable = self.unschedulable
        c.allocatable = self.allocatable
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = {k: set(v) for k, v in self.used_ports.items()}
        c.image_states = self.image_states
        c.images = self.images
        c.generation = self.generation
        c._declared = self._declared
        return c

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"


class QueuedPodInfo:
    """A pod in the scheduling queue, with its queueing history."""

    __slots__ = (
        "key",
        "pod_info",
        "timestamp",
        "initial_attempt_timestamp",
        "attempts",
        "unschedulable_count",
        "consecutive_errors_count",
        "unschedulable_plugins",
        "pending_plugins",
        "gated",
        "gating_plugin",
        "backoff_expiry",
        "last_failure",
    )

    def __init__(self, pod_info: PodInfo, timestamp: float) -> None:
        #: What the queue files it under: the pod's UID (a pod group's entity key for a group).
        self.key = pod_info.uid
        self.pod_info = pod_info
        self.timestamp = timestamp
        self.initial_attempt_timestamp: float | None = None
        self.attempts = 0
        #: Attempts that plugins rejected, and errors in a row since the last rejection: what
        #: the backoff counts (upstream's UnschedulableCount and ConsecutiveErrorsCount).
        self.unschedulable_count = 0
        self.consecutive_errors_count = 0
        self.unschedulable_plugins: set[str] = set()
        self.pending_plugins: set[str] = set()
        self.gated = False
        self.gating_plugin = ""
        self.backoff_expiry = 0.0
        self.last_failure = ""

    @property
    def pod(self) -> Obj:
        return self.pod_info.pod

    @property
    def size(self) -> int:
        """How many pods the queued entity holds: 1 for a pod."""
        return 1

    def __repr__(self) -> str:
        return f"QueuedPodInfo({self.pod_info.key}, attempts={self.attempts})"


class QueuedPodGroupInfo(QueuedPodInfo):
    """A pod group queued as one entity (workload-aware scheduling), as upstream's
    QueuedPodGroupInfo: its pending members, and queueing history of its own — the group's
    timestamp, attempts and backoff, apart from its members'.

    ``key`` is the group's entity key (``podgroup/<namespace>/<name>``, or the root
    ``compositepodgroup/...`` of a hierarchy). ``members`` are sorted in upstream's order when
    the group is popped (:meth:`set_members`): higher priority first, then more attempts, then
    the earlier timestamp; ``pod_info`` is always the first's in that order, so a QueueSort plugin orders the group by it (every member carries the group's
    priority) and the group's own ``timestamp``."""

    __slots__ = ("members", "_by_uid", "_first", "held_back")

    def __init__(self, key: str, members: list[QueuedPodInfo], timestamp: float) -> None:
        super().__init__(members[0].pod_info, timestamp)
        self.key = key
        #: Backing off right after a failed attempt of its own, no event since: an idle
        #: scheduler does not take it from backoffQ early.
        self.held_back = False
        self.set_members(members)

    @property
    def size(self) -> int:
        return len(self.members)

    @staticmethod
    def _order(q: QueuedPodInfo) -> tuple[int, int, float]:
        return -q.pod_info.priority, -q.attempts, q.timestamp

    def set_members(self, members: list[QueuedPodInfo]) -> None:
        """The group's members now, sorted (``pod_info`` follows the first); each gated as the
        group is."""
        self.members = sorted(members, key=self._order)
        for q in self.members:
            q.gated = self.gated
        self._by_uid = {q.pod_info.uid: q for q in self.members}
        self._lead()

    def sort(self) -> None:
        """Back in order (members' priorities or attempts changed)."""
        self.set_members(self.members)

    def _lead(self) -> None:
        self._first = self.members[0] if self.members else None
        if self._first is not None:
            self.pod_info = self._first.pod_info

    def member(self, uid: str) -> QueuedPodInfo | None:
        return self._by_uid.get(uid)

    def add(self, qpi: QueuedPodInfo) -> None:
        """One more member (or a member's newer entry): appended, gated as the group is, the
        first kept in step; the list is sorted again when the group is popped."""
        uid = qpi.pod_info.uid
        qpi.gated = self.gated
        old = self._by_uid.get(uid)
        if old is not None:
            self.members.remove(old)
        self._by_uid[uid] = qpi
        self.members.append(qpi)
        if old is not None and old is self._first:
            self._first = min(self.members, key=self._order)
        elif self._first is None or self._order(qpi) < self._order(self._first):
            self._first = qpi
        self.pod_info = self._first.pod_info

    def remove(self, uid: str) -> QueuedPodInfo | None:
        q = self._by_uid.pop(uid, None)
        if q is not None:
            self.members.remove(q)
            if q is self._first:
                self._first = min(self.members, key=self._order) if self.members else None
                if self._first is not None:
                    self.pod_info = self._first.pod_info
        return q

    def __repr__(self) -> str:
        return f"QueuedPodGroupInfo({self.key}, pods={len(self.members)}, attempts={self.attempts})"


def node_infos(nodes: Iterable[Obj], pods: Iterable[Obj] = ()) -> list[NodeInfo]:
    """NodeInfos for ``nodes`` with ``pods`` (those with ``spec.nodeName``) placed on them."""
    infos = {n["metadata"]["name"]: NodeInfo(n) for n in nodes}
    for p in pods:
        name = (p.get("spec") or {}).get("nodeName")
        if name in infos:
            infos[name].add_pod(PodInfo(p))
    return list(infos.values())
