"""Research on top of the simulator: trace replay with the FGD paper's protocol and metrics.

This package drives the simulator (:mod:`kubesched.sim`) as a user would and measures the cluster
from what it reports; it never reaches into the scheduler. One job per module:

* :mod:`.trace` reads node and pod lists (the openb CSV columns) and says which row is wrong;
* :mod:`.protocol` turns a workload into the sequence of arrivals (seeded shuffle, sampling with
  replacement up to ``ratio`` × cluster GPU capacity) or of creations and deletions (churn);
* :mod:`.gpushare` is the one door to the ``kubesched_gpushare`` plugin package: typical pods,
  fragmentation, and the configuration the replay hands to its plugins;
* :mod:`.metrics` keeps the cluster's GPU, CPU and memory use and fragmentation after every pod;
* :mod:`.grid` puts those samples on the artifact's grid (arrived 0..130 % of GPU capacity);
* :mod:`.configure` fixes in the configuration what the protocol fixes;
* :mod:`.replay` runs one experiment (:mod:`.collector` keeps the garbage collector from walking
  what it holds, over and over); :mod:`.compare` several configurations side by side;
  :mod:`.output` and :mod:`.plot` write what they found.
"""

from kubesched.research.errors import ReplayError
from kubesched.research.replay import ReplayOptions, ReplayResult, replay, run_replay

__all__ = ["ReplayError", "ReplayOptions", "ReplayResult", "replay", "run_replay"]
