"""kubesched sweep without processes: the grid declared as flags or a file and its expansion, the
errors that name the field, the merge into the artifact's table shape, and a failed experiment
among good ones (an engine that runs in this process)."""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kubesched.research.engines import Call, EngineError, LocalEngine, engine_for
from kubesched.research.sweep import (
    Experiment,
    ExperimentOutcome,
    InputFile,
    SweepError,
    SweepGrid,
    in_grid_order,
    iter_sweep,
    make_grid,
    parse_seeds,
)
from kubesched.research.sweep_output import (
    ALLOCATION_COLUMNS,
    FRAGMENTATION_COLUMNS,
    TABLES,
    GrowingTable,
    allocation_csv,
    format_report,
    fragmentation_csv,
    summary_csv,
)

NODES = "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,65536,2,V100\n"
PODS = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\np1,1000,1024,0,0\n"


def files(tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    (tmp_path / "nodes.csv").write_text(NODES)
    (tmp_path / "wl_a.csv").write_text(PODS)
    (tmp_path / "wl_b.csv").write_text(PODS)
    (tmp_path / "FGD.yaml").write_text("profiles: []\n")
    return tmp_path / "nodes.csv", tmp_path / "wl_a.csv", tmp_path / "wl_b.csv", tmp_path / "FGD.yaml"


# --- the grid -----------------------------------------------------------------------------------------

SEEDS = [
    ("one", "42", (42,)),
    ("a range, both ends", "42-45", (42, 43, 44, 45)),
    ("a list and a range", "1,5,7-8", (1, 5, 7, 8)),
    ("an int from YAML", 7, (7,)),
    ("a YAML list", [1, "3-4"], (1, 3, 4)),
]


@pytest.mark.parametrize(("spec", "expected"), [c[1:] for c in SEEDS], ids=[c[0] for c in SEEDS])
def test_seeds(spec: Any, expected: tuple[int, ...]) -> None:
    assert parse_seeds(spec) == expected


BAD_SEEDS = [
    ("not a number", "x", "--seeds: 'x': not a seed or a range of seeds"),
    ("an open range", "42-", "--seeds: '42-': not a seed or a range of seeds"),
    ("backwards", "9-3", "--seeds: '9-3': the range ends before it starts"),
    ("a boolean", True, "--seeds: True: not a seed"),
]


@pytest.mark.parametrize(("spec", "message"), [c[1:] for c in BAD_SEEDS], ids=[c[0] for c in BAD_SEEDS])
def test_bad_seeds_are_named(spec: Any, message: str) -> None:
    with pytest.raises(SweepError, match=message.replace("(", r"\(")):
        parse_seeds(spec, "--seeds")


def test_the_grid_expands_workload_policy_inflation_seed(tmp_path: Path) -> None:
    nodes, a, b, fgd = files(tmp_path)
    grid = SweepGrid(nodes, (a, b), (fgd, tmp_path / "Random.yaml"), (42, 43), (1.3, 1.0))
    experiments = grid.experiments()
    assert len(experiments) == 2 * 2 * 2 * 2
    assert experiments[:3] == [
        Experiment("wl_a", "FGD", 1.3, 42),
        Experiment("wl_a", "FGD", 1.3, 43),
        Experiment("wl_a", "FGD", 1.0, 42),
    ]
    assert experiments[-1] == Experiment("wl_b", "Random", 1.0, 43)
    assert len(set(experiments)) == len(experiments)


GRID_ERRORS = [
    ("two workloads of one name", {"workloads": ("x/wl.csv", "y/wl.csv")}, "workloads: 'wl' given twice"),
    ("two policies of one name", {"configs": ("x/FGD.yaml", "y/FGD.yaml")}, "configs: 'FGD' given twice"),
    ("a seed twice", {"seeds": (1, 1)}, "seeds: 1 given twice"),
    ("no seed", {"seeds": ()}, "seeds: empty"),
    ("a negative inflation", {"inflations": (-1.0,)}, "inflate: -1.0: must be a finite ratio"),
]


@pytest.mark.parametrize(("change", "message"), [c[1:] for c in GRID_ERRORS], ids=[c[0] for c in GRID_ERRORS])
def test_a_bad_grid_is_refused_naming_the_field(change: dict[str, Any], message: str) -> None:
    fields: dict[str, Any] = {
        "nodes": Path("n.csv"),
        "workloads": (Path("wl.csv"),),
        "configs": (Path("FGD.yaml"),),
        "seeds": (1,),
    }
    fields.update({k: tuple(Path(v) for v in vs) if k in ("workloads", "configs") else vs for k, vs in change.items()})
    with pytest.raises(SweepError, match=message):
        SweepGrid(**fields)


def test_a_grid_file_with_flags_replacing_its_fields(tmp_path: Path) -> None:
    nodes, a, b, fgd = files(tmp_path)
    sub = tmp_path / "grids"
    sub.mkdir()
    grid_file = sub / "grid.yaml"
    grid_file.write_text(
        "nodes: ../nodes.csv\nworkloads: [../wl_a.csv, ../wl_b.csv]\nconfigs: [../FGD.yaml]\nseeds: 42-44\ninflate: 1.3\n"
    )
    grid = make_grid(grid_file)
    assert grid.nodes == sub / "../nodes.csv"  # relative to the grid file's folder
    assert [p.stem for p in grid.workloads] == ["wl_a", "wl_b"]
    assert grid.seeds == (42, 43, 44) and grid.inflations == (1.3,)
    replaced = make_grid(grid_file, pods=[str(a)], seeds="7", inflate=[1.0, 1.3])
    assert replaced.workloads == (a,) and replaced.seeds == (7,) and replaced.inflations == (1.0, 1.3)
    assert replaced.configs == grid.configs


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("seeds: 42-51\nprocs: 3\n", "procs: not a grid field"),
        ("- a\n- b\n", "a mapping of nodes, workloads, configs, seeds, inflate is needed"),
        ("nodes: [a.csv, b.csv]\n", "nodes: one node list, not 2"),
        ("inflate: lots\n", "inflate: 'lots': not a number"),
        ("workloads: [3]\n", "workloads: 3: not a file path"),
    ],
    ids=["an unknown field", "not a mapping", "two node lists", "a word for a ratio", "a number for a path"],
)
def test_a_bad_grid_file_is_refused_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    grid_file = tmp_path / "grid.yaml"
    grid_file.write_text(text)
    with pytest.raises(SweepError, match=message):
        make_grid(grid_file)


def test_missing_inputs_are_named(tmp_path: Path) -> None:
    nodes, a, _, fgd = files(tmp_path)
    with pytest.raises(SweepError, match=r"configs: none given \(--config X.yaml"):
        make_grid(nodes=str(nodes), pods=[str(a)])
    with pytest.raises(SweepError, match=r"workloads: .*absent.csv: cannot read"):
        make_grid(nodes=str(nodes), pods=[str(tmp_path / "absent.csv")], configs=[str(fgd)]).read_inputs()
    bad = tmp_path / "bad.csv"
    bad.write_text(PODS.replace("1024,1,500", "1024,1,lots"))
    with pytest.raises(SweepError, match=r"bad.csv: row 2, column 'gpu_milli': not a number"):
        make_grid(nodes=str(nodes), pods=[str(bad)], configs=[str(fgd)]).read_inputs()


def test_workers_apply_to_the_local_pool_only() -> None:
    with pytest.raises(EngineError, match="--workers: must be at least 1"):
        LocalEngine(0)
    with pytest.raises(EngineError, match="--workers: applies to the local pool only"):
        engine_for("tcp://127.0.0.1:1", 2)


# --- the table ----------------------------------------------------------------------------------------


def outcome(policy: str, seed: int, at: float | None = 50.0, error: str | None = None) -> ExperimentOutcome:
    e = Experiment("openb_pod_list_default", policy, 1.3, seed)
    if error is not None:
        return ExperimentOutcome(e, error=error)
    alloc = [None if k == 3 else min(float(k), 100.0) for k in range(131)]
    frag = [10.0 + k / 100 for k in range(131)]
    summary = {"gpus": 6212, "pods": 100, "scheduled": 90, "unscheduled": 10, "gpuAllocationAt100": at}
    summary |= {"gpuAllocation": 90.0, "seconds": 1.5, "worker": "h:1"}
    return ExperimentOutcome(e, alloc, frag, summary)


def table(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_outcomes_merge_into_the_artifacts_table_shape() -> None:
    outcomes = [outcome("FGD", 42), outcome("FGD", 43), outcome("Random", 42, error="boom")]
    rows = table(allocation_csv(outcomes))
    assert tuple(rows[0]) == ALLOCATION_COLUMNS
    assert rows[0][:5] == ["workload", "policy", "tune", "seed", "total_gpus"]
    assert rows[0][5:] == [str(k) for k in range(131)]
    assert [r[:5] for r in rows[1:]] == [
        ["openb_pod_list_default", "FGD", "1.3", "42", "6212"],
        ["openb_pod_list_default", "FGD", "1.3", "43", "6212"],
    ]  # the failed experiment has no row
    assert rows[1][5 + 3] == "" and rows[1][5 + 100] == "100.0"  # no sample near 3: an empty cell
    frag = table(fragmentation_csv(outcomes))
    assert tuple(frag[0]) == FRAGMENTATION_COLUMNS and len(frag[0]) == 4 + 131 and len(frag) == 3
    summary = table(summary_csv(outcomes))
    assert summary[3][:5] == ["openb_pod_list_default", "Random", "1.3", "42", "failed"]
    assert summary[3][-1] == "boom" and summary[1][-1] == "" and summary[1][4] == "ok"
    report = format_report(outcomes, "2 local processes", 3.0)
    assert "2 of 3 experiments done" in report
    assert "FAILED openb_pod_list_default / Random / inflate 1.3 / seed 42: boom" in report


def test_a_growing_table_is_the_whole_table_at_every_step() -> None:
    """The sweep formats each row once as outcomes arrive; at every step the text is what
    formatting every outcome so far in the grid's order gives."""
    declared = [Experiment("openb_pod_list_default", p, 1.3, s) for p in ("FGD", "Random") for s in (42, 43, 44)]
    arrivals = [outcome(e.policy, e.seed, at=40.0 + e.seed, error="boom" if e.seed == 43 else None) for e in declared]
    random.Random(7).shuffle(arrivals)
    renders = {"allocation": allocation_csv, "fragmentation": fragmentation_csv, "summary": summary_csv}
    tables = {name: GrowingTable(*TABLES[name]) for name in renders}
    for i, o in enumerate(arrivals, 1):
        for table in tables.values():
            table.add(o)
        so_far = in_grid_order(arrivals[:i], declared)
        for name, render in renders.items():
            assert tables[name].text(declared) == render(so_far), (name, i)
    assert tables["summary"].text(declared).count("\n") == 1 + 6
    assert tables["allocation"].text(declared).count("\n") == 1 + 4  # the failed have no row


def test_in_grid_order_follows_the_declared_grid() -> None:
    declared = [Experiment("w", p, 1.3, s) for p in ("Random", "FGD") for s in (2, 1)]
    done = [outcome("FGD", 1), outcome("Random", 1), outcome("FGD", 2), outcome("Random", 2)]
    for o in done:
        o.experiment = Experiment("w", o.experiment.policy, 1.3, o.experiment.seed)
    assert [o.experiment for o in in_grid_order(done, declared)] == declared


# --- a failure among good experiments ---------------------------------------------------------------


class InProcessEngine:
    """Runs the calls here, in reverse order; the second call's worker "dies"."""

    description = "this process"

    def __init__(self) -> None:
        self.closed = False
        self.shared: list[Any] = []

    def share(self, value: Any) -> Any:
        self.shared.append(value)
        return value

    def run(self, fn: Callable[..., Any], calls: Sequence[Call]) -> Iterator[tuple[int, Any, BaseException | None]]:
        for i in reversed(range(len(calls))):
            experiment, nodes, pods, config = calls[i].args
            assert isinstance(nodes, InputFile) and nodes.name == "nodes.csv"
            if i == 1:
                yield i, None, RuntimeError("the worker died")
            else:
                yield i, ExperimentOutcome(experiment, summary={"pods": pods.name, "config": config.name}), None

    def close(self) -> None:
        self.closed = True


def test_a_failed_experiment_is_reported_and_the_others_complete(tmp_path: Path) -> None:
    nodes, a, b, fgd = files(tmp_path)
    grid = SweepGrid(nodes, (a, b), (fgd,), (1, 2))
    engine = InProcessEngine()
    outcomes = in_grid_order(iter_sweep(grid, engine), grid.experiments())
    assert engine.closed
    assert len(engine.shared) == 4  # each file shipped once, not once per experiment
    assert [o.ok for o in outcomes] == [True, False, True, True]
    failed = outcomes[1]
    assert failed.experiment == Experiment("wl_a", "FGD", 1.3, 2)
    assert failed.error == "RuntimeError: the worker died" and "the worker died" in (failed.detail or "")
    assert outcomes[2].summary == {"pods": "wl_b.csv", "config": "FGD.yaml"}


def test_a_grid_file_path_may_name_a_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``$KUBESCHED_TRACES/...`` is where the variable says, a relative value taken from the
    working folder as on a command line; an unset variable is named."""
    traces = tmp_path / "traces"
    traces.mkdir()
    grid_file = tmp_path / "grid" / "paper.yaml"
    grid_file.parent.mkdir()
    grid_file.write_text(
        'nodes: $KUBESCHED_TRACES/n.csv\nworkloads: ["${KUBESCHED_TRACES}/a.csv", b.csv]\nconfigs: [c.yaml]\n'
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KUBESCHED_TRACES", "traces")
    grid = make_grid(grid_file)
    assert grid.nodes == Path("traces/n.csv")
    assert grid.workloads == (Path("traces/a.csv"), grid_file.parent / "b.csv")
    monkeypatch.setenv("KUBESCHED_TRACES", str(traces))
    assert make_grid(grid_file).nodes == traces / "n.csv"
    monkeypatch.delenv("KUBESCHED_TRACES")
    with pytest.raises(SweepError, match=r"nodes: \$KUBESCHED_TRACES/n.csv: \$KUBESCHED_TRACES is not set"):
        make_grid(grid_file)


def test_the_papers_grid_is_its_1020_experiments(monkeypatch: pytest.MonkeyPatch) -> None:
    """config/gpushare/paper-grid.yaml: the artifact's seventeen workloads x six policies x ten
    seeds at 1.3, the policies the shipped configurations."""
    root = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("KUBESCHED_TRACES", "/traces")
    grid = make_grid(root / "config" / "gpushare" / "paper-grid.yaml")
    assert len(grid.experiments()) == 1020
    assert len(grid.workloads) == 17 and grid.seeds == tuple(range(42, 52)) and grid.inflations == (1.3,)
    assert {c.stem for c in grid.configs} == {"FGD", "BestFit", "GpuPacking", "GpuClustering", "DotProduct", "Random"}
    assert all(c.is_file() for c in grid.configs)
    assert grid.nodes == Path("/traces/alibaba-gpu-v2023/openb_node_list_gpu_node.csv")
    kinds = {w.stem.removeprefix("openb_pod_list_").rstrip("0123456789") for w in grid.workloads}
    assert kinds == {"default", "cpu", "gpushare", "gpuspec", "multigpu"}
