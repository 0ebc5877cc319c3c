"""A shipped workload whose ops the catalogue's backends do not build (allocResourceClaims, steady
states, barriers, deletes, several measured windows' worth of ops): run once, in this process, by
``kubesched bench``'s own runner (:class:`kubesched.bench.ops.OpRunner`) on either backend, so that
``python -m benchmarks.run -w`` (and ``--against``) takes every workload ``kubesched bench``
ships, measured as ``kubesched bench`` measures it.

One path only: the runner has no node-by-node twin of its batches and reports no placements, so
``--compare`` does not take these workloads."""

from __future__ import annotations

from benchmarks import shipped
from benchmarks.catalogue import Workload
from benchmarks.measure import Result

#: How long the runner may take (its ``--timeout``): the slowest shipped sizes take minutes.
TIMEOUT_SECONDS = 1800.0


async def run_ops(w: Workload, backend: str = "memory") -> Result:
    """Run ``w`` (a workload the catalogue reads as its ops, :attr:`Workload.by_ops`) once on
    ``backend``; its one measured window's :class:`Result`. More than one window (a case that
    collects several) is an error naming them: ``kubesched bench`` reports each."""
    from kubesched.bench.ops import OpRunner
    from kubesched.bench.runner import default_subject
    from kubesched.framework.features import FeatureGates

    yaml_workload = shipped.yaml_workload(w.name)
    gates = FeatureGates(yaml_workload.feature_gates)
    cfg, profile = default_subject().load(gates)
    results = await OpRunner(yaml_workload, cfg, profile, gates, None, TIMEOUT_SECONDS, backend).run()
    if len(results) != 1:
        windows = ", ".join(r.workload for r in results) or "none"
        raise RuntimeError(f"{w.name}: {len(results)} measured windows ({windows}); run it with kubesched bench")
    result = results[0]
    result.workload = w.name
    return result
