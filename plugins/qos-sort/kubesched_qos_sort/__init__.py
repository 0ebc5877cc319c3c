"""QOSSort: order the scheduling queue by priority, then QoS class, then creation time.

The scheduler-plugins project's QOSSort idea: among pods of equal priority, schedule the ones
with the strongest resource guarantees first (Guaranteed > Burstable > BestEffort), and among
those the oldest first. Enable it in a profile (profiles with another QueueSort keep their own
order; kubesched takes pods from the differently sorted queues in turn)::

    profiles:
      - schedulerName: default-scheduler
        plugins:
          queueSort:
            enabled: [{name: QOSSort}]
            disabled: [{name: "*"}]
"""

from __future__ import annotations

from typing import Any

from kubesched import QueuedPodInfo

_QOS_RANK = {"Guaranteed": 2, "Burstable": 1, "BestEffort": 0}


class QOSSort:
    name = "QOSSort"

    def __init__(self, args: Any, handle: Any) -> None:
        self.handle = handle

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        pa, pb = a.pod_info, b.pod_info
        if pa.priority != pb.priority:
            return pa.priority > pb.priority
        qa, qb = _QOS_RANK[pa.qos_class], _QOS_RANK[pb.qos_class]
        if qa != qb:
            return qa > qb
        if pa.creation != pb.creation:
            return pa.creation < pb.creation
        return a.timestamp < b.timestamp
