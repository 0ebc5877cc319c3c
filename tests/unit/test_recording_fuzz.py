"""A fuzzer of the recordings the simulator replays (``sim serve --record``, read back by
``simulate --scenario``): a recording the :class:`Recorder` writes — nodes, running and pending
pods with their observed-node and lifetime annotations, and a ``kind: Steps`` document that
creates, patches and deletes — broken in one to three places (wrong types, huge or negative or
not-a-number times, missing and unknown fields, :mod:`fuzzing`), or made hostile (alias bombs,
deep nesting, long numbers, bytes that are not UTF-8).

Every one replays to the end within a deadline, or is refused with a :class:`ScenarioError`
naming the document and field (a step that cannot be applied is a step problem in the
report) — never another exception. Examples are derandomized so a failure here reproduces
everywhere; ``KUBESCHED_FUZZ_EXAMPLES`` runs more.
"""

from __future__ import annotations

import asyncio
import copy
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzzing import field_names, fuzz_settings, hostile, mutated, spliced, values
from hypothesis import event, given
from hypothesis import strategies as st

from kubesched.config import load_config
from kubesched.sim.run.simulate import SimulationSettings, simulate
from kubesched.sim.scenario.reading import ScenarioError, load_scenario, parse_scenario
from kubesched.sim.scenario.recording import Recorder

REPO = Path(__file__).resolve().parents[2]
PROFILES = load_config(REPO / "config" / "kubesched.yaml").profiles
#: seconds a recording may take to be read, and to be replayed (a 60 s horizon, simulated)
READ_DEADLINE = 5.0
RUN_DEADLINE = 20.0

Obj = dict[str, Any]


class _Wall:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _node(name: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "zone": "a"}},
        "spec": {},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}},
    }


def _pod(name: str, on: str | None = None, phase: str = "Pending") -> Obj:
    spec: Obj = {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "500m"}}}]}
    if on:
        spec["nodeName"] = on
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "labels": {"app": "web"}},
        "spec": spec,
        "status": {"phase": phase},
    }


def _recording() -> list[Any]:
    """What the recorder writes of a small cluster's minute: every sort of step."""
    wall = _Wall()
    rec = Recorder(wall)
    rec.observe("ADDED", "Node", _node("n1"))
    rec.observe("ADDED", "Pod", _pod("old", on="n1"))
    rec.observe("ADDED", "Pod", _pod("waiting"))
    rec.begin()
    wall.t += 1.5
    rec.observe("ADDED", "Pod", _pod("new"))
    wall.t += 0.5
    rec.observe("MODIFIED", "Pod", _pod("new", on="n1"))
    wall.t += 2
    rec.observe("DELETED", "Pod", _pod("old", on="n1"))
    rec.observe("ADDED", "Node", _node("n2"))
    cordoned = _node("n1")
    cordoned["spec"] = {"unschedulable": True, "taints": [{"key": "k", "effect": "NoSchedule"}]}
    rec.observe("MODIFIED", "Node", cordoned)
    wall.t += 1
    rec.observe("MODIFIED", "Pod", _pod("new", on="n1", phase="Succeeded"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rec.yaml"
        rec.write(path)
        return [d for d in yaml.safe_load_all(path.read_text()) if d]


RECORDING = _recording()
KEYS = field_names(RECORDING)
VALUES = values(
    KEYS,
    extra=["Steps", "Pod", "Node", "Namespace", "n1", "n2", "nosuch", "90s", "1m30s", "-1s", "1e308s", "99999h",
           "9223372036854775807s", ".nan", "NaN", "inf", 1e308, float("nan"), float("inf"), -1.0, 10**30],
)  # fmt: skip


def _replay(docs: list[Any]) -> None:
    started = time.monotonic()
    try:
        scenario = parse_scenario(docs)
    except ScenarioError as err:
        assert time.monotonic() - started < READ_DEADLINE
        message = str(err)
        assert message and "Traceback" not in message, message
        assert ": " in message, message
        event("refused")
        return
    assert time.monotonic() - started < READ_DEADLINE
    event("loaded")
    started = time.monotonic()
    settings = SimulationSettings(plugin_results=False, horizon=60.0)
    result = asyncio.run(asyncio.wait_for(simulate(PROFILES, scenario, settings), RUN_DEADLINE))
    assert time.monotonic() - started < RUN_DEADLINE
    assert {p["phase"] for p in result.pods} <= {"Scheduled", "Unschedulable", "Error", "Completed"}
    event("replayed")


@fuzz_settings(150)
@given(mutated(RECORDING, VALUES, KEYS))
def test_any_recording_replays_or_is_refused_naming_its_field(docs: Any) -> None:
    _replay(docs if isinstance(docs, list) else [docs])


_STEPS_TEXT = yaml.safe_dump(RECORDING[-1])


@fuzz_settings(60)
@given(st.one_of(hostile(_STEPS_TEXT), spliced(st.just(yaml.safe_dump_all(RECORDING)))))
def test_a_hostile_recording_file_is_refused_naming_it_in_time(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "rec.yaml"
        path.write_bytes(data)
        started = time.monotonic()
        try:
            load_scenario(path)
            event("read")
        except ScenarioError as err:
            assert str(err).startswith(str(path)), str(err)
            event("refused")
        assert time.monotonic() - started < READ_DEADLINE


# --- what the fuzzer's values found, pinned ------------------------------------------------------


@pytest.mark.parametrize(
    ("at", "expected"),
    [
        # Each was taken: NaN ran the step at the start, an infinite or 1e308 time ran it at the end
        # and wrote "simulatedSeconds: inf" into a report that is then no JSON.
        (float("nan"), r"steps\[0\]\.at: Invalid value: nan: a duration \(90s\) or seconds, not NaN"),
        (float("inf"), r"steps\[0\]\.at: Invalid value: inf: out of range \(at most 2562047h47m16.854775807s\)"),
        (1e308, r"steps\[0\]\.at: Invalid value: 1e\+308: out of range"),
        (10**30, r"steps\[0\]\.at: Invalid value: 10{30}: out of range"),
    ],
)
def test_a_step_time_past_any_duration_is_refused_naming_it(at: Any, expected: str) -> None:
    docs = copy.deepcopy(RECORDING)
    docs[-1]["steps"][0]["at"] = at
    with pytest.raises(ScenarioError, match=expected):
        parse_scenario(docs)


def test_the_longest_go_duration_as_seconds_is_still_a_time() -> None:
    docs = copy.deepcopy(RECORDING)
    docs[-1]["steps"][0]["at"] = 9223372036.0
    assert parse_scenario(docs).steps[0].at == 9223372036.0


@pytest.mark.parametrize("field", ["delete", "patch"])
@pytest.mark.parametrize("value", [5, True, "n1"])
def test_a_steps_delete_or_patch_that_is_no_list_is_refused_naming_it(field: str, value: Any) -> None:
    # A number or a boolean was a TypeError; a string was read letter by letter.
    docs = copy.deepcopy(RECORDING)
    docs[-1]["steps"][0][field] = value
    with pytest.raises(ScenarioError, match=rf"document \d+\.steps\[0\]\.{field}: a list of "):
        parse_scenario(docs)


@pytest.mark.parametrize("value", [[None], "x", 5])
@pytest.mark.parametrize("where", ["start", "step"])
def test_annotations_that_are_no_mapping_are_refused_naming_the_field(where: str, value: Any) -> None:
    # The lifetime was read from them first: a list was an AttributeError.
    docs = copy.deepcopy(RECORDING)
    pod = docs[1] if where == "start" else docs[-1]["steps"][0]["create"][0]
    pod["metadata"]["annotations"] = value
    with pytest.raises(ScenarioError, match=r"Go struct field ObjectMeta\.metadata\.annotations of type map"):
        parse_scenario(docs)
