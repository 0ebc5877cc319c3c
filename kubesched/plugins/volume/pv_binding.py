"""What the PV controller decides and writes, as the scheduler's volume binder uses it: whether a PV is
bound to a claim, the PV an unbound claim would get on a node, and the objects a binding writes."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from kubesched.framework.selectors import LabelSelector, SelectorError
from kubesched.objects import Obj
from kubesched.plugins.volume.helpers import (
    ANN_BIND_COMPLETED,
    ANN_BOUND_BY_CONTROLLER,
    annotations_of,
    check_pv_node_affinity,
    meta,
    name_of,
    namespace_of,
    pv_capacity,
    pv_class,
    pvc_class,
    pvc_request,
    spec,
)


class BinderError(Exception):
    """An internal error of the binder: a claim whose selector does not compile, a class that
    is missing. VolumeBinding catches it and reports it as an Error status."""


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
        raise BinderError(
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


def with_phase(obj: Obj, phase: str) -> Obj:
    """A copy of ``obj`` with ``status.phase`` set to ``phase`` (``obj`` is left as it was)."""
    out = copy.deepcopy(obj)
    out.setdefault("status", {})["phase"] = phase
    return out
