"""Score: every Score plugin of a profile over the feasible nodes of one pod, then NormalizeScore,
the 0..100 check and the weights, as upstream's RunScorePlugins.

A plugin's batch form (``score_nodes``, ``normalize_scores``) is preferred when it has one and
does not decline; the per-node ``score`` and ``normalize_score`` stay the contract.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from kubesched.framework.interface import MAX_NODE_SCORE, MIN_NODE_SCORE, CycleState, NodeScore
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.calls import BoundMethod, plugin_error, split_result


class _ScoreStatusError(Exception):
    """A per-node Score returned a non-success status."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


async def run_score_plugins(
    plugins: Sequence[BoundMethod],
    normalizers: Mapping[str, BoundMethod],
    state: CycleState,
    pod: PodInfo,
    nodes: Sequence[NodeInfo],
    observer: Any = None,
    raw: dict[str, dict[str, int]] | None = None,
    final: dict[str, dict[str, int]] | None = None,
    raw_columns: dict[str, np.ndarray] | None = None,
) -> tuple[np.ndarray, Status | None]:
    """The weighted total per node of ``nodes`` (int64, in their order), or the error that ended
    scoring. ``normalizers`` are the plugins' bound ``normalize_score`` by plugin name;
    ``observer`` (sampled cycles only) gets one ``plugin_execution`` per node and plugin.
    ``raw``/``final``, when given, are filled with ``{node: {plugin: score}}`` before and after
    normalization and weight; ``raw_columns`` with each plugin's raw scores as one array."""
    totals = np.zeros(len(nodes), np.int64)
    skip = state.skip_score_plugins
    names: list[str] | None = None
    if raw is not None or final is not None:
        names = [ni.name for ni in nodes]
    #: Each plugin's normalized scores, for the 0..100 check.
    scored: list[tuple[BoundMethod, np.ndarray]] = []
    for b in plugins:
        if skip and b.name in skip:
            continue
        try:
            if observer is None:
                values = score_values(b, state, pod, nodes)
            else:
                t0 = time.perf_counter()
                values = score_values(b, state, pod, nodes)
                # One observation per node, as upstream records Score, whichever form ran.
                per_call = (time.perf_counter() - t0) / max(1, len(nodes))
                for _ in range(len(nodes)):
                    observer.plugin_execution(b.name, "Score", "Success", per_call)
        except _ScoreStatusError as err:
            return totals, Status.as_error(
                f'running Score plugins: plugin "{b.name}" failed with: {err.status.message()}', b.name
            )
        except Exception as exc:  # noqa: BLE001
            return totals, plugin_error("Score", b.name, exc)
        if raw is not None and names is not None:
            for name, v in zip(names, values.tolist()):
                raw.setdefault(name, {})[b.name] = v
        if raw_columns is not None:
            raw_columns[b.name] = np.array(values, dtype=np.int64)
        norm = normalizers.get(b.name)
        if norm is not None:
            # The batch form without a coroutine when it answers; else node by node.
            normalized = _batch_normalized(b, state, pod, values)
            if isinstance(normalized, Status):
                return totals, normalized
            if normalized is not None:
                values = normalized
            else:
                values, status = await _normalize_per_node(b, norm, state, pod, nodes, values)
                if status is not None:
                    return totals, status
        scored.append((b, values))
        w = b.weight
        if w == 1:
            totals += values
        else:
            totals += values * w
        if final is not None and names is not None:
            for name, v in zip(names, values.tolist()):
                final.setdefault(name, {})[b.name] = v * w
    # The 0..100 check after every plugin has scored, as upstream applies it with the weights
    # once Score and NormalizeScore have run for all.
    return totals, first_range_error(scored)


async def normalize_and_check(
    b: BoundMethod,
    norm: BoundMethod | None,
    state: CycleState,
    pod: PodInfo,
    nodes: Sequence[NodeInfo] | Sequence[str],
    values: np.ndarray,
) -> tuple[np.ndarray, Status | None]:
    """One plugin's raw scores over ``nodes`` (node infos or names) normalized by its
    NormalizeScore, if it has one, and held to 0..100; or the error, as upstream words it."""
    if norm is not None:
        normalized = _batch_normalized(b, state, pod, values)
        if isinstance(normalized, Status):
            return values, normalized
        if normalized is not None:
            values = normalized
        else:
            values, status = await _normalize_per_node(b, norm, state, pod, nodes, values)
            if status is not None:
                return values, status
    return values, range_error(b, values)


def _batch_normalized(
    b: BoundMethod, state: CycleState, pod: PodInfo, values: np.ndarray
) -> np.ndarray | Status | None:
    """``values`` normalized by the plugin's batch form (``normalize_scores``); ``None`` when it
    has none or it declines; the error when it raises."""
    batch_norm = getattr(b.plugin, "normalize_scores", None)
    if not callable(batch_norm):
        return None
    try:
        normalized = batch_norm(state, pod, values)
        return None if normalized is None else np.asarray(normalized, dtype=np.int64)
    except Exception as exc:  # noqa: BLE001
        return plugin_error("NormalizeScore", b.name, exc)


async def _normalize_per_node(
    b: BoundMethod,
    norm: BoundMethod,
    state: CycleState,
    pod: PodInfo,
    nodes: Sequence[NodeInfo] | Sequence[str],
    values: np.ndarray,
) -> tuple[np.ndarray, Status | None]:
    """``values`` normalized by the plugin's per-node NormalizeScore; or the error."""
    try:
        names = [ni if isinstance(ni, str) else ni.name for ni in nodes]
        scores = [NodeScore(name, v) for name, v in zip(names, values.tolist())]
        status = split_result(await norm.call(state, pod, scores))[1]
        values = np.fromiter((int(x.score) for x in scores), np.int64, len(scores))
    except Exception as exc:  # noqa: BLE001
        return values, plugin_error("NormalizeScore", b.name, exc)
    if status is not None and not status.is_success():
        return values, Status.as_error(
            f'running Normalize on Score plugins: plugin "{b.name}" failed with: {status.message()}', b.name
        )
    return values, None


#: The largest and smallest of an array, straight from the ufuncs (``ndarray.max`` goes through
#: Python wrappers first).
_largest = np.maximum.reduce
_smallest = np.minimum.reduce


def range_error(b: BoundMethod, values: np.ndarray) -> Status | None:
    """The error for a normalized score of ``b`` outside 0..100, as upstream words it; else None."""
    if len(values) and (_largest(values) > MAX_NODE_SCORE or _smallest(values) < MIN_NODE_SCORE):
        bad = int(values[(values > MAX_NODE_SCORE) | (values < MIN_NODE_SCORE)][0])
        return Status.as_error(
            f'applying score defaultWeights on Score plugins: plugin "{b.name}" returns an invalid score '
            f"{bad}, it should in the range of [{MIN_NODE_SCORE}, {MAX_NODE_SCORE}] after normalizing",
            b.name,
        )
    return None


def first_range_error(scored: Sequence[tuple[BoundMethod, np.ndarray]]) -> Status | None:
    """The error for the first plugin of ``scored`` whose normalized scores leave 0..100; else
    None. All plugins' scores are checked in one pass (one largest and one smallest), and only
    when one is out of range plugin by plugin, for the error to name the first."""
    if not scored:
        return None
    every = scored[0][1] if len(scored) == 1 else np.concatenate([v for _, v in scored])
    if not len(every) or (_largest(every) <= MAX_NODE_SCORE and _smallest(every) >= MIN_NODE_SCORE):
        return None
    for b, values in scored:
        status = range_error(b, values)
        if status is not None:
            return status
    return None


def score_values(b: BoundMethod, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]) -> np.ndarray:
    """One plugin's raw scores as int64: its batch form when it has one (and does not decline
    with ``None``), else node by node. Per-node results may be a bare int or ``(score, status)``."""
    values = b.batch(state, pod, nodes) if b.batch is not None else None
    if values is not None:
        if len(values) != len(nodes):
            raise ValueError(f"score_nodes returned {len(values)} scores for {len(nodes)} nodes")
        if isinstance(values, np.ndarray) and values.dtype.kind in "iub":
            return values.astype(np.int64, copy=False)
        return np.fromiter((int(v) for v in values), np.int64, len(nodes))
    fn = b.fn
    out = np.empty(len(nodes), np.int64)
    for i, ni in enumerate(nodes):
        v = fn(state, pod, ni)
        if type(v) is not int:
            if isinstance(v, tuple):
                v, status = v
                if status is not None and not status.is_success():
                    raise _ScoreStatusError(status)
            v = int(v)
        out[i] = v
    return out
