"""``kubesched bench``: how fast the scheduler is with your configuration and plugins, on
workloads in upstream scheduler_perf's format.

* :mod:`.workload`: workload files read and checked (the shipped ones in ``workloads/``);
* :mod:`.measure`: what a run measures (pods/s, attempt latency percentiles, peak RSS, loop lag);
* :mod:`.ops`: a workload's ops run against a scheduler on the in-memory cluster;
* :mod:`.runner`: a workload under one profile, in a process of its own;
* :mod:`.report`: the results table.

``python -m benchmarks.run`` (the repository's benchmarks) measures and reports with the same
:mod:`.measure` and :mod:`.report`.
"""
