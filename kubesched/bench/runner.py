"""Run a workload under a profile: :func:`run_profile` (in a child process of its own, so its
peak RSS and its collector are its own) and the profiles a bench compares (:class:`Subject`).

A :class:`Subject` is what is measured: a configuration (a file, the plugins of ``--plugin``
enabled on the default profile, or the default configuration) and one of its profiles. The
configuration is loaded again for each workload, under that workload's feature gates.
"""

from __future__ import annotations

import multiprocessing
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from kubesched.bench.errors import WorkloadError
from kubesched.bench.measure import Floor, Result, with_floor
from kubesched.bench.model import Workload
from kubesched.bench.ops import OpRunner, Progress
from kubesched.config import API_VERSION, KIND, SchedulerConfig, load_config, parse_config
from kubesched.framework.features import FeatureGates

#: The profile name of ``--plugin`` without ``--config``: the default plugins and the given ones.
PLUGIN_PROFILE = "kubesched-bench"
DEFAULT_PROFILE = "default-scheduler"


@dataclass(frozen=True)
class Subject:
    """A configuration and the profile of it whose pods are measured."""

    #: What the table calls it (the profile's schedulerName).
    label: str
    config_path: str | None = None
    #: Plugins enabled at every extension point they implement, over the default profile.
    plugins: tuple[str, ...] = ()
    profile: str | None = None

    def load(self, gates: FeatureGates | None = None) -> tuple[SchedulerConfig, str]:
        """The configuration under ``gates`` and the schedulerName of the measured profile."""
        if self.config_path is not None:
            cfg = load_config(self.config_path, feature_gates=gates)
        elif self.plugins:
            data: dict[str, Any] = {
                "apiVersion": API_VERSION,
                "kind": KIND,
                "profiles": [
                    {
                        "schedulerName": PLUGIN_PROFILE,
                        "plugins": {"multiPoint": {"enabled": [{"name": n} for n in self.plugins]}},
                    }
                ],
            }
            cfg = parse_config(data, "--plugin", feature_gates=gates)
        else:
            cfg = load_config(None, feature_gates=gates)
        return cfg, pick_profile(cfg, self.profile)


def pick_profile(cfg: SchedulerConfig, wanted: str | None) -> str:
    """The schedulerName of the profile ``wanted`` (the only one when None)."""
    names = [p.scheduler_name for p in cfg.profiles]
    if wanted is not None:
        if wanted not in names:
            raise WorkloadError(
                f"--profile {wanted}: the configuration has no such profile (it has: {', '.join(names)})"
            )
        return wanted
    if len(names) != 1:
        raise WorkloadError(
            f"the configuration has {len(names)} profiles ({', '.join(names)}): pick one with --profile"
        )
    return names[0]


def default_subject() -> Subject:
    return Subject(DEFAULT_PROFILE)


def run_here(
    w: Workload, subject: Subject, progress: Progress | None = None, timeout: float = 600.0, backend: str = "memory"
) -> list[Result]:
    """Run ``w`` once in this process under ``subject`` on ``backend`` (``memory`` or ``http``,
    see :class:`OpRunner`); its results, upstream's threshold filled in."""
    gates = FeatureGates(w.feature_gates)
    cfg, name = subject.load(gates)
    runner, loop = _loop_runner()
    results: list[Result] = runner(OpRunner(w, cfg, name, gates, progress, timeout, backend).run())
    floor = Floor(w.threshold, w.name) if w.threshold is not None else None
    for r in results:
        r.loop = loop
        with_floor(r, floor)
    return results


def _loop_runner() -> tuple[Callable[[Any], Any], str]:
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency where it builds
        import asyncio

        return asyncio.run, "asyncio"
    return uvloop.run, "uvloop"


def run_profile(
    w: Workload, subject: Subject, progress: Progress | None = None, timeout: float = 600.0, backend: str = "memory"
) -> list[Result]:
    """Run ``w`` once under ``subject`` in a child process forked from this one (where fork is
    available; here otherwise), so that peak RSS and the collector's state are that run's own."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return run_here(w, subject, progress, timeout, backend)
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(w, subject, child, timeout, backend), daemon=True)
    proc.start()
    child.close()
    try:
        while True:
            try:
                kind, payload = parent.recv()
            except EOFError:
                proc.join()
                raise WorkloadError(f"{w.name}: the benchmark process ended (exit code {proc.exitcode})") from None
            if kind == "progress":
                if progress is not None:
                    progress(*payload)
            elif kind == "results":
                return [Result(**r) for r in payload]
            else:
                raise WorkloadError(str(payload))
    finally:
        parent.close()
        proc.join(5)
        if proc.is_alive():
            proc.kill()
            proc.join()


def _child(w: Workload, subject: Subject, conn: Connection, timeout: float, backend: str = "memory") -> None:
    from dataclasses import asdict

    from kubesched.errors import KubeschedError

    try:
        results = run_here(w, subject, lambda done, total: conn.send(("progress", (done, total))), timeout, backend)
        conn.send(("results", [asdict(r) for r in results]))
    except KubeschedError as exc:
        conn.send(("error", str(exc)))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which raises it as an error
        conn.send(("error", f"{w.name}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}"))
    finally:
        conn.close()
