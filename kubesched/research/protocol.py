"""The FGD paper's experiment protocol: which pods arrive, in which order, and which leave.

As the artifact does it (hkust-adsl/kubernetes-scheduler-simulator: ``SortClusterPods``,
``TunePodsByNodeTotalResource``, ``tuneUpPods`` and ``tuneDownPods`` in pkg/simulator/simulator.go,
called in that order by ``Simulate`` in pkg/simulator/core.go, then the node order of
``syncClusterResourceList``), with one seeded random stream for the whole experiment:

1. the workload's pods, ordered by name, are shuffled;
2. while their GPU demand is below ``ratio`` × the cluster's GPU capacity, pods drawn with
   replacement from the workload (ordered by name) are appended, renamed ``<name>-tuned-<i>``;
   drawing stops at the first pod whose milli-GPU *per GPU* would take the total past the
   target (the artifact's test; the total itself adds each pod's full demand). Above the target,
   pods drawn at random are removed instead until it is reached;
3. the nodes are then put in a random order (the artifact renames them with a random prefix).

Nothing leaves the cluster in this protocol. :func:`churn_events` is the other one: the trace's
pods in the order they were created, each leaving at its deletion time, nothing drawn.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

from kubesched.research.errors import ReplayError
from kubesched.research.trace import TracePod

T = TypeVar("T")


@dataclass(frozen=True)
class Event:
    """A pod arriving (``create``) or leaving (``delete``); ``time`` in trace seconds for churn."""

    action: Literal["create", "delete"]
    pod: TracePod
    time: int | None = None


def inflated(pods: Sequence[TracePod], capacity_milli: int, ratio: float, rng: random.Random) -> list[TracePod]:
    """The arrivals of the protocol (steps 1 and 2 of the module docstring); ``ratio`` <= 0:
    the workload as it is, shuffled."""
    by_name = sorted(pods, key=lambda p: p.name)
    order = list(by_name)
    rng.shuffle(order)
    if ratio <= 0:
        return order
    if capacity_milli <= 0:
        raise ReplayError("the nodes have no GPU: nothing to inflate the workload against (give GPU nodes)")
    total = sum(p.total_gpu_milli for p in order)
    if total <= 0:
        raise ReplayError("the pods ask for no GPU: nothing to inflate to a share of the GPU capacity")
    target = ratio * capacity_milli
    if total > target:
        while total > target and order:
            total -= order.pop(rng.randrange(len(order))).total_gpu_milli
        return order
    i = 0
    while True:
        drawn = by_name[rng.randrange(len(by_name))]
        if total + drawn.gpu_milli > target:
            break
        total += drawn.total_gpu_milli
        order.append(drawn.renamed(f"{drawn.name}-tuned-{i}"))
        i += 1
    return order


def shuffled(items: Sequence[T], rng: random.Random) -> list[T]:
    """``items`` in a random order (step 3: the nodes)."""
    out = list(items)
    rng.shuffle(out)
    return out


def arrival_events(pods: Sequence[TracePod]) -> list[Event]:
    return [Event("create", p) for p in pods]


def churn_events(pods: Sequence[TracePod]) -> list[Event]:
    """Creations and deletions in trace time; at equal times the trace's order, a pod's creation
    before its deletion. A pod without a deletion time (or one not after its creation) stays."""
    timed: list[tuple[int, int, Event]] = []
    seq = 0
    for p in pods:
        if p.created is None:
            raise ReplayError(f"pod {p.name}: no creation_time, which churn needs")
        timed.append((p.created, seq, Event("create", p, p.created)))
        seq += 1
        if p.deleted is not None and p.deleted > p.created:
            timed.append((p.deleted, seq, Event("delete", p, p.deleted)))
            seq += 1
    timed.sort(key=lambda t: (t[0], t[1]))
    return [e for _, _, e in timed]


__all__ = ["Event", "arrival_events", "churn_events", "inflated", "shuffled"]
