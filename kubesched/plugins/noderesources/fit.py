"""NodeResourcesFit: does the node have room for the pod's requests, and how full would it be?

Filter follows upstream's ``fitsRequest``: one reason per short resource, in the order pods,
cpu, memory, ephemeral-storage, then scalar resources (extended, hugepages, ...). All reasons are
kept in one Status. The Status is UnschedulableAndUnresolvable when some request exceeds the
node's whole allocatable (evicting pods cannot make room), Unschedulable otherwise.
``ignoredResources`` / ``ignoredResourceGroups`` exempt *extended* resources only.

The pod's requests are counted as 1.37 counts them (:mod:`kubesched.framework.pod_requests`):
pod-level requests (``spec.resources``) replace the containers' sum unless the PodLevelResources
gate is off; the node's side is NodeInfo's total, where pods resized in place count the larger
of spec and allocation.

Score uses the configured strategy (LeastAllocated, MostAllocated, RequestedToCapacityRatio) over
the configured resources, see :mod:`kubesched.plugins.noderesources.resource_allocation`.

PlacementScore (a pod group's candidate placements, TopologyAwareWorkloadScheduling) scores a
placement's nodes as one bin with the MostAllocated formula over the same resources and weights,
see :mod:`kubesched.plugins.noderesources.placement_score`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kubesched.framework.columns import EXACT_LIMIT, Array, NodeBatch, NodeColumns, columns_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.names import qualified_name_errors
from kubesched.framework.pod_requests import DEFAULT_COUNTING, Counting, PodResourcesOptions, fit_requests, pod_requests
from kubesched.framework.podgroup import Placement, PodGroupAssignments, PodGroupInfo
from kubesched.framework.resources import Resource, is_extended_resource
from kubesched.framework.status import Code, Status, StatusTable
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.plugins.dynamicresources import extended_resources as dra_extended
from kubesched.plugins.helper import feature_gates_of, requests_fragment, snapshot_columns
from kubesched.plugins.noderesources.placement_score import placement_score, placement_score_bounds
from kubesched.plugins.noderesources.resource_allocation import (
    MAX_CUSTOM_PRIORITY_SCORE,
    Entry,
    ResourceAllocationScorer,
    ResourceSpec,
    Scorer,
    counted_fragment,
    default_resources,
    is_scalar_resource_name,
    least_allocated_scorer,
    most_allocated_scorer,
    requested_to_capacity_ratio_scorer,
)
from kubesched.plugins.noderesources.resource_allocation_batch import (
    BatchScorer,
    batch_inputs,
    least_allocated,
    most_allocated,
    requested_to_capacity_ratio,
)

NAME = "NodeResourcesFit"
PRE_FILTER_KEY = "PreFilter" + NAME
PRE_SCORE_KEY = "PreScore" + NAME

TOO_MANY_PODS = "Too many pods"
INSUFFICIENT_CPU = "Insufficient cpu"
INSUFFICIENT_MEMORY = "Insufficient memory"
INSUFFICIENT_EPHEMERAL_STORAGE = "Insufficient ephemeral-storage"

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"


# --- args ---------------------------------------------------------------------------------------


class UtilizationShapePoint(BaseModel):
    """One point of the RequestedToCapacityRatio shape: utilization 0..100 → score 0..10."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    utilization: int
    score: int


def shape_errors(shape: list[UtilizationShapePoint]) -> list[str]:
    """Why a scoring shape is invalid (upstream's ``validateFunctionShape``, shared by
    RequestedToCapacityRatio and VolumeBinding): utilizations strictly increasing, each in
    [0, 100], each score in [0, MAX_CUSTOM_PRIORITY_SCORE]. Empty when it is valid."""
    errs: list[str] = []
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errs.append(
                f"shape[{i}].utilization: Invalid value: {shape[i].utilization}: values must be sorted in increasing order"
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= 100:
            errs.append(f"shape[{i}].utilization: Invalid value: {point.utilization}: not in valid range [0, 100]")
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errs.append(
                f"shape[{i}].score: Invalid value: {point.score}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]"
            )
    return errs


class RequestedToCapacityRatioParam(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    shape: list[UtilizationShapePoint] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check_shape(self) -> RequestedToCapacityRatioParam:
        if not self.shape:
            raise ValueError("shape: Required value: at least one point must be specified")
        errs = shape_errors(self.shape)
        if errs:
            raise ValueError("; ".join(errs))
        return self


class ScoringStrategy(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    type: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"] = "LeastAllocated"
    resources: list[ResourceSpec] = Field(default_factory=default_resources)
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = Field(
        default=None, alias="requestedToCapacityRatio"
    )

    @field_validator("resources")
    @classmethod
    def _check_resources(cls, v: list[ResourceSpec]) -> list[ResourceSpec]:
        if not v:
            return default_resources()
        errs = [
            f"resources[{i}].weight: Invalid value: {r.weight}: resource weight of {r.name} not in valid range (0, 100]"
            for i, r in enumerate(v)
            if r.weight <= 0 or r.weight > 100
        ]
        if errs:
            raise ValueError("; ".join(errs))
        return v

    @model_validator(mode="after")
    def _check_ratio(self) -> ScoringStrategy:
        if self.type == REQUESTED_TO_CAPACITY_RATIO:
            if self.requested_to_capacity_ratio is None:
                raise ValueError(
                    "requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio"
                )
        elif self.requested_to_capacity_ratio is not None:
            raise ValueError(
                "requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio"
            )
        return self


class NodeResourcesFitArgs(BaseModel):
    """Upstream ``NodeResourcesFitArgs`` (kubescheduler.config.k8s.io/v1), defaults applied."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    ignored_resources: list[str] = Field(default_factory=list, alias="ignoredResources")
    ignored_resource_groups: list[str] = Field(default_factory=list, alias="ignoredResourceGroups")
    scoring_strategy: ScoringStrategy = Field(default_factory=ScoringStrategy, alias="scoringStrategy")

    @field_validator("ignored_resources")
    @classmethod
    def _check_ignored(cls, v: list[str]) -> list[str]:
        errs = [
            f"ignoredResources[{i}]: Invalid value: {res!r}: {msg}"
            for i, res in enumerate(v)
            for msg in qualified_name_errors(res)
        ]
        if errs:
            raise ValueError("; ".join(errs))
        return v

    @field_validator("ignored_resource_groups")
    @classmethod
    def _check_groups(cls, v: list[str]) -> list[str]:
        errs: list[str] = []
        for i, group in enumerate(v):
            if "/" in group:
                errs.append(
                    f"ignoredResourceGroups[{i}]: Invalid value: {group!r}: resource group name can't contain '/'"
                )
            errs.extend(
                f"ignoredResourceGroups[{i}]: Invalid value: {group!r}: {msg}" for msg in qualified_name_errors(group)
            )
        if errs:
            raise ValueError("; ".join(errs))
        return v


# --- per-pod state ------------------------------------------------------------------------------


class FitRequest:
    """The pod's requests as Filter checks them: only non-zero amounts, ignored extended
    resources already dropped, scalar resources in the pod's order."""

    __slots__ = ("milli_cpu", "memory", "ephemeral_storage", "scalar")

    def __init__(
        self,
        requests: Resource,
        ignored: frozenset[str] = frozenset(),
        ignored_groups: frozenset[str] = frozenset(),
    ) -> None:
        self.milli_cpu = requests.milli_cpu
        self.memory = requests.memory
        self.ephemeral_storage = requests.ephemeral_storage
        scalar: list[tuple[str, int]] = []
        for name, qty in requests.scalar.items():
            if qty == 0 or not is_scalar_resource_name(name):
                continue
            if is_extended_resource(name) and (
                name in ignored or (ignored_groups and name.split("/", 1)[0] in ignored_groups)
            ):
                continue
            scalar.append((name, qty))
        self.scalar = tuple(scalar)

    def clone(self) -> FitRequest:
        return self


def fits(req: FitRequest, alloc: Resource, used: Resource, num_pods: int) -> bool:
    """Whether :func:`insufficient_resources` finds nothing missing on a node with ``alloc``,
    ``used`` requested and ``num_pods`` pods (which need not be a real node's)."""
    if num_pods + 1 > alloc.allowed_pod_number:
        return False
    cpu = req.milli_cpu
    if cpu > 0 and cpu > alloc.milli_cpu - used.milli_cpu:
        return False
    mem = req.memory
    if mem > 0 and mem > alloc.memory - used.memory:
        return False
    eph = req.ephemeral_storage
    if eph > 0 and eph > alloc.ephemeral_storage - used.ephemeral_storage:
        return False
    if req.scalar:
        a_scalar = alloc.scalar
        u_scalar = used.scalar
        for name, qty in req.scalar:
            if qty > a_scalar.get(name, 0) - u_scalar.get(name, 0):
                return False
    return True


def insufficient_resources(req: FitRequest, node: NodeInfo) -> tuple[list[str] | None, bool]:
    """Reasons the pod does not fit (``None`` when it does), and whether some request exceeds the
    node's whole allocatable."""
    return insufficient(req, node.allocatable, node.requested, len(node.pods))


def fit_status(req: FitRequest, alloc: Resource, used: Resource, num_pods: int) -> Status | None:
    """The Filter status for a node with ``alloc``, ``used`` requested and ``num_pods`` pods."""
    reasons, unresolvable = insufficient(req, alloc, used, num_pods)
    if reasons is None:
        return None
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, *reasons)


def insufficient(req: FitRequest, alloc: Resource, used: Resource, num_pods: int) -> tuple[list[str] | None, bool]:
    """:func:`insufficient_resources` for a node with ``alloc``, ``used`` requested and
    ``num_pods`` pods (which need not be a real node's)."""
    reasons: list[str] | None = None
    unresolvable = False
    if num_pods + 1 > alloc.allowed_pod_number:
        reasons = [TOO_MANY_PODS]
    cpu = req.milli_cpu
    if cpu > 0 and cpu > alloc.milli_cpu - used.milli_cpu:
        reasons = reasons or []
        reasons.append(INSUFFICIENT_CPU)
        unresolvable = unresolvable or cpu > alloc.milli_cpu
    mem = req.memory
    if mem > 0 and mem > alloc.memory - used.memory:
        reasons = reasons or []
        reasons.append(INSUFFICIENT_MEMORY)
        unresolvable = unresolvable or mem > alloc.memory
    eph = req.ephemeral_storage
    if eph > 0 and eph > alloc.ephemeral_storage - used.ephemeral_storage:
        reasons = reasons or []
        reasons.append(INSUFFICIENT_EPHEMERAL_STORAGE)
        unresolvable = unresolvable or eph > alloc.ephemeral_storage
    if req.scalar:
        a_scalar = alloc.scalar
        u_scalar = used.scalar
        for name, qty in req.scalar:
            a = a_scalar.get(name, 0)
            if qty > a - u_scalar.get(name, 0):
                reasons = reasons or []
                reasons.append(f"Insufficient {name}")
                unresolvable = unresolvable or qty > a
    return reasons, unresolvable


# --- queueing hints -----------------------------------------------------------------------------


def _spec(obj: dict[str, Any] | None) -> dict[str, Any]:
    return (obj or {}).get("spec") or {}


def _resized_requests(pod: dict[str, Any], counting: Counting) -> Resource:
    """A pod's requests as a resize moves them (upstream's scale-down hint counts pod-level
    requests whatever the PodLevelResources gate says)."""
    opts = PodResourcesOptions(
        use_status_resources=True, in_place_pod_level_resources_vertical_scaling=counting.pod_level_resize
    )
    return pod_requests(pod, opts)


def _fits_empty_node(pod: dict[str, Any], node: dict[str, Any], counting: Counting) -> bool:
    reasons, _ = insufficient_resources(FitRequest(fit_requests(pod, counting)), NodeInfo(node))
    return reasons is None


def _requested_resources_increased(
    pod: dict[str, Any], old: dict[str, Any], new: dict[str, Any], counting: Counting
) -> bool:
    req = fit_requests(pod, counting)
    before = NodeInfo(old).allocatable
    after = NodeInfo(new).allocatable
    if after.allowed_pod_number > before.allowed_pod_number:
        return True
    if (
        (req.milli_cpu > 0 and after.milli_cpu > before.milli_cpu)
        or (req.memory > 0 and after.memory > before.memory)
        or (req.ephemeral_storage > 0 and after.ephemeral_storage > before.ephemeral_storage)
    ):
        return True
    return any(qty and after.scalar.get(name, 0) > before.scalar.get(name, 0) for name, qty in req.scalar.items())


def _scaled_down(target: dict[str, Any], old: dict[str, Any], new: dict[str, Any], counting: Counting) -> bool:
    """Whether an update of ``new`` (a scheduled pod, or the target itself) freed something the
    target pod requests."""
    if (new.get("metadata") or {}).get("uid") == (target.get("metadata") or {}).get("uid"):
        return True
    if not _spec(new).get("nodeName"):
        return False
    before = _resized_requests(old, counting)
    after = _resized_requests(new, counting)
    want = _resized_requests(target, counting)
    for name in want.names():
        if name in ("cpu", "memory", "ephemeral-storage") or is_scalar_resource_name(name):
            if before.get(name) > after.get(name):
                return True
    return False


def is_schedulable_after_pod_event(
    pod: dict[str, Any], old: Any, new: Any, counting: Counting = DEFAULT_COUNTING
) -> QueueingHint:
    """A scheduled (or nominated) pod went away, or a pod shrank its requests (an in-place
    resize down, the kubelet's allocation included)."""
    if new is None:
        if old is None:
            return QueueingHint.QUEUE
        if not _spec(old).get("nodeName") and not (old.get("status") or {}).get("nominatedNodeName"):
            return QueueingHint.SKIP
        return QueueingHint.QUEUE
    if old is None:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if _scaled_down(pod, old, new, counting) else QueueingHint.SKIP


def is_schedulable_after_node_change(
    pod: dict[str, Any], old: Any, new: Any, counting: Counting = DEFAULT_COUNTING
) -> QueueingHint:
    """A node was added, or grew an allocatable amount the pod asks for, and the pod would fit
    it empty."""
    if new is None or not _fits_empty_node(pod, new, counting):
        return QueueingHint.SKIP
    if old is None:
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if _requested_resources_increased(pod, old, new, counting) else QueueingHint.SKIP


# --- the plugin ---------------------------------------------------------------------------------


def strategy_batch_scorer(strategy: ScoringStrategy) -> BatchScorer:
    """The vectorized twin of :func:`strategy_scorer`."""
    if strategy.type == MOST_ALLOCATED:
        return most_allocated
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        ratio = strategy.requested_to_capacity_ratio
        assert ratio is not None
        return requested_to_capacity_ratio([(p.utilization, p.score) for p in ratio.shape])
    return least_allocated


def fits_batch(req: FitRequest, batch: NodeBatch) -> Array | None:
    """:func:`insufficient_resources` is ``None``, for every node of ``batch``; ``None`` when
    the amounts are too large for exact int64 arithmetic."""
    cols = batch.columns
    if not cols.exact or any(
        abs(q) >= EXACT_LIMIT for q in (req.milli_cpu, req.memory, req.ephemeral_storage, *(q for _, q in req.scalar))
    ):
        return None
    rows = batch.rows
    if len(rows) == cols.n:
        # The whole cluster (in a rotated order): every row where the columns hold it, then
        # one gather into the batch's order, rather than a gather per column.
        whole: Array = _fits_at(req, cols, slice(None))[rows]
        return whole
    return _fits_at(req, cols, rows)


def _fits_at(req: FitRequest, cols: NodeColumns, rows: Array | slice) -> Array:
    ok: Array = cols.num_pods[rows] + 1 <= cols.alloc_pods[rows]
    for amount, alloc, used in (
        (req.milli_cpu, cols.alloc_cpu, cols.req_cpu),
        (req.memory, cols.alloc_memory, cols.req_memory),
        (req.ephemeral_storage, cols.alloc_ephemeral, cols.req_ephemeral),
    ):
        if amount > 0:
            ok &= amount <= alloc[rows] - used[rows]
    for name, qty in req.scalar:
        alloc, used = cols.scalar(name)
        ok &= qty <= alloc[rows] - used[rows]
    return ok


def statuses_batch(req: FitRequest, batch: NodeBatch) -> StatusTable | None:
    """:class:`NodeResourcesFit`'s per-node ``filter`` Status for every node of ``batch``, from
    the columns; nodes with the same reasons share one Status. ``None`` when the amounts are
    too large for exact int64 arithmetic."""
    cols = batch.columns
    if not cols.exact or any(
        abs(q) >= EXACT_LIMIT for q in (req.milli_cpu, req.memory, req.ephemeral_storage, *(q for _, q in req.scalar))
    ):
        return None
    rows = batch.rows
    # The whole cluster (in a rotated order, as for a pod that fits nowhere): the checks run
    # over the columns as they are and the codes are gathered into the batch's order once.
    at: Array | slice = slice(None) if len(rows) == cols.n else rows
    size = cols.n if isinstance(at, slice) else len(rows)
    # One (short-of, beyond-allocatable) pair of masks per reason, in the per-node order.
    checks: list[tuple[str, Array, Array]] = []
    too_many = cols.num_pods[at] + 1 > cols.alloc_pods[at]
    checks.append((TOO_MANY_PODS, too_many, np.zeros(size, bool)))
    for reason, amount, alloc, used in (
        (INSUFFICIENT_CPU, req.milli_cpu, cols.alloc_cpu, cols.req_cpu),
        (INSUFFICIENT_MEMORY, req.memory, cols.alloc_memory, cols.req_memory),
        (INSUFFICIENT_EPHEMERAL_STORAGE, req.ephemeral_storage, cols.alloc_ephemeral, cols.req_ephemeral),
    ):
        if amount > 0:
            a = alloc[at]
            checks.append((reason, amount > a - used[at], amount > a))
    for name, qty in req.scalar:
        alloc, used = cols.scalar(name)
        a = alloc[at]
        checks.append((f"Insufficient {name}", qty > a - used[at], qty > a))
    if len(checks) > 62:
        return None
    # A node's reasons as bits: one small integer per node, one Status per distinct value.
    code = np.zeros(size, np.int64)
    beyond = np.zeros(size, bool)
    for bit, (_, short, over) in enumerate(checks):
        code |= short.astype(np.int64) << bit
        beyond |= short & over
    code = code * 2 + beyond
    if isinstance(at, slice):
        code = code[rows]
    # One Status per distinct value; each node is given its value's row of that table (a pod
    # that fits nowhere asks for every node: nothing here walks them in Python).
    values, index = _distinct_codes(code)
    table: list[Status | None] = []
    for value in values.tolist():
        reasons = [reason for bit, (reason, _, _) in enumerate(checks) if value >> 1 >> bit & 1]
        table.append(
            Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if value & 1 else Code.UNSCHEDULABLE, *reasons)
            if reasons
            else None
        )
    return StatusTable(table, index)


def _distinct_codes(code: Array) -> tuple[Array, Array]:
    """The distinct values of ``code`` (ascending) and each element's position among them, as
    ``np.unique(code, return_inverse=True)``; by a lookup table where the values are small
    (a few reasons: they are), which costs a tenth of the sort."""
    top = int(code.max()) if len(code) else 0
    if top >= 1 << 12:
        return np.unique(code, return_inverse=True)
    values = np.flatnonzero(np.bincount(code, minlength=top + 1))
    lookup = np.empty(top + 1, np.intp)
    lookup[values] = np.arange(len(values))
    return values, lookup[code]


def strategy_scorer(strategy: ScoringStrategy) -> Scorer:
    """The scoring function of a (validated) strategy."""
    if strategy.type == MOST_ALLOCATED:
        return most_allocated_scorer
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        ratio = strategy.requested_to_capacity_ratio
        assert ratio is not None  # the Args model requires it for this type
        return requested_to_capacity_ratio_scorer([(p.utilization, p.score) for p in ratio.shape])
    return least_allocated_scorer


class NodeResourcesFit:
    """PreFilter, Filter, PreScore and Score on the pod's resource requests (see module docstring)."""

    name = NAME
    Args = NodeResourcesFitArgs

    def __init__(self, args: NodeResourcesFitArgs | None, handle: Handle | None = None) -> None:
        args = args if args is not None else NodeResourcesFitArgs()
        self.args = args
        self.handle = handle
        self.ignored_resources = frozenset(args.ignored_resources)
        self.ignored_resource_groups = frozenset(args.ignored_resource_groups)
        #: How the feature gates count a pod (pod-level resources, pod-level resizes).
        self.counting = Counting.of(feature_gates_of(handle))
        strategy = args.scoring_strategy
        self.scorer = ResourceAllocationScorer(
            strategy.type, strategy.resources, strategy_scorer(strategy), use_requested=False, counting=self.counting
        )
        self.batch_scorer = strategy_batch_scorer(strategy)

    # PreFilter / Filter
    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        req = pod.fit_requests(self.counting)
        state.write(PRE_FILTER_KEY, FitRequest(req, self.ignored_resources, self.ignored_resource_groups))
        # Extended resources a DeviceClass stands for are DynamicResources' where no device plugin has them.
        dra_extended.note_dra_backed(state, pod, self.handle)
        return None

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        req = state.get(PRE_FILTER_KEY)
        if req is None:
            return Status.as_error(f'error reading "{PRE_FILTER_KEY}" from cycleState: not found')
        req = dra_extended.request_for_node(req, state, node)
        return fit_status(req, node.allocatable, node.requested, len(node.pods))

    def filter_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        batch = columns_of(nodes)
        req = state.get(PRE_FILTER_KEY)
        if batch is None or req is None or dra_extended.dra_backed_in(state):
            return None
        return fits_batch(req, batch)

    def filter_statuses(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> StatusTable | None:
        batch = columns_of(nodes)
        req = state.get(PRE_FILTER_KEY)
        if batch is None or req is None or dra_extended.dra_backed_in(state):
            return None
        return statuses_batch(req, batch)

    # PreScore / Score
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        state.write(PRE_SCORE_KEY, self.scorer.compile(pod))
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        entries: tuple[Entry, ...] | None = state.get(PRE_SCORE_KEY)
        if entries is None:
            entries = self.scorer.compile(pod)
        return self.scorer.score(node, entries)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        batch = columns_of(nodes)
        if batch is None:
            return None
        entries: tuple[Entry, ...] | None = state.get(PRE_SCORE_KEY)
        if entries is None:
            entries = self.scorer.compile(pod)
        inputs = batch_inputs(entries, batch, self.scorer.use_requested)
        return None if inputs is None else self.batch_scorer(*inputs)

    # PlacementScore (pod-group cycles with TopologyAwareWorkloadScheduling)
    def score_placement(self, state: CycleState, group: PodGroupInfo, assignments: PodGroupAssignments) -> int:
        """How full the placement would be with the group's proposed members: MostAllocated over
        the placement's nodes as one bin (see :mod:`.placement_score`)."""
        return placement_score(self.scorer.resources, assignments, self._node_known, self.counting)

    def placement_score_bounds(
        self, state: CycleState, group: PodGroupInfo, placements: Sequence[Placement], members: Sequence[PodInfo]
    ) -> list[int] | None:
        """Each placement's score with every member on it: the most it can score (see
        :mod:`.placement_score`); ``None`` when that cannot be told."""
        columns = snapshot_columns(self.handle.snapshot()) if self.handle is not None else None
        return placement_score_bounds(self.scorer.resources, placements, members, columns, self.counting)

    def _node_known(self, name: str) -> bool:
        if self.handle is None:
            return True
        try:
            self.handle.snapshot().get(name)
        except KeyError:
            return False
        return True

    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        return {**requests_fragment(pod), **counted_fragment(pod, self.counting)}

    def _after_pod_event(self, pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
        return is_schedulable_after_pod_event(pod, old, new, self.counting)

    def _after_node_change(self, pod: dict[str, Any], old: Any, new: Any) -> QueueingHint:
        return is_schedulable_after_node_change(pod, old, new, self.counting)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # Node label/taint updates are not registered: queueing hints replace upstream's preCheck,
        # which is what made them necessary.
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN),
                self._after_pod_event,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_ALLOCATABLE),
                self._after_node_change,
            ),
        ]
