"""What PreFilter leaves in the CycleState for the later extension points of one pod's cycle
(:class:`State`, under :data:`STATE_KEY`): the pod's claims, the allocator's view of the cluster,
what Filter found per node (:class:`NodeAllocation`), what Reserve chose and PreBind writes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kubesched.framework.selectors import NodeSelector
from kubesched.objects import Obj
from kubesched.plugins.dynamicresources.allocator import Allocator
from kubesched.plugins.dynamicresources.allocator_types import AllocatedState
from kubesched.plugins.dynamicresources.claims import uid_of

STATE_KEY = "DynamicResources"


@dataclass
class NodeAllocation:
    """What Filter found for one node: the claims it allocated there (the claim for extended
    resources in this node's variant), their results in the same order (:attr:`results`), and
    the pod's container-to-request mappings for that claim."""

    indices: list[int]
    claims: list[Obj]
    #: The results, or how to make them: Filter learns that the claims fit on every node, but
    #: only the node Reserve takes (and Score, where a request has alternatives) needs them.
    later: list[Obj] | Callable[[], list[Obj]]
    extended_claim: Obj | None = None
    mappings: list[Obj] = field(default_factory=list)

    @property
    def results(self) -> list[Obj]:
        """One allocation result per claim of :attr:`claims` (made on first use)."""
        if callable(self.later):
            self.later = self.later()
        return self.later


class State:
    __slots__ = (
        "claims",
        "extended",
        "initial_extended_uid",
        "pod_scalar",
        "class_mapping",
        "node_claims",
        "variant_allocators",
        "allocator",
        "to_allocate",
        "classes",
        "allocated",
        "slices",
        "available_on",
        "allocations",
        "node_allocations",
        "unavailable",
        "bindings",
        "shared",
        "signalled",
        "cycle",
    )

    def __init__(self, claims: list[Obj], extended: Obj | None = None) -> None:
        #: the pod's claims in ``spec.resourceClaims`` order, then the one for extended resources
        self.claims = [*claims, extended] if extended is not None else claims
        #: the index of the claim for extended resources (``None``: the pod has none)
        self.extended: int | None = len(claims) if extended is not None else None
        self.initial_extended_uid = uid_of(extended) if extended is not None else ""
        self.pod_scalar: dict[str, int] = {}
        self.class_mapping: dict[str, Obj] = {}
        #: the resources DRA provides on a node -> that node's variant of the claim for extended
        #: resources, and the request mappings
        self.node_claims: dict[tuple[str, ...], tuple[Obj, list[Obj]]] = {}
        #: per variant of that claim (by identity, kept alive in ``node_claims``): the allocator
        #: of the claims with that variant, for every node that has it
        self.variant_allocators: dict[int, Allocator] = {}
        self.allocator: Allocator | None = None
        #: indices of the claims the scheduler allocates
        self.to_allocate: list[int] = []
        self.classes: dict[str, Obj] = {}
        #: devices other claims hold, and the slices (DeviceTaintRules applied): the allocator's
        #: view of the cluster for this cycle
        self.allocated: AllocatedState = AllocatedState()
        self.slices: list[Obj] = []
        #: per claim: the node selector of its allocation (allocated claims only)
        self.available_on: list[NodeSelector | None] = [None] * len(self.claims)
        #: per claim: the allocation Reserve chose (claims the scheduler allocates)
        self.allocations: list[Obj | None] = [None] * len(self.claims)
        self.node_allocations: dict[str, NodeAllocation] = {}
        self.unavailable: set[int] = set()
        #: per claim: what ``status.reservedFor`` gets (the pod, or its PodGroup)
        self.bindings: list[Obj] = []
        #: indices of claims whose allocation an earlier member of the same pod-group cycle made
        #: in Reserve and PreBind has not written yet: this pod uses that allocation
        self.shared: set[int] = set()
        #: indices of claims whose in-flight allocation this pod holds a share of (Reserve took
        #: it, PreBind or Unreserve gives it back)
        self.signalled: set[int] = set()
        #: the pod-group cycle this pod is placed in (``None`` in a pod's own cycle)
        self.cycle: object | None = None

    def clone(self) -> State:
        return self

    def extended_claim(self) -> Obj | None:
        return None if self.extended is None else self.claims[self.extended]

    def no_user_claim(self) -> bool:
        return len(self.claims) - (0 if self.extended is None else 1) == 0
