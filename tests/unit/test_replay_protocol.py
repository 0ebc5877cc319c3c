"""kubesched.research without a cluster: reading node and pod lists, the paper's sampling
protocol, churn order, the metrics' bookkeeping, the artifact's grid, and what replay writes."""

from __future__ import annotations

import csv
import io
import json
import random
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from kubesched.research.errors import ReplayError
from kubesched.research.grid import COLUMNS, curve
from kubesched.research.metrics import ClusterGauge, Samples
from kubesched.research.output import curve_csv, to_json
from kubesched.research.plot import PLOT_EXTRA, ZOOM, svg, write_plot
from kubesched.research.protocol import churn_events, inflated, shuffled
from kubesched.research.replay import ReplayResult
from kubesched.research.trace import TraceNode, TracePod, read_nodes, read_pods

NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"
POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\n"


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def pod(
    name: str, count: int = 1, milli: int = 500, cpu: int = 1000, created: int | None = None, deleted: int | None = None
) -> TracePod:
    obj = {"metadata": {"name": name, "namespace": "default"}, "spec": {}}
    return TracePod(name, cpu, 1024, count, milli if count else 0, created, deleted, obj)


# --- reading the lists -----------------------------------------------------------------------------


def test_nodes_are_gpu_nodes_only_unless_asked(tmp_path: Path) -> None:
    path = write(tmp_path, "n.csv", NODE_HEADER + "cpu0,32000,65536,0,\ng0,96000,786432,8,V100M32\n")
    assert [n.name for n in read_nodes(path)] == ["g0"]
    both = read_nodes(path, gpu_only=False)
    assert [(n.name, n.gpus, n.model) for n in both] == [("cpu0", 0, ""), ("g0", 8, "V100M32")]
    assert both[1].obj["status"]["allocatable"]["nvidia.com/gpu"] == "8"


def test_pods_carry_their_gpu_ask_and_times(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "p.csv",
        POD_HEADER
        + "a,6000,1024,1,460,,0,100\nb,12000,2048,2,1000,V100M16|V100M32,5,\nc,4000,512,0,0,,7,9\nd,1000,1,1,1500,,8,\n",
    )
    pods = {p.name: p for p in read_pods(path, churn=True)}
    assert (pods["a"].kind, pods["a"].total_gpu_milli, pods["a"].deleted) == ("sharedGpu", 460, 100)
    assert (pods["b"].kind, pods["b"].total_gpu_milli, pods["b"].deleted) == ("multiGpu", 2000, None)
    assert pods["b"].obj["metadata"]["annotations"]["alibabacloud.com/gpu-card-model"] == "V100M16|V100M32"
    assert (pods["c"].kind, pods["c"].total_gpu_milli) == ("cpu", 0)
    # more than a whole GPU counts as one, as the artifact reads the trace
    assert (pods["d"].kind, pods["d"].gpu_milli) == ("oneGpu", 1000)


BAD_LISTS = [
    (
        "a node count that is not a number",
        "n",
        NODE_HEADER + "g0,96000,786432,eight,V100\n",
        "row 2, column 'gpu': not a number: 'eight'",
    ),
    (
        "a negative node CPU",
        "n",
        NODE_HEADER + "g0,64000,1,2,P100\ng1,-5,1,2,P100\n",
        "row 3, column 'cpu_milli': must not be negative",
    ),
    (
        "a node listed twice",
        "n",
        NODE_HEADER + "g0,1,1,1,T4\ng0,1,1,1,T4\n",
        "row 3, column 'sn': node 'g0' is listed twice (first at row 2)",
    ),
    ("a node list without the gpu column", "n", "sn,cpu_milli,memory_mib\ng0,1,1\n", "no column 'gpu' in the header"),
    ("no GPU node at all", "n", NODE_HEADER + "c0,1000,1,0,\n", "no GPU nodes to replay on"),
    (
        "a fractional pod CPU",
        "p",
        POD_HEADER + "a,1.5,1,0,0,,0,\n",
        "row 2, column 'cpu_milli': not a whole number: '1.5'",
    ),
    ("an empty pod name", "p", POD_HEADER + "a,1,1,0,0,,0,\n,1,1,0,0,,0,\n", "row 3, column 'name': empty pod name"),
    ("several shared GPUs", "p", POD_HEADER + "a,1,1,2,500,,0,\n", "row 2, column 'gpu_milli': 500 with num_gpu 2"),
    ("GPUs without milli", "p", POD_HEADER + "a,1,1,1,0,,0,\n", "row 2, column 'gpu_milli': 0 with num_gpu 1"),
    (
        "a row longer than the header",
        "p",
        POD_HEADER + "a,1,1,0,0,,0,,extra\n",
        "row 2: more cells than the header has columns",
    ),
    ("an empty memory", "p", POD_HEADER + "a,1,,0,0,,0,\n", "row 2, column 'memory_mib': empty"),
]


@pytest.mark.parametrize(("kind", "text", "expected"), [c[1:] for c in BAD_LISTS], ids=[c[0] for c in BAD_LISTS])
def test_bad_lists_are_refused_naming_file_row_and_column(tmp_path: Path, kind: str, text: str, expected: str) -> None:
    path = write(tmp_path, f"{kind}.csv", text)
    with pytest.raises(ReplayError) as err:
        read_nodes(path) if kind == "n" else read_pods(path)
    assert str(err.value).startswith(f"{path}: ")
    assert expected in str(err.value)


def test_churn_needs_creation_times(tmp_path: Path) -> None:
    path = write(tmp_path, "p.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,0,0\n")
    assert [p.name for p in read_pods(path)] == ["a"]
    with pytest.raises(ReplayError, match="no column 'creation_time'"):
        read_pods(path, churn=True)


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ReplayError, match=r"nope\.csv: no such file"):
        read_pods(tmp_path / "nope.csv")


# --- the sampling protocol ------------------------------------------------------------------------

WORKLOAD = [
    pod(f"p{i:02d}", count=c, milli=m)
    for i, (c, m) in enumerate([(1, 500)] * 6 + [(1, 1000)] * 3 + [(2, 1000)] * 2 + [(0, 0)] * 4)
]
# 6 x 500 + 3 x 1000 + 2 x 2000 = 10000 milli-GPU asked by the workload


def test_inflation_is_seeded_and_reaches_the_ratio_of_capacity() -> None:
    capacity = 8000  # 8 GPUs: the workload asks 125 %
    a = inflated(WORKLOAD, capacity, 2.0, random.Random(42))
    b = inflated(WORKLOAD, capacity, 2.0, random.Random(42))
    c = inflated(WORKLOAD, capacity, 2.0, random.Random(43))
    assert [p.name for p in a] == [p.name for p in b]
    assert [p.name for p in a] != [p.name for p in c]
    # the whole workload first, shuffled, once each; then draws, renamed
    assert sorted(p.name for p in a[: len(WORKLOAD)]) == sorted(p.name for p in WORKLOAD)
    assert [p.name for p in a[: len(WORKLOAD)]] != [p.name for p in WORKLOAD]
    assert all("-tuned-" in p.name for p in a[len(WORKLOAD) :])
    assert len({p.name for p in a}) == len(a)
    total = sum(p.total_gpu_milli for p in a)
    target = 2.0 * capacity
    assert total <= target
    # it stopped because the next draw's milli per GPU would have crossed the target: at most one
    # whole GPU short of it
    assert total > target - 1000


def test_a_workload_above_the_ratio_is_thinned_at_random() -> None:
    out = inflated(WORKLOAD, 8000, 1.0, random.Random(7))
    assert sum(p.total_gpu_milli for p in out) <= 8000
    assert len(out) < len(WORKLOAD)
    assert not any("-tuned-" in p.name for p in out)


def test_ratio_zero_replays_the_workload_once_shuffled() -> None:
    out = inflated(WORKLOAD, 8000, 0, random.Random(1))
    assert sorted(p.name for p in out) == sorted(p.name for p in WORKLOAD)


def test_inflation_needs_gpus_on_both_sides() -> None:
    with pytest.raises(ReplayError, match="ask for no GPU"):
        inflated([pod("cpu", count=0)], 8000, 1.3, random.Random(1))
    with pytest.raises(ReplayError, match="nodes have no GPU"):
        inflated(WORKLOAD, 0, 1.3, random.Random(1))


def test_node_order_is_seeded() -> None:
    names = [f"n{i}" for i in range(20)]
    assert shuffled(names, random.Random(3)) == shuffled(names, random.Random(3))
    assert sorted(shuffled(names, random.Random(3))) == sorted(names)
    assert shuffled(names, random.Random(3)) != names


def test_churn_orders_creations_and_deletions_in_trace_time() -> None:
    pods = [pod("a", created=0, deleted=30), pod("b", created=10, deleted=10), pod("c", created=10)]
    events = [(e.action, e.pod.name, e.time) for e in churn_events(pods)]
    # b leaves no earlier than it came: it stays; at equal times the file's order
    assert events == [("create", "a", 0), ("create", "b", 10), ("create", "c", 10), ("delete", "a", 30)]


# --- the metrics' bookkeeping ---------------------------------------------------------------------


def nodes_of(*gpus: int) -> list[TraceNode]:
    return [TraceNode(f"n{i}", 10000, 4096, g, "V100", {}) for i, g in enumerate(gpus)]


def test_gauge_counts_arrivals_of_failed_pods_and_gives_back_on_removal() -> None:
    # fragmentation stand-in: idle milli on GPUs with less than 500 left
    gauge = ClusterGauge(
        nodes_of(2, 1), lambda model, cpu, left: float(sum(x for x in left if x < 500)), lambda b, c, m, left: (0,)
    )
    shared, failed = pod("s", milli=700), pod("f", count=1, milli=1000)
    gauge.arrive(shared)
    gauge.placed(shared, "n0", {})
    gauge.record()
    gauge.arrive(failed)  # no node for it: it arrived all the same
    gauge.record()
    s = gauge.samples
    assert s.arrived_gpu_milli == [700, 1700]
    assert s.used_gpu_milli == [700, 700]
    assert s.frag_gpu_milli == [300.0, 300.0]
    assert s.idle_gpu_milli == [2300, 2300]
    assert s.used_cpu_milli == [1000, 1000]
    # n0 has 700 of its 2000 in use (35 %), n1 none
    assert gauge.spread() == {"gpuNodesUsed": 1, "gpuNodesFull": 0, "nodeGpuAllocationStdev": 17.5}
    gauge.removed(shared)
    gauge.removed(failed)  # never placed: nothing to give back
    gauge.record()
    assert (s.used_gpu_milli[-1], s.frag_gpu_milli[-1], s.used_cpu_milli[-1], s.arrived_gpu_milli[-1]) == (
        0,
        0.0,
        0,
        1700,
    )
    assert gauge.gpu_capacity_milli == 3000


# --- the grid -------------------------------------------------------------------------------------


def samples(rows: list[tuple[int, int, float, int]]) -> Samples:
    s = Samples()
    for arrived, used, frag, cpu in rows:
        s.arrived_gpu_milli.append(arrived)
        s.used_gpu_milli.append(used)
        s.frag_gpu_milli.append(frag)
        s.idle_gpu_milli.append(10000 - used)
        s.used_cpu_milli.append(cpu)
        s.used_memory_mib.append(0)
    return s


def test_grid_means_samples_at_a_point_and_falls_back_to_neighbours() -> None:
    # capacity 10000 milli: 100 milli is one percent
    s = samples(
        [
            (40, 40, 100.0, 0),  # 0.4 % -> 0
            (50, 50, 100.0, 0),  # 0.5 % -> 0 (half to even, as pandas rounds)
            (150, 140, 300.0, 0),  # 1.5 % -> 2
            (250, 250, 500.0, 0),  # 2.5 % -> 2
            (510, 400, 1000.0, 0),  # 5.1 % -> 5
        ]
    )
    points = {p["arrived"]: p for p in curve(s, 10000, 1000, 1000, points=range(0, 8))}
    assert points[0]["gpuAllocation"] == pytest.approx((0.4 + 0.5) / 2)
    assert points[2]["gpuAllocation"] == pytest.approx((1.4 + 2.5) / 2)
    # nothing at 1: the samples at 0..2
    assert points[1]["gpuAllocation"] == pytest.approx((0.4 + 0.5 + 1.4 + 2.5) / 4)
    assert points[3]["gpuAllocation"] == pytest.approx((1.4 + 2.5) / 2)
    assert points[4]["gpuAllocation"] == 4.0
    assert points[6]["gpuAllocation"] == 4.0
    assert points[7] == {k: None for k in COLUMNS} | {"arrived": 7}
    # fragmentation as a percent of capacity, and of the idle GPUs
    assert points[5]["gpuFragmentation"] == 10.0
    assert points[5]["gpuFragmentationRatio"] == round(100 * 1000 / 9600, 2)


def test_grid_has_one_entry_per_point_0_to_130() -> None:
    out = curve(samples([(i * 100, i * 90, 0.0, 0) for i in range(140)]), 10000)
    assert [p["arrived"] for p in out] == list(range(131))
    assert out[100]["gpuAllocation"] == 90.0
    assert out[100]["cpuAllocation"] is None  # no CPU capacity given


# --- what replay writes ---------------------------------------------------------------------------


def result() -> ReplayResult:
    points = curve(samples([(i * 100, i * 90, 50.0, 10 * i) for i in range(132)]), 10000, 1000, 1000)
    return ReplayResult(points, {"gpuAllocationAt100": 90.0}, Samples())


def test_json_and_csv_have_the_curve_and_the_summary() -> None:
    r = result()
    data = json.loads(to_json(r))
    assert set(data) == {"curve", "summary"}
    assert len(data["curve"]) == 131 and data["curve"][-1]["arrived"] == 130
    assert set(data["curve"][0]) == set(COLUMNS)
    rows = list(csv.reader(io.StringIO(curve_csv(r.curve))))
    assert rows[0] == list(COLUMNS)
    assert len(rows) == 132
    assert rows[101][:2] == ["100", "90.0"]
    assert rows[101][-2:] == ["100.0", "0.0"]
    missing = list(csv.reader(io.StringIO(curve_csv([{"arrived": 7} | {c: None for c in COLUMNS[1:]}]))))
    assert missing[1] == ["7", "", "", "", "", ""]


def test_svg_plot_draws_each_curve(tmp_path: Path) -> None:
    path = tmp_path / "c.svg"
    write_plot(path, {"FGD": result().curve, "Random": result().curve[:50]})
    root = ET.fromstring(path.read_text())
    lines = root.findall("{http://www.w3.org/2000/svg}polyline")
    assert [line.find("{http://www.w3.org/2000/svg}title").text for line in lines] == ["FGD", "Random"]
    assert len(lines[0].get("points", "").split()) == 131
    assert len(lines[1].get("points", "").split()) == 50
    assert "&lt;b&gt;" in svg({"<b>": []})
    zoomed = ET.fromstring(svg({"FGD": result().curve}, window=ZOOM))
    (line,) = zoomed.findall("{http://www.w3.org/2000/svg}polyline")
    assert len(line.get("points", "").split()) == 51  # arrived 80..130
    ticks = [t.text for t in zoomed.findall("{http://www.w3.org/2000/svg}text")]
    assert "80" in ticks and "130" in ticks and "0" not in ticks


def test_png_without_matplotlib_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ReplayError) as err:
        write_plot(tmp_path / "c.png", {"FGD": result().curve})
    assert PLOT_EXTRA in str(err.value) and "c.png" in str(err.value)
    with pytest.raises(ReplayError, match=r"\.svg or \.png"):
        write_plot(tmp_path / "c.pdf", {"FGD": result().curve})


# --- compare ----------------------------------------------------------------------------------------


def test_compare_averages_seeds_metric_by_metric_and_point_by_point() -> None:
    from kubesched.research.compare import METRICS, summarize

    def one(at100: float | None, unscheduled: int, shift: float) -> ReplayResult:
        points = curve(samples([(i * 100, int(i * shift), 0.0, 0) for i in range(132)]), 10000)
        summary: dict[str, object] = {m: 1.0 for m in METRICS} | {
            "gpuAllocationAt100": at100,
            "unscheduled": unscheduled,
        }
        summary |= {"unscheduledByKind": {"oneGpu": unscheduled}, "seconds": 2.0}
        return ReplayResult(points, summary, Samples())

    metrics, mean_curve = summarize([one(90.0, 10, 90), one(95.0, 20, 80), one(None, 30, 70)])
    assert metrics["gpuAllocationAt100"] == 92.5  # a seed without a value at 100 is left out
    assert metrics["unscheduled"] == 20
    assert metrics["unscheduledByKind"] == {"cpu": 0, "sharedGpu": 0, "oneGpu": 20, "multiGpu": 0}
    assert [p["arrived"] for p in mean_curve] == list(range(131))
    assert mean_curve[100]["gpuAllocation"] == 80.0
