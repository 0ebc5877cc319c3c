"""The PodGroup's ``PodGroupInitiallyScheduled`` condition, which the scheduler keeps (1.37):
True/``Scheduled`` once a cycle placed the group, False/``Unschedulable`` with the group's
reason, False/``SchedulerError`` with the error. Once True it is never set back to False.

The write is a side task on the status subresource, with ``observedGeneration``. It is built
from the newest PodGroup the informers delivered; when the API answers Conflict (the object moved
on meanwhile: a controller wrote it), it waits for the newer version and tries again, a few times.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from collections.abc import Callable
from typing import Any

from kubesched.cluster.base import ClusterError, Conflict, NotFound
from kubesched.cluster.store import now_rfc3339
from kubesched.framework.podgroup import PodGroupView
from kubesched.objects import Obj

log = logging.getLogger("kubesched.scheduler")

INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"

#: Tries after a Conflict, and the pause before each (for the informer to deliver the newer one).
CONFLICT_RETRIES = 5
CONFLICT_PAUSE = 0.1


def with_condition(obj: Obj, value: str, reason: str, message: str) -> Obj | None:
    """``obj`` with its condition set so, or ``None`` when nothing is to be written (it says so
    already, or it is True and stays True)."""
    view = PodGroupView(obj)
    conditions = view.conditions
    old = next((c for c in conditions if c.get("type") == INITIALLY_SCHEDULED), None)
    if old is not None:
        if old.get("status") == "True":
            return None
        if (old.get("status"), old.get("reason"), old.get("message")) == (value, reason, message):
            return None
    cond: Obj = {
        "type": INITIALLY_SCHEDULED,
        "status": value,
        "reason": reason,
        "message": message,
        "lastTransitionTime": old.get("lastTransitionTime")
        if old is not None and old.get("status") == value
        else now_rfc3339(),
    }
    generation = view.generation
    if generation is not None:
        cond["observedGeneration"] = generation
    new = copy.deepcopy(obj)
    new.setdefault("status", {})["conditions"] = [
        *(c for c in conditions if c.get("type") != INITIALLY_SCHEDULED),
        cond,
    ]
    return new


async def write_condition(
    cluster: Any, latest: Callable[[], Obj | None], value: str, reason: str, message: str
) -> None:
    """Write the condition on the PodGroup ``latest()`` returns (``None``: it is gone)."""
    for attempt in range(CONFLICT_RETRIES + 1):
        obj = latest()
        if obj is None:
            return
        new = with_condition(obj, value, reason, message)
        if new is None:
            return
        try:
            await cluster.update_object("PodGroup", new, subresource="status")
            return
        except NotFound:
            return
        except Conflict:
            if attempt == CONFLICT_RETRIES:
                _warn(new, "it kept changing meanwhile")
                return
            await asyncio.sleep(CONFLICT_PAUSE * (attempt + 1))
        except ClusterError as exc:
            _warn(new, str(exc))
            return


def _warn(obj: Obj, why: str) -> None:
    meta = PodGroupView(obj).metadata
    log.warning(
        "could not set the %s condition of pod group %s/%s: %s",
        INITIALLY_SCHEDULED,
        meta.get("namespace"),
        meta.get("name"),
        why,
    )
