"""A sweep: a grid of experiments declared once, each an independent function of its inputs and
its seed, run on an engine (:mod:`.engines`) and gathered into one table (:mod:`.sweep_output`).

The grid is data: one node list, workloads (pod lists), configurations, inflation ratios and
seeds, given as command-line flags or a small YAML file (:func:`load_grid_file`); the
experiments are its product. An experiment is named by the pod list's file stem (the workload,
``openb_pod_list_default``), the configuration's file stem (the policy, ``FGD``), the inflation
and the seed; stems must therefore be unique within a grid.

:func:`run_experiment` is what a worker runs: the input files travel with it as bytes (read
once here, shipped once per cluster worker), so a cluster needs no shared file system. It never
raises: whatever goes wrong is the outcome of that experiment, and the others go on.
"""

from __future__ import annotations

import itertools
import os
import re
import socket
import tempfile
import time
import traceback
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.decoding import DecodeError, Limits, load_yaml, read_text
from kubesched.errors import ResearchError
from kubesched.research.engines import Call, Engine
from kubesched.research.errors import ReplayError
from kubesched.research.replay import DEFAULT_INFLATION, ReplayOptions, run_replay
from kubesched.research.trace import read_nodes, read_pods

#: What a grid file may hold (the flags of ``kubesched sweep`` by the same names).
GRID_FIELDS = ("nodes", "workloads", "configs", "seeds", "inflate")


class SweepError(ResearchError):
    """A grid that cannot run: the message names the flag or the grid file's field, and why."""


@dataclass(frozen=True)
class Experiment:
    """One cell of the grid; its four values are the first columns of the results."""

    workload: str
    policy: str
    tune: float
    seed: int

    @property
    def label(self) -> str:
        return f"{self.workload} / {self.policy} / inflate {self.tune:g} / seed {self.seed}"

    @property
    def key(self) -> str:
        return f"{self.policy}-{self.workload}-{self.tune:g}-{self.seed}"


@dataclass(frozen=True)
class InputFile:
    """A file an experiment reads, as given on the command line and as bytes."""

    path: str
    data: bytes = field(repr=False)

    @property
    def name(self) -> str:
        return Path(self.path).name


@dataclass
class ExperimentOutcome:
    """What one experiment gave: the allocation and fragmentation curves on the grid's 131 points
    (``None`` where the replay has no sample near a point) and a short summary; or its error."""

    experiment: Experiment
    allocation: list[float | None] = field(default_factory=list)
    fragmentation: list[float | None] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    #: The traceback of an unexpected exception (a bug rather than a bad input).
    detail: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @classmethod
    def failed(cls, experiment: Experiment, exc: BaseException, where: str = "") -> ExperimentOutcome:
        if isinstance(exc, ReplayError):
            return cls(experiment, error=str(exc), summary={"worker": where} if where else {})
        detail = "".join(traceback.format_exception(exc))
        return cls(
            experiment,
            error=f"{type(exc).__name__}: {exc}",
            detail=detail,
            summary={"worker": where} if where else {},
        )


# --- the grid ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SweepGrid:
    """Workloads × configurations × inflations × seeds on one node list."""

    nodes: Path
    workloads: tuple[Path, ...]
    configs: tuple[Path, ...]
    seeds: tuple[int, ...]
    inflations: tuple[float, ...] = (DEFAULT_INFLATION,)

    def __post_init__(self) -> None:
        for name, values in (
            ("workloads", self.workloads),
            ("configs", self.configs),
            ("seeds", self.seeds),
            ("inflate", self.inflations),
        ):
            if not values:
                raise SweepError(f"{name}: empty; a grid needs at least one")
        _unique("workloads", [p.stem for p in self.workloads], "pod list file names (the workload column)")
        _unique("configs", [p.stem for p in self.configs], "configuration file names (the policy column)")
        _unique("seeds", list(self.seeds), "seeds")
        _unique("inflate", list(self.inflations), "inflation ratios")
        for ratio in self.inflations:
            if not ratio >= 0 or ratio == float("inf"):
                raise SweepError(f"inflate: {ratio!r}: must be a finite ratio of at least 0 (1.3 in the paper)")

    def experiments(self) -> list[Experiment]:
        """The grid's experiments in its declared order: workload, then policy, inflation, seed."""
        return [
            Experiment(w.stem, c.stem, tune, seed)
            for w, c, tune, seed in itertools.product(self.workloads, self.configs, self.inflations, self.seeds)
        ]

    def read_inputs(self) -> dict[Path, InputFile]:
        """Every input file, read once and checked here (a bad row is refused before anything
        runs, naming the file, the row and the column)."""
        files: dict[Path, InputFile] = {}
        for flag, paths in (("nodes", (self.nodes,)), ("workloads", self.workloads), ("configs", self.configs)):
            for path in paths:
                try:
                    files[path] = InputFile(str(path), path.read_bytes())
                except OSError as exc:
                    raise SweepError(f"{flag}: {path}: cannot read: {exc.strerror or exc}") from None
        try:
            read_nodes(self.nodes)
            for path in self.workloads:
                read_pods(path)
        except ReplayError as exc:
            raise SweepError(str(exc)) from None
        return files


def _unique(name: str, values: Sequence[Any], what: str) -> None:
    seen: set[Any] = set()
    for v in values:
        if v in seen:
            raise SweepError(f"{name}: {v!r} given twice; the {what} must differ")
        seen.add(v)


def parse_seeds(spec: Any, where: str = "seeds") -> tuple[int, ...]:
    """Seeds from ``42``, ``"42-51"`` (both ends included), ``"42,45,50-52"`` or a list of those."""
    items: list[Any] = list(spec) if isinstance(spec, list | tuple) else [spec]
    seeds: list[int] = []
    for item in items:
        if isinstance(item, bool):
            raise SweepError(f"{where}: {item!r}: not a seed (a whole number, or a range such as 42-51)")
        if isinstance(item, int):
            seeds.append(item)
            continue
        if not isinstance(item, str):
            raise SweepError(f"{where}: {item!r}: not a seed (a whole number, or a range such as 42-51)")
        for part in item.split(","):
            part = part.strip()
            first, sep, last = part.partition("-")
            try:
                lo, hi = (int(first), int(last)) if sep else (int(part), int(part))
            except ValueError:
                raise SweepError(
                    f"{where}: {part!r}: not a seed or a range of seeds (42, 42-51, 42,44,50-52)"
                ) from None
            if hi < lo:
                raise SweepError(f"{where}: {part!r}: the range ends before it starts")
            seeds.extend(range(lo, hi + 1))
    return tuple(seeds)


def _paths(value: Any, where: str, base: Path) -> tuple[Path, ...]:
    items = value if isinstance(value, list) else [value]
    out: list[Path] = []
    for item in items:
        if not isinstance(item, str) or not item:
            raise SweepError(f"{where}: {item!r}: not a file path")
        expanded = os.path.expandvars(item)
        unset = re.search(r"\$\{?(\w+)", expanded)
        if unset:
            raise SweepError(f"{where}: {item}: ${unset.group(1)} is not set")
        p = Path(expanded).expanduser()
        # A path that names a variable is where the variable says (from the working folder, as
        # on a command line); another relative path is the grid file's neighbour.
        out.append(p if p.is_absolute() or expanded != item else base / p)
    return tuple(out)


def _ratios(value: Any, where: str) -> tuple[float, ...]:
    items = value if isinstance(value, list) else [value]
    out: list[float] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int | float):
            raise SweepError(f"{where}: {item!r}: not a number (the arrived GPU demand as a multiple of capacity)")
        out.append(float(item))
    return tuple(out)


#: A grid file names a few paths, seeds and ratios: a small document, bounded like every input.
GRID_LIMITS = Limits(max_bytes=1024 * 1024)


def load_grid_file(path: Path) -> dict[str, Any]:
    """The fields of a grid file, its relative paths taken from the file's own folder::

    nodes: traces/openb_node_list_gpu_node.csv
    workloads: [traces/openb_pod_list_default.csv]    # or $KUBESCHED_TRACES/..., as it is set
    configs: [config/gpushare/FGD.yaml, config/gpushare/BestFit.yaml]
    seeds: 42-51            # or a list: [42, 43], or "42,45,50-52"
    inflate: 1.3            # or a list of ratios
    """
    try:
        data = load_yaml(read_text(path, GRID_LIMITS.max_bytes), GRID_LIMITS)
    except OSError as exc:
        raise SweepError(f"--grid {path}: cannot read: {exc.strerror or exc}") from None
    except (yaml.YAMLError, DecodeError) as exc:
        raise SweepError(f"--grid {path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise SweepError(f"--grid {path}: a mapping of {', '.join(GRID_FIELDS)} is needed")
    unknown = [k for k in data if k not in GRID_FIELDS]
    if unknown:
        raise SweepError(f"{path}: {unknown[0]}: not a grid field (the fields: {', '.join(GRID_FIELDS)})")
    base = path.parent
    out: dict[str, Any] = {}
    if "nodes" in data:
        nodes = _paths(data["nodes"], f"{path}: nodes", base)
        if len(nodes) != 1:
            raise SweepError(f"{path}: nodes: one node list, not {len(nodes)}")
        out["nodes"] = nodes[0]
    if "workloads" in data:
        out["workloads"] = _paths(data["workloads"], f"{path}: workloads", base)
    if "configs" in data:
        out["configs"] = _paths(data["configs"], f"{path}: configs", base)
    if "seeds" in data:
        out["seeds"] = parse_seeds(data["seeds"], f"{path}: seeds")
    if "inflate" in data:
        out["inflations"] = _ratios(data["inflate"], f"{path}: inflate")
    return out


def make_grid(
    grid_file: Path | None = None,
    nodes: str | None = None,
    pods: Sequence[str] = (),
    configs: Sequence[str] = (),
    seeds: str | None = None,
    inflate: Sequence[float] = (),
) -> SweepGrid:
    """The grid of a grid file and the flags; a flag given replaces the file's field."""
    fields = load_grid_file(grid_file) if grid_file is not None else {}
    if nodes is not None:
        fields["nodes"] = Path(nodes)
    if pods:
        fields["workloads"] = tuple(Path(p) for p in pods)
    if configs:
        fields["configs"] = tuple(Path(c) for c in configs)
    if seeds is not None:
        fields["seeds"] = parse_seeds(seeds, "--seeds")
    if inflate:
        fields["inflations"] = _ratios(list(inflate), "--inflate")
    for name, flag in (
        ("nodes", "--nodes NODES.csv"),
        ("workloads", "--pods PODS.csv"),
        ("configs", "--config X.yaml"),
    ):
        if name not in fields:
            raise SweepError(f"{name}: none given ({flag}, or `{name}:` in a --grid file)")
    fields.setdefault("seeds", (42,))
    return SweepGrid(**fields)


# --- one experiment, where a worker runs it -----------------------------------------------------------


def run_experiment(experiment: Experiment, nodes: InputFile, pods: InputFile, config: InputFile) -> ExperimentOutcome:
    """Replay ``experiment`` (:func:`kubesched.research.replay.run_replay`) on the files given,
    written to a private folder under their own names. Never raises."""
    where = f"{socket.gethostname()}:{os.getpid()}"
    started = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="kubesched-sweep-") as tmp:
            placed: dict[str, str] = {}
            paths: list[Path] = []
            for sub, f in (("nodes", nodes), ("pods", pods), ("config", config)):
                target = Path(tmp) / sub / f.name
                target.parent.mkdir()
                target.write_bytes(f.data)
                placed[str(target)] = f.path
                paths.append(target)
            options = ReplayOptions(
                nodes=paths[0], pods=paths[1], config=paths[2], seed=experiment.seed, inflate=experiment.tune
            )
            try:
                result = run_replay(options)
            except ReplayError as exc:
                message = str(exc)
                for written, given in placed.items():
                    message = message.replace(written, given)
                raise ReplayError(message) from None
    except Exception as exc:  # noqa: BLE001 - a failed experiment is a row of the table; the sweep goes on
        return ExperimentOutcome.failed(experiment, exc, where)
    s = result.summary
    return ExperimentOutcome(
        experiment,
        allocation=[p["gpuAllocation"] for p in result.curve],
        fragmentation=[p["gpuFragmentation"] for p in result.curve],
        summary={
            "gpus": s["gpus"],
            "nodes": s["nodes"],
            "pods": s["pods"],
            "scheduled": s["scheduled"],
            "unscheduled": s["unscheduled"],
            "gpuAllocationAt100": s["gpuAllocationAt100"],
            "gpuAllocation": s["gpuAllocation"],
            "replaySeconds": s["seconds"],
            "seconds": round(time.perf_counter() - started, 2),
            "worker": where,
        },
    )


# --- the runner ---------------------------------------------------------------------------------------


def iter_sweep(
    grid: SweepGrid, engine: Engine, files: Mapping[Path, InputFile] | None = None
) -> Iterator[ExperimentOutcome]:
    """Every experiment's outcome as it completes (a failed one included); closes the engine
    at the end, or when the caller stops early (an interrupt: what completed is already out).
    ``files``: the grid's :meth:`SweepGrid.read_inputs`, when the caller has read them already."""
    experiments = grid.experiments()
    try:
        if files is None:
            files = grid.read_inputs()
        shared: Mapping[Path, Any] = {path: engine.share(f) for path, f in files.items()}
        workloads = {p.stem: p for p in grid.workloads}
        configs = {p.stem: p for p in grid.configs}
        calls = [
            Call(e.key, (e, shared[grid.nodes], shared[workloads[e.workload]], shared[configs[e.policy]]))
            for e in experiments
        ]
        for i, result, exc in engine.run(run_experiment, calls):
            if exc is not None:
                yield ExperimentOutcome.failed(experiments[i], exc)
            else:
                yield result
    finally:
        engine.close()


def run_sweep(grid: SweepGrid, engine: Engine) -> list[ExperimentOutcome]:
    """Every outcome, in the grid's order."""
    return in_grid_order(iter_sweep(grid, engine), grid.experiments())


def in_grid_order(outcomes: Iterable[ExperimentOutcome], experiments: Sequence[Experiment]) -> list[ExperimentOutcome]:
    """Outcomes in the order the grid declares its experiments (workload, policy, inflation, seed)."""
    rank = {e: i for i, e in enumerate(experiments)}
    return sorted(outcomes, key=lambda o: rank.get(o.experiment, len(rank)))


__all__ = [
    "Experiment",
    "ExperimentOutcome",
    "InputFile",
    "SweepError",
    "SweepGrid",
    "in_grid_order",
    "iter_sweep",
    "load_grid_file",
    "make_grid",
    "parse_seeds",
    "run_experiment",
    "run_sweep",
]
