"""VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable on the node.

* PreFilter sorts the pod's claims into bound ones, unbound ones whose StorageClass waits for
  the first consumer (``WaitForFirstConsumer``; the scheduler picks their volume), and unbound
  ones of an ``Immediate`` class, which the PV controller should already have bound: the pod
  waits for them (UnschedulableAndUnresolvable).
* Filter checks, per node, that every bound claim's PV accepts the node (its node affinity),
  that every waiting claim finds an available PV there (size, access modes, class, volume mode,
  selector, node affinity; the smallest that fits), or else that its class can provision one
  on that node (a provisioner, and the node within ``allowedTopologies``).
* Reserve remembers the chosen PVs (and claims to provision) in an in-memory "assumed" view, so
  the next pod does not pick the same PV before the API writes land; Unreserve forgets them.
* PreBind writes the bindings: the PV's ``claimRef`` and the claim's ``volumeName`` (with the
  ``bind-completed`` annotation), or, for dynamic provisioning, the claim's
  ``volume.kubernetes.io/selected-node`` annotation.

* Storage capacity: a claim to provision whose provisioner's CSIDriver sets
  ``spec.storageCapacity: true`` needs a CSIStorageCapacity of its class whose ``nodeTopology``
  selects the node and whose ``maximumVolumeSize`` (else ``capacity``) holds the request, else
  ``node(s) did not have enough free storage``. CSIDriver and CSIStorageCapacity objects are read
  through the handle's listers under those kinds; a CSIStorageCapacity added or grown, or a
  CSIDriver that stops asking for capacity tracking, requeues the pods it may help (1.37's hints).
* Score (StorageCapacityScoring, beta and on in 1.37; without the gate VolumeBinding does not
  score): per StorageClass, requested over capacity through ``shape`` — the PVs chosen for
  static bindings (request and PV capacity summed), or, when there are none, the claims to
  provision against the node's CSIStorageCapacity. ``shape`` defaults to
  ``[{utilization: 0, score: 10}, {utilization: 100, score: 0}]``: nodes with more free storage
  first.

There is no PV controller or external provisioner in the simulated cluster, so PreBind completes
a static binding itself (both objects, and their ``status.phase``) instead of waiting up to
``bindTimeoutSeconds`` for the controller. The CSI translation of in-tree PVs' node affinity is
not modelled.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from kubesched.framework import (
    MAX_NODE_SCORE,
    ActionType,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EventResource,
    NodeInfo,
    PodInfo,
    QueueingHint,
    Status,
)
from kubesched.framework.columns import Array
from kubesched.framework.resources import QuantityError, parse_quantity
from kubesched.framework.selectors import LabelSelector, SelectorError
from kubesched.plugins.helper import feature_enabled, volumes_fragment
from kubesched.plugins.noderesources.fit import UtilizationShapePoint, shape_errors
from kubesched.plugins.noderesources.resource_allocation import (
    MAX_CUSTOM_PRIORITY_SCORE,
    broken_linear_function,
    go_round,
)
from kubesched.plugins.volume.helpers import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    ANN_MIGRATED_PLUGINS,
    ANN_SELECTED_NODE,
    BINDING_WAIT_FOR_FIRST_CONSUMER,
    NOT_SUPPORTED_PROVISIONER,
    Obj,
    annotations_of,
    check_pv_node_affinity,
    match_topology_selector_terms,
    meta,
    name_of,
    namespace_of,
    not_found,
    pod_claim_names,
    pod_obj,
    pv_capacity,
    pv_class,
    pvc_class,
    pvc_key,
    pvc_request,
    queue_if_pod_claim,
    resource_version,
    spec,
    volume_claim,
    volume_is_for_pod,
)

NAME = "VolumeBinding"
STATE_KEY = NAME

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

MAX_UTILIZATION = 100


STORAGE_CAPACITY_SCORING_GATE = "StorageCapacityScoring"
#: ``shape`` when the StorageCapacityScoring gate is on and none is given (upstream's defaults):
#: the least utilized node (most free storage) scores highest.
DEFAULT_SHAPE = ((0, MAX_CUSTOM_PRIORITY_SCORE), (100, 0))


class VolumeBindingArgs(BaseModel):
    """``VolumeBindingArgs``. ``shape`` is the scoring function of StorageCapacityScoring
    (utilization of the storage a class offers on the node → score); ``None`` takes
    :data:`DEFAULT_SHAPE` when the gate is on, and must stay unset when it is off."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    bindTimeoutSeconds: int = 600
    shape: list[UtilizationShapePoint] | None = Field(default=None)

    @field_validator("bindTimeoutSeconds")
    @classmethod
    def _non_negative(cls, v: int) -> int:
        if v < 0:
            raise ValueError(
                "bindTimeoutSeconds: Invalid value: invalid BindTimeoutSeconds, should not be a negative value"
            )
        return v

    @field_validator("shape")
    @classmethod
    def _check_shape(cls, shape: list[UtilizationShapePoint] | None) -> list[UtilizationShapePoint] | None:
        if not shape:
            return shape
        errs = shape_errors(shape)
        if errs:
            raise ValueError("; ".join(errs))
        return shape


# --- cycle state --------------------------------------------------------------------------------


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


class _State:
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

    def clone(self) -> _State:
        return self


class _Unsatisfiable(Exception):
    """An internal error of the binder (reported as an Error status)."""


# --- the plugin ---------------------------------------------------------------------------------


class VolumeBinding:
    name = NAME
    Args = VolumeBindingArgs

    def __init__(self, args: VolumeBindingArgs | None = None, handle: Any = None) -> None:
        self.args = args or VolumeBindingArgs()
        self.handle = handle
        # The assume cache: our own versions of PVs and PVCs, valid until the informer brings a
        # newer version of the object (a higher resourceVersion) or Unreserve reverts them.
        self._assumed_pvs: dict[str, Obj] = {}
        self._assumed_pvcs: dict[str, Obj] = {}
        self.storage_capacity_scoring = feature_enabled(handle, STORAGE_CAPACITY_SCORING_GATE)
        self._scorer = None
        shape = self.args.shape
        if not self.storage_capacity_scoring:
            if shape is not None:
                # Refused rather than ignored, so that it does not take effect unnoticed later.
                raise ValueError(
                    f"shape: Invalid value: {len(shape)} point(s): unexpected field `shape`, "
                    f"remove it or turn on the feature gate {STORAGE_CAPACITY_SCORING_GATE}"
                )
        else:
            if shape is not None and not shape:
                raise ValueError("shape: Required value: at least one point must be specified")
            raw = [(p.utilization, p.score) for p in shape] if shape is not None else list(DEFAULT_SHAPE)
            points = [(u, score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE)) for u, score in raw]
            self._scorer = _build_scorer(points)

    # --- listers through the assume cache ----------------------------------------------------
    @property
    def _listers(self) -> Any:
        return self.handle.listers

    def _pv(self, name: str) -> Obj | None:
        live = self._listers.get("PersistentVolume", None, name)
        return self._overlay(self._assumed_pvs, name, live)

    def _pvc(self, namespace: str, name: str) -> Obj | None:
        live = self._listers.get("PersistentVolumeClaim", namespace, name)
        return self._overlay(self._assumed_pvcs, pvc_key(namespace, name), live)

    @staticmethod
    def _overlay(assumed: dict[str, Obj], key: str, live: Obj | None) -> Obj | None:
        mine = assumed.get(key)
        if mine is None:
            return live
        if live is None or resource_version(live) > resource_version(mine):
            # Deleted, or a newer version arrived: the assumption has served its purpose.
            del assumed[key]
            return live
        return mine

    def _pvs_of_class(self, class_name: str) -> list[Obj]:
        out: list[Obj] = []
        for pv in self._listers.list("PersistentVolume"):
            view = self._overlay(self._assumed_pvs, name_of(pv), pv)
            if view is not None and pv_class(view) == class_name:
                out.append(view)
        return out

    def _storage_class(self, name: str) -> Obj | None:
        return cast("dict[str, Any] | None", self._listers.get("StorageClass", None, name))

    def _is_delay_binding(self, pvc: Obj) -> bool:
        """Whether the claim's class waits for the first consumer. A missing class (or none)
        means Immediate. Objects that bypassed API defaulting lack ``volumeBindingMode``; the
        API server defaults it to Immediate, and so do we."""
        class_name = pvc_class(pvc)
        if not class_name:
            return False
        sc = self._storage_class(class_name)
        if sc is None:
            return False
        return (sc.get("volumeBindingMode") or "Immediate") == BINDING_WAIT_FOR_FIRST_CONSUMER

    # --- PreFilter ------------------------------------------------------------------------------
    def _pod_has_pvcs(self, pod: Obj) -> tuple[bool, str | None]:
        has_pvc = False
        ns = namespace_of(pod)
        for v in spec(pod).get("volumes") or ():
            claim = volume_claim(pod, v)
            if claim is None:
                continue
            has_pvc = True
            claim_name, ephemeral = claim
            pvc = self._listers.get("PersistentVolumeClaim", ns, claim_name)
            if pvc is None:
                if ephemeral:
                    return (
                        True,
                        f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{claim_name}"',
                    )
                return True, not_found("PersistentVolumeClaim", claim_name)
            if (pvc.get("status") or {}).get("phase") == "Lost":
                return True, (
                    f'persistentvolumeclaim "{name_of(pvc)}" bound to non-existent persistentvolume '
                    f'"{spec(pvc).get("volumeName") or ""}"'
                )
            if meta(pvc).get("deletionTimestamp"):
                return True, f'persistentvolumeclaim "{name_of(pvc)}" is being deleted'
            if ephemeral:
                reason = volume_is_for_pod(pod, pvc)
                if reason is not None:
                    return True, reason
        return has_pvc, None

    @staticmethod
    def _fully_bound(pvc: Obj) -> bool:
        return bool(spec(pvc).get("volumeName")) and ANN_BIND_COMPLETED in annotations_of(pvc)

    def _claims(self, pod: Obj) -> tuple[list[Obj], list[Obj], list[Obj]]:
        """The pod's claims: bound, unbound with delayed binding, unbound immediate."""
        bound: list[Obj] = []
        delay: list[Obj] = []
        immediate: list[Obj] = []
        ns = namespace_of(pod)
        for v in spec(pod).get("volumes") or ():
            claim = volume_claim(pod, v)
            if claim is None:
                continue
            pvc = self._pvc(ns, claim[0])
            if pvc is None:
                raise _Unsatisfiable(
                    f'error getting PVC "{pvc_key(ns, claim[0])}": {not_found("PersistentVolumeClaim", claim[0])}'
                )
            if claim[1]:
                reason = volume_is_for_pod(pod, pvc)
                if reason is not None:
                    raise _Unsatisfiable(reason)
            if self._fully_bound(pvc):
                bound.append(pvc)
            elif self._is_delay_binding(pvc) and not spec(pvc).get("volumeName"):
                delay.append(pvc)
            else:
                # Pre-bound claims count as immediate: the PV controller finishes them.
                immediate.append(pvc)
        return bound, delay, immediate

    def pre_filter(self, state: CycleState, pod: PodInfo) -> Status | None:
        has_pvc, err = self._pod_has_pvcs(pod.pod)
        if err is not None:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, err)
        if not has_pvc:
            state.write(STATE_KEY, _State([], [], {}))
            return Status(Code.SKIP)
        try:
            bound, delay, immediate = self._claims(pod.pod)
        except _Unsatisfiable as exc:
            return Status.as_error(str(exc))
        if immediate:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNBOUND_IMMEDIATE)
        pvs_by_class = {pvc_class(c): self._pvs_of_class(pvc_class(c)) for c in delay}
        state.write(STATE_KEY, _State(bound, delay, pvs_by_class))
        return None

    # --- Filter ---------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(f"reading {STATE_KEY!r} from cycleState: not found")
        try:
            pod_volumes, reasons = self._find_pod_volumes(s, node)
        except _Unsatisfiable as exc:
            self._stage_error("predicate")
            return Status.as_error(str(exc))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        s.pod_volumes_by_node[node.name] = pod_volumes
        if pod_volumes.static_bindings:
            s.has_static_bindings = True
        return None

    def _find_pod_volumes(self, s: _State, node: NodeInfo) -> tuple[PodVolumes, list[str]]:
        bound_ok = True
        unbound_ok = True
        sufficient_storage = True
        pvs_found = True
        static: list[tuple[Obj, Obj]] = []
        dynamic: list[Obj] = []
        capacities: dict[str, Obj] = {}
        node_labels = node.labels

        def reasons() -> list[str]:
            out = []
            if not bound_ok:
                out.append(ERR_REASON_NODE_CONFLICT)
            if not unbound_ok:
                out.append(ERR_REASON_BIND_CONFLICT)
            if not sufficient_storage:
                out.append(ERR_REASON_NOT_ENOUGH_SPACE)
            if not pvs_found:
                out.append(ERR_REASON_PV_NOT_EXIST)
            return out

        for pvc in s.bound_claims:
            pv = self._pv(str(spec(pvc).get("volumeName") or ""))
            if pv is None:
                pvs_found = False
                break
            if not check_pv_node_affinity(pv, node_labels):
                bound_ok = False
                break

        if s.claims_to_bind:
            to_match: list[Obj] = []
            to_provision: list[Obj] = []
            for claim in s.claims_to_bind:
                selected = annotations_of(claim).get(ANN_SELECTED_NODE)
                if selected is not None:
                    if selected != node.name:
                        unbound_ok = False
                        return PodVolumes(static, dynamic), reasons()
                    to_provision.append(claim)
                else:
                    to_match.append(claim)
            if to_match:
                unbound_ok, static, unmatched = self._find_matching_volumes(to_match, s.pvs_by_class, node_labels)
                to_provision.extend(unmatched)
            if to_provision:
                unbound_ok, sufficient_storage, dynamic, capacities = self._check_volume_provisions(
                    to_provision, node_labels
                )
        return PodVolumes(static, dynamic, capacities), reasons()

    def _find_matching_volumes(
        self, claims: list[Obj], pvs_by_class: Mapping[str, list[Obj]], node_labels: Mapping[str, str]
    ) -> tuple[bool, list[tuple[Obj, Obj]], list[Obj]]:
        # Smallest requests first, so that each gets the smallest PV that fits it.
        ordered = sorted(claims, key=pvc_request)
        chosen: set[str] = set()
        bindings: list[tuple[Obj, Obj]] = []
        unmatched: list[Obj] = []
        found_all = True
        for pvc in ordered:
            pv = find_matching_volume(pvc, pvs_by_class.get(pvc_class(pvc), ()), node_labels, chosen)
            if pv is None:
                unmatched.append(pvc)
                found_all = False
                continue
            chosen.add(name_of(pv))
            bindings.append((pv, pvc))
        return found_all, bindings, unmatched

    def _check_volume_provisions(
        self, claims: list[Obj], node_labels: Mapping[str, str]
    ) -> tuple[bool, bool, list[Obj], dict[str, Obj]]:
        provisions: list[Obj] = []
        capacities: dict[str, Obj] = {}
        for claim in claims:
            class_name = pvc_class(claim)
            if not class_name:
                raise _Unsatisfiable(f'no class for claim "{pvc_key(namespace_of(claim), name_of(claim))}"')
            sc = self._storage_class(class_name)
            if sc is None:
                raise _Unsatisfiable(f'failed to find storage class "{class_name}"')
            provisioner = sc.get("provisioner") or ""
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True, [], {}
            if not match_topology_selector_terms(sc.get("allowedTopologies"), node_labels):
                return False, True, [], {}
            enough, capacity = self._has_enough_capacity(str(provisioner), claim, class_name, node_labels)
            if not enough:
                return True, False, [], {}
            provisions.append(claim)
            if capacity is not None:
                capacities[pvc_key(namespace_of(claim), name_of(claim))] = capacity
        return True, True, provisions, capacities

    def _has_enough_capacity(
        self, provisioner: str, claim: Obj, class_name: str, node_labels: Mapping[str, str]
    ) -> tuple[bool, Obj | None]:
        """Storage capacity tracking (upstream ``hasEnoughCapacity``): only for a CSI driver
        that opts in; then some CSIStorageCapacity of the class, accessible from the node, must
        hold the claim's request. The first that does is returned (Score uses it)."""
        requests = (spec(claim).get("resources") or {}).get("requests") or {}
        if "storage" not in requests:
            return True, None
        driver = self._listers.get("CSIDriver", None, provisioner)
        if driver is None or spec(driver).get("storageCapacity") is not True:
            return True, None
        size = quantity_value(requests.get("storage"))
        for capacity in self._listers.list("CSIStorageCapacity"):
            if capacity.get("storageClassName") != class_name:
                continue
            limit = volume_limit(capacity)
            if limit is None or quantity_value(limit) < size:
                continue
            if _node_has_access(capacity, node_labels):
                return True, capacity
        return False, None

    # --- PreScore / Score -----------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        if self._scorer is None:
            return Status(Code.SKIP)
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(f"reading {STATE_KEY!r} from cycleState: not found")
        if s.has_static_bindings or self.storage_capacity_scoring:
            return None
        return Status(Code.SKIP)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        """Zero for every node when there is nothing to score (no scorer, or a pod without volumes
        to bind: what :meth:`score` gives each node, without a call per node); else node by node."""
        s: _State | None = state.get(STATE_KEY)
        if self._scorer is None or (s is not None and not s.pod_volumes_by_node):
            return np.zeros(len(nodes), dtype=np.int64)
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        if self._scorer is None:
            return 0
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return 0
        pod_volumes = s.pod_volumes_by_node.get(node.name)
        if pod_volumes is None:
            return 0
        by_class: dict[str, list[int]] = {}
        if pod_volumes.static_bindings or not self.storage_capacity_scoring:
            for pv, pvc in pod_volumes.static_bindings:
                entry = by_class.setdefault(pv_class(pv), [0, 0])
                entry[0] += pvc_request(pvc)
                entry[1] += pv_capacity(pv)
        else:
            for claim in pod_volumes.dynamic_provisions:
                capacity = pod_volumes.node_capacities.get(pvc_key(namespace_of(claim), name_of(claim)))
                if capacity is None:
                    continue
                entry = by_class.setdefault(pvc_class(claim), [0, 0])
                # The class's capacity on the node, once however many claims draw on it.
                entry[1] = quantity_value(capacity.get("capacity"))
                entry[0] += quantity_value(((spec(claim).get("resources") or {}).get("requests") or {}).get("storage"))
        return cast("int", self._scorer(by_class))

    # --- Reserve / Unreserve --------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(f"reading {STATE_KEY!r} from cycleState: not found")
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            s.all_bound = True
            return None
        if self._all_bound(pod.pod):
            s.all_bound = True
            return None
        new_bindings: list[tuple[Obj, Obj]] = []
        for pv, pvc in pod_volumes.static_bindings:
            new_pv, dirty = bind_volume_to_claim(pv, pvc)
            if dirty:
                self._assumed_pvs[name_of(new_pv)] = new_pv
            new_bindings.append((new_pv, pvc))
        new_claims: list[Obj] = []
        for claim in pod_volumes.dynamic_provisions:
            clone = copy.deepcopy(claim)
            clone.setdefault("metadata", {}).setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name
            self._assumed_pvcs[pvc_key(namespace_of(clone), name_of(clone))] = clone
            new_claims.append(clone)
        pod_volumes.static_bindings = new_bindings
        pod_volumes.dynamic_provisions = new_claims
        s.all_bound = False
        return None

    def _all_bound(self, pod: Obj) -> bool:
        ns = namespace_of(pod)
        for claim_name in pod_claim_names(pod):
            pvc = self._pvc(ns, claim_name)
            if pvc is None or not self._fully_bound(pvc):
                return False
        return True

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return
        self._revert(pod_volumes.static_bindings, pod_volumes.dynamic_provisions)

    def _revert(self, bindings: list[tuple[Obj, Obj]], claims: list[Obj]) -> None:
        for pv, _ in bindings:
            self._assumed_pvs.pop(name_of(pv), None)
        for claim in claims:
            self._assumed_pvcs.pop(pvc_key(namespace_of(claim), name_of(claim)), None)

    # --- PreBind --------------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        """Whether PreBind will bind anything: Skip when every claim of the pod is bound."""
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(f"reading {STATE_KEY!r} from cycleState: not found")
        return Status.skip() if s.all_bound else None

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: _State | None = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(f"reading {STATE_KEY!r} from cycleState: not found")
        if s.all_bound:
            return None
        pod_volumes = s.pod_volumes_by_node.get(node_name)
        if pod_volumes is None:
            return Status.as_error(f'no pod volumes found for node "{node_name}"')
        cluster = self.handle.cluster
        bindings = pod_volumes.static_bindings
        claims = pod_volumes.dynamic_provisions
        done_bindings = 0
        done_claims = 0
        try:
            for pv, pvc in bindings:
                await cluster.update_object("PersistentVolume", _with_phase(pv, "Bound"))
                # The PV controller's half of the binding: there is none in a simulated cluster.
                live = self._listers.get("PersistentVolumeClaim", namespace_of(pvc), name_of(pvc)) or pvc
                await cluster.update_object("PersistentVolumeClaim", bind_claim_to_volume(live, pv))
                done_bindings += 1
            for claim in claims:
                live = self._listers.get("PersistentVolumeClaim", namespace_of(claim), name_of(claim))
                target = copy.deepcopy(live) if live is not None else copy.deepcopy(claim)
                target.setdefault("metadata", {}).setdefault("annotations", {})[ANN_SELECTED_NODE] = node_name
                await cluster.update_object("PersistentVolumeClaim", target)
                done_claims += 1
        except Exception as exc:  # noqa: BLE001 - any API failure fails the binding cycle
            self._revert(bindings[done_bindings:], claims[done_claims:])
            self._stage_error("bind")
            return Status.as_error(f"binding volumes: {exc}")
        return None

    def _stage_error(self, operation: str) -> None:
        """Count a failed stage (scheduler_volume_scheduling_stage_error_total{operation})."""
        observer = getattr(self.handle, "observer", None)
        if observer is not None and hasattr(observer, "volume_stage_error"):
            observer.volume_stage_error(operation)

    # --- events ---------------------------------------------------------------------------------
    def sign_pod(self, pod: PodInfo) -> dict[str, Any]:
        return volumes_fragment(pod)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_or_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, add_or_update), is_schedulable_after_storage_class_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_or_update), is_schedulable_after_pvc_change
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_or_update)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, add_or_update), is_schedulable_after_csi_node_change
            ),
            # Storage capacity tracking: a driver that stops asking for it, or capacity that
            # appears or grows, may let a claim be provisioned.
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE), is_schedulable_after_csi_driver_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, add_or_update),
                is_schedulable_after_csi_storage_capacity_change,
            ),
        ]


# --- binding helpers ----------------------------------------------------------------------------


def is_volume_bound_to_claim(pv: Mapping[str, Any], pvc: Mapping[str, Any]) -> bool:
    ref = spec(pv).get("claimRef")
    if not ref:
        return False
    if ref.get("name") != name_of(pvc) or (ref.get("namespace") or "default") != namespace_of(pvc):
        return False
    uid = ref.get("uid")
    return not uid or uid == meta(pvc).get("uid")


def find_matching_volume(
    pvc: Mapping[str, Any], volumes: Any, node_labels: Mapping[str, str], excluded: set[str]
) -> Obj | None:
    """The scheduler's choice of PV for an unbound claim on a node: a PV pre-bound to the claim
    if it accepts the node, else the smallest Available PV of the claim's class that is large
    enough, has the claim's volume mode and access modes, matches its selector and accepts the node."""
    requested = pvc_request(pvc)
    requested_class = pvc_class(pvc)
    pvc_spec = spec(pvc)
    try:
        selector = LabelSelector.compile(pvc_spec.get("selector"))
    except SelectorError as exc:
        raise _Unsatisfiable(
            f"error creating internal label selector for claim: {namespace_of(pvc)}/{name_of(pvc)}: {exc}"
        ) from exc
    want_mode = pvc_spec.get("volumeMode") or "Filesystem"
    want_access = set(pvc_spec.get("accessModes") or ())
    smallest: Obj | None = None
    smallest_qty = 0
    for pv in volumes:
        pv_name = name_of(pv)
        if pv_name in excluded:
            continue
        pv_spec = spec(pv)
        if pv_spec.get("claimRef") and not is_volume_bound_to_claim(pv, pvc):
            continue
        qty = pv_capacity(pv)
        if qty < requested:
            continue
        if (pv_spec.get("volumeMode") or "Filesystem") != want_mode:
            continue
        if meta(pv).get("deletionTimestamp"):
            continue
        affinity_ok = check_pv_node_affinity(pv, node_labels)
        if is_volume_bound_to_claim(pv, pvc):
            # A PV pre-bound to this claim is the only candidate: on a node it rejects, none fits.
            return pv if affinity_ok else None
        if (pv.get("status") or {}).get("phase") != "Available":
            continue
        if selector is not None and not selector.matches(meta(pv).get("labels") or {}):
            continue
        if pv_class(pv) != requested_class:
            continue
        if not affinity_ok:
            continue
        if not want_access <= set(pv_spec.get("accessModes") or ()):
            continue
        if smallest is None or smallest_qty > qty:
            smallest, smallest_qty = pv, qty
    return smallest


def bind_volume_to_claim(pv: Obj, pvc: Obj) -> tuple[Obj, bool]:
    """A copy of ``pv`` whose ``claimRef`` names ``pvc`` (marked bound-by-controller unless the
    user pre-bound it), and whether anything changed."""
    dirty = False
    should_mark = not is_volume_bound_to_claim(pv, pvc)
    clone = copy.deepcopy(pv)
    ref = spec(pv).get("claimRef") or {}
    if (
        not ref
        or ref.get("name") != name_of(pvc)
        or (ref.get("namespace") or "default") != namespace_of(pvc)
        or ref.get("uid") != meta(pvc).get("uid")
    ):
        clone.setdefault("spec", {})["claimRef"] = {
            "kind": "PersistentVolumeClaim",
            "namespace": namespace_of(pvc),
            "name": name_of(pvc),
            "uid": meta(pvc).get("uid", ""),
            "apiVersion": "v1",
            "resourceVersion": meta(pvc).get("resourceVersion", ""),
        }
        dirty = True
    if should_mark and ANN_BOUND_BY_CONTROLLER not in annotations_of(clone):
        clone.setdefault("metadata", {}).setdefault("annotations", {})[ANN_BOUND_BY_CONTROLLER] = "yes"
        dirty = True
    return clone, dirty


def bind_claim_to_volume(pvc: Obj, pv: Obj) -> Obj:
    """What the PV controller writes to a claim it binds: ``volumeName``, the bind-completed
    and bound-by-controller annotations, and the Bound phase with the PV's capacity."""
    out = copy.deepcopy(pvc)
    out.setdefault("spec", {})["volumeName"] = name_of(pv)
    ann = out.setdefault("metadata", {}).setdefault("annotations", {})
    ann[ANN_BIND_COMPLETED] = "yes"
    ann.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
    status = out.setdefault("status", {})
    status["phase"] = "Bound"
    if spec(pv).get("accessModes"):
        status["accessModes"] = list(spec(pv)["accessModes"])
    if spec(pv).get("capacity"):
        status["capacity"] = dict(spec(pv)["capacity"])
    return out


def _with_phase(obj: Obj, phase: str) -> Obj:
    out = copy.deepcopy(obj)
    out.setdefault("status", {})["phase"] = phase
    return out


def quantity_value(value: Any) -> int:
    """A quantity in whole units rounded up, as ``Quantity.Value()``; 0 when absent or unreadable."""
    if value is None:
        return 0
    try:
        return math.ceil(parse_quantity(value))
    except (QuantityError, ValueError, TypeError):
        return 0


def volume_limit(capacity: Mapping[str, Any]) -> Any:
    """The largest volume a CSIStorageCapacity can hold: ``maximumVolumeSize`` when reported,
    else ``capacity`` (``None`` when neither is)."""
    limit = capacity.get("maximumVolumeSize")
    return capacity.get("capacity") if limit is None else limit


def _node_has_access(capacity: Mapping[str, Any], node_labels: Mapping[str, str]) -> bool:
    """A CSIStorageCapacity without ``nodeTopology`` is reachable from no node."""
    try:
        selector = LabelSelector.compile(capacity.get("nodeTopology"))
    except SelectorError:
        return False
    return selector is not None and selector.matches(node_labels)


def _build_scorer(shape: list[tuple[int, int]]) -> Any:
    raw = broken_linear_function(shape)

    def class_score(requested: int, capacity: int) -> int:
        if capacity == 0 or requested > capacity:
            return raw(MAX_UTILIZATION)
        return raw(requested * MAX_UTILIZATION // capacity)

    def scorer(by_class: Mapping[str, list[int]]) -> int:
        # Every class weighs the same.
        if not by_class:
            return 0
        total = sum(class_score(req, cap) for req, cap in by_class.values())
        return go_round(total / len(by_class))

    return scorer


# --- queueing hints -----------------------------------------------------------------------------


def is_schedulable_after_pvc_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue when the claim is one the pod uses (in its namespace)."""
    return queue_if_pod_claim(pod, new, include_ephemeral=True)


def is_schedulable_after_storage_class_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue on a new class, or when a class's ``allowedTopologies`` changed."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    if (old.get("allowedTopologies") or []) != (new.get("allowedTopologies") or []):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_csi_node_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue on a new CSINode, or when its migrated-plugins annotation changed."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    if annotations_of(old).get(ANN_MIGRATED_PLUGINS) != annotations_of(new).get(ANN_MIGRATED_PLUGINS):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_csi_storage_capacity_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue on a new CSIStorageCapacity, or when its volume limit (``maximumVolumeSize``, else
    ``capacity``) appeared or grew; ``nodeTopology`` and ``storageClassName`` are immutable."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    old_limit, new_limit = volume_limit(old), volume_limit(new)
    if new_limit is not None and (old_limit is None or quantity_value(new_limit) > quantity_value(old_limit)):
        return QueueingHint.QUEUE
    return QueueingHint.SKIP


def is_schedulable_after_csi_driver_change(pod: Any, old: Any, new: Any) -> QueueingHint:
    """Queue when a driver an inline CSI volume of the pod uses stopped asking for storage
    capacity tracking (``spec.storageCapacity`` went from true to unset or false)."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    name = name_of(new)
    for volume in spec(pod_obj(pod)).get("volumes") or ():
        csi = volume.get("csi") if isinstance(volume, Mapping) else None
        if not isinstance(csi, Mapping) or csi.get("driver") != name:
            continue
        if spec(old).get("storageCapacity") is True and spec(new).get("storageCapacity") is not True:
            return QueueingHint.QUEUE
    return QueueingHint.SKIP
