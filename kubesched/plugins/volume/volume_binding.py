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
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from kubesched.framework.columns import Array
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource
from kubesched.framework.interface import MAX_NODE_SCORE, CycleState, Handle
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.objects import Obj
from kubesched.plugins.helper import feature_enabled, volumes_fragment
from kubesched.plugins.noderesources.resource_allocation import MAX_CUSTOM_PRIORITY_SCORE
from kubesched.plugins.volume.binding_args import DEFAULT_SHAPE, STORAGE_CAPACITY_SCORING_GATE, VolumeBindingArgs
from kubesched.plugins.volume.binding_hints import (
    is_schedulable_after_csi_driver_change,
    is_schedulable_after_csi_node_change,
    is_schedulable_after_csi_storage_capacity_change,
    is_schedulable_after_pvc_change,
    is_schedulable_after_storage_class_change,
)
from kubesched.plugins.volume.binding_state import BindingState, PodVolumes
from kubesched.plugins.volume.helpers import (
    ANN_BIND_COMPLETED,
    ANN_SELECTED_NODE,
    BINDING_WAIT_FOR_FIRST_CONSUMER,
    NOT_SUPPORTED_PROVISIONER,
    annotations_of,
    check_pv_node_affinity,
    match_topology_selector_terms,
    meta,
    name_of,
    namespace_of,
    not_found,
    pod_claim_names,
    pv_capacity,
    pv_class,
    pvc_class,
    pvc_key,
    pvc_request,
    resource_version,
    spec,
    volume_claim,
    volume_is_for_pod,
)
from kubesched.plugins.volume.pv_binding import (
    BinderError,
    bind_claim_to_volume,
    bind_volume_to_claim,
    find_matching_volume,
    with_phase,
)
from kubesched.plugins.volume.storage_capacity import build_scorer, node_has_access, quantity_value, volume_limit

NAME = "VolumeBinding"
STATE_KEY = NAME

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"

#: The args and the queueing hints live in their own modules; imported from here as before.
__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "ERR_UNBOUND_IMMEDIATE",
    "NAME",
    "STATE_KEY",
    "VolumeBinding",
    "VolumeBindingArgs",
    "is_schedulable_after_csi_driver_change",
    "is_schedulable_after_csi_node_change",
    "is_schedulable_after_csi_storage_capacity_change",
    "is_schedulable_after_pvc_change",
    "is_schedulable_after_storage_class_change",
]


# --- the plugin ---------------------------------------------------------------------------------


class VolumeBinding:
    name = NAME
    Args = VolumeBindingArgs

    def __init__(self, args: VolumeBindingArgs | None = None, handle: Any = None) -> None:
        self.args = args or VolumeBindingArgs()
        self.handle: Handle = handle
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
            self._scorer = build_scorer(points)

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
                raise BinderError(
                    f'error getting PVC "{pvc_key(ns, claim[0])}": {not_found("PersistentVolumeClaim", claim[0])}'
                )
            if claim[1]:
                reason = volume_is_for_pod(pod, pvc)
                if reason is not None:
                    raise BinderError(reason)
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
            state.write(STATE_KEY, BindingState([], [], {}))
            return Status(Code.SKIP)
        try:
            bound, delay, immediate = self._claims(pod.pod)
        except BinderError as exc:
            return Status.as_error(str(exc))
        if immediate:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNBOUND_IMMEDIATE)
        pvs_by_class = {pvc_class(c): self._pvs_of_class(pvc_class(c)) for c in delay}
        state.write(STATE_KEY, BindingState(bound, delay, pvs_by_class))
        return None

    # --- Filter ---------------------------------------------------------------------------------
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s: BindingState | None = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(f"reading {STATE_KEY!r} from cycleState: not found")
        try:
            pod_volumes, reasons = self._find_pod_volumes(s, node)
        except BinderError as exc:
            self._stage_error("predicate")
            return Status.as_error(str(exc))
        if reasons:
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)
        s.pod_volumes_by_node[node.name] = pod_volumes
        if pod_volumes.static_bindings:
            s.has_static_bindings = True
        return None

    def _find_pod_volumes(self, s: BindingState, node: NodeInfo) -> tuple[PodVolumes, list[str]]:
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
                raise BinderError(f'no class for claim "{pvc_key(namespace_of(claim), name_of(claim))}"')
            sc = self._storage_class(class_name)
            if sc is None:
                raise BinderError(f'failed to find storage class "{class_name}"')
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
            if node_has_access(capacity, node_labels):
                return True, capacity
        return False, None

    # --- PreScore / Score -----------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Status | None:
        if self._scorer is None:
            return Status(Code.SKIP)
        s: BindingState | None = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(f"reading {STATE_KEY!r} from cycleState: not found")
        if s.has_static_bindings or self.storage_capacity_scoring:
            return None
        return Status(Code.SKIP)

    def score_nodes(self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> Array | None:
        """Zero for every node when there is nothing to score (no scorer, or a pod without volumes
        to bind: what :meth:`score` gives each node, without a call per node); else node by node."""
        s: BindingState | None = state.get(STATE_KEY)
        if self._scorer is None or (s is not None and not s.pod_volumes_by_node):
            return np.zeros(len(nodes), dtype=np.int64)
        return None

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> int:
        if self._scorer is None:
            return 0
        s: BindingState | None = state.get(STATE_KEY)
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
        s: BindingState | None = state.get(STATE_KEY)
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
        s: BindingState | None = state.get(STATE_KEY)
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
        s: BindingState | None = state.get(STATE_KEY)
        if s is None:
            return Status.as_error(f"reading {STATE_KEY!r} from cycleState: not found")
        return Status.skip() if s.all_bound else None

    async def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        s: BindingState | None = state.get(STATE_KEY)
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
                await cluster.update_object("PersistentVolume", with_phase(pv, "Bound"))
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
