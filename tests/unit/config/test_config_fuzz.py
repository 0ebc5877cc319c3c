"""Property tests of the configuration loader: any document either loads or is refused with
``path: reason`` lines (:class:`ConfigError`); nothing else escapes, from the API or from
``kubesched config validate``.

The documents are the repository's configurations, the fully defaulted ones (every plugin's
args spelt out) and a hand-written one using every section, each broken in one to three places
(:mod:`fuzzing`), plus random YAML-ish values and random files (syntax errors, bytes that are
not UTF-8, deep nesting, overlong integers). What loads must hold only values Go's types can hold
and print back to a file that loads. Examples are derandomized so a failure here reproduces
everywhere. Below them, what they found, pinned as examples.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzzing import alias_bomb, alias_deep, field_names, fuzz_settings, hostile, mutated, spliced, values
from hypothesis import given
from hypothesis import strategies as st

from kubesched.cli import main
from kubesched.config import (
    CONFIG_LIMITS,
    MAX_PLUGINS,
    MAX_PROFILES,
    ConfigError,
    effective_config,
    format_config_yaml,
    load_config,
    parse_config,
)
from kubesched.config.models import FLOAT32_MAX, INT64_MAX, KubeSchedulerConfiguration
from kubesched.runtime.registry import default_registry

REPO = Path(__file__).resolve().parents[3]
HEADER = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}

#: A configuration that uses every section, so mutations reach every model.
EVERYTHING: dict[str, Any] = {
    **HEADER,
    "parallelism": 8,
    "percentageOfNodesToScore": 50,
    "podInitialBackoffSeconds": 2,
    "podMaxBackoffSeconds": 20,
    "leaderElection": {"leaderElect": True, "leaseDuration": "20s", "renewDeadline": "15s", "retryPeriod": "3s"},
    "clientConnection": {"qps": 20.5, "burst": 40, "kubeconfig": "/etc/kubeconfig"},
    "extenders": [
        {
            "urlPrefix": "http://127.0.0.1:8888/",
            "filterVerb": "filter",
            "prioritizeVerb": "prioritize",
            "weight": 2,
            "bindVerb": "bind",
            "httpTimeout": "5s",
            "nodeCacheCapable": True,
            "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}],
            "tlsConfig": {"insecure": True},
        }
    ],
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "percentageOfNodesToScore": 70,
            "plugins": {
                "multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 3}]},
                "score": {
                    "disabled": [{"name": "ImageLocality"}],
                    "enabled": [{"name": "TaintToleration", "weight": 5}],
                },
                "filter": {"disabled": [{"name": "*"}], "enabled": [{"name": "NodeResourcesFit"}]},
            },
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "apiVersion": "kubescheduler.config.k8s.io/v1",
                        "kind": "NodeResourcesFitArgs",
                        "ignoredResources": ["example.com/foo"],
                        "scoringStrategy": {
                            "type": "RequestedToCapacityRatio",
                            "resources": [{"name": "cpu", "weight": 2}],
                            "requestedToCapacityRatio": {
                                "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                            },
                        },
                    },
                },
                {
                    "name": "NodeAffinity",
                    "args": {
                        "addedAffinity": {
                            "requiredDuringSchedulingIgnoredDuringExecution": {
                                "nodeSelectorTerms": [
                                    {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}
                                ]
                            },
                            "preferredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "weight": 3,
                                    "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]},
                                }
                            ],
                        }
                    },
                },
                {
                    "name": "PodTopologySpread",
                    "args": {
                        "defaultingType": "List",
                        "defaultConstraints": [
                            {
                                "maxSkew": 2,
                                "topologyKey": "topology.kubernetes.io/zone",
                                "whenUnsatisfiable": "ScheduleAnyway",
                            }
                        ],
                    },
                },
                {
                    "name": "DefaultPreemption",
                    "args": {"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": 50},
                },
                {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 5}},
                {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 30}},
                {"name": "NodeResourcesBalancedAllocation", "args": {"resources": [{"name": "cpu", "weight": 1}]}},
            ],
        },
        {"schedulerName": "second", "plugins": {"score": {"disabled": [{"name": "*"}]}}},
    ],
}


def _bases() -> list[dict[str, Any]]:
    files = [
        yaml.safe_load((REPO / "config" / name).read_text()) for name in ("kubesched.yaml", "second-scheduler.yaml")
    ]
    docs = [dict(HEADER), EVERYTHING, *files]
    # The defaulted forms spell out every plugin set and every plugin's args.
    docs += [effective_config(parse_config(d)) for d in (dict(HEADER), *files)]
    for d in docs:
        parse_config(d)  # every base is valid: what the mutations break is what they changed
    return docs


BASES = _bases()
KEYS = field_names(BASES)
PLUGIN_NAMES = [e.name for e in default_registry().entries()] + ["NoSuchPlugin", "EBSLimits", "DynamicResources"]
VALUES = values(KEYS, extra=[*PLUGIN_NAMES, "LeastAllocated", "MostAllocated", "List", "System", "In", "Gt", "Bogus"])
DOCUMENTS = st.one_of(
    st.sampled_from(BASES).flatmap(lambda base: mutated(base, VALUES, KEYS)),
    # Random documents, with and without a valid header.
    VALUES,
    st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=4).map(lambda d: {**HEADER, **d}),
)


# The first segment of an error path: a field of the configuration, a key the document has, or
# a marker for the whole file (<root>, <file>) or the plugin registry (<plugins>).
_MARKERS = ("<root>", "<file>", "<plugins>")


def _top_keys(doc: Any) -> set[str]:
    return {str(k) for k in doc} if isinstance(doc, dict) else set()


def assert_names_a_field(err: ConfigError, doc: Any) -> None:
    assert err.errors, "a ConfigError without any error"
    known = set(KubeSchedulerConfiguration.model_fields) | _top_keys(doc)
    for line in err.errors:
        assert "Traceback" not in line
        head = line.split(": ", 1)
        assert len(head) == 2 and head[1].strip(), f"not 'path: reason': {line!r}"
        first = re.split(r"[.\[]", head[0], maxsplit=1)[0]
        assert head[0].startswith(_MARKERS) or first in known or any(line.startswith(k) for k in known), (
            f"the path of {line!r} names no field of the configuration"
        )


def check_document(doc: Any) -> None:
    """The property: ``doc`` loads (and prints back, and reloads) or is refused field by field."""
    try:
        cfg = parse_config(doc)
    except ConfigError as err:
        assert_names_a_field(err, doc)
        return
    # What loads holds only values Go's types can hold (int64, finite float32, durations)...
    assert_go_values(effective_config(cfg))
    # ...and can be printed (`config view`), and that output loads again.
    again = parse_config(yaml.safe_load(format_config_yaml(cfg)))
    assert [p.scheduler_name for p in again.profiles] == [p.scheduler_name for p in cfg.profiles]


def assert_go_values(value: Any, path: str = "") -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            assert_go_values(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            assert_go_values(v, f"{path}[{i}]")
    elif isinstance(value, float):
        assert math.isfinite(value) and abs(value) <= FLOAT32_MAX, f"{path}: {value}"
    elif isinstance(value, int) and not isinstance(value, bool):
        assert -(2**63) <= value <= INT64_MAX, f"{path}: {value}"


@fuzz_settings(200)
@given(DOCUMENTS)
def test_any_document_loads_or_is_refused_field_by_field(doc: Any) -> None:
    check_document(doc)


# Text that is hardly YAML: fragments of configurations, indentation, flow syntax, tabs.
_FRAGMENTS = ["apiVersion: kubescheduler.config.k8s.io/v1\n", "kind: KubeSchedulerConfiguration\n", "profiles:\n",
              "  - schedulerName: a\n", "{", "}", "[", "]", ": ", "- ", "\t", "  ", "\n", "'", '"', "&a ", "*a", "!!python/object ",
              "? ", "|", "%YAML 1.1\n", "---\n", "...\n", "\x00", "\ufeff", "ü", "1e999", "null"]  # fmt: skip
TEXTS = st.one_of(
    st.lists(st.sampled_from(_FRAGMENTS), max_size=12).map("".join),
    st.text(max_size=60),
    st.sampled_from(BASES)
    .flatmap(lambda base: mutated(base, VALUES, KEYS))
    .map(lambda d: yaml.safe_dump(d, allow_unicode=True)),
)


@fuzz_settings(200)
@given(spliced(TEXTS))
def test_any_file_loads_or_is_refused_with_reasons(data: bytes) -> None:
    """Files, including ones the YAML parser refuses: :func:`load_config` raises only ConfigError."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_bytes(data)
        try:
            load_config(path)
        except ConfigError as err:
            assert err.errors and all(": " in line for line in err.errors)
            assert str(err).startswith(str(path) + ": ")


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@fuzz_settings(40)
@given(st.sampled_from(BASES).flatmap(lambda base: mutated(base, VALUES, KEYS)))
def test_config_validate_exits_1_with_path_lines(doc: Any) -> None:
    """`kubesched config validate`: exit 0 and "valid", or exit 1 and one "file: path: reason" per line."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
        code, out, err = run_cli(["config", "validate", str(path)])
    if code == 0:
        assert "valid" in out and not err
        return
    assert code == 1 and not out
    lines = err.rstrip("\n").split("\n")
    assert lines and all(line.startswith(f"{path}: ") and line.count(": ") >= 2 for line in lines), err


# --- what the fuzzers found, pinned ---------------------------------------------------------------

_HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            (_HEAD + "parallelism: " + "9" * 5000 + "\n").encode(),
            "<file>: not valid YAML or JSON: yaml: line 3: an integer of 5000 digits, more than the limit of 400",
        ),
        ((_HEAD + "profiles: []\n").encode() + b"\xff\xfe", "<file>: not UTF-8 text: byte 89 cannot be decoded"),
        (
            (_HEAD + "profiles: " + "[" * 3000 + "]" * 3000 + "\n").encode(),
            "<file>: not valid YAML or JSON: yaml: line 3: nested too deeply: more than 200 levels",
        ),
        (
            b'{"kind": ' + b"[" * 3000 + b"]" * 3000 + b"}",
            "<file>: not valid YAML or JSON: nested too deeply: more than 200 levels",
        ),
        (
            (_HEAD + "profiles: " + "[" * 150 + "]" * 150 + "\n").encode(),
            "profiles" + "[0]" * 99 + ": nested more than 100 levels deep",
        ),
    ],
    ids=["integer-of-5000-digits", "not-utf-8", "nested-3000-deep", "json-nested-3000-deep", "nested-150-deep"],
)
def test_files_python_cannot_decode_are_refused_with_a_reason(tmp_path: Path, content: bytes, expected: str) -> None:
    """These raised ValueError, UnicodeDecodeError and RecursionError out of load_config."""
    path = tmp_path / "config.yaml"
    path.write_bytes(content)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.errors == [expected]


def errors_of(doc: Any) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_config(doc)
    return info.value.errors


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"clientConnection": {"qps": float("nan")}}, "clientConnection.qps: must be a finite number, got nan"),
        ({"clientConnection": {"qps": float("inf")}}, "clientConnection.qps: must be a finite number, got inf"),
        (
            {"clientConnection": {"qps": 1e300}},
            "clientConnection.qps: must be a finite number within the float32 range, got 1e+300",
        ),
        (
            {"leaderElection": {"leaseDuration": "99999999999999999999h"}},
            "leaderElection.leaseDuration: invalid duration '99999999999999999999h': out of range "
            "(at most 2562047h47m16.854775807s)",
        ),
        ({"podMaxBackoffSeconds": 10**400}, f"podMaxBackoffSeconds: must fit a 64-bit integer, got {10**400}"),
        (
            {"profiles": [{"pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 10**30}}]}]},
            f"profiles[0].pluginConfig[0].args.bindTimeoutSeconds: must fit a 64-bit integer, got {10**30}",
        ),
        ({1: 2}, "<root>: key 1 is not a string; field names are strings"),
        (
            {"profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {None: 1}}]}]},
            "profiles[0].pluginConfig[0].args: key null is not a string; field names are strings",
        ),
        ({"profiles": [{"\n": 1}]}, "profiles[0]['\\n']: unknown field"),
    ],
    ids=[
        "qps-nan",
        "qps-inf",
        "qps-beyond-float32",
        "duration-beyond-int64",
        "integer-beyond-int64",
        "plugin-arg-beyond-int64",
        "integer-key",
        "null-key-in-args",
        "key-with-a-newline",
    ],
)
def test_values_go_cannot_hold_are_refused(fields: dict[Any, Any], expected: str) -> None:
    """Each of these loaded (or failed later, as an OverflowError) where upstream's decoding refuses them."""
    assert errors_of({**HEADER, **fields}) == [expected]


def test_config_validate_in_a_real_process_prints_no_traceback(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(
        yaml.safe_dump({**HEADER, "parallelism": "many", "profiles": [{"plugins": [{"name": "x"}]}]}), encoding="utf-8"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "kubesched", "config", "validate", str(path)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        f"{path}: parallelism: must be an integer, got 'many'",
        f"{path}: profiles[0].plugins: must be a mapping, got a list",
    ]


def test_config_validate_refuses_an_undecodable_file_with_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text(_HEAD + "profiles: " + "[" * 3000 + "]" * 3000 + "\n", encoding="utf-8")
    assert run_cli(["config", "validate", str(path)]) == (
        1,
        "",
        f"{path}: <file>: not valid YAML or JSON: yaml: line 3: nested too deeply: more than 200 levels\n",
    )


# --- hostile files: aliases, depth, counts, long numbers --------------------------------------------

#: What each limit's message says, so a refusal can be matched to a limit.
LIMIT_WORDS = ("excessive aliasing", "nested too deeply", "digits", "more than the limit of", "nested more than")


@fuzz_settings(100)
@given(st.sampled_from(BASES).map(lambda d: yaml.safe_dump(d, allow_unicode=True)).flatmap(hostile))
def test_hostile_files_load_or_are_refused_naming_the_limit(data: bytes) -> None:
    """A configuration with an alias bomb, aliases or brackets nesting deep, an overlong integer
    or a long list put in: it loads (what is within bounds) or is a ConfigError naming a limit,
    or the field the hostile value broke."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "config.yaml"
        path.write_bytes(data)
        try:
            load_config(path)
        except ConfigError as err:
            assert err.errors and all(": " in line for line in err.errors)
            assert str(err).startswith(str(path) + ": ")


BOMB = _HEAD + alias_bomb()


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            BOMB,
            "<file>: not valid YAML or JSON: yaml: line 6: document contains excessive aliasing: aliases expand "
            "to 4630 of 4674 nodes (at most 99% may come from aliases)",
        ),
        (
            _HEAD + "extra:\n" + alias_deep(250).replace("d0:", "  d0:").replace("\nd", "\n  d"),
            "<file>: not valid YAML or JSON: yaml: line 202: nested too deeply: more than 200 levels",
        ),
        (
            _HEAD + "profiles:\n" + "- {}\n" * (MAX_PROFILES + 1),
            f"profiles: {MAX_PROFILES + 1} profiles, more than the limit of {MAX_PROFILES}",
        ),
        (
            _HEAD + "profiles:\n- plugins:\n    filter:\n      enabled:\n" + "      - name: X\n" * (MAX_PLUGINS + 1),
            f"profiles[0].plugins: {MAX_PLUGINS + 1} plugin entries, more than the limit of {MAX_PLUGINS}",
        ),
        (
            _HEAD + "profiles:\n- pluginConfig:\n" + "  - name: X\n" * (MAX_PLUGINS + 1),
            f"profiles[0].pluginConfig: {MAX_PLUGINS + 1} entries, more than the limit of {MAX_PLUGINS}",
        ),
        (
            _HEAD + "# " + "x" * CONFIG_LIMITS.max_bytes + "\n",
            f"<file>: the document is {len(_HEAD) + CONFIG_LIMITS.max_bytes + 3} bytes, more than the limit of "
            f"{CONFIG_LIMITS.max_bytes} bytes",
        ),
    ],
    ids=["alias-bomb", "aliases-250-deep", "101-profiles", "1001-plugins", "1001-plugin-configs", "over-3-mib"],
)
def test_files_past_a_limit_are_refused_naming_it(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.errors == [expected]


@pytest.mark.parametrize("command", ["validate", "run", "simulate"])
def test_the_cli_refuses_a_bomb_configuration_naming_the_file(tmp_path: Path, command: str) -> None:
    """`config validate`, `run` and `simulate` hung for minutes on this 9-level file."""
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB, encoding="utf-8")
    argv = {
        "validate": ["config", "validate", str(path)],
        "run": ["run", "--config", str(path)],
        "simulate": ["simulate", "--no-progress", "--config", str(path)],
    }[command]
    code, out, err = run_cli(argv)
    assert code != 0 and not out
    assert f"{path}: <file>: not valid YAML or JSON: yaml: line 6: document contains excessive aliasing" in err
