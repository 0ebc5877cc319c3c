"""Structured-parameters allocation for DynamicResources, as upstream's stable allocator
(k8s.io/dynamic-resource-allocation/structured): for one node, pick devices from the
ResourceSlices that reach it for every request of every claim still to allocate, honouring the
DeviceClass and request selectors (CEL), ``allocationMode`` ExactCount or All, admin access and
``matchAttribute`` constraints, by depth-first search with backtracking.

A request may list alternatives (``firstAvailable``, upstream's prioritized list): the first that
can be met together with everything else is taken, its results named ``request/subrequest``.

Not done here: partitionable devices (counters), device taints, consumable capacity, per-device
node selection, binding conditions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kubesched.framework.selectors import NodeSelector, SelectorError

Obj = dict[str, Any]
DeviceID = tuple[str, str, str]  # driver, pool, device

#: Upstream's limit on the devices of one claim (resourceapi.AllocationResultsMaxSize).
ALLOCATION_RESULTS_MAX_SIZE = 32


class AllocationTimeout(Exception):
    """The search for one node took longer than its deadline (DynamicResourcesArgs.filterTimeout)."""


class AllocationError(Exception):
    """A claim or class that cannot be allocated anywhere (a broken CEL expression, an unknown
    mode): the scheduling attempt ends with an Error."""


def claim_key(claim: Mapping[str, Any]) -> str:
    meta = claim.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name', '')}"


def device_id_str(dev: DeviceID) -> str:
    return "/".join(dev)


@dataclass
class Pool:
    driver: str
    name: str
    generation: int
    slices: list[Obj] = field(default_factory=list)
    incomplete: bool = False

    @property
    def pool_id(self) -> str:
        return f"{self.driver}/{self.name}"


def _slice_reaches(spec: Mapping[str, Any], node_name: str, labels: Mapping[str, str]) -> bool:
    if spec.get("nodeName"):
        return bool(spec["nodeName"] == node_name)
    if spec.get("allNodes"):
        return True
    selector = spec.get("nodeSelector")
    if selector:
        try:
            compiled = NodeSelector.compile(selector)
        except SelectorError:
            return False
        return compiled is None or compiled.matches(labels, node_name)
    return False


def gather_pools(slices: Iterable[Obj], node_name: str, labels: Mapping[str, str]) -> list[Pool]:
    """The pools with devices for this node: the slices of each pool's newest generation that
    reach the node; a pool with fewer slices of that generation than it announces is incomplete."""
    newest: dict[tuple[str, str], Pool] = {}
    counts: dict[tuple[str, str], int] = {}
    for s in slices:
        spec = s.get("spec") or {}
        pool = spec.get("pool") or {}
        key = (str(spec.get("driver", "")), str(pool.get("name", "")))
        gen = int(pool.get("generation") or 0)
        have = newest.get(key)
        if have is None or gen > have.generation:
            newest[key] = have = Pool(key[0], key[1], gen)
            counts[key] = 0
        elif gen < have.generation:
            continue
        counts[key] += 1
        if _slice_reaches(spec, node_name, labels):
            have.slices.append(s)
    pools = [p for p in newest.values() if p.slices]
    for p in pools:
        p.incomplete = counts[(p.driver, p.name)] < int(
            ((p.slices[0].get("spec") or {}).get("pool") or {}).get("resourceSliceCount") or 1
        )
    pools.sort(key=lambda p: (p.driver, p.name))
    return pools


@dataclass
class Candidate:
    id: DeviceID
    device: Obj
    slice: Obj


@dataclass
class _Request:
    claim_index: int
    #: The name results carry: the request's, or ``request/subrequest`` for one of its
    #: ``firstAvailable`` alternatives.
    name: str
    class_obj: Obj | None
    selectors: list[str]
    admin_access: bool
    count: int
    all_devices: list[Candidate] | None = None
    #: The request's own name (constraints may name the request or one subrequest).
    parent: str = ""


class Allocator:
    """Allocates ``claims`` (unallocated) on one node at a time; ``allocated`` are the devices in
    use by other claims (allocated or in flight)."""

    def __init__(
        self,
        claims: Sequence[Obj],
        allocated: set[DeviceID],
        classes: Mapping[str, Obj],
        slices: Sequence[Obj],
        evaluate: Callable[[str, str, Obj], bool],
    ) -> None:
        self.claims = list(claims)
        self.allocated = allocated
        self.classes = classes
        self.slices = slices
        self._evaluate = evaluate

    # --- selection ------------------------------------------------------------------------
    def _selectors_match(self, claim: Obj, cls: Obj | None, selectors: Sequence[str], cand: Candidate) -> bool:
        driver = cand.id[0]
        for i, expression in enumerate(selectors):
            try:
                ok = self._evaluate(expression, driver, cand.device)
            except CompileFailure as exc:
                if cls is not None:
                    raise AllocationError(
                        f"class {cls['metadata']['name']}: selector #{i}: CEL compile error: {exc}"
                    ) from None
                raise AllocationError(f"claim {claim_key(claim)}: selector #{i}: CEL compile error: {exc}") from None
            except RuntimeFailure as exc:
                where = f"class {cls['metadata']['name']}" if cls is not None else f"claim {claim_key(claim)}"
                raise AllocationError(
                    f"{where}: selector #{i} on device {device_id_str(cand.id)}: CEL runtime error: {exc}"
                ) from None
            if not ok:
                return False
        return True

    def _selectable(self, req: _Request, cand: Candidate, memo: dict[tuple[int, DeviceID], bool]) -> bool:
        key = (id(req), cand.id)
        hit = memo.get(key)
        if hit is not None:
            return hit
        claim = self.claims[req.claim_index]
        ok = True
        if req.class_obj is not None:
            class_selectors = [
                ((s.get("cel") or {}).get("expression") or "")
                for s in (req.class_obj.get("spec") or {}).get("selectors") or ()
            ]
            ok = self._selectors_match(claim, req.class_obj, class_selectors, cand)
        if ok:
            ok = self._selectors_match(claim, None, req.selectors, cand)
        if ok and (cand.device.get("consumesCounters") or cand.device.get("bindingConditions")):
            ok = False  # partitionable devices and binding conditions are not supported
        memo[key] = ok
        return ok

    # --- one node -----------------------------------------------------------------------
    def allocate(self, node_name: str, labels: Mapping[str, str], deadline: float | None = None) -> list[Obj] | None:
        """One allocation result per claim, or ``None`` when they do not all fit on this node.
        Past ``deadline`` (``time.monotonic()``), the search gives up: AllocationTimeout."""
        pools = gather_pools(self.slices, node_name, labels)
        candidates = [
            Candidate((p.driver, p.name, str(d.get("name", ""))), d, s)
            for p in pools
            if not p.incomplete
            for s in p.slices
            for d in (s.get("spec") or {}).get("devices") or ()
        ]
        memo: dict[tuple[int, DeviceID], bool] = {}
        #: Per request of every claim, its alternatives in order of preference: the request
        #: alone, or its ``firstAvailable`` subrequests (the first that can be met is taken).
        slots: list[list[_Request]] = []
        constraints: list[list[tuple[frozenset[str], str]]] = []
        for ci, claim in enumerate(self.claims):
            devices = ((claim.get("spec") or {}).get("devices")) or {}
            total = 0
            for r in devices.get("requests") or ():
                alternatives = self._alternatives(ci, claim, r, pools, candidates, memo)
                total += min(req.count for req in alternatives)
                slots.append(alternatives)
            if total > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {claim_key(claim)}: number of requested devices {total} exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            mine: list[tuple[frozenset[str], str]] = []
            for i, c in enumerate(devices.get("constraints") or ()):
                attribute = c.get("matchAttribute")
                if not attribute:
                    raise AllocationError(
                        f"claim {claim_key(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
                mine.append((frozenset(c.get("requests") or ()), str(attribute)))
            constraints.append(mine)

        results: list[list[tuple[_Request, Candidate]]] = [[] for _ in self.claims]
        allocating: dict[DeviceID, set[int]] = {}
        # Per claim and constraint: the attribute value every device so far has (unset: None).
        pinned: list[list[Any]] = [[None] * len(c) for c in constraints]

        def attribute_of(cand: Candidate, name: str) -> Any:
            domain, _, short = name.rpartition("/")
            attrs = cand.device.get("attributes") or {}
            value = attrs.get(name)
            if value is None and domain == cand.id[0]:
                value = attrs.get(short)
            if not isinstance(value, Mapping):
                return None
            for k in ("int", "bool", "string", "version"):
                if k in value:
                    return (k, value[k])
            return None

        def try_add(req: _Request, cand: Candidate) -> list[tuple[int, Any]] | None:
            if req.admin_access:
                if req.claim_index in allocating.get(cand.id, ()):
                    return None
            elif cand.id in self.allocated or allocating.get(cand.id):
                return None
            changed: list[tuple[int, Any]] = []
            for i, (names, attribute) in enumerate(constraints[req.claim_index]):
                if names and req.name not in names and req.parent not in names:
                    continue
                value = attribute_of(cand, attribute)
                current = pinned[req.claim_index][i]
                if value is None or (current is not None and current != value):
                    for j, old in changed:
                        pinned[req.claim_index][j] = old
                    return None
                if current is None:
                    changed.append((i, current))
                    pinned[req.claim_index][i] = value
            allocating.setdefault(cand.id, set()).add(req.claim_index)
            results[req.claim_index].append((req, cand))
            return changed

        def remove(req: _Request, cand: Candidate, changed: list[tuple[int, Any]]) -> None:
            results[req.claim_index].pop()
            allocating[cand.id].discard(req.claim_index)
            for j, old in changed:
                pinned[req.claim_index][j] = old

        #: Per slot, the alternative being tried.
        active = [0] * len(slots)

        def search(ri: int, done: int) -> bool:
            if ri == len(slots):
                return True
            if deadline is not None and time.monotonic() > deadline:
                raise AllocationTimeout(node_name)
            if done == 0:
                for k, req in enumerate(slots[ri]):
                    active[ri] = k
                    if fill(ri, req, 0):
                        return True
                return False
            return fill(ri, slots[ri][active[ri]], done)

        def fill(ri: int, req: _Request, done: int) -> bool:
            """Devices ``done``.. of ``req`` (the slot's active alternative), then the rest."""
            if done == req.count:
                return search(ri + 1, 0)
            if req.all_devices is not None:
                cand = req.all_devices[done]
                changed = try_add(req, cand)
                if changed is None:
                    return False
                if search(ri, done + 1):
                    return True
                remove(req, cand, changed)
                return False
            for cand in candidates:
                if (req.admin_access or cand.id not in self.allocated) and self._selectable(req, cand, memo):
                    changed = try_add(req, cand)
                    if changed is None:
                        continue
                    if search(ri, done + 1):
                        return True
                    remove(req, cand, changed)
            return False

        if not search(0, 0):
            return None
        return [self._result(ci, claim, results[ci], node_name) for ci, claim in enumerate(self.claims)]

    def _alternatives(
        self,
        ci: int,
        claim: Obj,
        r: Mapping[str, Any],
        pools: list[Pool],
        candidates: list[Candidate],
        memo: dict[tuple[int, DeviceID], bool],
    ) -> list[_Request]:
        """The ways to meet request ``r``, in order of preference: ``exactly`` alone, or each of
        its ``firstAvailable`` subrequests (upstream's DRAPrioritizedList, on by default since
        1.34), named ``request/subrequest`` in the results."""
        name = str(r.get("name", ""))
        subrequests = r.get("firstAvailable") or ()
        if subrequests:
            return [
                self._exact(ci, claim, f"{name}/{sub.get('name', '')}", name, sub, pools, candidates, memo)
                for sub in subrequests
            ]
        return [self._exact(ci, claim, name, name, r.get("exactly") or {}, pools, candidates, memo)]

    def _exact(
        self,
        ci: int,
        claim: Obj,
        name: str,
        parent: str,
        exactly: Mapping[str, Any],
        pools: list[Pool],
        candidates: list[Candidate],
        memo: dict[tuple[int, DeviceID], bool],
    ) -> _Request:
        """One way to meet a request: a device class, selectors, a mode and count."""
        where = f"claim {claim_key(claim)}, request {name}"
        class_name = exactly.get("deviceClassName") or ""
        if not class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        cls = self.classes.get(class_name)
        if cls is None:
            raise AllocationError(
                f'{where}: could not retrieve device class {class_name}: deviceclass.resource.k8s.io "{class_name}" not found'
            )
        selectors = []
        for i, s in enumerate(exactly.get("selectors") or ()):
            expression = (s.get("cel") or {}).get("expression")
            if not expression:
                raise AllocationError(f"{where}, selector #{i}: CEL expression empty (unsupported selector type?)")
            selectors.append(str(expression))
        mode = exactly.get("allocationMode") or "ExactCount"
        req = _Request(ci, name, cls, selectors, bool(exactly.get("adminAccess")), 0, parent=parent)
        if mode == "ExactCount":
            req.count = int(exactly.get("count") or 1)
        elif mode == "All":
            for p in pools:
                if p.incomplete:
                    raise AllocationError(
                        f"{where}: asks for all devices, but resource pool {p.pool_id} is currently being updated"
                    )
            req.all_devices = [c for c in candidates if self._selectable(req, c, memo)]
            req.count = len(req.all_devices)
        else:
            raise AllocationError(f"{where}: unsupported count mode {mode}")
        return req

    def _result(self, ci: int, claim: Obj, picked: list[tuple[_Request, Candidate]], node_name: str) -> Obj:
        device_results = []
        for req, cand in picked:
            entry: Obj = {"request": req.name, "driver": cand.id[0], "pool": cand.id[1], "device": cand.id[2]}
            if req.admin_access:
                entry["adminAccess"] = True
            device_results.append(entry)
        config: list[Obj] = []
        seen: set[str] = set()
        for req, _ in picked:
            cls = req.class_obj
            if cls is None or cls["metadata"]["name"] in seen:
                continue
            seen.add(cls["metadata"]["name"])
            for c in (cls.get("spec") or {}).get("config") or ():
                config.append(
                    {"source": "FromClass", "requests": [req.name], **{k: v for k, v in c.items() if k != "requests"}}
                )
        for c in ((claim.get("spec") or {}).get("devices") or {}).get("config") or ():
            config.append({"source": "FromClaim", **c})
        devices: Obj = {"results": device_results}
        if config:
            devices["config"] = config
        result: Obj = {"devices": devices}
        selector = _node_selector([cand.slice for _, cand in picked], node_name)
        if selector is not None:
            result["nodeSelector"] = selector
        return result


def _node_selector(slices: Iterable[Obj], node_name: str) -> Obj | None:
    """Where the allocated devices are reachable: the node itself when one is local to it, else
    a slice's node selector, else anywhere (``None``)."""
    selectors = []
    for s in slices:
        spec = s.get("spec") or {}
        if spec.get("nodeName"):
            return {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            }
        if spec.get("nodeSelector"):
            selectors.append(spec["nodeSelector"])
    return selectors[0] if selectors else None


class CompileFailure(Exception):
    """A selector that does not compile (raised by the evaluate callback)."""


class RuntimeFailure(Exception):
    """A selector that fails on a device (raised by the evaluate callback)."""
