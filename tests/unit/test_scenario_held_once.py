"""Reading a large scenario holds the file once: ``load_scenario`` hands its decoded documents
over (``owned``), and the loader lets go of each document and of each step's objects as it copies
them into the scenario, so its peak stays near the decoder's own instead of the decoded file plus
its whole copy (15 MiB of Steps peaked at 370 MiB against the decoder's 264; now 294:
``python -m benchmarks.decode_memory --mib 15`` measures it). A step's ``create`` then holds the
copies, in their order, for whoever reads a loaded scenario's steps (recordings, replays)."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from benchmarks.decode_memory import write_scenario
from kubesched.decoding import load_yaml_all
from kubesched.sim.scenario import reading
from kubesched.sim.scenario.reading import SCENARIO_LIMITS, load_scenario, parse_scenario


def peak(fn: Callable[[], Any]) -> int:
    """The most memory Python held at once while ``fn`` ran, over what it held before."""
    tracemalloc.start()
    try:
        fn()
        _, top = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return top


@pytest.fixture(scope="module")
def text(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("held-once") / "steps.yaml"
    write_scenario(path, 0.3)
    return path.read_text()


def test_the_loader_peaks_near_the_decoder_when_it_owns_the_documents(text: str) -> None:
    decoded = peak(lambda: load_yaml_all(text, SCENARIO_LIMITS))
    owned = peak(lambda: parse_scenario(load_yaml_all(text, SCENARIO_LIMITS), "s", owned=True))
    kept = peak(lambda: parse_scenario(load_yaml_all(text, SCENARIO_LIMITS), "s"))
    assert owned < 1.3 * decoded, (owned, decoded)
    # The documents kept whole beside their copy (what a caller that reads them again needs).
    assert kept > 1.3 * owned, (kept, owned)


def test_load_scenario_hands_its_documents_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "steps.yaml"
    write_scenario(path, 0.02)
    seen: dict[str, Any] = {}

    def spy(docs: Any, *args: Any, **kwargs: Any) -> Any:
        seen.update(kwargs)
        return parse_scenario(docs, *args, **kwargs)

    monkeypatch.setattr(reading, "parse_scenario", spy)
    load_scenario(path)
    assert seen.get("owned") is True


def test_a_steps_objects_are_the_copies_its_scenario_holds_in_their_order(tmp_path: Path) -> None:
    path = tmp_path / "steps.yaml"
    path.write_text(
        """\
kind: Steps
steps:
- at: 1
  create:
  - {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {containers: [{name: c, image: i}]}}
  - {apiVersion: v1, kind: Node, metadata: {name: n1}}
  - {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {nodeName: n1, containers: [{name: c, image: i}]}}
- at: 2
  delete: [{kind: Pod, name: a}]
"""
    )
    sc = load_scenario(path)
    first, second = sc.steps
    assert [o["metadata"]["name"] for o in first.create] == ["b", "n1", "a"]
    assert all(any(o is p for p in [*first.scenario.pods, *first.scenario.nodes]) for o in first.create)
    assert first.create[0]["metadata"]["namespace"] == "default"
    assert second.create == [] and second.scenario is None
    assert first.describe() == "step 1: create 3"
