"""`sim serve`'s flags become :class:`SimServeOptions` in one place: every flag reaches a field
of the options (or is one of the few read into sim_serve's other inputs), so a new flag cannot
be left unread; and with no flag given the options are the server's own defaults."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from kubesched.cli.main import build_parser
from kubesched.cli.sim_serve import NOT_OPTIONS, serve_options
from kubesched.errors import ConfigurationError
from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.inflight import DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT, DEFAULT_MAX_REQUESTS_INFLIGHT
from kubesched.sim.serve_options import SimServeOptions

#: What the parser adds beside the flags: the commands' names and the function run.
NOT_FLAGS = {"command", "sim_command", "func"}
#: A gate off by default that may be turned on alone.
GATE = "CompositePodGroup"


def _parse(*flags: str) -> argparse.Namespace:
    return build_parser().parse_args(["sim", "serve", *flags])


def _flags() -> set[str]:
    """Every flag of ``sim serve``, by its destination."""
    return set(vars(_parse())) - NOT_FLAGS


def _every_flag_but_insecure(tmp: Path) -> list[str]:
    faults = tmp / "faults.yaml"
    faults.write_text("seed: 7\nfaults:\n  - {kind: gone}\n")
    return [
        "--scenario", str(tmp / "scenario.yaml"),
        "--faults", str(faults),
        "--address", "::1",
        "--port", "6444",
        "--kubeconfig-out", str(tmp / "kc"),
        "--token", "s3cret",
        "--token-auth-file", str(tmp / "tokens.csv"),
        "--with-scheduler",
        "--config", str(tmp / "config.yaml"),
        "--import-from", str(tmp / "live.kubeconfig"),
        "--selector", "app=web",
        "--sync",
        "--import-context", "prod",
        "--record", str(tmp / "recorded.yaml"),
        "--speed", "2.5",
        "--until", "90s",
        "--scheduler-port", "10260",
        "--feature-gates", f"{GATE}=true",
        "--plugin", "mine:Plugin",
        "--max-requests-inflight", "7",
        "--max-mutating-requests-inflight", "3",
        "--pod-termination", "graceful",
        "-v",
    ]  # fmt: skip


def test_every_field_is_a_flag_and_every_flag_a_field_or_read_apart() -> None:
    fields = {f.name for f in dataclasses.fields(SimServeOptions)}
    flags = _flags()
    assert flags - set(NOT_OPTIONS) == fields, "a flag of sim serve that is no field of SimServeOptions, or back"
    assert set(NOT_OPTIONS) <= flags, "NOT_OPTIONS names a flag sim serve no longer has"
    assert not fields & set(NOT_OPTIONS)


def test_every_flag_set_reaches_its_field(tmp_path: Path) -> None:
    args = _parse(*_every_flag_but_insecure(tmp_path))
    defaults = vars(_parse())
    # The command line sets every flag (but --insecure, which refuses --token): a new flag must join it.
    unset = {dest for dest in _flags() if vars(args)[dest] == defaults[dest]}
    assert unset == {"insecure"}

    options = serve_options(args)
    server_defaults = SimServeOptions()
    for field in dataclasses.fields(SimServeOptions):
        if field.name == "insecure":
            continue
        assert getattr(options, field.name) != getattr(server_defaults, field.name), field.name
    assert (options.address, options.port, options.kubeconfig_out) == ("::1", 6444, str(tmp_path / "kc"))
    assert (options.token, options.insecure, options.scheduler_port) == ("s3cret", False, 10260)
    assert options.feature_gates.enabled(GATE) and not server_defaults.feature_gates.enabled(GATE)
    assert (options.max_requests_inflight, options.max_mutating_requests_inflight) == (7, 3)
    assert options.pod_termination == "graceful"
    assert options.faults is not None
    assert (options.faults.seed, [rule.kind for rule in options.faults.faults]) == (7, ["gone"])
    assert options.speed == 2.5
    assert options.until is not None and (options.until.at, options.until.why) == (90.0, "--until")
    assert (options.import_from, options.selector, options.import_context, options.sync) == (
        str(tmp_path / "live.kubeconfig"),
        "app=web",
        "prod",
        True,
    )
    assert options.record == str(tmp_path / "recorded.yaml")

    insecure = serve_options(_parse("--insecure"))
    assert insecure.insecure is True and not server_defaults.insecure
    assert dataclasses.replace(insecure, insecure=False) == server_defaults


def test_no_flag_gives_the_servers_own_defaults() -> None:
    options = serve_options(_parse())
    assert options == SimServeOptions()
    assert options.max_requests_inflight == DEFAULT_MAX_REQUESTS_INFLIGHT == 400
    assert options.max_mutating_requests_inflight == DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT == 200
    assert options.feature_gates == FeatureGates()
    assert (options.faults, options.until, options.token) == (None, None, None)


def test_the_options_are_frozen() -> None:
    options = SimServeOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.port = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--token", " "], "--token: must not be empty"),
        (["--insecure", "--address", "0.0.0.0"], "--insecure: serves without authentication"),
        (["--insecure", "--token", "t"], "--insecure: asks for no token"),
        (["--speed", "0"], "--speed: Invalid value: 0.0: must be above 0"),
        (["--record", "r.yaml"], "--record: records a live cluster"),
        (["--feature-gates", "Nope"], "--feature-gates: 'Nope': missing bool value"),
    ],
)
def test_bad_flags_are_refused_naming_the_flag(flags: list[str], message: str) -> None:
    with pytest.raises(ConfigurationError, match="^" + message.replace(".", r"\.")):
        serve_options(_parse(*flags))


def test_a_fault_file_that_cannot_be_used_is_refused_naming_the_flag(tmp_path: Path) -> None:
    faults = tmp_path / "faults.yaml"
    faults.write_text("faults:\n  - {kind: nonsense}\n")
    with pytest.raises(ConfigurationError, match=r"^--faults "):
        serve_options(_parse("--faults", str(faults)))
