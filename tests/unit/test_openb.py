"""The openb trace becomes Nodes and Pods as documented (skipped where the trace is absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.sim.scenario.openb import (
    GPU,
    GPU_COUNT_ANNOTATION,
    GPU_MILLI,
    GPU_MILLI_ANNOTATION,
    GPU_MODEL_ANNOTATION,
    GPU_MODEL_LABEL,
    TRACE_ABSENT,
    TraceError,
    load_openb,
    node_objects,
    pod_objects,
    trace_dir,
)

TRACE = trace_dir()
needs_trace = pytest.mark.skipif(TRACE is None, reason=TRACE_ABSENT)


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_rows_become_nodes_and_pods(tmp_path: Path) -> None:
    nodes = node_objects(
        write(tmp_path, "n.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,262144,0,\nn1,96000,786432,8,V100M32\n")
    )
    assert nodes[0]["status"]["allocatable"] == {"cpu": "32000m", "memory": "262144Mi", "pods": "110"}
    assert nodes[1]["status"]["allocatable"][GPU] == "8"
    assert nodes[1]["status"]["allocatable"][GPU_MILLI] == "8000"
    assert nodes[1]["metadata"]["labels"][GPU_MODEL_LABEL] == "V100M32"
    pods = pod_objects(
        write(
            tmp_path,
            "p.csv",
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
            "late,1000,1024,2,1000,,LS,Running,50,,\n"
            "share,6000,12288,1,460,V100M16|V100M32,BE,Running,10,,\n"
            "cpu,2000,2048,0,0,,LS,Running,20,,\n",
        )
    )
    assert [p["metadata"]["name"] for p in pods] == ["share", "cpu", "late"]  # by creation_time
    share, cpu, late = (p["spec"]["containers"][0]["resources"] for p in pods)
    assert share == {"requests": {"cpu": "6000m", "memory": "12288Mi", GPU_MILLI: "460"}}
    assert cpu == {"requests": {"cpu": "2000m", "memory": "2048Mi"}}
    assert late["limits"] == {GPU: "2"} and late["requests"][GPU_MILLI] == "2000"
    terms = pods[0]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == ["V100M16", "V100M32"]


def test_gpu_pods_carry_the_artifacts_annotations(tmp_path: Path) -> None:
    """The FGD artifact's pod annotations: GPU count, milli-GPU per GPU (at most 1000), models."""
    pods = pod_objects(
        write(
            tmp_path,
            "p.csv",
            "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time\n"
            "whole,1000,1024,4,1000,,1\n"
            "share,6000,12288,1,460,V100M16|V100M32,2\n"
            "over,6000,12288,1,1500,|P100|,3\n"
            "cpu,2000,2048,0,0,,4\n",
        )
    )
    annotations = {p["metadata"]["name"]: p["metadata"].get("annotations") for p in pods}
    assert annotations == {
        "whole": {GPU_COUNT_ANNOTATION: "4", GPU_MILLI_ANNOTATION: "1000"},
        "share": {GPU_COUNT_ANNOTATION: "1", GPU_MILLI_ANNOTATION: "460", GPU_MODEL_ANNOTATION: "V100M16|V100M32"},
        "over": {GPU_COUNT_ANNOTATION: "1", GPU_MILLI_ANNOTATION: "1000", GPU_MODEL_ANNOTATION: "P100"},
        "cpu": None,
    }


def test_churn_keeps_the_gpu_annotations(tmp_path: Path) -> None:
    write(tmp_path, "openb_node_list_all_node.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,32000,262144,2,T4\n")
    write(
        tmp_path,
        "openb_pod_list_default.csv",
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,creation_time,deletion_time\n"
        "share,6000,12288,1,460,,10,70\n",
    )
    sc = load_openb(directory=tmp_path, churn=True)
    pods = [obj for step in sc.steps for obj in step.create]
    assert [p["metadata"]["name"] for p in pods] == ["share"]
    assert pods[0]["metadata"]["annotations"][GPU_MILLI_ANNOTATION] == "460"
    assert pods[0]["metadata"]["annotations"]["kubesched.io/lifetime"] == "60s"


def test_bad_rows_are_named(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match=r"n\.csv row 2: column 'cpu_milli': not a number"):
        node_objects(write(tmp_path, "n.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,lots,1,0,\n"))


def test_missing_trace_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(TraceError, match="no such trace file"):
        load_openb(directory=tmp_path)


@needs_trace
def test_the_real_trace_loads_and_schedules() -> None:
    import asyncio

    from kubesched.config import load_config
    from kubesched.sim.run.simulate import simulate

    sc = load_openb("gpuspec33", node_limit=200, pod_limit=300)
    assert len(sc.nodes) == 200 and len(sc.pending_pods) == 300
    result = asyncio.run(simulate(load_config(None).profiles, sc))
    assert result.summary["scheduled"] > 0
    for pod in result.pods:
        if pod["node"]:
            node = next(n for n in sc.nodes if n["metadata"]["name"] == pod["node"])
            wanted = next(p for p in sc.pending_pods if p["metadata"]["name"] == pod["name"])
            terms = wanted["spec"].get("affinity")
            if terms:
                models = terms["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][
                    0
                ]["matchExpressions"][0]["values"]
                assert node["metadata"]["labels"].get(GPU_MODEL_LABEL) in models


def test_the_trace_is_found_where_kubesched_traces_points(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A clone anywhere reads the trace from $KUBESCHED_TRACES/alibaba-gpu-v2023."""
    folder = tmp_path / "alibaba-gpu-v2023"
    folder.mkdir()
    (folder / "openb_node_list_all_node.csv").write_text("sn,cpu_milli,memory_mib,gpu,model\n")
    monkeypatch.setenv("KUBESCHED_TRACES", str(tmp_path))
    assert trace_dir() == folder
    assert "KUBESCHED_TRACES" in TRACE_ABSENT
