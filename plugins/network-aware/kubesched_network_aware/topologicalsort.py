"""TopologicalSort: a QueueSort that schedules the pods of one AppGroup in its topology order.

scheduler-plugins' plugin of that name (``pkg/networkaware/topologicalsort``). ``less(a, b)``:

* pods of different AppGroups, or without one (the ``appgroup.diktyo.x-k8s.io`` label absent
  or empty), go by the default order, PrioritySort's: higher ``spec.priority`` first, then the
  one that entered the queue first;
* two pods of the same AppGroup go by the index of their workloads
  (``appgroup.diktyo.x-k8s.io.workload``) in the AppGroup's ``status.topologyOrder``, lower
  first, and ``a`` before ``b`` when the indexes are equal (upstream's ``<=``); a workload the
  order does not list has index -1.

The AppGroup is the first found in the configured ``namespaces``, read through the scheduler's
informer for ``appgroups.v1alpha1.appgroup.diktyo.x-k8s.io``. When none is found upstream
dereferences a missing object; here the two pods go by the default order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kubesched import Handle, QueuedPodInfo

from .appgroup import (
    APP_GROUP_LABEL,
    APP_GROUP_SELECTOR_LABEL,
    APP_GROUPS,
    find_in_namespaces,
    find_pod_order,
    topology_order_of,
)
from .args import TopologicalSortArgs

NAME = "TopologicalSort"


def priority_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    """The default queue order (upstream's PrioritySort): priority, then time in the queue."""
    p1, p2 = a.pod_info.priority, b.pod_info.priority
    return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)


class TopologicalSort:
    """QueueSort by the AppGroup's topology order (see the module doc)."""

    name = NAME
    Args = TopologicalSortArgs

    def __init__(self, args: TopologicalSortArgs | None = None, handle: Handle | None = None) -> None:
        self.args = args if args is not None else TopologicalSortArgs.model_validate({})
        self.namespaces = list(self.args.namespaces)
        self.handle = handle
        #: AppGroups by (namespace, name), for a handle without informers.
        self.objects: dict[tuple[str, str], Mapping[str, Any]] = {}
        self._lister: Any = None
        informer_for = getattr(handle, "informer_for", None)
        if informer_for is not None:
            self._lister = informer_for(APP_GROUPS).lister

    def _get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        if self._lister is not None:
            found: Mapping[str, Any] | None = self._lister.get(namespace, name)
            return found
        return self.objects.get((namespace, name))

    def app_group(self, name: str) -> Mapping[str, Any] | None:
        """The AppGroup ``name``, from the first configured namespace that has one."""
        return find_in_namespaces(self._get, self.namespaces, name)

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        g1 = a.pod_info.labels.get(APP_GROUP_LABEL) or ""
        g2 = b.pod_info.labels.get(APP_GROUP_LABEL) or ""
        if g1 != g2 or not g1:
            return priority_less(a, b)
        app_group = self.app_group(g1)
        if app_group is None:
            return priority_less(a, b)
        order = topology_order_of(app_group)
        o1 = find_pod_order(order, a.pod_info.labels.get(APP_GROUP_SELECTOR_LABEL) or "")
        o2 = find_pod_order(order, b.pod_info.labels.get(APP_GROUP_SELECTOR_LABEL) or "")
        return o1 <= o2
