"""What ``kubesched bench`` reads is bounded: workload files and templates go through the bounded
decoder (alias bombs, bytes that are not UTF-8, deep nesting refused with the file named, exit 2,
no traceback), counts have a maximum named with their field, and ``--timeout`` holds while ops
create objects."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from kubesched.bench.errors import WorkloadError
from kubesched.bench.ops import OpRunner
from kubesched.bench.runner import default_subject
from kubesched.bench.templates import read_any, read_template
from kubesched.bench.workload import MAX_OBJECTS, load_workloads, parse_workloads
from kubesched.cli.main import main
from kubesched.framework.features import FeatureGates

#: A "billion laughs": some 400 bytes that expand to 10^9 strings.
BOMB = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},"
        f"*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)},*{chr(97 + i)}]"
        for i in range(8)
    ]
)
MEASURE = {"opcode": "createPods", "count": 1, "collectMetrics": True}


def _case(*ops: dict[str, Any], params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [{"name": "C", "workloadTemplate": list(ops), "workloads": [{"name": "w", "params": params or {}}]}]


def _bench(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(["bench", "--no-progress", *argv])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def test_an_alias_bomb_in_templateparams_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(
        BOMB.replace("\n", "\n  ").join(["x:\n  ", ""])
        + "\n- name: C\n  workloadTemplate:\n  - {opcode: createAny, templatePath: t.yaml, templateParams: {v: *i}}\n"
        "  workloads: [{name: w}]\n"
    )
    started = time.monotonic()
    with pytest.raises(WorkloadError, match=r"bomb.yaml: not valid YAML: yaml: line \d+: document contains excessive"):
        load_workloads(path)
    assert time.monotonic() - started < 2


@pytest.mark.parametrize("reader", ["pod", "any"])
def test_an_alias_bomb_in_a_template_is_refused_naming_the_template(tmp_path: Path, reader: str) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n" + BOMB.replace("\n", "\n    ").join(["    ", ""])
    )
    with pytest.raises(WorkloadError, match=r"pod.yaml: template is not valid YAML: .*excessive aliasing"):
        read_template(path, "Pod") if reader == "pod" else read_any(path, {})


def test_a_filled_in_template_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\ndata:\n" + "".join(f"  k{i}: '{{{{.V}}}}'\n" for i in range(10)))
    with pytest.raises(WorkloadError, match=r"cm.yaml: template is more than the limit of 3145728 bytes"):
        read_any(path, {"V": "x" * 1_000_000})


def test_a_workload_file_not_utf8_is_exit_2_naming_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"- name: caf\xe9\n")
    code, err = _bench(capsys, str(path))
    assert code == 2
    assert "latin1.yaml: cannot read workload file: not UTF-8 text: byte 11 cannot be decoded" in err


def test_a_deeply_nested_workload_file_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("[" * 5000 + "]" * 5000 + "\n")
    code, err = _bench(capsys, str(path))
    assert code == 2
    assert "deep.yaml: not valid YAML: yaml: line 1: nested too deeply: more than 200 levels" in err


def test_a_template_not_utf8_is_exit_2_naming_the_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pod.yaml").write_bytes(b"apiVersion: v1\nkind: Pod\nmetadata: {name: caf\xe9}\n")
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(_case({**MEASURE, "podTemplatePath": "pod.yaml"})))
    code, err = _bench(capsys, str(path))
    assert code == 2
    assert "pod.yaml: cannot read template: not UTF-8 text: byte 45 cannot be decoded" in err


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (
            _case({"opcode": "createNodes", "count": 100_000_000}, MEASURE),
            f"(createNodes).count: must be at most {MAX_OBJECTS}, got 100000000",
        ),
        (
            _case({"opcode": "createNodes", "countParam": "$n"}, MEASURE, params={"n": 10**12}),
            f"workloadTemplate[0] (createNodes).count: must be at most {MAX_OBJECTS}, got 1000000000000",
        ),
        (
            _case({"opcode": "createPods", "count": 2_000_000, "collectMetrics": True}),
            f"(createPods).count: must be at most {MAX_OBJECTS}",
        ),
        (
            _case(
                {
                    "opcode": "createPodSets",
                    "count": 1000,
                    "namespacePrefix": "ns",
                    "createPodsOp": {"opcode": "createPods", "count": 5000},
                },
                MEASURE,
            ),
            "workloadTemplate[0] (createPodSets): 1000 sets of 5000 pods make 5001000 objects, more than the limit",
        ),
        (
            _case({"opcode": "createNodes", "count": 600_000}, {**MEASURE, "count": 600_000}),
            f"C/w: workloadTemplate: the ops make 1200000 objects, more than the limit of {MAX_OBJECTS}",
        ),
        (
            _case(
                {"opcode": "churn", "mode": "recreate", "number": 10**9, "templatePaths": ["t.yaml"]},
                MEASURE,
            ),
            f"(churn).number: must be at most {MAX_OBJECTS}, got 1000000000",
        ),
    ],
)
def test_a_count_past_the_maximum_is_refused_naming_its_field(data: Any, expected: str, tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    with pytest.raises(WorkloadError) as info:
        parse_workloads(data, tmp_path, "mine.yaml")
    assert expected in str(info.value)


async def test_timeout_holds_while_nodes_are_created(tmp_path: Path) -> None:
    (w,) = parse_workloads(_case({"opcode": "createNodes", "count": 500_000}, MEASURE), tmp_path, "big.yaml")
    gates = FeatureGates(w.feature_gates)
    cfg, profile = default_subject().load(gates)
    runner = OpRunner(w, cfg, profile, gates, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(WorkloadError, match=r"C/w: createNodes: \d+ objects made when the run reached 0.5 s"):
        await runner.run()
    assert time.monotonic() - started < 5
    assert 0 < runner._nodes < 500_000
