"""Every shipped workload runs by ``kubesched bench``'s own runner
(:class:`kubesched.bench.ops.OpRunner`) on the in-memory cluster: ``python -m benchmarks.run -w``
(and ``--against``, ``--compare``) measures it as ``kubesched bench`` measures it, from the ops
of its one definition (the YAML case), under the configuration the catalogue names for it.

``--compare`` runs it twice, node by node and in batches (``batch``), and compares where the
pods went (``placements``: every pod the workload made, init and measured, churn aside)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from benchmarks import shipped
from benchmarks.backends.common import workload_config, workload_gates
from benchmarks.catalogue import Workload
from benchmarks.measure import Result

if TYPE_CHECKING:
    from kubesched.bench.model import Workload as YamlWorkload

#: How long the runner may take (its ``--timeout``): the slowest shipped sizes take minutes.
TIMEOUT_SECONDS = 1800.0


async def run_ops(
    w: Workload, backend: str = "memory", batch: bool = True, placements: dict[str, str] | None = None
) -> Result:
    """Run ``w`` (a shipped workload) once on ``backend`` from its YAML ops; its one measured
    window's :class:`Result` (named as ``w``). ``batch`` picks the scheduler's batch (columnar)
    or per-node Filter and Score; ``placements``, when given, receives each bound pod's node."""
    y = shipped.yaml_workload(w.name)
    result = await run_yaml(y, workload_config(w), workload_gates(w), backend, batch, placements)
    result.workload = w.name
    return result


async def run_yaml(
    yaml_workload: YamlWorkload,
    cfg: Any = None,
    gates: Any = None,
    backend: str = "memory",
    batch: bool = True,
    placements: dict[str, str] | None = None,
) -> Result:
    """Run ``yaml_workload`` once under ``cfg`` and ``gates`` (by default the workload's own
    gates and the default configuration under them); more than one measured window (a
    case that collects several) is an error naming them: ``kubesched bench`` reports each."""
    from kubesched.bench.ops import OpRunner
    from kubesched.bench.runner import pick_profile
    from kubesched.config import load_config
    from kubesched.framework.features import FeatureGates

    if gates is None:
        gates = FeatureGates(yaml_workload.feature_gates)
    if cfg is None:
        cfg = load_config(None, feature_gates=gates)
    runner = OpRunner(
        yaml_workload,
        cfg,
        pick_profile(cfg, None),
        gates,
        None,
        TIMEOUT_SECONDS,
        backend,
        batch=batch,
        placements=placements,
    )
    results = await runner.run()
    if len(results) != 1:
        windows = ", ".join(r.workload for r in results) or "none"
        raise RuntimeError(
            f"{yaml_workload.name}: {len(results)} measured windows ({windows}); run it with kubesched bench"
        )
    return results[0]


__all__ = ["TIMEOUT_SECONDS", "run_ops", "run_yaml"]
