"""pluginConfig args are decoded strictly, as 1.37's are (``strict decoding error: unknown
field``): a key the plugin's ``Args`` model does not name is refused, with its path, whether the
plugin is in-tree or out-of-tree and whatever ``extra`` its model declares (but ``allow``)."""

from __future__ import annotations

import importlib
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kubesched.config import ConfigError, load_config, parse_config
from kubesched.runtime.registry import Registry, default_registry
from kubesched.testing import plugin_framework

ROOT = Path(__file__).resolve().parents[3]
HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


class Window(BaseModel):  # pydantic's default: extra keys ignored
    start: int = 0
    end: int = 24


class QuietHoursArgs(BaseModel):
    quiet: Window = Window()
    penalty_percent: int = Field(50, alias="penaltyPercent")


class QuietHours:
    name = "QuietHours"
    Args = QuietHoursArgs

    def __init__(self, args: Any, handle: Any) -> None:
        self.args = args

    def score(self, state: Any, pod: Any, node: Any) -> int:
        return 100 - self.args.penalty_percent


class OpenArgs(BaseModel):
    model_config = ConfigDict(extra="allow")
    weight: int = 1


class Open:
    name = "Open"
    Args = OpenArgs

    def __init__(self, args: Any, handle: Any) -> None:
        self.args = args

    def score(self, state: Any, pod: Any, node: Any) -> int:
        return self.args.weight


def registry() -> Registry:
    reg = Registry()
    for e in default_registry().entries():
        reg.register(e.cls, e.name, e.distribution)
    reg.register(QuietHours)
    reg.register(Open)
    return reg


def config(args: dict[str, Any], plugin: str = "QuietHours") -> dict[str, Any]:
    return {
        **HEADER,
        "profiles": [
            {
                "plugins": {"multiPoint": {"enabled": [{"name": plugin}]}},
                "pluginConfig": [{"name": "DefaultPreemption", "args": {}}, {"name": plugin, "args": args}],
            }
        ],
    }


def errors(data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(data, registry=registry())
    return info.value.errors


def test_a_misspelt_key_of_an_out_of_tree_plugin_is_refused_with_its_path() -> None:
    assert errors(config({"penaltyPercnt": 10})) == ["profiles[0].pluginConfig[1].args.penaltyPercnt: unknown field"]


def test_a_misspelt_key_deeper_down_is_refused_too() -> None:
    assert errors(config({"quiet": {"start": 22, "ende": 6}})) == [
        "profiles[0].pluginConfig[1].args.quiet.ende: unknown field"
    ]


def test_the_keys_the_model_names_still_validate() -> None:
    (profile,) = parse_config(config({"penaltyPercent": 10, "quiet": {"start": 22}}), registry=registry()).profiles
    args = profile.plugin_args["QuietHours"]
    assert type(args) is QuietHoursArgs and args.penalty_percent == 10 and args.quiet.start == 22


def test_a_model_that_allows_extra_keys_gets_them() -> None:
    (profile,) = parse_config(config({"weight": 3, "colour": "red"}, "Open"), registry=registry()).profiles
    assert profile.plugin_args["Open"].model_extra == {"colour": "red"}


def test_an_in_tree_plugins_misspelt_key_is_refused() -> None:
    data = config({"scoringStrategyy": {"type": "MostAllocated"}}, "NodeResourcesFit")
    assert errors(data) == ["profiles[0].pluginConfig[1].args.scoringStrategyy: unknown field"]


def test_the_kit_refuses_a_misspelt_key_as_the_configuration_does() -> None:
    with pytest.raises(ValidationError, match="penaltyPercnt"):
        plugin_framework(QuietHours, args={"penaltyPercnt": 10})
    assert plugin_framework(QuietHours, args={"penaltyPercent": 10}).plugin().args.penalty_percent == 10


def shipped_registry() -> Registry:
    """The installed plugins and every plugin package of this checkout's ``plugins/``, by their
    entry points, as ``pip install ./plugins/...`` would add them."""
    reg = Registry()
    for e in default_registry().entries():
        reg.register(e.cls, e.name, e.distribution)
    for project in sorted((ROOT / "plugins").glob("*/pyproject.toml")):
        if str(project.parent) not in sys.path:
            sys.path.insert(0, str(project.parent))
        points = tomllib.loads(project.read_text())["project"].get("entry-points", {}).get("kubesched.plugins", {})
        for name, target in points.items():
            module, _, attr = target.partition(":")
            if name not in reg:
                reg.register(getattr(importlib.import_module(module), attr), name)
    return reg


SHIPPED = sorted(
    p
    for p in [*(ROOT / "config").rglob("*.yaml"), *(ROOT / "plugins").rglob("*.yaml")]
    if "kind: KubeSchedulerConfiguration" in p.read_text()
)


def test_the_shipped_configurations_are_found() -> None:
    assert len(SHIPPED) >= 8


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_shipped_configuration_still_validates(path: Path) -> None:
    load_config(path, registry=shipped_registry())
