"""The docs' `kubesched bench` page (docs/bench.md) names the ops the workload reader runs and
those it refuses, once each, as kubesched/bench/workload.py has them."""

from __future__ import annotations

import re

from docs_pages import page, section

from kubesched.bench import workload


def section_text() -> str:
    return section(page("bench.md"), "# How fast is my plugin? (`kubesched bench`)")


def refused_in_readme() -> set[str]:
    (sentence,) = re.findall(r"Upstream's other ops are refused by name:(.*?)\.\n", section_text(), re.DOTALL)
    return set(re.findall(r"`(\w+)`", sentence))


def test_the_refused_ops_are_the_ones_the_reader_refuses() -> None:
    assert refused_in_readme() == set(workload._NOT_RUN)


def test_every_op_the_reader_runs_is_described_and_never_said_not_to_run() -> None:
    text = section_text()
    for op in workload._FIELDS:
        assert f"`{op}`" in text, op
    assert not set(workload._FIELDS) & refused_in_readme()
    for sentence in re.split(r"(?<=[.)])\s", text):
        if re.search(r"not run|does not run|refused", sentence):
            assert not {op for op in workload._FIELDS if f"`{op}`" in sentence}, sentence
