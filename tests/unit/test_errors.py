"""One error root: every public error class of kubesched derives from KubeschedError, and the
CLI reports a KubeschedError from any command as its message and that command's exit code."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import kubesched
from kubesched import errors
from kubesched.cli import main
from kubesched.cli.common import DATA_DIR
from kubesched.cluster.base import ClusterError
from kubesched.server.serving import ServingError

#: Public exception classes that stay outside the tree on purpose: none is raised to a caller for
#: bad input or a boundary fault; each is caught where it is raised and becomes something else.
EXEMPT = {
    # A Job the simulated Job controller holds back (its Workload is ambiguous): an outcome.
    "kubesched.sim.controllers.workloads.SchedulingBlocked": "a controller's outcome",
    # A claim's binding failure condition turned True: PreBind's outcome, reported as a Status.
    "kubesched.plugins.dynamicresources.binding_conditions.BindingFailed": "a PreBind outcome",
    # Invariants of the cache (assume twice, forget what was added): a bug, not input.
    "kubesched.backend.cache.CacheError": "a broken invariant",
    # A scheduling cycle's outcome carried to the end of the cycle, then reported as a Status.
    "kubesched.scheduler.errors.FitError": "a cycle's outcome",
    "kubesched.scheduler.errors.CycleError": "a cycle's outcome",
    # The contract's parsers of Kubernetes values (ValueErrors): callers turn them into a Status
    # on the pod, a 422, a ConfigError or a ScenarioError naming the field.
    "kubesched.framework.resources.QuantityError": "a value parser's error",
    "kubesched.framework.selectors.SelectorError": "a value parser's error",
    # The embedded API server's own: each becomes an answer where it is raised (a 429 over the
    # in-flight limit, the 422 of a schema pattern that does not compile, the 400 of a schema
    # field its Go type refuses).
    "kubesched.sim.apiserver.inflight.TooManyRequests": "an API server's answer",
    "kubesched.sim.apiserver.validation.patterns.PatternError": "a value parser's error",
    "kubesched.sim.apiserver.validation.schema_decode.SchemaDecodeError": "a value parser's error",
    "kubesched.framework.selectors.InvalidValue": "a value parser's error",
    "kubesched.framework.types.PodSpecError": "a value parser's error",
    "kubesched.decoding.DecodeError": "a value parser's error",
    # Answers of the serving and API-server handlers: each becomes an HTTP response.
    "kubesched.server.serving.auth.Unauthorized": "an HTTP 401",
    "kubesched.server.serving.auth.AuthorizationFailed": "an HTTP 500 of a failed review",
    "kubesched.sim.apiserver.errors.APIError": "an HTTP Status",
    "kubesched.sim.apiserver.patching.PatchError": "an HTTP Status",
    "kubesched.sim.apiserver.protobuf.decode.ProtobufError": "an HTTP Status",
    "kubesched.sim.apiserver.selectors.SelectorSyntaxError": "an HTTP Status",
    # Control flow inside the DynamicResources plugin: each ends as the plugin's Status.
    "kubesched.plugins.dynamicresources.allocator_types.AllocationError": "a plugin's Status",
    "kubesched.plugins.dynamicresources.allocator_types.AllocationFailedOnNode": "a plugin's Status",
    "kubesched.plugins.dynamicresources.capacity.CapacityError": "a plugin's Status",
    "kubesched.plugins.dynamicresources.allocator_types.AllocationTimeout": "a plugin's Status",
    "kubesched.plugins.dynamicresources.allocator_types.CompileFailure": "a plugin's Status",
    "kubesched.plugins.dynamicresources.allocator_types.RuntimeFailure": "a plugin's Status",
    "kubesched.plugins.dynamicresources.cel.CELError": "a plugin's Status",
    "kubesched.plugins.dynamicresources.claims.ClaimProblem": "a plugin's Status",
    # Control flow inside VolumeBinding's binder: it ends as the plugin's Error status.
    "kubesched.plugins.volume.pv_binding.BinderError": "a plugin's Status",
}


#: Classes that join the tree in the change of the modules that define them (the registry, the
#: runtime, the cluster, the extenders). Expected to fail here, strictly: once they derive from
#: the root, these marks fail and this table goes.
def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _error_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in kubesched, by qualified name (all modules imported)."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(kubesched.__path__, "kubesched."):
        if info.name.endswith("__main__"):
            continue  # running it is what importing it does
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__.startswith("kubesched"):
                found[_qualified(obj)] = obj
    return found


ERROR_CLASSES = _error_classes()
PUBLIC = sorted(
    name for name in ERROR_CLASSES if not any(part.startswith("_") for part in name.split(".")) and name not in EXEMPT
)


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_error_class_derives_from_the_root(name: str) -> None:
    assert issubclass(ERROR_CLASSES[name], errors.KubeschedError)


def test_every_exemption_names_a_class_that_exists() -> None:
    assert set(EXEMPT) <= set(ERROR_CLASSES)


def test_the_walk_sees_the_families_and_the_cli_s_errors() -> None:
    assert {"kubesched.config.errors.ConfigError", "kubesched.errors.ConfigurationError"} <= set(PUBLIC)


@pytest.mark.parametrize(
    "family",
    [
        errors.ConfigurationError,
        errors.PluginError,
        errors.ClusterError,
        errors.ScenarioError,
        errors.ExtenderError,
        errors.ResearchError,
    ],
    ids=lambda c: c.__name__,
)
def test_each_family_is_a_kubesched_error_and_listed(family: type[Exception]) -> None:
    assert issubclass(family, errors.KubeschedError)
    assert family.__name__ in errors.__all__


@pytest.mark.parametrize(
    "name, family, kept",
    [
        ("kubesched.config.errors.ConfigError", errors.ConfigurationError, None),
        ("kubesched.config.feature_gates.FeatureGateError", errors.ConfigurationError, ValueError),
        ("kubesched.config.policy.PolicyError", errors.ConfigurationError, ValueError),
        ("kubesched.server.serving.certs.ServingError", errors.ConfigurationError, None),
        ("kubesched.sim.apiserver.authn.TokenFileError", errors.ConfigurationError, ValueError),
        ("kubesched.sim.apiserver.faults.FaultConfigError", errors.ConfigurationError, ValueError),
        ("kubesched.sim.scenario.reading.ScenarioError", errors.ScenarioError, ValueError),
        ("kubesched.sim.scenario.openb.TraceError", errors.ScenarioError, ValueError),
        ("kubesched.sim.scenario.steps.TimelineError", errors.ScenarioError, ValueError),
        ("kubesched.research.errors.ReplayError", errors.ResearchError, ValueError),
        ("kubesched.research.sweep.SweepError", errors.ResearchError, ValueError),
        ("kubesched.research.engines.EngineError", errors.ResearchError, RuntimeError),
    ],
    ids=lambda v: v.rsplit(".", 1)[-1] if isinstance(v, str) else None,
)
def test_each_error_is_in_its_family_and_keeps_the_base_code_catches(
    name: str, family: type[Exception], kept: type[Exception] | None
) -> None:
    cls = ERROR_CLASSES[name]
    assert issubclass(cls, family)
    if kept is not None:
        assert issubclass(cls, kept)


# --- the CLI reports the root once ----------------------------------------------------------------

CONFIG = str(DATA_DIR / "kubesched.yaml")


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    Path("bad.yaml").write_text("kind: Nope\n")
    Path("bad-scenario.yaml").write_text("nodes: [\n")
    Path("faults.yaml").write_text("seed: x\n")
    Path("policy.json").write_text('{"kind": "Nope"}\n')
    return tmp_path


@pytest.mark.parametrize(
    "argv, code, err_starts",
    [
        (["simulate", "--config", "bad.yaml"], 2, "kubesched: bad.yaml: apiVersion: required field is missing"),
        (["simulate", "--config", CONFIG, "--scenario", "bad-scenario.yaml"], 2, "kubesched: bad-scenario.yaml: "),
        (["simulate", "--config", CONFIG, "--feature-gates", "A=maybe"], 2, "kubesched: --feature-gates: "),
        (["simulate", "--config", CONFIG, "--plugin", "nosuch:Thing"], 2, "kubesched: --plugin 'nosuch:Thing': "),
        (["run", "--config", "bad.yaml"], 2, "kubesched: bad.yaml: "),
        (["config", "validate", "bad.yaml"], 1, "bad.yaml: apiVersion: required field is missing"),
        (["config", "print", "bad.yaml"], 1, "bad.yaml: apiVersion: "),
        (["config", "migrate-policy", "policy.json"], 1, "kubesched: policy.json: not a scheduler Policy: kind: "),
        (["sim", "serve", "--faults", "faults.yaml"], 2, "kubesched: --faults faults.yaml: seed: "),
        (["sim", "serve", "--token", " "], 2, "kubesched: --token: must not be empty"),
        (["compare", "--seeds", "x", "--config", CONFIG], 2, "kubesched: --seeds: "),
        (["sweep", "--seeds", "x", "--config", CONFIG, "--output", "o.csv"], 2, "kubesched: --seeds: 'x': "),
    ],
    ids=lambda v: " ".join(v[:2]) if isinstance(v, list) else None,
)
def test_a_command_s_error_is_its_message_and_exit_code(
    files: Path, argv: list[str], code: int, err_starts: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(err_starts)
    assert "Traceback" not in err


def test_any_kubesched_error_a_command_raises_is_reported_the_same_way(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken() -> None:
        raise errors.PluginError("no plugins today")

    monkeypatch.setattr("kubesched.runtime.registry.default_registry", broken)
    assert main(["plugins"]) == 2
    assert capsys.readouterr().err == "kubesched: no plugins today\n"


def test_other_exceptions_are_bugs_and_keep_their_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr("kubesched.runtime.registry.default_registry", broken)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["plugins"])


@pytest.mark.parametrize(
    "raised",
    [ClusterError("the cluster went away", 0), ServingError("cannot listen"), errors.PluginError("no plugin")],
    ids=["cluster fault", "serving fault", "any other"],
)
def test_run_exits_1_for_an_error_while_running(
    raised: Exception, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    async def run(*_: object) -> int:
        raise raised

    monkeypatch.setattr("kubesched.server.app.run", run)
    assert main(["run", "--config", CONFIG, "--secure-port", "0"]) == 1
    assert capsys.readouterr().err.endswith(f"kubesched: {raised}\n")
