"""Several configurations on one scenario (a ``simulate`` YAML), side by side.

Each configuration runs the scenario through :func:`kubesched.sim.run.simulate.simulate` once per
seed (the seed breaks ties between equal nodes). A pod (or a workload's pod template) whose
``schedulerName`` is not a profile of the configuration is given the configuration's first
profile, so that configurations with differently named profiles are compared on the same pods. Averaged over the seeds:

* allocation of each resource the nodes offer (requested / allocatable, all nodes, percent);
* pods placed, not placed (by the kind of their owner: Deployment pods count as ReplicaSet, a
  bare pod as Pod) and in error;
* spread: nodes with any pod, the standard deviation of the nodes' CPU allocation, and the skew
  of placed pods over zones (``topology.kubernetes.io/zone``: most minus fewest; none without
  zones).
* with PodGroups in the scenario: how many were placed whole and how many held (needs the
  feature gate GenericWorkload, as ``simulate``).
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubesched.config import ConfigError, SchedulerConfig, load_config
from kubesched.framework.features import FeatureGates
from kubesched.research.errors import ReplayError
from kubesched.runtime.registry import RegistryError
from kubesched.sim.run.simulate import SimulationResult, SimulationSettings, simulate
from kubesched.sim.scenario.reading import Scenario, ScenarioError, load_scenario

ZONE_LABEL = "topology.kubernetes.io/zone"
#: Node resources that are counts of things, not capacity to allocate.
NOT_ALLOCATED = ("pods",)


@dataclass
class ScenarioCompared:
    name: str
    config: Path
    seeds: list[int]
    metrics: dict[str, Any]
    unscheduled_by_kind: dict[str, float]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "config": str(self.config),
            "seeds": self.seeds,
            "metrics": self.metrics,
            "unscheduledByKind": self.unscheduled_by_kind,
        }


def _pct(part: float, whole: float) -> float | None:
    return round(100.0 * part / whole, 2) if whole else None


def measure(result: SimulationResult) -> tuple[dict[str, Any], Counter[str]]:
    """The metrics of one run (see the module docstring), and its pods without a node by kind."""
    metrics: dict[str, Any] = {}
    allocatable: Counter[str] = Counter()
    requested: Counter[str] = Counter()
    for node in result.nodes:
        allocatable.update({k: v for k, v in node["allocatable"].items() if k not in NOT_ALLOCATED})
        requested.update({k: v for k, v in node["requested"].items() if k not in NOT_ALLOCATED})
    for resource in sorted(allocatable, key=lambda r: (r not in ("cpu", "memory"), r)):
        metrics[f"allocation:{resource}"] = _pct(requested.get(resource, 0), allocatable[resource])
    s = result.summary
    metrics["scheduled"] = s["scheduled"]
    metrics["unschedulable"] = s["unschedulable"]
    metrics["errors"] = s["errors"]
    cpu = [n["cpuPercent"] for n in result.nodes]
    mean = sum(cpu) / len(cpu) if cpu else 0.0
    metrics["nodesUsed"] = sum(1 for n in result.nodes if n["pods"] > 0)
    metrics["nodeCpuAllocationStdev"] = round((sum((c - mean) ** 2 for c in cpu) / len(cpu)) ** 0.5, 2) if cpu else None
    zones = {}
    for node in result.store.list("Node")[0]:
        zone = (node["metadata"].get("labels") or {}).get(ZONE_LABEL)
        if zone:
            zones[node["metadata"]["name"]] = zone
    placed: Counter[str] = Counter({z: 0 for z in set(zones.values())})
    kinds: Counter[str] = Counter()
    for pod in result.pods:
        if pod["node"] and pod["node"] in zones:
            placed[zones[pod["node"]]] += 1
        if pod["phase"] == "Unschedulable":
            kinds[_owner_kind(result, pod)] += 1
    metrics["zoneSkew"] = max(placed.values()) - min(placed.values()) if placed else None
    groups = s.get("podGroups")
    if groups and groups["ignored"] < groups["total"]:  # none to count with GenericWorkload off
        metrics["podGroupsPlaced"] = groups["placed"]
        metrics["podGroupsHeld"] = groups["held"]
    return metrics, kinds


def _owner_kind(result: SimulationResult, pod: dict[str, Any]) -> str:
    try:
        live = result.store.get("Pod", pod["namespace"], pod["name"])
    except Exception:  # noqa: BLE001 - deleted during the run (a preemption victim)
        return "Pod"
    owners = live["metadata"].get("ownerReferences") or []
    return str(owners[0].get("kind") or "Pod") if owners else "Pod"


def _for_config(scenario: Scenario, cfg: SchedulerConfig) -> Scenario:
    """The scenario with every pod (and pod template of a workload) of an unknown schedulerName
    given the first profile, those its steps create included."""
    names = {p.scheduler_name for p in cfg.profiles}
    first = cfg.profiles[0].scheduler_name
    out = copy.deepcopy(scenario)  # simulate admits pods in place

    def assign(spec: Any) -> None:
        if isinstance(spec, dict) and (spec.get("schedulerName") or "default-scheduler") not in names:
            spec["schedulerName"] = first

    # A scenario in time (a recording, say) brings pods and workloads in its steps too.
    for part in [out, *(step.scenario for step in out.steps if step.scenario is not None)]:
        for pod in part.pending_pods:
            assign(pod.get("spec"))
        for obj in part.others:
            template = ((obj.get("spec") or {}).get("template") or {}) if isinstance(obj, dict) else {}
            assign(template.get("spec"))
    return out


def _mean(values: Sequence[Any]) -> float | None:
    kept = [v for v in values if v is not None]
    return round(sum(kept) / len(kept), 2) if kept else None


async def compare_scenario(
    path: Path, configs: Sequence[Path], seeds: Sequence[int], feature_gates: FeatureGates | None = None
) -> list[ScenarioCompared]:
    if not configs or not seeds:
        raise ReplayError("compare needs at least one configuration and one seed")
    try:
        scenario = load_scenario(path, feature_gates or FeatureGates())
    except ScenarioError as exc:
        raise ReplayError(str(exc)) from None
    out: list[ScenarioCompared] = []
    seen: set[str] = set()
    for config in configs:
        try:
            cfg = load_config(config, feature_gates=feature_gates)
        except (ConfigError, RegistryError) as exc:
            raise ReplayError(str(exc)) from None
        runs: list[dict[str, Any]] = []
        kinds: list[Counter[str]] = []
        for seed in seeds:
            settings = SimulationSettings(
                parallelism=cfg.model.parallelism,
                percentage_of_nodes_to_score=cfg.model.percentageOfNodesToScore,
                seed=seed,
                plugin_results=False,
                feature_gates=feature_gates or FeatureGates(),
            )
            result = await simulate(cfg.profiles, _for_config(scenario, cfg), settings)
            metrics, by_kind = measure(result)
            runs.append(metrics)
            kinds.append(by_kind)
        keys = list(dict.fromkeys(k for run in runs for k in run))
        name = config.stem if config.stem not in seen else str(config)
        seen.add(name)
        all_kinds = sorted({k for c in kinds for k in c})
        out.append(
            ScenarioCompared(
                name,
                config,
                list(seeds),
                {k: _mean([run.get(k) for run in runs]) for k in keys},
                {k: _mean([c.get(k, 0) for c in kinds]) or 0.0 for k in all_kinds},
            )
        )
    return out


__all__ = ["ScenarioCompared", "compare_scenario", "measure"]
