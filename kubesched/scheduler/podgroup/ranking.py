"""The order a pod group's placements are evaluated in when their scores can be bounded, and
why the first one where the whole group fits may be taken without evaluating the others.

Upstream evaluates every placement (each member's pod cycle within it), scores the feasible ones
with the PlacementScore plugins and takes the highest total, ties broken at random. With
topology-aware scheduling that is one evaluation per rack or zone for every group, however
plainly the first one wins. When every PlacementScore plugin of the profile gives bounds
(:class:`~kubesched.framework.interface.PlacementScoreBounds`) -- the highest total a placement
can score, reached exactly when every member lands on it, and one plugin promising that a
placement holding only some of them scores below its bound -- the same choice is made with far
fewer evaluations:

1. Placements are taken highest bound first; placements of one bound in a uniformly random
   order (:func:`ranked`, drawn from the cycle's random generator as they are taken).
2. The first placement evaluated where the group fits with every member placed is taken, as long
   as no placement evaluated before it was feasible at all. Its total is its bound ``b``. Every
   placement of a lower bound scores below ``b``; every one evaluated before it was infeasible;
   of the rest of its own bound, those where every member fits score ``b`` (ties) and those
   where only some do score below ``b``. So the placements upstream would choose among are
   exactly those of bound ``b`` where the whole group fits, and the first of them in a
   uniformly random order is a uniformly random one of them: the choice upstream's tie-break
   makes, with the same chances.
3. A placement that is feasible with only some members placed ends the shortcut: the rest are
   evaluated and every feasible one scored, as upstream does.

What differs from evaluating them all is what is never looked at: the placements skipped are
neither evaluated nor counted as evaluations (the generated count stays whole), a plugin error
in one of them is not met, and the random numbers drawn differ, so a seeded run places groups
as validly but not on the same racks as without bounds.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence


def ranked(bounds: Sequence[int], rng: random.Random) -> Iterator[int]:
    """Indices into ``bounds``, highest bound first; those of one bound in a uniformly random
    order, each drawn when it is taken (a consumer that stops early draws no more)."""
    by_bound: dict[int, list[int]] = {}
    for i, b in enumerate(bounds):
        by_bound.setdefault(b, []).append(i)
    for b in sorted(by_bound, reverse=True):
        pool = by_bound[b]
        while pool:
            if len(pool) > 1:
                j = rng.randrange(len(pool))
                pool[j], pool[-1] = pool[-1], pool[j]
            yield pool.pop()
