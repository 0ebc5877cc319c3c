"""Builders for pods, nodes and pod groups as Kubernetes JSON: ``make_pod("p").req(cpu="100m").node("n1")``,
``make_pod_group("train", min_count=2, members=[make_pod("w0"), make_pod("w1")])``.

Each method returns the builder, ``.obj()`` the dict, ``.info()`` the derived PodInfo/NodeInfo.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, cast

from kubesched.framework.podgroup import PodGroupInfo
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.objects import Obj

_uid = 0


def _next_uid(prefix: str) -> str:
    global _uid
    _uid += 1
    return f"{prefix}-uid-{_uid}"


class PodBuilder:
    """A Pod, built a call at a time (``make_pod("p").req(cpu="1").label("app", "web")``); ``obj()``
    is the object, ``info()`` its PodInfo. Each builder has a uid of its own."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        self._pod: Obj = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": _next_uid(name)},
            "spec": {"containers": [], "schedulerName": "default-scheduler"},
            "status": {"phase": "Pending"},
        }

    # --- metadata ---
    def uid(self, uid: str) -> PodBuilder:
        self._pod["metadata"]["uid"] = uid
        return self

    def namespace(self, ns: str) -> PodBuilder:
        self._pod["metadata"]["namespace"] = ns
        return self

    def label(self, key: str, value: str) -> PodBuilder:
        self._pod["metadata"].setdefault("labels", {})[key] = value
        return self

    def labels(self, **labels: str) -> PodBuilder:
        self._pod["metadata"].setdefault("labels", {}).update(labels)
        return self

    def annotation(self, key: str, value: str) -> PodBuilder:
        self._pod["metadata"].setdefault("annotations", {})[key] = value
        return self

    def created(self, timestamp: str) -> PodBuilder:
        """``creationTimestamp`` in RFC 3339, e.g. ``2024-01-01T00:00:00Z``."""
        self._pod["metadata"]["creationTimestamp"] = timestamp
        return self

    # --- spec ---
    @property
    def spec(self) -> Obj:
        return cast("dict[str, Any]", self._pod["spec"])

    def scheduler(self, name: str) -> PodBuilder:
        self.spec["schedulerName"] = name
        return self

    def node(self, name: str) -> PodBuilder:
        self.spec["nodeName"] = name
        self._pod["status"]["phase"] = "Running"
        return self

    def priority(self, value: int) -> PodBuilder:
        self.spec["priority"] = value
        return self

    def container(
        self,
        image: str = "registry.k8s.io/pause:3.9",
        requests: dict[str, str] | None = None,
        limits: dict[str, str] | None = None,
        ports: list[Obj] | None = None,
        name: str | None = None,
    ) -> PodBuilder:
        c: Obj = {"name": name or f"c{len(self.spec['containers'])}", "image": image}
        res: Obj = {}
        if requests:
            res["requests"] = dict(requests)
        if limits:
            res["limits"] = dict(limits)
        if res:
            c["resources"] = res
        if ports:
            c["ports"] = ports
        self.spec["containers"].append(c)
        return self

    def req(self, **requests: str) -> PodBuilder:
        """Add a container requesting ``requests`` (``nvidia_com_gpu`` → ``nvidia.com/gpu``)."""
        return self.container(requests={_resource_name(k): v for k, v in requests.items()})

    def lim(self, **limits: str) -> PodBuilder:
        """Add a container with these limits (requests default to them)."""
        return self.container(limits={_resource_name(k): v for k, v in limits.items()})

    def init_req(self, restart_always: bool = False, **requests: str) -> PodBuilder:
        c: Obj = {
            "name": f"init{len(self.spec.get('initContainers', []))}",
            "image": "busybox",
            "resources": {"requests": {_resource_name(k): v for k, v in requests.items()}},
        }
        if restart_always:
            c["restartPolicy"] = "Always"
        self.spec.setdefault("initContainers", []).append(c)
        return self

    def overhead(self, **resources: str) -> PodBuilder:
        self.spec["overhead"] = {_resource_name(k): v for k, v in resources.items()}
        return self

    def host_port(self, port: int, protocol: str = "TCP", host_ip: str = "") -> PodBuilder:
        p: Obj = {"containerPort": port, "hostPort": port, "protocol": protocol}
        if host_ip:
            p["hostIP"] = host_ip
        return self.container(ports=[p])

    def image(self, image: str) -> PodBuilder:
        return self.container(image=image)

    def toleration(self, key: str = "", value: str = "", effect: str = "", operator: str = "") -> PodBuilder:
        t: Obj = {}
        if key:
            t["key"] = key
        if operator:
            t["operator"] = operator
        elif not value and not key:
            t["operator"] = "Exists"
        if value:
            t["value"] = value
        if effect:
            t["effect"] = effect
        self.spec.setdefault("tolerations", []).append(t)
        return self

    def node_selector(self, **labels: str) -> PodBuilder:
        self.spec.setdefault("nodeSelector", {}).update(labels)
        return self

    def _node_affinity(self) -> Obj:
        return cast("dict[str, Any]", self.spec.setdefault("affinity", {}).setdefault("nodeAffinity", {}))

    def node_affinity_in(self, key: str, values: list[str], operator: str = "In") -> PodBuilder:
        """Add a required term (ORed with the others) with one expression."""
        expr: Obj = {"key": key, "operator": operator}
        if operator not in ("Exists", "DoesNotExist"):
            expr["values"] = values
        req = self._node_affinity().setdefault(
            "requiredDuringSchedulingIgnoredDuringExecution", {"nodeSelectorTerms": []}
        )
        req["nodeSelectorTerms"].append({"matchExpressions": [expr]})
        return self

    def required_node_affinity(self, node_selector: Obj) -> PodBuilder:
        self._node_affinity()["requiredDuringSchedulingIgnoredDuringExecution"] = node_selector
        return self

    def preferred_node_affinity(self, weight: int, key: str, values: list[str], operator: str = "In") -> PodBuilder:
        expr: Obj = {"key": key, "operator": operator}
        if operator not in ("Exists", "DoesNotExist"):
            expr["values"] = values
        self._node_affinity().setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
            {"weight": weight, "preference": {"matchExpressions": [expr]}}
        )
        return self

    def scheduling_gate(self, name: str) -> PodBuilder:
        self.spec.setdefault("schedulingGates", []).append({"name": name})
        return self

    def preemption_policy(self, policy: str) -> PodBuilder:
        self.spec["preemptionPolicy"] = policy
        return self

    def pod_group(self, name: str) -> PodBuilder:
        """Make the pod a member of PodGroup ``name`` (``spec.schedulingGroup.podGroupName``)."""
        self.spec["schedulingGroup"] = {"podGroupName": name}
        return self

    def set(self, path: str, value: Any) -> PodBuilder:
        """Set any field by dotted path, e.g. ``set("spec.hostNetwork", True)``."""
        _set_path(self._pod, path, value)
        return self

    def obj(self) -> Obj:
        pod = copy.deepcopy(self._pod)
        if not pod["spec"]["containers"]:
            pod["spec"]["containers"] = [{"name": "c0", "image": "registry.k8s.io/pause:3.9"}]
        return pod

    def info(self) -> PodInfo:
        return PodInfo(self.obj())


class NodeBuilder:
    """A Node, built a call at a time (``make_node("n1").capacity(cpu="4").zone("a")``); ``obj()``
    is the object, ``info(*pods)`` its NodeInfo with ``pods`` on it."""

    def __init__(self, name: str) -> None:
        self._node: Obj = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}, "uid": _next_uid(name)},
            "spec": {},
            "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}},
        }

    def label(self, key: str, value: str) -> NodeBuilder:
        self._node["metadata"]["labels"][key] = value
        return self

    def labels(self, **labels: str) -> NodeBuilder:
        self._node["metadata"]["labels"].update(labels)
        return self

    def zone(self, zone: str) -> NodeBuilder:
        return self.label("topology.kubernetes.io/zone", zone)

    def capacity(self, **resources: str) -> NodeBuilder:
        """Set allocatable (and capacity) to exactly these resources."""
        alloc = {_resource_name(k): str(v) for k, v in resources.items()}
        self._node["status"]["allocatable"] = alloc
        self._node["status"]["capacity"] = dict(alloc)
        return self

    def alloc(self, **resources: str) -> NodeBuilder:
        """Add or change allocatable resources, keeping the others."""
        self._node["status"]["allocatable"].update({_resource_name(k): str(v) for k, v in resources.items()})
        return self

    def taint(self, key: str, value: str = "", effect: str = "NoSchedule") -> NodeBuilder:
        t: Obj = {"key": key, "effect": effect}
        if value:
            t["value"] = value
        self._node["spec"].setdefault("taints", []).append(t)
        return self

    def unschedulable(self, value: bool = True) -> NodeBuilder:
        self._node["spec"]["unschedulable"] = value
        return self

    def image(self, size_bytes: int, *names: str) -> NodeBuilder:
        self._node["status"].setdefault("images", []).append({"names": list(names), "sizeBytes": size_bytes})
        return self

    def set(self, path: str, value: Any) -> NodeBuilder:
        _set_path(self._node, path, value)
        return self

    def obj(self) -> Obj:
        return copy.deepcopy(self._node)

    def info(self, *pods: PodBuilder | Obj) -> NodeInfo:
        ni = NodeInfo(self.obj())
        for p in pods:
            ni.add_pod(PodInfo(p.obj() if isinstance(p, PodBuilder) else p))
        return ni


class PodGroupBuilder:
    """A ``scheduling.k8s.io/v1beta1`` PodGroup and its member pods (``make_pod_group("train",
    min_count=4, members=[make_pod("w0"), ...])``): ``obj()`` is the PodGroup, ``pods()`` the
    members (each naming the group), ``info()`` the :class:`PodGroupInfo` a pod-group cycle
    hands to plugins, ``objects()`` the group then its members, for a cluster."""

    def __init__(self, name: str, namespace: str = "default") -> None:
        self.name = name
        self.namespace = namespace
        self._group: Obj = {
            "apiVersion": "scheduling.k8s.io/v1beta1",
            "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace, "uid": _next_uid(f"pg-{name}")},
            "spec": {"schedulingPolicy": {"basic": {}}},
        }
        self._members: list[PodBuilder | Obj] = []

    @property
    def spec(self) -> Obj:
        return cast("dict[str, Any]", self._group["spec"])

    def gang(self, min_count: int) -> PodGroupBuilder:
        """Policy ``gang``: at least ``min_count`` members placed together, or none."""
        self.spec["schedulingPolicy"] = {"gang": {"minCount": min_count}}
        return self

    def basic(self) -> PodGroupBuilder:
        """Policy ``basic`` (the default): members placed as they fit."""
        self.spec["schedulingPolicy"] = {"basic": {}}
        return self

    def topology(self, key: str) -> PodGroupBuilder:
        """All members on nodes sharing one value of label ``key`` (``schedulingConstraints``)."""
        self.spec["schedulingConstraints"] = {"topology": [{"key": key}]}
        return self

    def priority(self, value: int) -> PodGroupBuilder:
        self.spec["priority"] = value
        return self

    def parent(self, name: str) -> PodGroupBuilder:
        """Under CompositePodGroup ``name`` (``spec.parentCompositePodGroupName``)."""
        self.spec["parentCompositePodGroupName"] = name
        return self

    def set(self, path: str, value: Any) -> PodGroupBuilder:
        """Set any field of the PodGroup by dotted path."""
        _set_path(self._group, path, value)
        return self

    def members(self, *pods: PodBuilder | Obj) -> PodGroupBuilder:
        """Add member pods (builders or dicts); each is made to name this group."""
        self._members.extend(pods)
        return self

    def obj(self) -> Obj:
        return copy.deepcopy(self._group)

    def pods(self) -> list[Obj]:
        """The members as Pod objects, in the order added, each naming the group."""
        out = []
        for m in self._members:
            pod = m.obj() if isinstance(m, PodBuilder) else copy.deepcopy(m)
            pod.setdefault("metadata", {})["namespace"] = self.namespace
            pod.setdefault("spec", {})["schedulingGroup"] = {"podGroupName": self.name}
            out.append(pod)
        return out

    def objects(self) -> list[Obj]:
        """The PodGroup, then its members: what a cluster holds."""
        return [self.obj(), *self.pods()]

    def info(self) -> PodGroupInfo:
        """The group as a pod-group cycle sees it: the PodGroup and its members (all of them,
        in the order added) to place."""
        return PodGroupInfo(self.namespace, self.name, self.obj(), [PodInfo(p) for p in self.pods()])


def make_pod_group(
    name: str,
    namespace: str = "default",
    min_count: int | None = None,
    members: Iterable[PodBuilder | Obj] = (),
    topology_key: str | None = None,
) -> PodGroupBuilder:
    """A :class:`PodGroupBuilder`: a gang of ``min_count`` (basic without it), with ``members``
    and, when given, a ``topology_key`` all members share one value of."""
    b = PodGroupBuilder(name, namespace)
    if min_count is not None:
        b.gang(min_count)
    if topology_key is not None:
        b.topology(topology_key)
    return b.members(*members)


def make_pod(name: str, namespace: str = "default") -> PodBuilder:
    """A :class:`PodBuilder` for pod ``namespace/name`` (no containers until asked, default-scheduler)."""
    return PodBuilder(name, namespace)


def make_node(name: str) -> NodeBuilder:
    """A :class:`NodeBuilder` for node ``name`` (its hostname label set; capacity as asked)."""
    return NodeBuilder(name)


def _resource_name(key: str) -> str:
    aliases = {"ephemeral_storage": "ephemeral-storage"}
    if key in aliases:
        return aliases[key]
    if "_" in key and not key.startswith("hugepages"):
        # nvidia_com__gpu or nvidia_com_gpu → nvidia.com/gpu: the last underscore is the slash
        head, _, tail = key.rpartition("_")
        return head.replace("_", ".") + "/" + tail
    return key.replace("_", "-")


def _set_path(obj: Obj, path: str, value: Any) -> None:
    parts = path.split(".")
    cur = obj
    for p in parts[:-1]:
        cur = cur.setdefault(p, {})
    cur[parts[-1]] = value
