"""DynamicResources: devices claimed through ResourceClaims (DRA with structured parameters).

As upstream's plugin in kube-scheduler 1.37 (pkg/scheduler/framework/plugins/dynamicresources):

* PreEnqueue: every claim of the pod exists (the resource-claim controller has made the ones of
  its templates), is not being deleted, and a generated one belongs to the pod;
* PreFilter: Skip for a pod without claims and without extended resources a DeviceClass stands
  for (the cost of the plugin for every other pod); a claim allocated and reserved to the limit
  for others, or one being allocated for another pod, or a request naming a DeviceClass that
  does not exist makes the pod wait. A pod asking for extended resources backed by DRA gets an
  in-memory claim for them (:mod:`.extended_resources`);
* Filter: an allocated claim must be available on the node (its allocation's node selector; and,
  with binding conditions, not failed nor timed out); the unallocated ones must all be
  allocatable from the ResourceSlices reaching the node, DeviceTaintRules applied
  (:mod:`.allocator`, :mod:`.device_taints`), else "cannot allocate all claims";
* PostFilter: deallocates one allocated claim not available where the pod could go and not
  used by anyone else (or deletes a stale claim for extended resources), so that the next
  attempt may allocate it elsewhere;
* Reserve: the node's allocation is held in flight, so that the next pod does not take the same
  devices before PreBind has written them; Unreserve drops it (and the pod's reservation, and
  the claim for extended resources PreBind created);
* PreBind: creates the claim for extended resources, writes ``status.allocation`` and
  ``status.reservedFor`` (with upstream's finalizer), the pod's
  ``status.extendedResourceClaimStatus``, then waits for binding conditions
  (:mod:`.binding_conditions`).

ResourceClaims shared by a PodGroup (KEP-5729, ``DRAWorkloadResourceClaims``, beta and off by
default in 1.37): a member's ``spec.resourceClaims`` entry that matches an entry of its PodGroup
exactly (same name, same source) is the group's claim. Its status leads a template entry to the
claim the controller made for the group, which the group (not the pod) controls; a claim whose
``status.reservedFor`` names the member's PodGroup (by name) is reserved for the member; PreBind
reserves such a claim for the PodGroup (``{apiGroup: scheduling.k8s.io, resource: podgroups,
name, uid}``), once for all members, past the 256-entry limit; Unreserve never takes the group's
reservation off, and PostFilter does, when no member is placed, so that the next attempt may
allocate anew. Whatever the gate, the members of one pod-group cycle share an allocation an
earlier member made in Reserve and PreBind has not written yet (upstream's pending allocations
of the cycle): they use it, on the nodes it allows, and the last of them to let go of it (PreBind
or Unreserve) takes it out of flight; a pod outside that cycle waits for it to be written.

This module assembles the plugin from its parts, one per job: :mod:`.args`, :mod:`.claims`,
:mod:`.state`, :mod:`.plugin_base` (what the parts share), :mod:`.prefilter`, :mod:`.filter`,
:mod:`.score`, :mod:`.postfilter`, :mod:`.reserve`, :mod:`.prebind`, :mod:`.events`; and
re-exports the names the plugin's callers and tests use.
"""

from __future__ import annotations

from kubesched.plugins.dynamicresources.args import (
    BINDING_GATES,
    BINDING_TIMEOUT_DEFAULT,
    FILTER_TIMEOUT_GATE,
    DynamicResourcesArgs,
    check_args,
    duration_seconds,
)
from kubesched.plugins.dynamicresources.claims import (
    FINALIZER,
    POD_GROUP_API_GROUP,
    POD_GROUP_RESOURCE,
    RESERVED_FOR_MAX_SIZE,
    WORKLOAD_CLAIMS_GATE,
    ClaimProblem,
    bind_to,
    reserved_for_pod,
)
from kubesched.plugins.dynamicresources.events import EventHints
from kubesched.plugins.dynamicresources.filter import Filtering
from kubesched.plugins.dynamicresources.plugin_base import BINDING_POLL_SECONDS
from kubesched.plugins.dynamicresources.postfilter import PostFiltering
from kubesched.plugins.dynamicresources.prebind import PreBinding
from kubesched.plugins.dynamicresources.prefilter import PreFiltering
from kubesched.plugins.dynamicresources.reserve import Reserving
from kubesched.plugins.dynamicresources.score import FIRST_AVAILABLE_MAX_SIZE, Scoring
from kubesched.plugins.dynamicresources.state import STATE_KEY

__all__ = [
    "BINDING_GATES",
    "BINDING_POLL_SECONDS",
    "BINDING_TIMEOUT_DEFAULT",
    "FILTER_TIMEOUT_GATE",
    "FINALIZER",
    "FIRST_AVAILABLE_MAX_SIZE",
    "POD_GROUP_API_GROUP",
    "POD_GROUP_RESOURCE",
    "RESERVED_FOR_MAX_SIZE",
    "STATE_KEY",
    "WORKLOAD_CLAIMS_GATE",
    "ClaimProblem",
    "DynamicResources",
    "DynamicResourcesArgs",
    "bind_to",
    "check_args",
    "duration_seconds",
    "reserved_for_pod",
]


class DynamicResources(PreFiltering, Filtering, Scoring, PostFiltering, Reserving, PreBinding, EventHints):
    name = "DynamicResources"

    Args = DynamicResourcesArgs
