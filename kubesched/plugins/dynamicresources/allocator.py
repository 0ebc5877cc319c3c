"""Structured-parameters allocation for DynamicResources, as kube-scheduler 1.37's allocator
(k8s.io/dynamic-resource-allocation/structured, the "incubating" implementation that 1.37's
default gates select): for one node, pick devices from the ResourceSlices that reach it for every
request of every claim still to allocate, by depth-first search with backtracking, first fit.

What a device must pass, in order: not in use (by an allocated claim, or by this allocation
unless it allows multiple allocations), the DeviceClass's and the request's CEL selectors, its
own node selection (``perDeviceNodeSelection``), enough capacity left (consumable capacity),
enough of the shared counters it consumes (partitionable devices), no untolerated NoSchedule or
NoExecute taint (its own or a DeviceTaintRule's), and the claim's ``matchAttribute`` and
``distinctAttribute`` constraints. A request is ``exactly`` one way (``ExactCount`` or ``All``
devices, admin access, tolerations, capacity requests) or lists ``firstAvailable`` alternatives
(the prioritized list, GA and locked on in 1.37): the first that can be met together with
everything else is taken, its results named ``request/subrequest``.

Each optional behaviour follows its 1.37 gate through :class:`Features` (all on by default, as
1.37 has them): DRAPartitionableDevices, DRADeviceTaints, DRADeviceTaintRules,
DRADeviceBindingConditions (with DRAResourceClaimDeviceStatus), DRAConsumableCapacity,
DRAFractionalCapacityRange. Not done: list-type attributes (DRAListTypeAttributes, alpha, off).

This module holds :class:`Allocator`, the entry point, and re-exports what its callers use. The
parts: :mod:`.allocator_types` (features, errors, the allocated state), :mod:`.allocator_base`
(what an Allocator keeps for every node), :mod:`.node_views` (which nodes see the same pools,
searched once for all of them), :mod:`.pools` (the pools that reach a node),
:mod:`.constraints` (matchAttribute, distinctAttribute), :mod:`.device_checks` (one device for
one request) and :mod:`.search` (the search and its results).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

from kubesched.objects import Obj
from kubesched.plugins.dynamicresources.allocator_base import AllocatorBase
from kubesched.plugins.dynamicresources.allocator_types import (
    ALLOCATION_RESULTS_MAX_SIZE,
    AllocatedState,
    AllocationError,
    AllocationFailedOnNode,
    AllocationTimeout,
    CompileFailure,
    DeviceID,
    Features,
    RuntimeFailure,
    claim_key,
    device_id_str,
)
from kubesched.plugins.dynamicresources.pools import (
    Candidate,
    Pool,
    PoolCache,
    SelectorCache,
    gather_pools,
    node_matches,
)
from kubesched.plugins.dynamicresources.search import Search

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "AllocatedState",
    "AllocationError",
    "AllocationFailedOnNode",
    "AllocationTimeout",
    "Allocator",
    "Candidate",
    "CompileFailure",
    "DeviceID",
    "Features",
    "Pool",
    "PoolCache",
    "RuntimeFailure",
    "SelectorCache",
    "claim_key",
    "device_id_str",
    "gather_pools",
    "node_matches",
]


class Allocator(AllocatorBase):
    """Allocates ``claims`` (unallocated) on one node at a time.

    ``allocated``: the devices allocated claims (and allocations in flight) use whole; admin
    access results excluded. Keyword arguments, each with 1.37's default:

    * ``features``: :class:`Features`, or the FeatureGates to read them from (default: 1.37's);
    * ``device_taint_rules``: the DeviceTaintRule objects whose taints apply to devices;
    * ``shared``: devices with at least one share allocated (results with a ``shareID``);
    * ``consumed_capacity``: per device, the capacity those shares consume;
    * ``pool_cache``: a :class:`PoolCache` to build pools in, kept across allocators (default: one
      of its own);
    * ``state``: an :class:`AllocatedState` to read instead of the three above (not copied: the
      allocator never changes it).

    :meth:`AllocatedState.from_claims` computes ``allocated``, ``shared`` and
    ``consumed_capacity`` from the claims."""

    def allocate(self, node_name: str, labels: Mapping[str, str], deadline: float | None = None) -> list[Obj] | None:
        """One allocation result per claim, or ``None`` when they do not all fit on this node.
        Past ``deadline`` (``time.monotonic()``), the search gives up: AllocationTimeout. Raises
        :class:`AllocationError` for what fails on every node, :class:`AllocationFailedOnNode`
        for what fails on this one."""
        got = self.allocate_later(node_name, labels, deadline)
        return got() if callable(got) else got

    def allocate_later(
        self, node_name: str, labels: Mapping[str, str], deadline: float | None = None
    ) -> list[Obj] | Callable[[], list[Obj]] | None:
        """As :meth:`allocate`, but how to make the node's results rather than the results
        where the claims fit: most nodes a pod fits on are not the one it goes to."""
        view = self.view(node_name, labels)
        done = self.searched.get(view)
        if done is None:
            search = Search(self, node_name, labels, deadline)
            try:
                found = search.run(view)
            except AllocationTimeout:
                raise
            except AllocationError as exc:
                # Its class and words, not the exception: its traceback holds this allocator.
                self.searched[view] = (type(exc), exc.args)
                raise
            finally:
                search.settle()
            self.searched[view] = search if found else False
            return functools.partial(search.replay, node_name) if found else None
        # Another node of the same view was searched: the same answer (see NodeViews).
        if isinstance(done, tuple):
            kind, args = done
            raise kind(*args)
        return functools.partial(done.replay, node_name) if isinstance(done, Search) else None
