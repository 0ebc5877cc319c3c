"""What every allocated claim holds, added up once and then kept up to date: PreFilter asks for
it on every attempt, and from one attempt to the next only a few claims change (one allocated,
a few deleted with their pods), while adding up two thousand claims anew was a quarter of a DRA
steady state's time. :class:`HeldSum` keeps counts beside the sums, so that taking a claim away
leaves exactly what adding up the others would give."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TypeVar

from kubesched.plugins.dynamicresources import capacity as cap
from kubesched.plugins.dynamicresources.allocator_types import AllocatedState, DeviceID

K = TypeVar("K")

#: The pools' version numbers (see ``AllocatedState.versions``): one count for every sum, so
#: that a number names one state of one pool in one sum.
_VERSIONS = itertools.count(1)


class HeldSum:
    """The sum of some claims' :class:`AllocatedState`, one per claim (see the module)."""

    def __init__(self) -> None:
        #: How many of the summed states use each device whole, share it, consume its capacity.
        self._whole: Counter[DeviceID] = Counter()
        self._shares: Counter[DeviceID] = Counter()
        self._consumers: Counter[DeviceID] = Counter()
        #: Per device: the capacity consumed, and how many states name each capacity. A device's
        #: dict is replaced, never changed, once a snapshot may hold it.
        self._consumed: dict[DeviceID, dict[str, cap.Exact]] = {}
        self._names: dict[DeviceID, Counter[str]] = {}
        #: What is summed: a key (the caller's) -> the state added under it.
        self.parts: dict[object, AllocatedState] = {}
        #: Per pool: the version of what its devices hold (see ``AllocatedState.versions``).
        self._versions: dict[tuple[str, str], int] = {}

    def update(self, parts: Mapping[object, AllocatedState]) -> None:
        """Make the sum that of ``parts``: the states no longer there (or another object now
        under their key) taken away, the new ones added."""
        for key in self.parts.keys() - parts.keys():
            self.put(key, None)
        for key, state in parts.items():
            self.put(key, state)

    def put(self, key: object, state: AllocatedState | None) -> None:
        """Make ``state`` the one summed under ``key`` (``None``: none), the one there before
        taken away."""
        old = self.parts.get(key)
        if old is state:
            return
        if old is not None:
            self._add(old, -1)
        if state is None:
            del self.parts[key]
        else:
            self.parts[key] = state
            self._add(state, 1)

    def snapshot(self) -> AllocatedState:
        """The sum now, as a state of its own (later updates do not change it)."""
        return AllocatedState(set(self._whole), set(self._shares), dict(self._consumed), dict(self._versions))

    def _add(self, state: AllocatedState, sign: int) -> None:
        versions = self._versions
        for devices in (state.devices, state.shared, state.consumed):
            for dev in devices:
                versions[dev[0], dev[1]] = next(_VERSIONS)
        _count(self._whole, state.devices, sign)
        _count(self._shares, state.shared, sign)
        _count(self._consumers, state.consumed, sign)
        for dev, amounts in state.consumed.items():
            if dev not in self._consumers:  # no summed state consumes any of it now
                self._consumed.pop(dev, None)
                self._names.pop(dev, None)
                continue
            names = self._names.setdefault(dev, Counter())
            _count(names, amounts, sign)
            total = dict(self._consumed.get(dev) or {})
            cap.add_to(total, amounts, sign)
            for name in amounts:
                if not names[name]:
                    del names[name]
                    total.pop(name, None)
            self._consumed[dev] = total


def _count(counts: Counter[K], keys: Iterable[K], sign: int) -> None:
    """Count ``keys`` in (``sign`` 1) or out (-1); a count that reaches 0 is no longer a key."""
    for key in keys:
        n = counts[key] + sign
        if n:
            counts[key] = n
        else:
            del counts[key]
