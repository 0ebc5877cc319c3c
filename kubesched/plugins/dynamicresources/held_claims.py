"""What every allocated claim holds, as PreFilter asks for it on every attempt:
:class:`HeldClaims`. Three sources, the later ones counted in place of the earlier for a claim
in more than one: the claims the informer lists, the claims PreBind wrote that the informer has
not caught up with (assumed), and the allocations between Reserve and PreBind (in flight).

The informer's claims are thousands in a DRA steady state, and from one attempt to the next a
few change. Where the listers say which claims changed (:class:`ListerChanges`), only those are
looked at again; what each holds is worked out once per version of the claim (an updated claim
is a new object), and the sum over all of them is kept (:class:`~.held_sum.HeldSum`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kubesched.framework.interface import ListerChanges
from kubesched.objects import Obj, object_key
from kubesched.plugins.dynamicresources.allocator_types import AllocatedState
from kubesched.plugins.dynamicresources.claims import allocation_of, uid_of
from kubesched.plugins.dynamicresources.held_sum import HeldSum

#: A claim's part of the sum: the claim, its allocation, what it holds, its uid.
Part = tuple[Obj, Obj, AllocatedState, str]


class HeldClaims:
    """The sum of what allocated claims hold, kept from one attempt to the next (see the module)."""

    def __init__(self) -> None:
        self._sum = HeldSum()
        #: Where the informer's claims were last looked at (``ListerChanges.changes``).
        self._since: int | None = None
        #: The informer's allocated claims by key, and their keys by uid (one, but for a copy
        #: listed under two names).
        self._listed: dict[str, Part] = {}
        self._keys: dict[str, set[str]] = {}
        #: The informer's claims left out of the sum (an assumed or in-flight one counts instead).
        self._left_out: set[str] = set()
        #: The assumed claims' parts by uid, and the parts summed besides the informer's claims.
        self._assumed: dict[str, Part] = {}
        self._others: dict[object, AllocatedState] = {}

    def state(
        self,
        listers: Any,
        assumed: Iterable[tuple[str, Obj]],
        in_flight: Iterable[Obj],
        consumable: bool,
    ) -> AllocatedState:
        """What they hold now: ``listers`` has the informer's claims, ``assumed`` is (uid,
        claim) of the claims PreBind wrote still needed over the informer's copy, ``in_flight``
        the claims allocated between Reserve and PreBind; ``consumable``: DRAConsumableCapacity."""
        changed = self._look(listers, consumable)
        seen: set[str] = set()
        others: dict[object, AllocatedState] = {}
        flying = AllocatedState()
        for claim in in_flight:
            seen.add(uid_of(claim))
            for r in ((allocation_of(claim) or {}).get("devices") or {}).get("results") or ():
                flying.add_result(r, consumable)
        others["in flight"] = flying  # made anew each attempt: taken away and added again
        kept, self._assumed = self._assumed, {}
        for uid, claim in assumed:
            if uid in seen:
                continue
            seen.add(uid)
            allocation = allocation_of(claim)
            if allocation is not None:
                part = self._assumed[uid] = _part(claim, allocation, consumable, kept.get(uid))
                others[("assumed", uid)] = part[2]
        total = self._sum
        left_out = {key for uid in seen for key in self._keys.get(uid, ())}
        for key in changed | left_out | self._left_out:
            mine = None if key in left_out else self._listed.get(key)
            total.put(("listed", key), None if mine is None else mine[2])
        self._left_out = left_out
        for gone in self._others.keys() - others.keys():
            total.put(gone, None)
        for other, held in others.items():
            total.put(other, held)
        self._others = others
        return total.snapshot()

    def _look(self, listers: Any, consumable: bool) -> set[str]:
        """Bring the informer's claims up to date; the keys of those that changed."""
        keys = None
        if isinstance(listers, ListerChanges):
            self._since, keys = listers.changes("ResourceClaim", self._since)
        listed = self._listed
        if keys is None:  # every claim looked at again
            fresh: dict[str, Part] = {}
            for claim in listers.list("ResourceClaim"):
                allocation = allocation_of(claim)
                if allocation is not None:
                    key = object_key(claim)
                    fresh[key] = _part(claim, allocation, consumable, listed.get(key))
            changed = listed.keys() | fresh.keys()
            self._listed = fresh
            self._keys = {}
            for key, part in fresh.items():
                self._keys.setdefault(part[3], set()).add(key)
            return changed
        for key in keys:
            namespace, _, name = key.rpartition("/")
            claim = listers.get("ResourceClaim", namespace or None, name)
            allocation = None if claim is None else allocation_of(claim)
            old = listed.get(key)
            if old is not None:
                named = self._keys[old[3]]
                named.discard(key)
                if not named:
                    del self._keys[old[3]]
            if claim is None or allocation is None:
                listed.pop(key, None)
                continue
            part = listed[key] = _part(claim, allocation, consumable, old)
            self._keys.setdefault(part[3], set()).add(key)
        return set(keys)


def _part(claim: Obj, allocation: Obj, consumable: bool, old: Part | None) -> Part:
    """The claim's part of the sum: ``old`` where it is of this version of the claim."""
    if old is not None and old[0] is claim and old[1] is allocation:
        return old
    return claim, allocation, AllocatedState.from_claims((claim,), consumable), uid_of(claim)
