"""``pluginConfig`` args: scheduler-plugins' ``PreemptionTolerationArgs``, which is
kube-scheduler's ``DefaultPreemptionArgs`` under another name, defaulted and validated as that
(the face's :class:`kubesched.DefaultPreemptionArgs`):

* ``minCandidateNodesPercentage`` (default 10) and ``minCandidateNodesAbsolute`` (default 100):
  how many nodes the dry run gathers as candidates before it stops, the larger of the share of
  the potential nodes and the absolute number, at most all of them.

Refused, naming the field: a percentage outside [0, 100]
(``minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100]``), a negative
absolute number, and both zero at once.
"""

from __future__ import annotations

from kubesched import DefaultPreemptionArgs


class PreemptionTolerationArgs(DefaultPreemptionArgs):
    """The args of PreemptionToleration, defaults applied (see the module doc)."""
