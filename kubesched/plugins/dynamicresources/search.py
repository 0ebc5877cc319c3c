"""The search of one :meth:`Allocator.allocate <.allocator.Allocator.allocate>` call
(upstream's allocateOne): each claim's requests validated into the ways to meet them, then a
depth-first search with backtracking over the devices of the node's pools, first fit, a request's
``firstAvailable`` alternatives tried in order (the prioritized list), within the limit on a
claim's devices; and the allocation results (devices, config, node selector) of what it took."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kubesched.objects import Obj
from kubesched.plugins.dynamicresources.allocator_types import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocationError,
    AllocationFailedOnNode,
    AllocationTimeout,
    ValidatedRequest,
    kobj,
    slice_spec,
)
from kubesched.plugins.dynamicresources.capacity import fits_demand
from kubesched.plugins.dynamicresources.constraints import (
    Constraint,
    DistinctAttribute,
    MatchAttribute,
    matched,
    none_can_match,
)
from kubesched.plugins.dynamicresources.device_checks import DeviceChecks, Picked, Request
from kubesched.plugins.dynamicresources.node_views import ViewKey
from kubesched.plugins.dynamicresources.pools import Candidate
from kubesched.plugins.dynamicresources.walks import open_steps, walk_for


class _TooManyDevices(Exception):
    """Upstream's errAllocationResultMaxSizeExceeded: this branch would give a claim more than
    ALLOCATION_RESULTS_MAX_SIZE devices, backtrack further."""


class Search(DeviceChecks):
    """One :meth:`Allocator.allocate <.allocator.Allocator.allocate>` call: its requests, the
    search over the state :class:`DeviceChecks` holds, and its results."""

    def _requests_of(self, ci: int) -> Sequence[Obj]:
        return self._requests[ci]

    def run(self, view: ViewKey) -> bool:
        """Whether the claims all fit on the node (:meth:`replay` then makes the results);
        ``view``: the node's view of the slices (:meth:`NodeViews.key <.node_views.NodeViews.key>`)."""
        a = self.a
        self.pools = a.pools_for(self.node_name, self.labels, view)
        for ci, claim in enumerate(a.claims):
            minimum = 0
            for ri, r in enumerate(self._requests_of(ci)):
                name = str(r.get("name", ""))
                subrequests = r.get("firstAvailable") or ()
                if not self.f.consumable_capacity:
                    if (r.get("exactly") or {}).get("capacity") is not None:
                        raise AllocationError(
                            f"claim {kobj(claim)}, request {name}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
                        )
                    for sub in subrequests:
                        if sub.get("capacity") is not None:
                            raise AllocationError(
                                f"claim {kobj(claim)}, subrequest {sub.get('name', '')}: has capacity requests, but the DRAConsumableCapacity feature is disabled"
                            )
                if subrequests:
                    counts = []
                    for si, sub in enumerate(subrequests):
                        req = self._validate((ci, ri, si), claim, str(sub.get("name", "")), name, sub)
                        self.requests[req.key] = req
                        counts.append(req.count)
                    minimum += min(counts)
                else:
                    req = self._validate((ci, ri, 0), claim, name, "", r.get("exactly") or {})
                    self.requests[req.key] = req
                    minimum += req.count
            if minimum > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {kobj(claim)}: number of requested devices {minimum} exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            mine: list[Constraint] = []
            for i, c in enumerate(((claim.get("spec") or {}).get("devices") or {}).get("constraints") or ()):
                if c.get("matchAttribute"):
                    mine.append(MatchAttribute(c.get("requests") or (), str(c["matchAttribute"])))
                elif c.get("distinctAttribute"):
                    mine.append(DistinctAttribute(c.get("requests") or (), str(c["distinctAttribute"])))
                else:
                    raise AllocationError(
                        f"claim {kobj(claim)}, constraint #{i}: empty constraint (unsupported constraint type?)"
                    )
            self.constraints.append(mine)

        if not self._one(0, 0, 0, 0, False, (0, 0, 0)):
            if any(p.invalid for p in self.pools):
                raise AllocationFailedOnNode("invalid resource pools were encountered")
            return False
        return True

    def replay(self, node_name: str) -> list[Obj]:
        """The results of this (successful) search for a node of its view, the one searched or
        another: the same devices; the node selector made for that node, and new share IDs, as
        a search there would give."""
        self.node_name = node_name
        for picked in self.results:
            for p in picked:
                if p.share_id is not None:
                    p.share_id = str(uuid.uuid4())
        return [self._result(ci, claim) for ci, claim in enumerate(self.claims)]

    # --- requests ----------------------------------------------------------------------------
    def _validate(
        self, key: tuple[int, int, int], claim: Obj, name: str, parent: str, spec: Mapping[str, Any]
    ) -> Request:
        v = self.a.validated.get(key)
        if v is not None:
            # An exact count validated by an earlier node's search: only its walk is this node's.
            req = Request(
                key, v.name, v.parent, v.class_obj, v.selectors, v.admin_access, v.tolerations, v.capacity,
                "ExactCount", v.devices, selection=v.selection, capacity_key=v.capacity_key,
            )  # fmt: skip
            self._set_walk(req)
            return req
        where = f"claim {kobj(claim)}, request {name}"
        selectors = []
        for i, s in enumerate(spec.get("selectors") or ()):
            expression = (s.get("cel") or {}).get("expression")
            if not expression:
                raise AllocationError(f"{where}, selector #{i}: CEL expression empty (unsupported selector type?)")
            selectors.append(str(expression))
        class_name = spec.get("deviceClassName") or ""
        if not class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        cls = self.a.classes.get(class_name)
        if cls is None:
            raise AllocationError(
                f'{where}: could not retrieve device class {class_name}: deviceclass.resource.k8s.io "{class_name}" not found'
            )
        mode = spec.get("allocationMode") or "ExactCount"
        self.a.pool_cache.classes[id(cls)] = cls
        req = Request(
            key,
            name,
            parent,
            cls,
            selectors,
            bool(spec.get("adminAccess")) and not parent,
            [dict(t) for t in spec.get("tolerations") or ()],
            spec.get("capacity"),
            mode,
            selection=(id(cls), tuple(selectors)),
            capacity_key=self.a.capacity_key(key, spec.get("capacity")),
        )
        if mode == "ExactCount":
            req.count = int(spec.get("count") or 1)
            self.a.validated[key] = ValidatedRequest(
                name, parent, cls, selectors, req.admin_access, req.tolerations, req.capacity, req.count,
                req.selection, req.capacity_key,
            )  # fmt: skip
            self._set_walk(req)
        elif mode == "All":
            req.all_devices = []
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(
                        f"{where}: asks for all devices, but resource pool {pool.pool_id} is currently being updated"
                    )
                if pool.invalid:
                    raise AllocationError(
                        f"{where}: asks for all devices, but resource pool {pool.pool_id} is currently invalid"
                    )
                for row in pool.candidates:
                    for cand in row:
                        if self._selectable(req, cand) and (
                            not self.f.consumable_capacity or self._capacity_fits(req, cand)
                        ):
                            req.all_devices.append(cand)
            req.count = len(req.all_devices)
        else:
            raise AllocationError(f"{where}: unsupported count mode {mode}")
        return req

    def _set_walk(self, req: Request) -> None:
        """The walk an exact count may take over this node's pools (see :mod:`.walks`), if any."""
        assert req.class_obj is not None
        walk = walk_for(self.a, self.pools, req.class_obj, req.selectors, req.capacity, req.capacity_key, req.selection)
        req.walk = walk if walk is not None and walk.groups is not None else None

    # --- the search (upstream's allocateOne) ----------------------------------------------------
    def _one(self, ci: int, ri: int, si: int, di: int, in_sub: bool, start: tuple[int, int, int]) -> bool:
        self.a.invocations += 1
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise AllocationTimeout(self.node_name)
        if ci >= len(self.a.claims):
            return True
        if ri >= len(self._requests_of(ci)):
            try:
                return self._one(ci + 1, 0, 0, 0, False, (0, 0, 0))
            except _TooManyDevices:
                # Another way to allocate the claims before may need fewer devices here.
                return False
        req = self.requests[(ci, ri, si)]
        if not in_sub and req.parent:
            every_one_too_many = True
            k = 0
            while (ci, ri, k) in self.requests:
                try:
                    ok = self._one(ci, ri, k, di, True, (0, 0, 0))
                except _TooManyDevices:
                    k += 1
                    continue
                every_one_too_many = False
                if ok:
                    self.selected[(ci, ri)] = k
                    return True
                k += 1
            if every_one_too_many:
                raise _TooManyDevices
            return False

        if req.all_devices is not None and not req.all_devices:
            return False  # "All" needs at least one device
        if di >= req.count:
            return self._one(ci, ri + 1, 0, 0, False, (0, 0, 0))
        if len(self.results[ci]) + req.count - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _TooManyDevices

        if req.all_devices is not None:
            return self._descend(ci, ri, si, di, in_sub, req, req.all_devices[di], (0, 0, 0), must=True)

        constraints = self.constraints[ci]
        # The loop below runs for every device of every pool on every node: locals, not lookups.
        selectable = req.selectable
        in_use = self.a.state.devices
        allocating = self.allocating
        consumable = self.f.consumable_capacity
        admin = req.admin_access
        base, sub = req.base, req.sub
        # A pool none of whose devices has the value a matchAttribute constraint holds already
        # is passed over whole (each of its devices would be refused), once its devices are known
        # not to fail the request's selectors (an error the search would otherwise report).
        fixed = matched(constraints, base, sub) if constraints else None
        if req.walk is not None:
            return self._walk(ci, ri, si, di, in_sub, start, req, fixed)
        for pi in range(start[0], len(self.pools)):
            pool = self.pools[pi]
            if pool.incomplete or pool.invalid:
                continue
            if fixed and none_can_match(pool, fixed) and self._judged(pool, req):
                continue
            first_slice = start[1] if pi == start[0] else 0
            for sli in range(first_slice, len(pool.candidates)):
                row = pool.candidates[sli]
                first_device = start[2] if (pi == start[0] and sli == start[1]) else 0
                for dvi in range(first_device, len(row)):
                    cand = row[dvi]
                    if admin:
                        if ci in allocating.get(cand.id, ()):
                            continue
                    elif cand.id in in_use or allocating.get(cand.id):
                        continue
                    known = selectable.get(id(cand))
                    if known is None:
                        known = selectable[id(cand)] = self._selectable(req, cand)
                    if not known:
                        continue
                    if (
                        consumable
                        and (req.capacity is not None or "capacity" in cand.device)
                        and not self._capacity_fits(req, cand)
                    ):
                        continue
                    # Cheap before the counters: a device another device's constraint rules out.
                    if constraints and not all(c.may_add(base, sub, cand) for c in constraints):
                        continue
                    if self._descend(ci, ri, si, di, in_sub, req, cand, (pi, sli, dvi + 1)):
                        return True
        return False

    def _descend(
        self,
        ci: int,
        ri: int,
        si: int,
        di: int,
        in_sub: bool,
        req: Request,
        cand: Candidate,
        after: tuple[int, int, int],
        must: bool = False,
    ) -> bool:
        """Take ``cand`` as device ``di`` of the request and search on (the next device from
        ``after``); whether that found everything (if not, ``cand`` is given back). ``must``: an
        "All" request's device, which a claim constraint refusing is an error (see ``_take``)."""
        taken = self._take(ci, req, cand, must=must)
        if taken is None:
            return False
        if di + 1 >= req.count and ri + 1 >= len(self._requests_of(ci)) and ci + 1 >= len(self.a.claims):
            # The last device of the last request of the last claim: the three calls the search
            # would make to find that out (the request done, the claim done, every claim done)
            # counted, their answer given.
            self.a.invocations += 3
            if self.deadline is not None and time.monotonic() > self.deadline:
                self._give_back(taken)
                raise AllocationTimeout(self.node_name)
            return True
        try:
            done = self._one(ci, ri, si, di + 1, in_sub, after)
        except _TooManyDevices:
            self._give_back(taken)
            raise
        if not done:
            self._give_back(taken)
        return done

    def _walk(
        self,
        ci: int,
        ri: int,
        si: int,
        di: int,
        in_sub: bool,
        start: tuple[int, int, int],
        req: Request,
        fixed: Sequence[tuple[str, tuple[str, Any]]] | None,
    ) -> bool:
        """The loop of :meth:`_one` over the request's walk (:mod:`.walks`): the devices its
        selectors choose, in the same order; ``start`` is (pool of the walk, device in it, 0)."""
        walk = req.walk
        assert walk is not None and walk.groups is not None
        constraints = self.constraints[ci]
        in_use = self.a.state.devices
        consumed = self.a.state.consumed
        allocating = self.allocating
        allocating_capacity = self.allocating_capacity
        admin = req.admin_access
        base, sub = req.base, req.sub
        groups = walk.groups
        tracked = self.a.state.versions is not None
        for gi in range(start[0], len(groups)):
            pool = groups[gi][1]
            # Its devices answered the selectors without an error: the pass-over of _one.
            if fixed and none_can_match(pool, fixed):
                continue
            # Those of its devices what allocated claims hold leaves open (kept per pool version).
            steps = open_steps(self.a, walk, gi, admin) if tracked else groups[gi][2]
            for si_ in range(start[1] if gi == start[0] else 0, len(steps)):
                cand, wanted = steps[si_]
                dev = cand.id
                if admin:
                    if ci in allocating.get(dev, ()):
                        continue
                elif dev in in_use or allocating.get(dev):
                    continue
                if wanted is not None and not fits_demand(wanted, consumed.get(dev), allocating_capacity.get(dev)):
                    continue
                if constraints and not all(c.may_add(base, sub, cand) for c in constraints):
                    continue
                if self._descend(ci, ri, si, di, in_sub, req, cand, (gi, si_ + 1, 0)):
                    return True
        return False

    # --- the result --------------------------------------------------------------------------
    def _result(self, ci: int, claim: Obj) -> Obj:
        device_results = []
        for p in self.results[ci]:
            entry: Obj = {
                "request": p.req.full_name,
                "driver": p.cand.id[0],
                "pool": p.cand.id[1],
                "device": p.cand.id[2],
            }
            if p.req.admin_access:
                entry["adminAccess"] = True
            if p.req.tolerations:
                entry["tolerations"] = [dict(t) for t in p.req.tolerations]
            if self.f.binding_conditions:
                for k in ("bindingConditions", "bindingFailureConditions"):
                    if p.cand.device.get(k):
                        entry[k] = list(p.cand.device[k])
            if p.share_id is not None:
                entry["shareID"] = p.share_id
            if p.consumed:
                entry["consumedCapacity"] = {k: v.text for k, v in p.consumed.items()}
            device_results.append(entry)
        devices: Obj = {"results": device_results}
        config = self._config(ci, claim)
        if config:
            devices["config"] = config
        result: Obj = {"devices": devices}
        try:
            selector = _node_selector(self.results[ci], self.node_name)
        except ValueError as exc:
            raise AllocationError(
                f"create NodeSelector for claim {(claim.get('metadata') or {}).get('name', '')}: {exc}"
            ) from None
        if selector is not None:
            result["nodeSelector"] = selector
        return result

    def _chosen(self, ci: int, ri: int) -> Request:
        req = self.requests[(ci, ri, 0)]
        if req.parent:
            req = self.requests[(ci, ri, self.selected.get((ci, ri), 0))]
        return req

    def _config(self, ci: int, claim: Obj) -> list[Obj]:
        config: list[Obj] = []
        requests = self._requests_of(ci)
        by_class: dict[str, tuple[int, int]] = {}
        for ri in range(len(requests)):
            req = self._chosen(ci, ri)
            cls = req.class_obj
            if cls is None:
                continue
            name = cls["metadata"]["name"]
            if name in by_class:
                lo, hi = by_class[name]
                for entry in config[lo:hi]:
                    entry["requests"].append(req.full_name)
                continue
            lo = len(config)
            for c in (cls.get("spec") or {}).get("config") or ():
                config.append(
                    {
                        "source": "FromClass",
                        "requests": [req.full_name],
                        **{k: v for k, v in c.items() if k != "requests"},
                    }
                )
            by_class[name] = (lo, len(config))
        for c in ((claim.get("spec") or {}).get("devices") or {}).get("config") or ():
            wanted = list(c.get("requests") or ())
            entry = {"source": "FromClaim", **{k: v for k, v in c.items() if k != "requests"}}
            if not wanted:
                config.append(entry)
                continue
            for ri, r in enumerate(requests):
                req = self._chosen(ci, ri)
                if r.get("name") in wanted or (req.parent and req.full_name in wanted):
                    config.append({**entry, "requests": wanted})
                    break
        # A config for every request says so by naming none ("empty means all").
        for entry in config:
            names = entry.get("requests")
            if not names:
                continue
            if all(r.get("name") in names or self._chosen(ci, ri).full_name in names for ri, r in enumerate(requests)):
                entry.pop("requests")
        return config


def _node_selector(picked: Iterable[Picked], node_name: str) -> Obj | None:
    """Where the allocated devices are reachable (upstream's createNodeSelector): the node
    itself when one is local to it or binds to it, else the requirements of every node selector
    (one term), else anywhere (``None``)."""
    fields: list[Obj] = []
    expressions: list[Obj] = []
    for p in picked:
        spec = slice_spec(p.cand.slice)
        if spec.get("perDeviceNodeSelection"):
            name, selector = p.cand.device.get("nodeName"), p.cand.device.get("nodeSelector")
        else:
            name, selector = spec.get("nodeName"), spec.get("nodeSelector")
        if name or p.cand.device.get("bindsToNode"):
            return {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
                ]
            }
        if selector is not None:
            terms = selector.get("nodeSelectorTerms") or []
            if len(terms) > 1:
                raise ValueError(f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
            if terms:
                _add_requirements(terms[0].get("matchFields") or (), fields)
                _add_requirements(terms[0].get("matchExpressions") or (), expressions)
    if not fields and not expressions:
        return None
    term: Obj = {}
    if expressions:
        term["matchExpressions"] = expressions
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _add_requirements(new: Iterable[Obj], into: list[Obj]) -> None:
    for r in new:
        values = set(r.get("values") or ())
        if not any(
            have.get("key") == r.get("key")
            and have.get("operator") == r.get("operator")
            and set(have.get("values") or ()) == values
            for have in into
        ):
            into.append(dict(r))
