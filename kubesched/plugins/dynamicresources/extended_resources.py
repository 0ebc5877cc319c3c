"""Extended resources backed by DRA (upstream's DRAExtendedResource, GA and locked on in 1.37).

A DeviceClass stands for an extended resource: the one its ``spec.extendedResourceName`` names,
and always the implicit ``deviceclass.resource.kubernetes.io/<class>``. A pod asking for such a
resource in its containers' requests (``example.com/gpu: 1``), on a node whose allocatable does
not advertise it, gets it from DRA instead of from a device plugin:

* NodeResourcesFit leaves such a resource to DRA on such a node (:func:`note_dra_backed`,
  :func:`request_for_node`: upstream's ``ShouldDelegateResourceToDRA``);
* DynamicResources' PreFilter holds one in-memory claim for all of them (:func:`special_claim`,
  named ``<extended-resources>``), or finds the one an earlier attempt created
  (:func:`find_extended_resource_claim`); Filter gives it, per node, one request per container
  and resource (:func:`requests_and_mappings`); PreBind creates it (generateName
  ``<pod>-extended-resources-``, annotated ``resource.kubernetes.io/extended-resource-claim:
  "true"``, owned by the pod) and writes ``status.extendedResourceClaimStatus`` on the pod.

Nodes that advertise the resource keep the classic accounting (NodeResourcesFit counts it).
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from kubesched.framework.interface import CycleState, Handle
from kubesched.framework.resources import QuantityError, is_extended_resource, parse_quantity
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.objects import Obj
from kubesched.plugins.helper import feature_enabled

#: The implicit extended resource name of a DeviceClass is this prefix and the class's name.
DEVICE_CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
#: Upstream's annotation on the claim the scheduler creates for a pod's extended resources.
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
#: The in-memory name of that claim until PreBind creates it (not a valid object name, so that
#: it never matches a real claim).
SPECIAL_CLAIM_NAME = "<extended-resources>"
#: Where NodeResourcesFit's PreFilter notes the pod's resources a DeviceClass stands for.
FIT_STATE_KEY = "NodeResourcesFit/dra-backed"
#: The gate, locked on in 1.37.
GATE = "DRAExtendedResource"


def is_dra_extended_resource_name(name: str) -> bool:
    """Upstream's ``IsDRAExtendedResourceName``: an extended resource name, or an implicit one."""
    return name.startswith(DEVICE_CLASS_PREFIX) or is_extended_resource(name)


def _created(cls: Mapping[str, Any]) -> datetime:
    text = (cls.get("metadata") or {}).get("creationTimestamp") or ""
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return datetime.min.replace(tzinfo=UTC)


#: The last mapping made, and the classes it was made from (kept, so that their ids stay
#: theirs): every pod asking for an extended resource needs it, and classes rarely change.
_last_mapping: tuple[list[Obj], dict[str, Obj]] = ([], {})


def device_class_mapping(classes: Iterable[Obj]) -> dict[str, Obj]:
    """Extended resource name -> the DeviceClass standing for it. Every class has its implicit
    name; where several classes name the same ``extendedResourceName``, the newest one wins, and
    among classes created at the same time the first by name (as upstream, so that a resource
    can move from one class to a new one). Read-only: it may be shared."""
    global _last_mapping
    given = list(classes)
    seen, made = _last_mapping
    if len(seen) == len(given) and all(a is b for a, b in zip(seen, given, strict=True)):
        return made
    made = _mapping(given)
    _last_mapping = (given, made)
    return made


def _mapping(classes: list[Obj]) -> dict[str, Obj]:
    mapping: dict[str, Obj] = {}
    for cls in classes:
        name = str((cls.get("metadata") or {}).get("name", ""))
        mapping[DEVICE_CLASS_PREFIX + name] = cls
        explicit = (cls.get("spec") or {}).get("extendedResourceName")
        if not explicit:
            continue
        have = mapping.get(explicit)
        if have is not None:
            mine, theirs = _created(cls), _created(have)
            other = str((have.get("metadata") or {}).get("name", ""))
            if mine < theirs or (mine == theirs and name >= other):
                continue
        mapping[explicit] = cls
    return mapping


def dra_backed(requests: Iterable[tuple[str, int]], handle: Handle | None) -> frozenset[str]:
    """The names among ``requests`` (non-zero ones) that some DeviceClass stands for."""
    names = [n for n, q in requests if q and is_dra_extended_resource_name(n)]
    if not names or handle is None or not feature_enabled(handle, GATE):
        return frozenset()
    mapping = device_class_mapping(handle.listers.list("DeviceClass"))
    return frozenset(n for n in names if n in mapping)


# --- NodeResourcesFit's side ---------------------------------------------------------------


def note_dra_backed(state: CycleState, pod: PodInfo, handle: Handle | None) -> None:
    """NodeResourcesFit's PreFilter: remember which of the pod's extended resources DRA may
    provide (costs nothing for a pod that asks for no extended resource)."""
    backed = dra_backed(pod.requests.scalar.items(), handle) if pod.requests.scalar else frozenset()
    if backed:
        state.write(FIT_STATE_KEY, backed)


def dra_backed_in(state: CycleState) -> frozenset[str] | None:
    """What :func:`note_dra_backed` noted (``None``: nothing, the usual case)."""
    backed: frozenset[str] | None = state.get(FIT_STATE_KEY)
    return backed


class _Scalars(Protocol):
    scalar: tuple[tuple[str, int], ...]


R = TypeVar("R", bound=_Scalars)


def request_for_node(req: R, state: CycleState, node: NodeInfo) -> R:
    """NodeResourcesFit's request for ``node``: without the DRA-backed resources the node does
    not advertise (DynamicResources allocates them there), else ``req`` itself."""
    backed = dra_backed_in(state)
    if not backed:
        return req
    alloc = node.allocatable.scalar
    scalar = req.scalar
    kept = tuple((n, q) for n, q in scalar if n not in backed or alloc.get(n, 0) > 0)
    if len(kept) == len(scalar):
        return req
    out = copy.copy(req)
    out.scalar = kept
    return out


# --- DynamicResources' side ----------------------------------------------------------------


def find_extended_resource_claim(pod: Mapping[str, Any], claims: Iterable[Obj]) -> Obj | None:
    """The claim an earlier attempt created for the pod's extended resources: annotated, and
    controlled by the pod."""
    meta = pod.get("metadata") or {}
    for c in claims:
        cm = c.get("metadata") or {}
        if (cm.get("annotations") or {}).get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) != "true":
            continue
        if cm.get("namespace", "default") != (meta.get("namespace") or "default"):
            continue
        for ref in cm.get("ownerReferences") or ():
            if ref.get("name") == meta.get("name") and ref.get("controller") and ref.get("uid") == meta.get("uid"):
                return c
    return None


def special_claim(pod: Mapping[str, Any]) -> Obj:
    """The in-memory claim for the pod's extended resources, without requests yet (Filter gives
    each node its own); its uid is a temporary one, for the in-flight bookkeeping."""
    meta = pod.get("metadata") or {}
    name = meta.get("name", "")
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": SPECIAL_CLAIM_NAME,
            "generateName": f"{name}-extended-resources-",
            "namespace": meta.get("namespace") or "default",
            "uid": str(uuid.uuid4()),
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": meta.get("uid", ""), "controller": True}
            ],
            "annotations": {EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
        },
        "spec": {},
    }


def observe_claim_created(handle: Handle, succeeded: bool) -> None:
    """``dynamic_resource_allocation_resourceclaim_creates_total``, which kube-scheduler shares with
    kube-controller-manager: a claim for extended resources created (or not) in PreBind. Such a
    claim never asks for admin access."""
    record = getattr(getattr(handle, "observer", None), "resource_claim_created", None)
    if record is not None:
        record(succeeded, False)


def is_special(claim: Mapping[str, Any]) -> bool:
    return (claim.get("metadata") or {}).get("name") == SPECIAL_CLAIM_NAME


def _count(value: Any) -> int:
    """A container's request as a whole number of devices; 0 for a fractional one (as
    upstream's ``AsInt64``, which such a request fails)."""
    try:
        q = parse_quantity(value)
    except (QuantityError, ValueError, TypeError):
        return 0
    return int(q) if q.denominator == 1 else 0


def _request_and_mappings(
    index: int, container: Mapping[str, Any], resource: str, class_name: str, reusable: Sequence[Obj | None]
) -> tuple[Obj | None, list[Obj]]:
    """The device request container ``index`` needs for ``resource``, after what it can reuse
    of ``reusable`` (requests of containers that outlive it), and its mappings."""
    requests = (container.get("resources") or {}).get("requests") or {}
    if resource not in requests:
        return None, []
    wanted = _count(requests[resource])
    if wanted == 0:
        return None, []
    cname = container.get("name", "")
    mappings: list[Obj] = []
    have = 0
    for r in reusable:
        if r is None:
            continue
        have += int(r["exactly"]["count"])
        mappings.append({"containerName": cname, "resourceName": resource, "requestName": r["name"]})
        if have >= wanted:
            return None, mappings
    # The request is named after the container's index (init containers first) and the
    # resource's index among the container's requests in name order.
    position = sorted(requests).index(resource)
    name = f"container-{index}-request-{position}"
    request = {
        "name": name,
        "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount", "count": wanted - have},
    }
    mappings.append({"containerName": cname, "resourceName": resource, "requestName": name})
    return request, mappings


def requests_and_mappings(
    pod: Mapping[str, Any], resources: Iterable[str], mapping: Mapping[str, Obj]
) -> tuple[list[Obj], list[Obj]]:
    """The special claim's device requests for ``resources`` (those DRA provides on the node),
    and the pod's ``requestMappings`` (container, resource, request), as upstream computes them:
    one request per container and resource; a regular init container reuses the devices of the
    containers that run after it starts (sidecars, regular containers), and all regular init
    containers share one request, the largest of theirs."""
    spec = pod.get("spec") or {}
    inits = list(spec.get("initContainers") or ())
    containers = inits + list(spec.get("containers") or ())
    long_lived = [i for i, c in enumerate(containers) if i >= len(inits) or c.get("restartPolicy") == "Always"]
    short_lived = [i for i, c in enumerate(containers) if i < len(inits) and c.get("restartPolicy") != "Always"]
    device_requests: list[Obj] = []
    mappings: list[Obj] = []
    for resource in sorted(resources):
        cls = mapping.get(resource)
        if cls is None:
            continue
        class_name = str(cls["metadata"]["name"])
        long_requests: list[Obj | None] = [None] * len(containers)
        long_mappings: list[Obj] = []
        for i in long_lived:
            req, maps = _request_and_mappings(i, containers[i], resource, class_name, ())
            long_requests[i] = req
            long_mappings += maps
        largest: Obj | None = None
        short_names: set[str] = set()
        short_mappings: list[Obj] = []
        for i in short_lived:
            req, maps = _request_and_mappings(i, containers[i], resource, class_name, long_requests[i:])
            if req is not None:
                short_names.add(req["name"])
                if largest is None or largest["exactly"]["count"] < req["exactly"]["count"]:
                    largest = req
            short_mappings += maps
        if largest is not None and len(short_names) > 1:
            short_names.discard(largest["name"])
            for m in short_mappings:
                if m["requestName"] in short_names:
                    m["requestName"] = largest["name"]
        if largest is not None:
            device_requests.append(largest)
        device_requests += [r for r in long_requests if r is not None]
        mappings += long_mappings + short_mappings
    device_requests.sort(key=lambda r: str(r["name"]))
    return device_requests, mappings


__all__ = [
    "DEVICE_CLASS_PREFIX",
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "FIT_STATE_KEY",
    "SPECIAL_CLAIM_NAME",
    "device_class_mapping",
    "dra_backed",
    "dra_backed_in",
    "find_extended_resource_claim",
    "is_dra_extended_resource_name",
    "is_special",
    "note_dra_backed",
    "request_for_node",
    "requests_and_mappings",
    "special_claim",
]
