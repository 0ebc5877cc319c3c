"""kubesched sweep end to end on a tiny synthetic trace: the local process pool (a broken
configuration fails its experiments, the others complete), and a real Dask cluster — a scheduler
and two workers started here as separate processes on loopback — driven by the real command."""

from __future__ import annotations

import csv
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from polling import eventually_sync

from kubesched.cli import main

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = ROOT / "config" / "gpushare"
POINTS = [str(k) for k in range(131)]


def write_tiny_trace(tmp_path: Path) -> tuple[Path, Path]:
    """Four nodes of 8 GPUs (two models) and 20 pods: sharing, whole, multi-GPU and CPU-only."""
    nodes = tmp_path / "nodes.csv"
    with open(nodes, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["sn", "cpu_milli", "memory_mib", "gpu", "model"])
        for i in range(4):
            w.writerow([f"node-{i}", 96000, 262144, 8, "V100M32" if i % 2 else "P100"])
    pods = tmp_path / "tiny_pods.csv"
    kinds = [(1, 500), (1, 250), (1, 1000), (2, 1000), (0, 0), (1, 700), (1, 300)]
    with open(pods, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"])
        for i in range(20):
            count, milli = kinds[i % len(kinds)]
            w.writerow([f"pod-{i:02d}", 2000 + 1000 * (i % 5), 8192, count, milli])
    return nodes, pods


def read_table(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def check_allocation_rows(rows: list[dict[str, str]], workload: str, policies: list[str], seeds: list[int]) -> None:
    assert [(r["workload"], r["policy"], int(r["seed"])) for r in rows] == [
        (workload, p, s) for p in policies for s in seeds
    ]
    for r in rows:
        assert list(r)[5:] == POINTS and r["tune"] == "1.3" and r["total_gpus"] == "32"
        values = [float(r[k]) for k in POINTS if r[k] != ""]
        assert len(values) > 40 and all(0 <= v <= 100 for v in values)


def test_local_pool_completes_the_grid_around_a_failed_experiment(
    tmp_path: Path, gpushare_installed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, pods = write_tiny_trace(tmp_path)
    broken = tmp_path / "Broken.yaml"
    broken.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n"
        "- schedulerName: default-scheduler\n  plugins:\n    score:\n      enabled:\n      - name: NoSuchPlugin\n"
    )
    out, summary, plot = tmp_path / "alloc.csv", tmp_path / "summary.csv", tmp_path / "grid.svg"
    args = ["sweep", "--nodes", str(nodes), "--pods", str(pods), "--config", str(CONFIGS / "FGD.yaml")]
    args += ["--config", str(broken), "--config", str(CONFIGS / "BestFit.yaml"), "--seeds", "1-2"]
    args += ["--output", str(out), "--summary", str(summary), "--workers", "2", "--no-progress"]
    assert main([*args, "--plot", str(tmp_path / "grid.png")]) == 2  # refused before anything runs
    assert "grid.png: sweep --plot writes .svg files, not .png" in capsys.readouterr().err and not out.exists()
    assert main([*args, "--plot", str(plot)]) == 1
    err = capsys.readouterr().err
    for seed in (1, 2):
        assert f"FAILED tiny_pods / Broken / inflate 1.3 / seed {seed}: " in err
    assert "NoSuchPlugin" in err
    assert "2 of 6 experiments failed" in err
    check_allocation_rows(read_table(out), "tiny_pods", ["FGD", "BestFit"], [1, 2])
    status = {(r["policy"], r["seed"]): (r["status"], r["error"]) for r in read_table(summary)}
    assert status[("FGD", "1")] == ("ok", "")
    assert status[("Broken", "2")][0] == "failed" and "NoSuchPlugin" in status[("Broken", "2")][1]
    # the picture: a marker per policy that ran, at the mean of its seeds' unallocated share
    summary_rows = read_table(summary)
    tips = re.findall(r"<title>(.*?)</title>", plot.read_text())
    for policy in ("FGD", "BestFit"):
        seeds = [100 - float(r["alloc_at_100"]) for r in summary_rows if r["policy"] == policy]
        assert f"tiny_pods / {policy}: {sum(seeds) / 2:.2f} ({min(seeds):.2f}" in " ".join(tips)
    assert len(tips) == 2 and "Broken" not in plot.read_text()


def test_address_without_the_distributed_extra_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    nodes, pods = write_tiny_trace(tmp_path)
    monkeypatch.setitem(sys.modules, "distributed", None)
    args = ["sweep", "--nodes", str(nodes), "--pods", str(pods), "--config", str(CONFIGS / "FGD.yaml")]
    rc = main([*args, "--address", "tcp://127.0.0.1:8786", "--output", str(tmp_path / "o.csv")])
    assert rc == 2
    err = capsys.readouterr().err
    assert "--address tcp://127.0.0.1:8786" in err and "pip install 'kubesched[distributed]'" in err


# --- a real Dask cluster ---------------------------------------------------------------------------------


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """End a process this test started (and anything it started): TERM, then KILL."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


def _address(scheduler_file: Path, scheduler: subprocess.Popen[bytes], log: Path) -> str:
    """The scheduler's address, once it has written the whole file."""

    def address() -> str:
        assert scheduler.poll() is None, log.read_text()
        return str(json.loads(scheduler_file.read_text())["address"])

    return eventually_sync(
        address, "the Dask scheduler's address", timeout=30, interval=0.1, ignoring=(OSError, ValueError, KeyError)
    )


def _wait_for_workers(address: str, count: int) -> None:
    """Return once ``count`` workers have joined the scheduler at ``address``: a test that names
    every worker must not start while one is still connecting."""
    from distributed import Client

    with Client(address, timeout=30) as client:
        client.wait_for_workers(count, timeout=60)


@pytest.fixture
def dask_cluster(tmp_path: Path, gpushare_installed: None) -> Iterator[tuple[str, list[int]]]:
    """A Dask scheduler and two single-thread workers as separate processes on 127.0.0.1:
    ``(scheduler address, worker pids)``; torn down whatever the test does."""
    pytest.importorskip("distributed", reason="Dask distributed is not installed: pip install 'kubesched[distributed]'")
    scheduler_file = tmp_path / "scheduler.json"
    log = open(tmp_path / "dask.log", "wb")
    dask = [sys.executable, "-m", "dask"]
    procs: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> subprocess.Popen[bytes]:
        # Dask's default, whatever this environment says: the workers sample a profile of their tasks
        env = {**os.environ, "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "True"}
        proc = subprocess.Popen([*dask, *args], stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        procs.append(proc)
        return proc

    try:
        # --idle-timeout and --death-timeout: should the teardown itself be killed, nothing lingers
        start(
            "scheduler",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-dashboard",
            "--idle-timeout",
            "120",
            "--scheduler-file",
            str(scheduler_file),
        )
        address = _address(scheduler_file, procs[0], tmp_path / "dask.log")
        workers = [
            start(
                "worker",
                "--nthreads",
                "1",
                "--no-nanny",
                "--no-dashboard",
                "--death-timeout",
                "30",
                "--local-directory",
                str(tmp_path / f"worker-{i}"),
                "--scheduler-file",
                str(scheduler_file),
            )
            for i in range(2)
        ]
        _wait_for_workers(address, len(workers))
        yield address, [w.pid for w in workers]
    finally:
        for proc in reversed(procs):
            _stop(proc)
        log.close()


def test_a_grid_on_a_real_dask_cluster(tmp_path: Path, dask_cluster: tuple[str, list[int]]) -> None:
    address, worker_pids = dask_cluster
    nodes, pods = write_tiny_trace(tmp_path)
    out, frag, summary = tmp_path / "alloc.csv", tmp_path / "frag.csv", tmp_path / "summary.csv"
    cmd = [sys.executable, "-m", "kubesched", "sweep", "--address", address, "--nodes", str(nodes)]
    cmd += ["--pods", str(pods), "--config", str(CONFIGS / "FGD.yaml"), "--config", str(CONFIGS / "Random.yaml")]
    cmd += ["--seeds", "1-2", "--output", str(out), "--frag-output", str(frag), "--summary", str(summary)]
    run = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    assert f"Dask cluster at {address}" in run.stderr
    # the workers were started with Dask's default: each samples a profile of its tasks, and is named
    assert "2 of 2 Dask workers sample a profile of every task" in run.stderr
    assert "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False" in run.stderr
    rows = read_table(out)
    check_allocation_rows(rows, "tiny_pods", ["FGD", "Random"], [1, 2])
    frag_rows = read_table(frag)
    assert [list(r)[:4] for r in frag_rows] == [["workload", "policy", "tune", "seed"]] * 4
    assert all(list(r)[4:] == POINTS for r in frag_rows)
    # every experiment ran in one of the worker processes, none here
    ran_in = {int(r["worker"].rsplit(":", 1)[1]) for r in read_table(summary)}
    assert ran_in <= set(worker_pids), (ran_in, worker_pids)

    # the same seed again (through main() this time) gives the same row
    again = tmp_path / "again.csv"
    args = ["sweep", "--address", address, "--nodes", str(nodes), "--pods", str(pods)]
    args += ["--config", str(CONFIGS / "FGD.yaml"), "--seeds", "2", "--output", str(again), "--no-progress"]
    assert main(args) == 0
    (row,) = read_table(again)
    assert row == next(r for r in rows if r["policy"] == "FGD" and r["seed"] == "2")


def test_an_unreachable_scheduler_is_named() -> None:
    pytest.importorskip("distributed", reason="Dask distributed is not installed: pip install 'kubesched[distributed]'")
    from kubesched.research.engines import DaskEngine, EngineError

    with pytest.raises(EngineError, match=r"--address tcp://127.0.0.1:1: cannot reach a Dask scheduler there"):
        DaskEngine("tcp://127.0.0.1:1", connect_timeout=1)
