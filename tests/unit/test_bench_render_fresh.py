"""kubesched.bench.render.fresh: every object a template makes is a copy that shares nothing."""

from __future__ import annotations

import datetime

import yaml

from kubesched.bench.render import fresh


def test_the_copy_is_equal_and_shares_no_mapping_or_list() -> None:
    template = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"ports": [{"p": 80}], "n": 1.5}]}}
    copy = fresh(template)
    assert copy == template
    copy["metadata"]["labels"]["a"] = "changed"
    copy["spec"]["containers"][0]["ports"].append({"p": 81})
    assert template == {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"ports": [{"p": 80}], "n": 1.5}]}}


def test_a_yaml_alias_comes_back_as_two_objects() -> None:
    """YAML's alias makes one list occur twice; each copy of the template must have two."""
    doc = yaml.safe_load("a: &x [1, 2]\nb: *x\n")
    assert doc["a"] is doc["b"]
    copy = fresh(doc)
    assert copy == doc and copy["a"] is not copy["b"]
    copy["a"].append(3)
    assert copy["b"] == [1, 2]


def test_a_value_marshal_cannot_write_is_copied_too() -> None:
    when = datetime.date(2026, 12, 3)
    template = {"when": when, "items": [{"k": "v"}]}
    copy = fresh(template)
    assert copy == template and copy["items"][0] is not template["items"][0]
