"""VolumeBinding's cycle state: the pod's claims sorted by PreFilter, and per node what Filter found
the pod needs there (PVs to bind, claims to provision)."""

from __future__ import annotations

from kubesched.objects import Obj
from kubesched.plugins.volume.helpers import name_of


class PodVolumes:
    """What the pod needs on one node: PVs to bind to claims, and claims to provision."""

    __slots__ = ("static_bindings", "dynamic_provisions", "node_capacities")

    def __init__(
        self,
        static_bindings: list[tuple[Obj, Obj]],
        dynamic_provisions: list[Obj],
        node_capacities: dict[str, Obj] | None = None,
    ) -> None:
        self.static_bindings = static_bindings  # (pv, pvc)
        self.dynamic_provisions = dynamic_provisions
        #: Per claim to provision (``namespace/name``): the CSIStorageCapacity that fits it on
        #: this node, when its driver tracks capacity.
        self.node_capacities = node_capacities or {}

    def __repr__(self) -> str:
        pvs = [f"{name_of(pv)}->{name_of(pvc)}" for pv, pvc in self.static_bindings]
        return f"PodVolumes(static={pvs}, provision={[name_of(c) for c in self.dynamic_provisions]})"


class BindingState:
    """Written by PreFilter, filled per node by Filter. Shared (not copied) by ``clone``: Filter
    results for the chosen node must reach Reserve whatever copies were made in between."""

    __slots__ = (
        "bound_claims",
        "claims_to_bind",
        "pvs_by_class",
        "pod_volumes_by_node",
        "has_static_bindings",
        "all_bound",
    )

    def __init__(self, bound_claims: list[Obj], claims_to_bind: list[Obj], pvs_by_class: dict[str, list[Obj]]) -> None:
        self.bound_claims = bound_claims
        self.claims_to_bind = claims_to_bind
        self.pvs_by_class = pvs_by_class
        self.pod_volumes_by_node: dict[str, PodVolumes] = {}
        self.has_static_bindings = False
        self.all_bound = False

    def clone(self) -> BindingState:
        return self
