"""Filter of DynamicResources: on each node, the allocated claims must be available (their node
selector; binding conditions neither failed nor timed out) and the claims to allocate must all
be allocatable from the slices reaching the node; the claim for extended resources gets the
node's own variant (the resources the node's device plugins do not provide)."""

from __future__ import annotations

import copy
import time

from kubesched.framework.interface import CycleState
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.objects import Obj
from kubesched.plugins.dynamicresources import extended_resources as ext
from kubesched.plugins.dynamicresources.allocator import Allocator
from kubesched.plugins.dynamicresources.allocator_types import (
    AllocationError,
    AllocationFailedOnNode,
    AllocationTimeout,
)
from kubesched.plugins.dynamicresources.binding_conditions import (
    BindingFailed,
    claim_ready_for_binding,
    claim_timed_out,
)
from kubesched.plugins.dynamicresources.claims import allocation_of, requests_of
from kubesched.plugins.dynamicresources.plugin_base import DynamicResourcesBase
from kubesched.plugins.dynamicresources.state import STATE_KEY, NodeAllocation, State


class Filtering(DynamicResourcesBase):
    """Filter (see the module)."""

    # --- Filter --------------------------------------------------------------------------
    def _filter_extended(self, s: State, pod: PodInfo, node: NodeInfo) -> tuple[Obj | None, list[Obj], Status | None]:
        """The node's variant of the claim for extended resources (``None``: the node's device
        plugins provide them all, or there is nothing to allocate), its request mappings, or why
        the node cannot have them."""
        claim = s.extended_claim()
        if claim is None:
            return None, [], None
        if requests_of(claim) is not None:
            # Made by an earlier attempt: PostFilter deletes it, and the next attempt starts anew.
            return None, [], Status.unresolvable("cannot schedule extended resource claim")
        needed: list[str] = []
        alloc = node.allocatable.scalar
        for resource, quantity in s.pod_scalar.items():
            if not quantity or not ext.is_dra_extended_resource_name(resource):
                continue
            if resource in s.class_mapping and alloc.get(resource, 0) == 0:
                needed.append(resource)  # the node provides it through DRA
            elif resource not in alloc:
                return None, [], Status.unresolvable("cannot fit resource")
        if not needed or allocation_of(claim) is not None:
            return None, [], None
        # Nodes that lack the same resources share one variant (read-only from here on).
        key = tuple(needed)
        made = s.node_claims.get(key)
        if made is None:
            requests, mappings = ext.requests_and_mappings(pod.pod, needed, s.class_mapping)
            node_claim = copy.deepcopy(claim)
            node_claim.setdefault("spec", {})["devices"] = {"requests": requests}
            made = s.node_claims[key] = (node_claim, mappings)
        return made[0], made[1], None

    def _variant_allocator(self, s: State, node_claim: Obj, claims: list[Obj]) -> Allocator:
        """The allocator of ``claims`` with this variant of the claim for extended resources,
        made once per variant: the nodes that share the variant share it."""
        allocator = s.variant_allocators.get(id(node_claim))
        if allocator is None:
            allocator = s.variant_allocators[id(node_claim)] = self._allocator(s, claims)
        return allocator

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status | None:
        s: State | None = state.get(STATE_KEY)
        if s is None or not s.claims:
            return None
        node_claim, mappings, status = self._filter_extended(s, pod, node)
        if status is not None:
            return status
        if node_claim is None and s.no_user_claim():
            return None  # the node's device plugins provide the extended resources
        labels = ((node.node or {}).get("metadata") or {}).get("labels") or {}
        unavailable = []
        for i, claim in enumerate(s.claims):
            selector = s.available_on[i]
            if selector is not None and not selector.matches(labels, node.name):
                unavailable.append(i)
            elif self.binding_conditions and allocation_of(claim) is not None:
                try:
                    if not claim_ready_for_binding(claim) and claim_timed_out(claim, self.binding_timeout):
                        unavailable.append(i)
                except BindingFailed:
                    unavailable.append(i)
        found: NodeAllocation | None = None
        if s.allocator is not None:
            indices = [i for i in s.to_allocate if i != s.extended or node_claim is not None]
            claims = [s.claims[i] if i != s.extended or node_claim is None else node_claim for i in indices]
            found = NodeAllocation(indices, claims, [], node_claim, mappings)
            if claims:
                # The node's own variant of the claim for extended resources needs its own.
                allocator = s.allocator if node_claim is None else self._variant_allocator(s, node_claim, claims)
                deadline = None if self.filter_timeout is None else time.monotonic() + self.filter_timeout
                try:
                    results = allocator.allocate_later(node.name, labels, deadline)
                except AllocationTimeout:
                    # As upstream since the change to Error: a timeout may be transient, so the
                    # pod goes to backoff rather than waiting for a cluster event.
                    return Status.as_error(f"node {node.name}: timed out trying to allocate devices")
                except AllocationFailedOnNode as exc:
                    # As upstream: this node's devices cannot serve the pod, others may.
                    return Status.unresolvable(str(exc))
                except AllocationError as exc:
                    return Status.as_error(exc)
                if results is None or (not callable(results) and len(results) != len(claims)):
                    return Status.unresolvable("cannot allocate all claims")
                found.later = results
        if unavailable:
            s.unavailable.update(unavailable)
            return Status.unresolvable("resourceclaim not available on the node")
        if found is not None:
            s.node_allocations[node.name] = found
        return None
