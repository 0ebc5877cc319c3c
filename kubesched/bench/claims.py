"""Upstream scheduler_perf's ``allocResourceClaims``: the ResourceClaims of a namespace allocated
before the measured pods come, as if pods had been scheduled with them (a cluster already partly
in use), by the scheduler's own DRA allocator: each claim on the first node, in the store's
order, where it fits beside the claims allocated before it."""

from __future__ import annotations

from typing import Any

from kubesched.bench.errors import WorkloadError
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.objects import Obj
from kubesched.plugins.dynamicresources.allocator import (
    AllocatedState,
    AllocationError,
    AllocationFailedOnNode,
    Allocator,
)
from kubesched.plugins.dynamicresources.cel import CELError, device_variables, evaluate
from kubesched.plugins.dynamicresources.pools import PoolCache


def _matches(expression: str, driver: str, device: Obj) -> bool:
    try:
        return evaluate(expression, device_variables(driver, device))
    except CELError as exc:
        raise WorkloadError(f"allocResourceClaims: selector {expression!r}: {exc}") from None


def allocate_claims(store: Store, namespace: str, gates: FeatureGates) -> int:
    """Allocate every unallocated ResourceClaim of ``namespace``; the number allocated. A claim
    that fits on no node is a WorkloadError naming it."""
    every, _ = store.list("ResourceClaim")
    held = AllocatedState.from_claims(c for c in every if (c.get("status") or {}).get("allocation"))
    classes = {c["metadata"]["name"]: c for c in store.list("DeviceClass")[0]}
    slices = store.list("ResourceSlice")[0]
    rules = store.list("DeviceTaintRule")[0]
    nodes = [(n["metadata"]["name"], n["metadata"].get("labels") or {}) for n in store.list("Node")[0]]
    claims = [c for c in store.list("ResourceClaim", namespace)[0] if not (c.get("status") or {}).get("allocation")]
    # The pools and the selectors' verdicts on devices, built once for every claim (the slices
    # do not change meanwhile) instead of once a claim.
    cache = PoolCache()
    for claim in claims:
        name = f"{namespace}/{claim['metadata']['name']}"
        allocation = _allocate(claim, held, classes, slices, rules, nodes, gates, name, cache)
        if allocation is None:
            raise WorkloadError(f"allocResourceClaims: ResourceClaim {name} fits on no node")
        claim = {**claim, "status": {**(claim.get("status") or {}), "allocation": allocation}}
        store.update("ResourceClaim", claim)
        for result in (allocation.get("devices") or {}).get("results") or ():
            held.add_result(result)
    return len(claims)


def _allocate(
    claim: Obj,
    held: AllocatedState,
    classes: dict[str, Obj],
    slices: list[Obj],
    rules: list[Obj],
    nodes: list[tuple[str, dict[str, str]]],
    gates: FeatureGates,
    name: str,
    cache: PoolCache,
) -> Any:
    allocator = Allocator(
        [claim],
        held.devices,
        classes,
        slices,
        _matches,
        features=gates,
        device_taint_rules=rules,
        shared=held.shared,
        consumed_capacity=held.consumed,
        pool_cache=cache,
    )
    for node, labels in nodes:
        try:
            results = allocator.allocate(node, labels)
        except AllocationFailedOnNode:
            continue
        except AllocationError as exc:
            raise WorkloadError(f"allocResourceClaims: ResourceClaim {name}: {exc}") from None
        if results:
            return results[0]
    return None
