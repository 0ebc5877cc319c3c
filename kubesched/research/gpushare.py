"""The one door to the ``kubesched_gpushare`` plugin package (plugins/gpushare).

A replay places pods on individual GPUs with the package's plugins and measures fragmentation
with its definition, so both sides read the same facts. Only the package's public functions are
used here; a missing package is reported with what to install.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, cast

from kubesched.research.errors import ReplayError
from kubesched.research.trace import TracePod

INSTALL_HINT = "pip install ./plugins/gpushare"
#: Plugins of the package whose args take a ``seed``: the replay's seed is handed to them.
SEEDED_PLUGINS = ("GpuShare", "RandomScore")
#: The plugin that measures fragmentation against the workload's typical pods.
FGD_PLUGIN = "FGD"
#: The annotation GpuShare writes at PreBind: the GPUs a pod got.
GPU_INDEX_ANNOTATION = "alibabacloud.com/gpu-index"


def require() -> ModuleType:
    """The imported package, or a :class:`ReplayError` saying how to install it."""
    try:
        import kubesched_gpushare
    except ImportError as exc:
        if exc.name not in (None, "kubesched_gpushare"):
            raise ReplayError(f"the gpushare plugin package could not be imported: {exc}") from None
        raise ReplayError(
            "kubesched replay places pods on GPUs and measures fragmentation with the gpushare plugin "
            f"package (kubesched-gpushare), which is not installed: {INSTALL_HINT}"
        ) from None
    return cast("ModuleType", kubesched_gpushare)


def typical_pods(pods: Sequence[TracePod]) -> list[Any]:
    """The workload's typical pods, built as the artifact builds them (from the workload as
    given, before any inflation)."""
    return list(require().typical_pods([p.obj for p in pods]))


def typical_pod_dicts(typical: Sequence[Any]) -> list[dict[str, Any]]:
    """The list as FGD's ``typicalPods`` args take it."""
    return [t.to_dict() for t in typical]


#: A node state's fragmentation, by the typical-pod list it is measured against: a function of
#: the two alone, kept for the process's next experiments (a sweep's worker measures one workload
#: under every configuration and seed, whose nodes pass through many of the same states).
_MEMOS: dict[tuple[Any, ...], tuple[Any, dict[tuple[str, int, tuple[int, ...]], float]]] = {}
#: Typical-pod lists whose memos are kept, and the states kept of one (then it starts afresh).
_MEMOS_KEPT = 4
_MEMO_STATES = 200_000


class Fragmentation:
    """A node's GPU fragmentation (milli-GPU) as the package defines it, against one typical-pod
    list; memoized by the node's state, as the artifact memoizes it (the memo shared by every
    measure of the same list in the process)."""

    def __init__(self, typical: Sequence[Any]) -> None:
        gs = require()
        if not typical:
            raise ReplayError("the workload has no typical pods: no pod to measure fragmentation against")
        key = tuple(typical)
        kept = _MEMOS.get(key)
        if kept is None:
            if len(_MEMOS) >= _MEMOS_KEPT:
                _MEMOS.clear()
            kept = _MEMOS[key] = (gs.TypicalPodTable(list(typical)), {})
        self._table, self._memo = kept
        self._node_gpus: Callable[..., Any] = gs.NodeGpus
        self._measure: Callable[[Any, Any], float] = gs.node_fragmentation

    def __call__(self, model: str, cpu_left: int, left: Sequence[int]) -> float:
        key = (model, cpu_left, tuple(left))
        value = self._memo.get(key)
        if value is None:
            node = self._node_gpus("", 0, model, list(left), cpu_left)
            value = float(self._measure(node, self._table))
            if len(self._memo) >= _MEMO_STATES:
                self._memo.clear()
            self._memo[key] = value
        return value


def gpus_taken(pod: dict[str, Any], count: int, milli: int, left: Sequence[int]) -> tuple[int, ...]:
    """The GPUs a bound pod holds: those GpuShare recorded on it, or else (a pod placed by a
    configuration without GpuShare) where best fit would put it — as the package counts such pods."""
    gs = require()
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    indices = gs.parse_indices(annotations.get(GPU_INDEX_ANNOTATION))
    wanted = 1 if milli < gs.MILLI else count
    if indices is not None and len(set(indices)) == wanted and all(0 <= i < len(left) for i in indices):
        return tuple(indices)
    if milli < gs.MILLI:
        one = gs.best_fit_gpu(left, milli)
        return () if one is None else (one,)
    return gs.whole_gpus(left, count) or ()


def hand_over(data: dict[str, Any], typical: Sequence[Any], seed: int) -> list[str]:
    """Give the configuration's plugins what the experiment decides: FGD the workload's typical
    pods (replacing any in the file), the seeded plugins the replay's seed. Returns what was
    changed, for the summary."""
    changed: list[str] = []
    typical_args = {"typicalPods": typical_pod_dicts(typical)}
    for i, profile in enumerate(data.get("profiles") or []):
        if not isinstance(profile, dict):
            continue
        enabled = _enabled_names(profile.get("plugins"))
        configs = profile.get("pluginConfig")
        if configs is None:
            configs = profile["pluginConfig"] = []
        if not isinstance(configs, list):
            continue
        named = {pc.get("name"): pc for pc in configs if isinstance(pc, dict)}
        if FGD_PLUGIN in enabled or FGD_PLUGIN in named:
            if FGD_PLUGIN not in named:
                named[FGD_PLUGIN] = {"name": FGD_PLUGIN}
                configs.append(named[FGD_PLUGIN])
            named[FGD_PLUGIN]["args"] = typical_args
            changed.append(f"profiles[{i}] {FGD_PLUGIN}: typicalPods of the workload ({len(typical)})")
        for name in SEEDED_PLUGINS:
            if name not in enabled and name not in named:
                continue
            pc = named.get(name)
            if pc is None:
                pc = {"name": name}
                configs.append(pc)
            args = pc.get("args")
            pc["args"] = {**(args if isinstance(args, dict) else {}), "seed": seed}
            changed.append(f"profiles[{i}] {name}: seed {seed}")
    return changed


def break_ties_by_node_order(profiles: Sequence[Any], seed: int) -> list[str]:
    """Break ties between equally scored nodes by a seeded node order, as the artifact's scheduler
    does (``selectHost`` of its kube-scheduler fork takes the first name, and names carry a seeded
    permutation): the package's NodeOrder and NodeOrderFine join each profile's scores, and the
    profile's own score weights are scaled so that they still decide alone wherever they differ.
    Works on the parsed profiles, whose score lists hold the default plugins too."""
    from kubesched.runtime.framework import PluginRef

    gs = require()
    changed: list[str] = []
    tie_breakers = (gs.NodeOrder.name, gs.NodeOrderFine.name)
    for spec in profiles:
        scores = [ref for ref in spec.plugins.get("score", []) if ref.name not in tie_breakers]
        spec.plugins["score"] = [
            *(PluginRef(ref.name, ref.weight * gs.NodeOrder.policy_factor) for ref in scores),
            PluginRef(gs.NodeOrder.name, gs.NodeOrder.weight),
            PluginRef(gs.NodeOrderFine.name, gs.NodeOrderFine.weight),
        ]
        pre_score = [ref for ref in spec.plugins.get("preScore", []) if ref.name not in tie_breakers]
        spec.plugins["preScore"] = [*pre_score, *(PluginRef(name) for name in tie_breakers)]
        for name in tie_breakers:
            spec.plugin_args[name] = gs.NodeOrderArgs(seed=seed)
        changed.append(f"{spec.scheduler_name}: ties broken by a node order of seed {seed} (NodeOrder, NodeOrderFine)")
    return changed


def _enabled_names(plugins: Any) -> set[str]:
    names: set[str] = set()
    if not isinstance(plugins, dict):
        return names
    for point in plugins.values():
        if isinstance(point, dict):
            for entry in point.get("enabled") or ():
                if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                    names.add(entry["name"])
    return names


__all__ = [
    "INSTALL_HINT",
    "Fragmentation",
    "break_ties_by_node_order",
    "gpus_taken",
    "hand_over",
    "require",
    "typical_pods",
]
