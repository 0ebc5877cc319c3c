"""A random scheduler: a node passes with probability 1/2 and gets a random score.

Not useful for production, useful as the first thing to copy: two plugins, each a few lines
with the ``@filter`` and ``@score`` decorators of :mod:`kubesched`. Set ``RANDOM_SCHEDULER_SEED``
to make the draws reproducible: with a seed, each (pod, node) pair always gets the same answer;
without one, every call draws afresh.
"""

from __future__ import annotations

import os
import random

from kubesched import NodeInfo, PodInfo, filter, score

SEED_ENV = "RANDOM_SCHEDULER_SEED"


def draw(kind: str, pod: PodInfo, node: NodeInfo) -> float:
    """A number in [0, 1): seeded per (seed, kind, pod, node) when the seed is set."""
    seed = os.environ.get(SEED_ENV)
    if seed is None:
        return random.random()
    return random.Random(f"{seed}/{kind}/{pod.key}/{node.name}").random()


@filter
def random_predicate(pod: PodInfo, node: NodeInfo) -> bool:
    """A node passes with probability 1/2."""
    return draw("predicate", pod, node) < 0.5


@score
def random_priority(pod: PodInfo, node: NodeInfo) -> int:
    """A score drawn uniformly from 0..100."""
    return int(draw("priority", pod, node) * 101)
