"""kubesched.decoding: go-yaml's alias budget, the depth, size and digit limits, Go's words for
JSON that does not parse; and every file a command reads refusing an alias bomb, naming the file."""

from __future__ import annotations

import contextlib
import gc
import io
from pathlib import Path
from typing import Any

import pytest
import yaml
from fuzzing import alias_bomb, alias_deep

from kubesched.cli import main
from kubesched.decoding import (
    MAX_DEPTH,
    MAX_INTEGER_DIGITS,
    DecodeError,
    Limits,
    allowed_alias_ratio,
    load_json,
    load_yaml,
    load_yaml_all,
    load_yaml_or_json,
    read_text,
)
from kubesched.research.configure import experiment_config
from kubesched.research.errors import ReplayError
from kubesched.research.sweep import SweepError, load_grid_file
from kubesched.sim.apiserver.faults import FaultConfigError
from kubesched.sim.apiserver.faults import load_config as load_fault_config


@pytest.mark.parametrize(
    ("decoded", "ratio"),
    [(1000, 0.99), (400_000, 0.99), (2_200_000, 0.545), (4_000_000, 0.10), (40_000_000, 0.10)],
)
def test_the_alias_budget_is_go_yamls(decoded: int, ratio: float) -> None:
    assert allowed_alias_ratio(decoded) == pytest.approx(ratio)


@pytest.mark.parametrize("levels", [4, 5, 9, 12, 30])
def test_alias_bombs_are_refused_before_they_expand(levels: int) -> None:
    """The refusal comes while composing: at the 4th level, however many follow."""
    with pytest.raises(DecodeError) as info:
        load_yaml(alias_bomb(levels))
    assert info.value.limit == "aliases"
    assert info.value.line == 4
    assert str(info.value).startswith("yaml: line 4: document contains excessive aliasing: aliases expand to ")


def test_aliases_within_the_budget_load_as_shared_values() -> None:
    """Anchors as manifests use them (shared labels, a merged container) are untouched, and a
    small document may be nearly all aliases, as go-yaml allows below 1000 nodes."""
    doc = load_yaml(
        "labels: &l {app: web}\nselector: *l\nbase: &c {image: i, name: c}\ncontainers: [{<<: *c, name: d}]\n"
    )
    assert doc == {
        "labels": {"app": "web"},
        "selector": {"app": "web"},
        "base": {"image": "i", "name": "c"},
        "containers": [{"image": "i", "name": "d"}],
    }
    small = load_yaml(alias_bomb(3))  # 9 + 81 + 729 nodes, 90% of them aliases
    assert len(small["c"]) == 9 and small["c"][0] == small["b"]


@pytest.mark.parametrize(
    ("text", "limit", "message"),
    [
        # the mapping holding the anchors is the first level
        (alias_deep(MAX_DEPTH), "depth", f"yaml: line 200: nested too deeply: more than {MAX_DEPTH} levels"),
        ("x: " + "[" * (MAX_DEPTH + 1), "depth", f"yaml: line 1: nested too deeply: more than {MAX_DEPTH} levels"),
        # past libyaml's own limit (1000 from 0.2.6 on), which its scanner meets reading ahead:
        # the same words and line whichever PyYAML and libyaml are installed
        (
            "x: " + "[" * 3000 + "]" * 3000,
            "depth",
            f"yaml: line 1: nested too deeply: more than {MAX_DEPTH} levels",
        ),
        (
            "a: 1\nx: [\n" + "[" * 3000 + "]" * 3001,
            "depth",
            f"yaml: line 3: nested too deeply: more than {MAX_DEPTH} levels",
        ),
        (
            "a: 1\nb: -" + "9" * (MAX_INTEGER_DIGITS + 1),
            "digits",
            f"yaml: line 2: an integer of {MAX_INTEGER_DIGITS + 1} digits, more than the limit of {MAX_INTEGER_DIGITS}",
        ),
        ("a: &a [1, *a]", "", "yaml: line 1: anchor 'a' value contains itself"),
        ("a: *nowhere", "", "yaml: line 1: unknown anchor 'nowhere' referenced"),
    ],
    ids=[
        "aliases-too-deep",
        "brackets-too-deep",
        "brackets-past-libyamls-limit",
        "brackets-past-libyamls-limit-line-3",
        "long-integer",
        "recursive-anchor",
        "unknown-anchor",
    ],
)
def test_yaml_past_a_limit_says_which_and_where(text: str, limit: str, message: str) -> None:
    with pytest.raises(DecodeError) as info:
        load_yaml(text)
    assert (info.value.limit, str(info.value)) == (limit, message)


def test_the_deepest_and_longest_allowed_load() -> None:
    assert load_yaml(alias_deep(MAX_DEPTH - 1))["d0"] == ["x"]
    assert load_yaml("x: " + "9" * MAX_INTEGER_DIGITS)["x"] == int("9" * MAX_INTEGER_DIGITS)
    assert load_json("[" * MAX_DEPTH + "]" * MAX_DEPTH) == load_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ('{"a": NaN}', "invalid character 'N' looking for beginning of value"),
        ('{"a": 1,}', "invalid character '}' looking for beginning of object key string"),
        ('{"a" 1}', "invalid character '1' after object key"),
        ('{"a": 1 "b": 2}', "invalid character '\"' after object key:value pair"),
        ('{"a": [1 2]}', "invalid character '2' after array element"),
        ('{"a": 1} x', "invalid character 'x' after top-level value"),
        ('{"a": "\\q"}', "invalid character 'q' in string escape code"),
        ('{"a": "b', "unexpected end of JSON input"),
        ("[" * 5000, f"nested too deeply: more than {MAX_DEPTH} levels"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"nested too deeply: more than {MAX_DEPTH} levels"),
        (
            "[-" + "1" * 5001 + "]",
            "json: cannot unmarshal number -11111111111111111111111111111... into Go value of type float64 "
            f"(an integer of 5001 digits, more than the limit of {MAX_INTEGER_DIGITS})",
        ),
    ],
    ids=[
        "nan",
        "trailing-comma",
        "missing-colon",
        "missing-comma-object",
        "missing-comma-array",
        "extra-data",
        "bad-escape",
        "unterminated",
        "5000-deep",
        "201-deep",
        "5001-digits",
    ],
)
def test_json_is_refused_in_gos_words(data: str, message: str) -> None:
    with pytest.raises(DecodeError) as info:
        load_json(data)
    assert str(info.value) == message


def test_bytes_that_are_no_text_get_the_yaml_readers_words() -> None:
    assert load_yaml("a: é".encode("utf-16")) == {"a": "é"}  # a byte order mark, then UTF-16
    for data, message in [
        (b"a: \xff", "yaml: invalid leading UTF-8 octet at byte 3"),
        (b"a: \xc3(", "yaml: invalid trailing UTF-8 octet at byte 3"),
        (b"a: \xe2\x82", "yaml: incomplete UTF-8 octet sequence at byte 3"),
        (b"\xff\xfea\x00:", "yaml: incomplete UTF-16 character at byte 4"),
    ]:
        with pytest.raises(DecodeError, match="^" + message + "$"):
            load_yaml(data)


def test_size_is_checked_before_parsing_and_files_before_reading(tmp_path: Path) -> None:
    with pytest.raises(DecodeError, match="^the document is 11 bytes, more than the limit of 10 bytes$"):
        load_yaml_all("a: 1\nb: 22\n", Limits(max_bytes=10))
    big = tmp_path / "big.yaml"
    with big.open("wb") as fh:
        fh.truncate(10**12)  # sparse: a terabyte that is never read
    with pytest.raises(DecodeError) as info:
        read_text(big, 1024)
    assert (info.value.limit, str(info.value)) == (
        "bytes",
        f"the document is {10**12} bytes, more than the limit of 1024 bytes",
    )


def test_a_small_file_is_read_without_asking_for_the_limit(tmp_path: Path) -> None:
    """Reading asks for the file's size, not the limit (512 MiB for a scenario) at once."""
    import tracemalloc

    small = tmp_path / "small.yaml"
    small.write_text("a: 1\n" * 100)
    tracemalloc.start()
    try:
        assert read_text(small, 512 * 2**20) == "a: 1\n" * 100
        _, top = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert top < 2**20, top


def test_a_pipe_is_read_whole_and_cut_off_at_the_limit(tmp_path: Path) -> None:
    """A pipe has no size: it is read on until the limit, and a byte past it is refused."""
    import os
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def feed(data: bytes) -> None:
        with fifo.open("wb") as fh:
            fh.write(data)

    for data, refused in ((b"x" * 1024, False), (b"x" * 1025, True)):
        writer = threading.Thread(target=feed, args=(data,))
        writer.start()
        try:
            if refused:
                with pytest.raises(DecodeError, match="more than the limit of 1024 bytes"):
                    read_text(fifo, 1024)
            else:
                assert read_text(fifo, 1024) == data.decode()
        finally:
            writer.join(5)


def test_a_deadline_stops_a_long_decoding() -> None:
    with pytest.raises(DecodeError) as info:
        load_yaml("[" + ", ".join(["x"] * 5000) + "]", Limits(deadline=0.0))
    assert info.value.limit == "deadline"


def test_json_or_yaml_reads_flow_yaml_that_is_not_json() -> None:
    assert load_yaml_or_json('{"a": 1}') == {"a": 1}
    assert load_yaml_or_json("{a: 1, b: [x]}") == {"a": 1, "b": ["x"]}
    with pytest.raises(DecodeError, match="nested too deeply"):
        load_yaml_or_json("{" + '"a": [' * 300)


# --- every file a command reads --------------------------------------------------------------------


def _cli(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, err.getvalue()


@pytest.mark.parametrize("reader", ["fault-config", "replay-config", "sweep-grid", "migrate-policy"])
def test_each_file_reader_refuses_a_bomb_naming_the_file(tmp_path: Path, reader: str) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(alias_bomb(), encoding="utf-8")
    expected = "yaml: line 4: document contains excessive aliasing"
    error: Any
    if reader == "migrate-policy":
        code, err = _cli(["config", "migrate-policy", str(path)])
        assert code == 1 and err.startswith(f"kubesched: {path}: not valid JSON or YAML: {expected}")
        return
    with pytest.raises((FaultConfigError, ReplayError, SweepError)) as info:
        if reader == "fault-config":
            load_fault_config(path)
        elif reader == "replay-config":
            experiment_config(path, [], 0)
        else:
            load_grid_file(path)
    error = info.value
    assert str(path) in str(error) and expected in str(error)


def test_yaml_loads_as_pyyaml_does_where_nothing_is_hostile() -> None:
    text = "a: 2024-01-01\nb: !!binary aGVsbG8=\nc: [1, 1.5, true, null, ~, 0x1f, 1_000]\nd: {1: x}\n"
    assert load_yaml(text) == yaml.safe_load(text)
    docs = "---\na: 1\n---\n---\nb: [*x]\n".replace("[*x]", "[2]")
    assert load_yaml_all(docs) == list(yaml.safe_load_all(docs))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("metadata: [\n", "yaml: line 2: did not find expected node content"),
        ("a: b: c\n", "yaml: line 1: mapping values are not allowed in this context"),
        ("a:\n  - b\n c: d\n", "yaml: line 3: did not find expected key"),
        (
            "a: !!python/object x\n",
            "yaml: line 1: could not determine a constructor for the tag 'tag:yaml.org,2002:python/object'",
        ),
        ("a: \x07\n", "yaml: control characters are not allowed (#x0007 at character 3)"),
    ],
    ids=["unclosed-flow", "mapping-in-scalar", "bad-indent", "python-tag", "control-character"],
)
def test_malformed_yaml_is_refused_in_go_yamls_form(text: str, message: str) -> None:
    """libyaml's problem with go-yaml's ``yaml: line N:``, not PyYAML's multi-line report."""
    with pytest.raises(DecodeError) as info:
        load_yaml(text)
    assert (info.value.limit, str(info.value)) == ("", message)


def test_the_cycle_collector_resumes_after_a_large_document() -> None:
    """Large documents decode with the collector paused (its full passes stop every thread);
    it is running again afterwards, whether the document loaded or was refused."""
    items = "[" + ", ".join(["{a: 1}"] * 20_000) + "]"
    assert gc.isenabled()
    assert len(load_yaml(items)) == 20_000
    assert gc.isenabled()
    with pytest.raises(DecodeError):
        load_yaml("x: " + items + "\n" + alias_bomb())
    assert gc.isenabled()
    assert len(load_json(items.replace("{a: 1}", '{"a": 1}'))) == 20_000
    assert gc.isenabled()
