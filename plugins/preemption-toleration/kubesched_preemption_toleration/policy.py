"""The preemption toleration policy a PriorityClass carries in its annotations, and whether a pod
of that class is exempted from a preemption (scheduler-plugins'
``pkg/preemptiontoleration/preemption_toleration_policy.go`` and ``ExemptedFromPreemption``).

``preemption-toleration.scheduling.x-k8s.io/minimum-preemptable-priority``: the lowest priority
of a preemptor that may preempt pods of the class (default: the class's value + 1, so any higher
priority may). ``preemption-toleration.scheduling.x-k8s.io/toleration-seconds``: for how long
after being scheduled a pod of the class tolerates preemptors below that priority (default 0,
not at all; negative: for ever). Both are decimal integers (an optional sign, digits only); the
first must fit 32 bits, the second 64.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from kubesched import KubeschedError, PodInfo

log = logging.getLogger(__name__)

ANNOTATION_KEY_PREFIX = "preemption-toleration.scheduling.x-k8s.io/"
MINIMUM_PREEMPTABLE_PRIORITY = ANNOTATION_KEY_PREFIX + "minimum-preemptable-priority"
TOLERATION_SECONDS = ANNOTATION_KEY_PREFIX + "toleration-seconds"

_INTEGER = re.compile(r"[+-]?[0-9]+")


class PolicyError(KubeschedError):
    """An annotation of the policy is not an integer of its size (Go's ``strconv.ParseInt``
    message: ``strconv.ParseInt: parsing "a": invalid syntax`` or ``value out of range``)."""


class PriorityClassNotFound(KubeschedError):
    """A victim candidate names a PriorityClass the scheduler does not know."""

    def __init__(self, name: str) -> None:
        super().__init__(f'priorityclass.scheduling.k8s.io "{name}" not found')
        self.name = name


def parse_int(text: str, bits: int) -> int:
    """``strconv.ParseInt(text, 10, bits)``: a signed decimal integer within ``bits`` bits."""
    if not _INTEGER.fullmatch(text):
        raise PolicyError(f'strconv.ParseInt: parsing "{text}": invalid syntax')
    value = int(text)
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise PolicyError(f'strconv.ParseInt: parsing "{text}": value out of range')
    return value


@dataclass(frozen=True)
class Policy:
    """A PriorityClass's preemption toleration: preemptors from ``minimum_preemptable_priority``
    on may preempt its pods; those below may not for ``toleration_seconds`` after a pod was
    scheduled (negative: never)."""

    minimum_preemptable_priority: int
    toleration_seconds: int

    @classmethod
    def of(cls, priority_class: Mapping[str, Any]) -> Policy:
        """The policy of a PriorityClass object; raises :class:`PolicyError` for an annotation
        that is not an integer of its size."""
        annotations = (priority_class.get("metadata") or {}).get("annotations") or {}
        minimum = annotations.get(MINIMUM_PREEMPTABLE_PRIORITY)
        seconds = annotations.get(TOLERATION_SECONDS)
        return cls(
            int(priority_class.get("value") or 0) + 1 if minimum is None else parse_int(str(minimum), 32),
            0 if seconds is None else parse_int(str(seconds), 64),
        )


class PriorityClassLister(Protocol):
    """What reads PriorityClasses: the handle's ``listers`` (``get("PriorityClass", None, name)``)."""

    def get(self, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None: ...


def scheduled_at(pod: Mapping[str, Any]) -> float | None:
    """When the pod was scheduled (its ``PodScheduled=True`` condition's ``lastTransitionTime``,
    seconds since the epoch), or ``None`` without such a condition. A time that cannot be read
    counts as long ago (Go's zero time)."""
    for cond in (pod.get("status") or {}).get("conditions") or ():
        if cond.get("type") != "PodScheduled":
            continue
        if cond.get("status") != "True":
            return None
        try:
            return datetime.fromisoformat(str(cond.get("lastTransitionTime"))).timestamp()
        except ValueError:
            return float("-inf")
    return None


def exempted_from_preemption(
    victim: PodInfo, preemptor: PodInfo, priority_classes: PriorityClassLister, now: float
) -> bool:
    """Whether ``victim`` tolerates being preempted by ``preemptor`` at ``now`` (seconds since the
    epoch), by the policy of its PriorityClass (upstream's ``ExemptedFromPreemption``):

    * a victim without a PriorityClass tolerates nothing; one whose class is unknown raises
      :class:`PriorityClassNotFound`;
    * a preemptor with ``preemptionPolicy: Never`` preempts nobody;
    * a policy that cannot be read tolerates nothing (logged);
    * a preemptor of at least the minimum preemptable priority is tolerated by nobody;
    * below it: for ever with negative toleration seconds; while the victim is not scheduled
      (no ``PodScheduled=True``); else until its toleration seconds since being scheduled have
      passed.
    """
    name = (victim.pod.get("spec") or {}).get("priorityClassName") or ""
    if not name:
        return False
    priority_class = priority_classes.get("PriorityClass", None, name)
    if priority_class is None:
        raise PriorityClassNotFound(name)
    if preemptor.preemption_policy == "Never":
        return True
    try:
        policy = Policy.of(priority_class)
    except PolicyError as exc:
        log.error(
            "cannot read the preemption toleration policy of PriorityClass %s (victim candidate %s, preemptor %s): "
            "%s; the victim candidate does not tolerate the preemption",
            name,
            victim.key,
            preemptor.key,
            exc,
        )
        return False
    if preemptor.priority >= policy.minimum_preemptable_priority:
        return False
    if policy.toleration_seconds < 0:
        return True
    at = scheduled_at(victim.pod)
    if at is None:
        return True
    return at + policy.toleration_seconds > now
