"""The configuration an experiment runs: the user's file, with what the protocol fixes.

* ``percentageOfNodesToScore: 100`` — every feasible node is scored, as in the paper's runs;
* FGD gets the typical pods of the workload being replayed, and the seeded plugins the
  experiment's seed (:func:`kubesched.research.gpushare.hand_over`);
* ties between equally scored nodes go to the first in a seeded node order, as the artifact's
  scheduler breaks them (:func:`kubesched.research.gpushare.break_ties_by_node_order`);
* no preemption: the trace's pods share one priority, so it could never find a victim
  (:func:`without_preemption`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from kubesched.config import CONFIG_LIMITS, ConfigError, SchedulerConfig, parse_config
from kubesched.decoding import DecodeError, load_yaml_or_json, read_text
from kubesched.research import gpushare
from kubesched.research.errors import ReplayError
from kubesched.runtime.registry import RegistryError

PERCENTAGE_OF_NODES_TO_SCORE = 100
PREEMPTION = "DefaultPreemption"


def experiment_config(path: Path, typical: Sequence[Any], seed: int) -> tuple[SchedulerConfig, list[str]]:
    """The parsed configuration, and what the experiment changed in it."""
    try:
        text = read_text(path, CONFIG_LIMITS.max_bytes)
    except OSError as exc:
        raise ReplayError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except DecodeError as exc:
        raise ReplayError(f"{path}: {exc}") from None
    try:
        data = load_yaml_or_json(text, CONFIG_LIMITS)
    except (yaml.YAMLError, DecodeError) as exc:
        raise ReplayError(f"{path}: not valid YAML or JSON: {exc}") from None
    changed: list[str] = []
    if isinstance(data, dict):
        if data.get("percentageOfNodesToScore") != PERCENTAGE_OF_NODES_TO_SCORE:
            changed.append(f"percentageOfNodesToScore: {PERCENTAGE_OF_NODES_TO_SCORE}")
        data["percentageOfNodesToScore"] = PERCENTAGE_OF_NODES_TO_SCORE
        for profile in data.get("profiles") or []:
            if isinstance(profile, dict) and profile.get("percentageOfNodesToScore") is not None:
                profile["percentageOfNodesToScore"] = PERCENTAGE_OF_NODES_TO_SCORE
        changed += gpushare.hand_over(data, typical, seed)
    try:
        cfg = parse_config(data, source=str(path))
    except (ConfigError, RegistryError) as exc:
        raise ReplayError(str(exc)) from None
    changed += gpushare.break_ties_by_node_order(cfg.profiles, seed)
    changed += without_preemption(cfg)
    return cfg, changed


def without_preemption(cfg: SchedulerConfig) -> list[str]:
    """Take DefaultPreemption out of PostFilter. Every pod of a trace has the same priority, and
    preemption only ever evicts pods of a lower one: it can find no victim, so leaving it out
    changes no decision; it only saves its dry run over every node for each pod that does not fit."""
    changed: list[str] = []
    for spec in cfg.profiles:
        kept = [ref for ref in spec.plugins.get("postFilter", []) if ref.name != PREEMPTION]
        if len(kept) != len(spec.plugins.get("postFilter", [])):
            spec.plugins["postFilter"] = kept
            changed.append(f"{spec.scheduler_name}: postFilter {PREEMPTION} off (the pods all have one priority)")
    return changed


__all__ = ["PERCENTAGE_OF_NODES_TO_SCORE", "experiment_config", "without_preemption"]
