"""kubesched's benchmarks: ``python -m benchmarks.run`` (scheduler_perf-shaped workloads) and
``python -m benchmarks.soak`` (real processes, faults, a killed leader).

One job per module, each importing only those above it in this list:

* :mod:`.shipped`: the workloads ``kubesched bench`` ships (``kubesched/bench/workloads/*.yaml``,
  their one definition), read for the catalogue; upstream's default node and pod;
* :mod:`.catalogue`: the workloads, each a shipped case's size, and how this command runs it;
* :mod:`.measure`: a run's :class:`~benchmarks.measure.Result`, which is
  :mod:`kubesched.bench.measure`'s (``kubesched bench``'s runner measures every run);
* :mod:`.backends`: the two ways to run a workload once, in-memory and over HTTP, both by
  ``kubesched bench``'s runner;
* :mod:`.launch`: where it runs (this process, or a fresh interpreter);
* :mod:`.compare`: the per-node and the batch path back to back, placements compared;
* :mod:`.report`: tables (the results table is :mod:`kubesched.bench.report`'s), JSON, the
  saved file; :mod:`.cli`: the command line;
* :mod:`.run`: parses with :mod:`.cli` and dispatches. :mod:`.soak` is a package of its own.

Run from the repository root (``python -m``), so ``benchmarks`` imports as a package.
"""
