"""The plugin contract: one Protocol per extension point, and what the runtime hands to plugins.

A plugin is a class with a ``name`` and one method per extension point it implements. It is
constructed once per profile as ``Plugin(args, handle)``, where ``args`` is an instance of the
class attribute ``Args`` (a pydantic model validated from ``pluginConfig``; ``None`` when the
plugin declares no ``Args``) and ``handle`` is the :class:`Handle` of its profile.

Per-node methods (``filter``, ``score``) must be plain functions: they run once per node per
pod. Per-pod methods may be ``async def``; the runtime awaits only those that are.

A method returns a :class:`Status` (or ``None``, meaning Success). An exception raised from a
plugin is a bug in that plugin: the runtime turns it into an ERROR status naming the plugin and
the extension point, and the pod is retried with backoff.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable, Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.features import FeatureGates
from kubesched.framework.informers import GroupVersionResource, Informer
from kubesched.framework.podgroup import (
    GroupKey,
    Placement,
    PlacementProgress,
    PlacementScore,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupState,
)
from kubesched.framework.results import NodeScore as NodeScore
from kubesched.framework.results import (
    PermitReturn,
    PlacementGenerateReturn,
    PlacementScoreReturn,
    PodGroupPostFilterReturn,
    PodGroupSchedule,
    PostFilterReturn,
    PreFilterReturn,
    ScoreReturn,
)
from kubesched.framework.results import PostFilterResult as PostFilterResult
from kubesched.framework.results import PreFilterResult as PreFilterResult
from kubesched.framework.status import Status, StatusTable
from kubesched.framework.types import NodeInfo, PodInfo, QueuedPodInfo

if TYPE_CHECKING:
    import numpy as np

#: CycleState key under which plugins put ``{uid: pod}`` of pods to move to activeQ at the end
#: of the cycle (upstream's PodsToActivate), e.g. a gang's siblings once one member is placed.
PODS_TO_ACTIVATE_KEY = "kubernetes.io/pods-to-activate"

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0
MAX_TOTAL_SCORE = 2**63 - 1

MaybeAwaitable = Status | None | Awaitable[Status | None]

#: Extension points, in the order a pod meets them, with the method that implements each.
EXTENSION_POINTS: dict[str, str] = {
    "preEnqueue": "pre_enqueue",
    "queueSort": "less",
    "preFilter": "pre_filter",
    "filter": "filter",
    "postFilter": "post_filter",
    "preScore": "pre_score",
    "score": "score",
    "reserve": "reserve",
    "permit": "permit",
    "preBind": "pre_bind",
    "bind": "bind",
    "postBind": "post_bind",
    # The pod-group cycle's own points (workload-aware scheduling, GenericWorkload).
    "placementGenerate": "generate_placements",
    "placementFeasible": "placement_feasible",
    "placementScore": "score_placement",
    "podGroupPostFilter": "pod_group_post_filter",
}


class StateData(Protocol):
    def clone(self) -> StateData: ...


class _StateDict(dict[str, Any]):
    def __missing__(self, key: str) -> Any:
        raise KeyError(f"{key!r} not found in CycleState")


class CycleState:
    """Data plugins share during one scheduling cycle, keyed by plugin-chosen strings.

    ``clone`` copies each entry through its own ``clone()`` when it has one (preemption
    simulates removing pods on a copy), otherwise shallowly.
    """

    __slots__ = (
        "_data",
        "skip_filter_plugins",
        "skip_score_plugins",
        "record_plugin_metrics",
        "read",
        "pod_group",
        "placement",
    )

    def __init__(self) -> None:
        self._data: dict[str, Any] = _StateDict()
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.record_plugin_metrics = False
        #: In a pod group's cycle, the group being placed (``None`` in a pod's own cycle): a
        #: plugin can tell the two apart.
        self.pod_group: PodGroupInfo | None = None
        #: In a pod group's cycle, the placement being evaluated (the whole cluster unless a
        #: PlacementGenerate plugin proposed node sets).
        self.placement: Placement | None = None
        #: ``read(key)``: the value stored under ``key``; raises ``KeyError`` naming it when
        #: absent. Bound straight to the dict lookup: plugins call it once per node.
        self.read: Callable[[str], Any] = self._data.__getitem__

    def get(self, key: str, default: Any = None) -> Any:
        return self._data.get(key, default)

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        c = CycleState()
        for k, v in self._data.items():
            cl = getattr(v, "clone", None)
            c._data[k] = cl() if callable(cl) else copy.copy(v)
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.pod_group = self.pod_group
        c.placement = self.placement
        return c


class WaitingPod(Protocol):
    """A pod held at Permit. Other plugins may allow or reject it through the handle."""

    @property
    def pod(self) -> dict[str, Any]: ...

    def pending_plugins(self) -> list[str]: ...

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> None: ...

    def preempt(self, plugin: str, message: str) -> bool:
        """Preemption takes the pod's place: its binding cycle fails with an Error status, so
        that it backs off rather than waits in the unschedulable pool (1.36). False when the
        pod was already allowed or rejected."""
        ...


class SharedLister(Protocol):
    """The snapshot of the cluster taken at the start of a scheduling cycle."""

    def list(self) -> Sequence[NodeInfo]: ...

    def get(self, name: str) -> NodeInfo: ...

    def have_pods_with_affinity(self) -> Sequence[NodeInfo]: ...

    def have_pods_with_required_anti_affinity(self) -> Sequence[NodeInfo]: ...


class Listers(Protocol):
    """Read access to the cluster objects the scheduler caches besides pods and nodes:
    ``Namespace``, ``PriorityClass``, ``PersistentVolume``, ``PersistentVolumeClaim``,
    ``StorageClass``, ``CSINode``, ``PodDisruptionBudget``, ``DeviceClass``, ``ResourceSlice``,
    ``ResourceClaim`` (Kubernetes JSON dicts)."""

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None: ...

    def list(self, kind: str, namespace: str | None = None) -> list[dict[str, Any]]: ...

    def namespace_labels(self, namespace: str) -> dict[str, str]: ...


@runtime_checkable
class ListerChanges(Protocol):
    """What some :class:`Listers` also tell: which objects of a kind changed since a point, for
    a plugin that keeps something per object (DynamicResources: what each allocated claim
    holds) and would otherwise look at every object on every attempt."""

    def changes(self, kind: str, since: int | None) -> tuple[int, list[str] | None]:
        """A point to ask from next time, and the keys (``namespace/name``, or ``name``) of the
        objects of ``kind`` put or removed since ``since`` (a point this returned), oldest
        first; ``None`` when ``since`` is ``None`` or too far back: look at every object."""
        ...


class Nominator(Protocol):
    """Pods nominated to run on a node (by preemption), not yet bound there."""

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]: ...


class PodGroups(Protocol):
    """The pod groups the scheduler knows (``GenericWorkload``): each PodGroup object and its
    members, pending or placed. A group is named by namespace and name, or, in a hierarchy
    (``CompositePodGroup``), by its :class:`~kubesched.framework.podgroup.GroupKey`."""

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The PodGroup object, or ``None`` while the scheduler has not seen it."""
        ...

    def state(self, namespace: str, name: str) -> PodGroupState:
        """The group's members the scheduler knows of, and which of them are placed (bound or
        assumed)."""
        ...

    def member_count(self, namespace: str, name: str) -> int:
        """How many members the scheduler knows of (pending, assumed or bound), without building
        the state: what a quorum check needs."""
        ...

    def scheduled_count(self, namespace: str, name: str) -> int:
        """How many members are placed (bound or assumed), without building the state: what
        a gang's Permit needs, in O(1)."""
        ...

    def composite(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The CompositePodGroup object (``CompositePodGroup`` gate), or ``None``."""
        ...

    def root_of(self, key: GroupKey) -> GroupKey | None:
        """The key at the top of group ``key``'s hierarchy (``key`` itself without a parent);
        ``None`` while a parent is unseen."""
        ...

    def snapshot_top(self, key: GroupKey) -> tuple[GroupKey | None, str]:
        """Where PodGroup ``key``'s hierarchy snapshot is built from (its root, or the composite
        the walk up stopped at), or why it cannot be built (``(None, why)``)."""
        ...

    def children(self, key: GroupKey) -> list[GroupKey]:
        """The keys of composite ``key``'s children, sorted."""
        ...

    def leaves_under(self, key: GroupKey) -> list[GroupKey]:
        """The PodGroup keys at or below ``key``."""
        ...


#: Preemption candidates: node name → (victims, PodDisruptionBudget violations).
PreemptionCandidates = dict[str, tuple[list[PodInfo], int]]
#: ``await preempt(pod, candidates)`` → the candidates the preempting extenders keep.
PreemptWithExtenders = Callable[[PodInfo, PreemptionCandidates], Awaitable[PreemptionCandidates]]


class Handle(Protocol):
    """What a plugin can reach: the snapshot, waiting pods, the cluster, the profile's settings.

    This is all a plugin is given: the runtime hands each plugin an object with these members
    and no other, so a plugin cannot come to depend on how the runtime is built.
    """

    @property
    def listers(self) -> Listers:
        """The cluster objects the scheduler caches besides pods and nodes."""
        ...

    @property
    def nominator(self) -> Nominator:
        """The pods nominated to each node (by preemption), not yet bound there."""
        ...

    @property
    def profile_name(self) -> str:
        """The profile's ``schedulerName``."""
        ...

    def snapshot(self) -> SharedLister:
        """The nodes as the current scheduling cycle sees them (taken at its start)."""
        ...

    @property
    def pod_groups(self) -> PodGroups:
        """The pod groups and their members (empty unless ``GenericWorkload`` is on)."""
        ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        """The pod held at Permit with this uid, if one is."""
        ...

    def iterate_waiting_pods(self) -> Iterable[WaitingPod]:
        """Every pod held at Permit."""
        ...

    def reject_waiting_pod(self, uid: str) -> bool:
        """Reject the pod held at Permit with this uid; False when none is."""
        ...

    @property
    def cluster(self) -> Any:
        """The cluster the scheduler reads and writes (the API server's client, or the
        simulator's in-memory one): binding, events, status updates."""
        ...

    def informer_for(self, gvr: GroupVersionResource | str) -> Informer:
        """An informer for any resource, built-in or custom (a CRD's), by group/version/resource
        (or upstream's ``<resource>.<version>.<group>``). Call it from the plugin's constructor:
        the scheduler lists and watches the resource with its other informers, against a real
        cluster and in the simulator alike, and its events reach the queue as
        ``ClusterEvent(gvr.event_resource, ...)`` for ``events_to_register`` to name."""
        ...

    @property
    def parallelism(self) -> int:
        """How many things a plugin may do at once, e.g. API calls (the scheduler's ``parallelism``)."""
        ...

    # What upstream's Handle runs for plugins that simulate placements (preemption of their own,
    # e.g. CapacityScheduling's): the profile's PreFilter extensions and Filter plugins.
    async def run_pre_filter_add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo
    ) -> Status | None:
        """Run every PreFilter plugin's AddPod extension, as if ``to_add`` ran on ``node``
        (upstream's ``RunPreFilterExtensionAddPod``); the first failure as an Error status."""
        ...

    async def run_pre_filter_remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status | None:
        """Run every PreFilter plugin's RemovePod extension (``RunPreFilterExtensionRemovePod``)."""
        ...

    async def run_filter_with_nominated_pods(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        """Filter ``pod`` on ``node`` with the pods nominated there (of equal or higher priority)
        counted as placed, then without them (``RunFilterPluginsWithNominatedPods``): ``None``
        when it fits both ways."""
        ...

    async def run_reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Run every Reserve plugin for ``pod`` on ``node_name``, in order, up to the first
        that does not succeed (upstream's ``RunReservePluginsReserve``, which 1.37's Handle gives
        a preemption's simulation); undo with :meth:`run_unreserve`, also after a failure."""
        ...

    async def run_unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        """Run every Reserve plugin's Unreserve, in reverse order (failures are logged)."""
        ...

    @property
    def feature_gates(self) -> FeatureGates:
        """Upstream's feature gates as this scheduler runs them (1.37's defaults unless
        ``--feature-gates`` changed them): ``handle.feature_gates.enabled("Name")``."""
        ...

    def activate(self, pods: Iterable[PodInfo]) -> None:
        """Move ``pods`` (in backoffQ or the unschedulable pool) to activeQ, through their
        PreEnqueue gates: e.g. a gang's siblings once one member is placed."""
        ...

    def run_in_background(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` beside the scheduling loop (API calls a cycle must not wait for); the
        scheduler waits for it when it stops."""
        ...

    # Besides upstream's Handle: the scheduler's metrics, its preempting extenders and cache, and
    # which plugins a cycle runs (what preemption, DRA and volume binding read).
    @property
    def observer(self) -> object | None:
        """Where the scheduler records its metrics (``None`` when nothing observes). A plugin
        records its own families there, looking each up with ``getattr`` as an observer may lack
        it: ``preemption_victims``, ``preemption_goroutine``, ``workload_preemption``,
        ``volume_stage_error``, ``dra_binding_conditions``, ``resource_claim_created``."""
        ...

    @property
    def preempt_with_extenders(self) -> PreemptWithExtenders | None:
        """Given when an HTTP extender takes part in preemption (``None`` otherwise):
        ``await preempt_with_extenders(pod, {node: (victims, pdb_violations)})`` → the candidates
        the extenders keep, possibly with fewer victims (upstream's ``callExtenders``)."""
        ...

    def placed_pod(self, uid: str) -> PodInfo | None:
        """The pod as the scheduler's cache holds it (bound or assumed), or ``None`` once it is
        gone: how async preemption tells when its last victim is gone (upstream's executor asks
        its pod lister)."""
        ...

    def nominated_pods_counted(self, pod: PodInfo, node_name: str) -> list[PodInfo]:
        """The pods nominated to ``node_name`` that ``pod``'s filters count as placed there (the
        others of equal or higher priority): those :meth:`run_filter_with_nominated_pods` adds."""
        ...

    def filter_plugins_in_play(self, state: CycleState) -> Sequence[FilterPlugin]:
        """The profile's Filter plugins a cycle runs (those its PreFilter did not skip), in
        order: a preemption plugin that knows every one of them may choose victims by arithmetic
        instead of dry runs."""
        ...

    def pre_filter_extensions_in_play(self, state: CycleState) -> bool:
        """Whether some PreFilter plugin the cycle did not skip has AddPod/RemovePod extensions."""
        ...


# --- one Protocol per extension point ---------------------------------------------------------


@runtime_checkable
class Plugin(Protocol):
    """Every plugin has a ``name`` (the upstream name for in-tree plugins), a class attribute
    (``name = "MyPlugin"``): the profile enables the plugin by it."""

    @property
    def name(self) -> str: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    """Called before a pod enters activeQ. Anything but Success keeps it gated (not scheduled)
    until an event its plugin registered for lets it in.

    A pod group (workload-aware scheduling) is queued as one entity, gated while any member is:
    the queue asks its members in turn up to the first held."""

    def pre_enqueue(self, pod: PodInfo) -> MaybeAwaitable: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    """Orders activeQ: ``less(a, b)`` is True when ``a`` should be scheduled before ``b``.
    Exactly one per profile, and the same one in every profile."""

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    """Which cluster events may make a pod this plugin rejected schedulable again.

    ``events_to_register`` returns the events, each with an optional queueing hint
    ``hint(pod, old, new) -> QueueingHint`` (QUEUE: retry the pod now; SKIP: this event does not
    help it). The queue moves a pod out of the unschedulable pool only on an event a plugin that
    rejected it registered; a plugin without this method is taken to register every event."""

    def events_to_register(self) -> list[ClusterEventWithHint]: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    """Runs once per pod before Filter. Returns ``(result, status)``:

    * ``result`` may narrow the nodes worth filtering (results of all plugins intersect);
    * a rejecting status ends the attempt for every node (the pod is unschedulable);
    * Skip means this plugin's Filter will not run for this pod.
    A plugin may return a bare Status (or None) when it never narrows the nodes.
    """

    def pre_filter(self, state: CycleState, pod: PodInfo) -> PreFilterReturn: ...


@runtime_checkable
class PreFilterExtensions(Plugin, Protocol):
    """Incrementally update the state PreFilter wrote when ``to_add`` / ``to_remove`` is added to or
    removed from ``node`` during evaluation (nominated pods, preemption's dry runs), on a cloned
    CycleState. Returns a Status (``None``: Success); anything else is an error for the pod."""

    def add_pod(self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo) -> MaybeAwaitable: ...

    def remove_pod(self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo) -> MaybeAwaitable: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    """Can the pod run on this node? Success, or Unschedulable(AndUnresolvable) with reasons.
    Plain function. The runtime stops at the first plugin that rejects a node."""

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None: ...


@runtime_checkable
class BatchFilterPlugin(FilterPlugin, Protocol):
    """A Filter plugin that can also judge all the candidate nodes of one pod in one call.

    ``filter_nodes`` returns whether each node passes (one bool per node, in the order of
    ``nodes``; a numpy bool array is fine), exactly as ``filter`` would decide it node by node,
    or ``None`` to decline (the runtime then calls ``filter`` node by node). It only says
    *whether*: the Status of a rejected node is asked of ``filter`` when someone needs it, so
    messages stay the per-node ones. ``nodes`` is a :class:`~kubesched.framework.columns.NodeBatch`
    over the snapshot's columns when the scheduler calls (``columns_of(nodes)``), a plain list
    otherwise (decline then). The runtime prefers this form; ``filter`` stays the contract."""

    def filter_nodes(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> Sequence[bool] | np.ndarray | None: ...


@runtime_checkable
class FilterStatusesPlugin(FilterPlugin, Protocol):
    """A Filter plugin that can give the Status ``filter`` returns for many nodes in one call.

    ``filter_statuses`` returns one ``Status | None`` per node of ``nodes`` (the ones a batch
    filter rejected, when a pod fits nowhere and each node's reason is reported), or ``None``
    to decline. Nodes rejected alike may share one Status object (read-only); a
    :class:`~kubesched.framework.status.StatusTable` (a few statuses and each node's row among
    them) says so outright, and spares the runtime a walk over the nodes to count them. A
    Success or ``None`` entry, and anything declined, is asked of ``filter`` node by node."""

    def filter_statuses(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> Sequence[Status | None] | StatusTable | None: ...


@runtime_checkable
class SignPlugin(Plugin, Protocol):
    """What of a pod this plugin reads, for opportunistic batching: a mapping of fragment names
    to JSON-serialisable values such that two pods with equal fragments (from every plugin)
    get the same answers from this plugin. ``None``: this pod cannot be signed, and is never
    batched. Every PreFilter, Filter, PreScore and Score plugin of a profile must implement it
    for that profile to batch at all. Plain function."""

    def sign_pod(self, pod: PodInfo) -> Mapping[str, Any] | None: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    """Runs only when no node fits. Returns ``(PostFilterResult | None, status)``; Success with a
    nominated node ends PostFilter (preemption made room)."""

    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_statuses: Mapping[str, Status]
    ) -> PostFilterReturn: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    """Runs once per pod with the feasible nodes, before Score, typically to write what Score
    reads into the CycleState. Returns a Status (``None``: Success); Skip: this plugin's Score is
    not run for this pod; anything else is an error for the pod."""

    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> MaybeAwaitable: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    """Scores one feasible node; ``(score, status)`` or a bare int. Plain function.
    After NormalizeScore every score must be within 0..100; the runtime multiplies by the
    plugin's weight."""

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> ScoreReturn: ...


@runtime_checkable
class BatchScorePlugin(ScorePlugin, Protocol):
    """A Score plugin that can also score all the feasible nodes of one pod in one call:
    ``score_nodes`` returns one score per node, in the order of ``nodes``, each exactly what
    ``score`` returns for that node (bare ints, or an integer numpy array), or ``None`` to
    decline (the runtime then calls ``score`` node by node). The runtime prefers it when
    present; ``score`` stays the contract (and what tests and extenders of the plugin may call).
    Worth it where per-pod work can be done once instead of once per node, or where the nodes'
    data can be read in bulk (``columns_of(nodes)``)."""

    def score_nodes(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> Sequence[int] | np.ndarray | None: ...


@runtime_checkable
class ScoreExtensions(Plugin, Protocol):
    """NormalizeScore: rewrites this plugin's ``scores`` (one :class:`NodeScore` per feasible node)
    in place, e.g. to 0..100, and returns a Status (``None``: Success). A failure is an error for
    the pod; a score left outside 0..100 afterwards is one too."""

    def normalize_score(self, state: CycleState, pod: PodInfo, scores: list[NodeScore]) -> MaybeAwaitable: ...


@runtime_checkable
class BatchScoreExtensions(ScoreExtensions, Protocol):
    """NormalizeScore over an array: ``normalize_scores`` takes this plugin's raw scores (an int64
    array in the order of the nodes) and returns the normalized ones (same length), exactly what
    ``normalize_score`` would write, or ``None`` to decline. Plain function; the runtime prefers
    it when present."""

    def normalize_scores(
        self, state: CycleState, pod: PodInfo, scores: np.ndarray
    ) -> Sequence[int] | np.ndarray | None: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    """Reserve runs in order once a node is chosen, before the pod is assumed on it; returns a
    Status (``None``: Success). A failure (here or later in the cycle) unreserves every Reserve
    plugin in reverse order and retries the pod. ``unreserve`` must be idempotent and may not
    fail; what it returns is ignored."""

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> MaybeAwaitable: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> object: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    """Returns ``(status, timeout_seconds)`` or a bare Status: Success, Wait (the binding cycle
    waits until allowed, rejected, or the timeout), or a rejection."""

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> PermitReturn: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    """Runs before Bind in the binding cycle (e.g. to provision volumes). Success or Skip goes
    on; anything else unreserves the pod and retries it with backoff.

    A plugin may also have ``pre_bind_pre_flight(state, pod, node_name)`` (upstream's
    PreBindPreFlight): Skip when its PreBind will have nothing to do for the pod, else Success
    (``None``); the scheduler then writes the pod's expected node as
    ``status.nominatedNodeName`` (NominatedNodeNameForExpectation). Without it, PreBind is taken
    to have work."""

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> MaybeAwaitable: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    """Binds the pod to ``node_name``. Skip passes to the next Bind plugin; the first non-Skip
    answer wins (Success: bound; anything else unreserves and retries the pod). All skipping
    is an error."""

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> MaybeAwaitable: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    """Informational, after a successful bind: what it returns is ignored and an exception is
    logged; the pod stays bound either way. May be ``async def``."""

    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> object: ...


# --- the pod-group cycle's points (workload-aware scheduling) ----------------------------------


@runtime_checkable
class PlacementGeneratePlugin(Plugin, Protocol):
    """Candidate placements (node sets) for a pod group within ``parent`` (the whole cluster for
    a group at the top). Returns a list of :class:`Placement`, or ``(placements, status)``; an
    empty list means the group fits nowhere. The lists of several plugins are concatenated."""

    def generate_placements(
        self, state: CycleState, group: PodGroupInfo, parent: Placement
    ) -> PlacementGenerateReturn: ...


@runtime_checkable
class PlacementFeasiblePlugin(Plugin, Protocol):
    """Whether the group's constraints hold in a placement, asked before its first member is
    tried and after each one: Success (they hold), Wait (not yet, but they still may),
    Unschedulable (they cannot, whatever follows: the evaluation stops), or Error. ``state`` is
    the placement's cycle state (its ``pod_group`` and ``placement`` set). Plain function or
    ``async def``."""

    def placement_feasible(
        self, state: CycleState, group: PodGroupInfo, progress: PlacementProgress
    ) -> MaybeAwaitable: ...


@runtime_checkable
class PlacementScorePlugin(Plugin, Protocol):
    """Scores one feasible placement from what its evaluation proposes (higher is better):
    ``score`` or ``(score, status)``. After the optional ``normalize_placement_scores`` every
    score must be within 0..100; the runtime multiplies by the plugin's weight and the highest
    total wins."""

    def score_placement(
        self, state: CycleState, group: PodGroupInfo, assignments: PodGroupAssignments
    ) -> PlacementScoreReturn: ...


@runtime_checkable
class PlacementScoreExtensions(Plugin, Protocol):
    """Rewrites this plugin's placement ``scores`` in place (e.g. to 0..100); a Status (``None``:
    Success)."""

    def normalize_placement_scores(
        self, state: CycleState, group: PodGroupInfo, scores: list[PlacementScore]
    ) -> MaybeAwaitable: ...


@runtime_checkable
class PlacementScoreBounds(Plugin, Protocol):
    """A PlacementScore plugin's promise about the scores it can give, which lets a pod group's
    cycle leave out placements that cannot win (see :mod:`kubesched.scheduler.podgroup.ranking`).

    ``placement_score_bounds`` returns, for each of ``placements``, the highest score (on
    0..100, after its normalization, before its weight) the plugin gives that placement in any
    set of feasible placements scored together; and that very score when every one of
    ``members`` is proposed on the placement (on whichever of its nodes). A plugin whose class
    sets ``partial_below_bound = True`` also promises that a placement where not every member is
    proposed scores strictly below its bound whenever the set holds one where every member is.
    (A feasible placement holds at least one member.) ``None``: no bounds this time. Only when
    every PlacementScore plugin of a profile gives bounds, and one of them makes the second
    promise, does the cycle use them."""

    def placement_score_bounds(
        self, state: CycleState, group: PodGroupInfo, placements: Sequence[Placement], members: Sequence[PodInfo]
    ) -> list[int] | None: ...


@runtime_checkable
class PodGroupPostFilterPlugin(Plugin, Protocol):
    """Runs when a pod group fits nowhere (e.g. workload-aware preemption). ``schedule()``
    re-runs the group's placement on the (changed) snapshot and returns ``(assignments,
    status)``. Returns ``(PodGroupPostFilterResult | None, status)``."""

    def pod_group_post_filter(
        self, state: CycleState, group: PodGroupInfo, schedule: PodGroupSchedule
    ) -> PodGroupPostFilterReturn: ...


def plugin_extension_points(cls: type) -> list[str]:
    """The config names of the extension points a plugin class implements."""
    points = [point for point, method in EXTENSION_POINTS.items() if callable(getattr(cls, method, None))]
    return points
