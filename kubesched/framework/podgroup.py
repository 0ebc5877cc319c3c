"""Pod groups in the plugin contract: what the pod-group scheduling cycle hands to plugins
(upstream's workload-aware scheduling, kube-scheduler 1.37, behind ``GenericWorkload``).

A pod joins a group with ``spec.schedulingGroup.podGroupName``: a ``scheduling.k8s.io``
PodGroup in its namespace. With the gate on, the queue pops a group's pending members together
and the scheduler places them in one cycle, all of them or none (see
:mod:`kubesched.scheduler.podgroup.cycle`). The cycle runs, beside the per-pod points, four
points of its own:

* **PlacementGenerate** (``generate_placements``): candidate node sets for the group;
* **PlacementFeasible** (``placement_feasible``): before the first member and after each one,
  whether the group's constraints hold (Success), may still hold (Wait) or cannot (Unschedulable);
* **PlacementScore** (``score_placement``): ranks the feasible placements;
* **PodGroupPostFilter** (``pod_group_post_filter``): after the group fits nowhere.

The types here are what those points read: :class:`GroupKey` (which group: its kind, namespace
and name), :class:`PodGroupView` (what is read of a PodGroup or CompositePodGroup object),
:class:`PodGroupInfo` (the group and its members in this cycle),
:class:`PodGroupState` (its members the scheduler knows, placed or not), :class:`Placement`,
:class:`PlacementProgress`, :class:`ProposedAssignment` and :class:`PodGroupAssignments`,
:class:`PlacementScore`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from kubesched.framework.columns import NodeSubset
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.objects import Obj

#: The kind of a leaf pod group (its members are pods).
POD_GROUP_KIND = "PodGroup"
#: The kind of a group of groups (``CompositePodGroup``, alpha): its children are PodGroups or
#: CompositePodGroups that name it in ``spec.parentCompositePodGroupName``.
COMPOSITE_POD_GROUP_KIND = "CompositePodGroup"


def pod_group_name(pod: Mapping[str, Any]) -> str:
    """The pod group a pod (a Kubernetes JSON dict) belongs to: ``spec.schedulingGroup.podGroupName``,
    or ``""``."""
    group = (pod.get("spec") or {}).get("schedulingGroup") or {}
    name = group.get("podGroupName") if isinstance(group, dict) else None
    return name if isinstance(name, str) else ""


class GroupKey(NamedTuple):
    """Which pod group: a PodGroup (``kind`` :data:`POD_GROUP_KIND`) or a CompositePodGroup
    (:data:`COMPOSITE_POD_GROUP_KIND`), by namespace and name. What the pod-group index, the
    queue and the cycle key groups by, and what :class:`PodGroupInfo` carries as ``key``.

    Its parts are read as fields, never cut out of text: ``str(key)`` is the text form
    ``<kind>/<namespace>/<name>`` (``PodGroup/ml/train``) for logs and messages only, and
    :attr:`entity` upstream's ``EntityKey.String()`` (``podgroup/ml/train``)."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind}/{self.namespace}/{self.name}"

    @property
    def is_composite(self) -> bool:
        """Whether the key is a CompositePodGroup's (a group of groups)."""
        return self.kind == COMPOSITE_POD_GROUP_KIND

    @property
    def entity(self) -> str:
        """Upstream's ``EntityKey.String()``: the kind in lower case, ``compositepodgroup/<ns>/<name>``
        (what the queue files a group under, and what hierarchy messages name)."""
        return f"{self.kind.lower()}/{self.namespace}/{self.name}"


def group_key(namespace: str, name: str, kind: str = POD_GROUP_KIND) -> GroupKey:
    """The key of PodGroup ``namespace/name`` (or, with ``kind``, of a CompositePodGroup)."""
    return GroupKey(kind, namespace, name)


class PodGroupView:
    """What the scheduler reads of a PodGroup or CompositePodGroup object (its JSON, ``None``
    for one not seen), read-only, each field named once. A part missing or empty reads as its
    default (``default`` namespace, ``""``, 1, ``None``); a gang that is not an object reads as
    no gang. ``metadata`` and ``spec`` are taken out once, the fields from them when read (a
    dict look-up or two): a loop that reads one many times keeps the value."""

    __slots__ = ("obj", "kind", "metadata", "spec")

    def __init__(self, obj: Obj | None, kind: str = POD_GROUP_KIND) -> None:
        self.obj = obj
        self.kind = kind
        self.metadata: Obj = (obj or {}).get("metadata") or {}
        self.spec: Obj = (obj or {}).get("spec") or {}

    @property
    def is_composite(self) -> bool:
        return self.kind == COMPOSITE_POD_GROUP_KIND

    @property
    def namespace(self) -> str:
        """``metadata.namespace``, ``default`` when unset."""
        return self.metadata.get("namespace") or "default"

    @property
    def name(self) -> str:
        """``metadata.name``, or ``""``."""
        return self.metadata.get("name") or ""

    @property
    def uid(self) -> str:
        """``metadata.uid``, or ``""``."""
        return self.metadata.get("uid") or ""

    @property
    def generation(self) -> Any:
        """``metadata.generation`` as the object says it, ``None`` when unset."""
        return self.metadata.get("generation")

    @property
    def parent(self) -> str:
        """The CompositePodGroup it names as its parent (``spec.parentCompositePodGroupName``),
        or ``""``."""
        name = self.spec.get("parentCompositePodGroupName")
        return name if isinstance(name, str) else ""

    @property
    def is_gang(self) -> bool:
        """Whether the policy is ``gang`` (else ``basic``: members placed as they fit)."""
        return "gang" in (self.spec.get("schedulingPolicy") or {})

    @property
    def gang_min_count(self) -> int | None:
        """The gang's minimum (``schedulingPolicy.gang``): ``minCount`` members of a PodGroup,
        ``minGroupCount`` children of a CompositePodGroup, 1 when unset or 0; ``None`` when the
        policy is not gang."""
        gang = (self.spec.get("schedulingPolicy") or {}).get("gang")
        if not isinstance(gang, dict):
            return None
        return int(gang.get("minGroupCount" if self.kind == COMPOSITE_POD_GROUP_KIND else "minCount") or 1)

    @property
    def min_count(self) -> int:
        """What must succeed together: :attr:`gang_min_count`, 1 for a basic group."""
        need = self.gang_min_count
        return 1 if need is None else need

    @property
    def topology(self) -> list[Any]:
        """The topology constraints (``spec.schedulingConstraints.topology``), as written."""
        return (self.spec.get("schedulingConstraints") or {}).get("topology") or []

    @property
    def topology_key(self) -> str:
        """The node label all members must share one value of: the first topology constraint
        with a key, or ``""``."""
        for t in self.topology:
            if isinstance(t, dict) and t.get("key"):
                return str(t["key"])
        return ""

    @property
    def priority(self) -> int | None:
        """The group's resolved priority (``spec.priority``), ``None`` when unset."""
        p = self.spec.get("priority")
        return int(p) if p is not None else None

    @property
    def preemption_policy(self) -> str:
        """``spec.preemptionPolicy``, or ``""`` when unset."""
        policy = self.spec.get("preemptionPolicy")
        return str(policy) if policy else ""

    @property
    def disrupts_all(self) -> bool:
        """Whether ``spec.disruptionMode`` is ``all`` (its members evicted together)."""
        mode = self.spec.get("disruptionMode") or {}
        return isinstance(mode, dict) and "all" in mode

    @property
    def conditions(self) -> list[Any]:
        """``status.conditions``, a new list (empty without any)."""
        return list(((self.obj or {}).get("status") or {}).get("conditions") or ())

    def __repr__(self) -> str:
        return f"PodGroupView({self.kind}/{self.namespace}/{self.name})"


class PodGroupInfo:
    """A pod group as one cycle sees it: the PodGroup object (``None`` while the scheduler has
    not seen it) and its members to place in this cycle, in the order they are tried (higher
    priority first, then the earlier first attempt).

    A CompositePodGroup (``kind`` :data:`COMPOSITE_POD_GROUP_KIND`) has no pods of its own: its
    ``children`` (PodGroups or CompositePodGroups, in the order they are tried) do."""

    __slots__ = ("namespace", "name", "key", "view", "pods", "kind", "children")

    def __init__(
        self,
        namespace: str,
        name: str,
        obj: Obj | None,
        pods: Sequence[PodInfo] = (),
        kind: str = POD_GROUP_KIND,
        children: Sequence[PodGroupInfo] = (),
    ) -> None:
        self.namespace = namespace
        self.name = name
        self.kind = kind
        self.key = GroupKey(kind, namespace, name)
        #: The object read once (:class:`PodGroupView`); what ``spec``, ``min_count`` ... read.
        self.view = PodGroupView(obj, kind)
        self.pods: list[PodInfo] = list(pods)
        self.children: list[PodGroupInfo] = list(children)

    @property
    def is_composite(self) -> bool:
        return self.kind == COMPOSITE_POD_GROUP_KIND

    def leaves(self) -> list[PodGroupInfo]:
        """The PodGroups at or below this group, depth first in child order."""
        if not self.is_composite:
            return [self]
        return [leaf for child in self.children for leaf in child.leaves()]

    def all_pods(self) -> list[PodInfo]:
        """The pods to place: a PodGroup's own, or every leaf's under a CompositePodGroup."""
        if not self.is_composite:
            return self.pods
        return [p for leaf in self.leaves() for p in leaf.pods]

    @property
    def obj(self) -> Obj | None:
        """The PodGroup (or CompositePodGroup) object, ``None`` while the scheduler has not seen it."""
        return self.view.obj

    @property
    def spec(self) -> Obj:
        return self.view.spec

    @property
    def is_gang(self) -> bool:
        """Whether the group's policy is ``gang`` (else ``basic``: members placed as they fit)."""
        return self.view.is_gang

    @property
    def min_count(self) -> int:
        """Members that must be placed together: the gang's ``minCount``, 1 for a basic group.
        For a CompositePodGroup, children that must succeed: ``minGroupCount`` (1 if basic)."""
        return self.view.min_count

    @property
    def topology_key(self) -> str:
        """The node label all members must share one value of (``schedulingConstraints.topology``),
        or ``""``."""
        return self.view.topology_key

    @property
    def priority(self) -> int | None:
        """The group's resolved priority (``spec.priority``), ``None`` when unset."""
        return self.view.priority

    def __repr__(self) -> str:
        if self.is_composite:
            return f"PodGroupInfo({self.key}, children={[c.name for c in self.children]})"
        return f"PodGroupInfo({self.namespace}/{self.name}, pods={[p.name for p in self.pods]})"


class PodGroupState:
    """A group's members the scheduler knows of (pending, assumed or bound), by UID, and which of
    them are placed: bound or assumed (their PodInfo carries the node)."""

    __slots__ = ("members", "scheduled")

    def __init__(self, members: Mapping[str, PodInfo] | None = None, scheduled: Mapping[str, PodInfo] | None = None):
        self.members: dict[str, PodInfo] = dict(members or {})
        self.scheduled: dict[str, PodInfo] = dict(scheduled or {})

    def __repr__(self) -> str:
        return f"PodGroupState(members={len(self.members)}, scheduled={len(self.scheduled)})"


class Placement:
    """A candidate set of nodes for a group (e.g. the nodes of one topology domain). ``data`` is
    what its generator attaches for the other placement plugins. ``nodes`` given as a
    :class:`~kubesched.framework.columns.NodeSubset` is kept as it is (with the rows in the
    snapshot's columns it knows); any other sequence is copied into a list."""

    __slots__ = ("name", "nodes", "data")

    def __init__(self, name: str, nodes: Sequence[NodeInfo], data: Mapping[str, Any] | None = None) -> None:
        self.name = name
        self.nodes: list[NodeInfo] = nodes if isinstance(nodes, NodeSubset) else list(nodes)
        self.data: dict[str, Any] = dict(data or {})

    def node_names(self) -> list[str]:
        return [n.name for n in self.nodes]

    def __repr__(self) -> str:
        return f"Placement({self.name!r}, nodes={len(self.nodes)})"


class PlacementProgress:
    """Where a placement's evaluation stands: members still to try, members placed (already
    bound or assumed before the cycle, plus those placed in it)."""

    __slots__ = ("remaining", "scheduled")

    def __init__(self, remaining: int, scheduled: int) -> None:
        self.remaining = remaining
        self.scheduled = scheduled

    def __repr__(self) -> str:
        return f"PlacementProgress(remaining={self.remaining}, scheduled={self.scheduled})"


class ProposedAssignment:
    """A member placed tentatively in a placement: its node and its own cycle state."""

    __slots__ = ("pod", "node_name", "state")

    def __init__(self, pod: PodInfo, node_name: str, state: Any = None) -> None:
        self.pod = pod
        self.node_name = node_name
        self.state = state

    def __repr__(self) -> str:
        return f"ProposedAssignment({self.pod.key} -> {self.node_name})"


class PodGroupAssignments:
    """What a placement's evaluation proposes: the placement and its members' nodes."""

    __slots__ = ("placement", "assignments")

    def __init__(self, placement: Placement, assignments: Sequence[ProposedAssignment] = ()) -> None:
        self.placement = placement
        self.assignments: list[ProposedAssignment] = list(assignments)


class PlacementScore:
    """One placement's score from one PlacementScore plugin; normalizing rewrites ``score``."""

    __slots__ = ("placement", "score")

    def __init__(self, placement: Placement, score: int) -> None:
        self.placement = placement
        self.score = score

    @property
    def name(self) -> str:
        return self.placement.name

    def __repr__(self) -> str:
        return f"PlacementScore({self.placement.name}={self.score})"


class PodGroupPostFilterResult:
    """What PodGroupPostFilter achieved: the node each member (by ``namespace/name``) is
    nominated to."""

    __slots__ = ("nominated",)

    def __init__(self, nominated: Mapping[str, str] | None = None) -> None:
        self.nominated: dict[str, str] = dict(nominated or {})
