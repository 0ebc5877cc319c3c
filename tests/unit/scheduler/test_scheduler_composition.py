"""The scheduler is separate parts sharing a typed context: no part inherits another, the
package has no import circle, per-cycle state is not kept on the parts, and every profile's
Framework has its collaborators from the moment its plugins are built."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
from pathlib import Path
from typing import Any

from conftest import make_harness, profile, registry_with

import kubesched.scheduler
from kubesched.extender import HTTPExtender
from kubesched.framework.features import FeatureGates
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.scheduler.binding_cycle import BindingCycle
from kubesched.scheduler.eventhandlers import EventHandlers
from kubesched.scheduler.extenders import Extenders
from kubesched.scheduler.failures import FailureReporting
from kubesched.scheduler.schedule_one import PodSchedulingCycle
from kubesched.testing import make_node, make_pod

PACKAGE = Path(kubesched.scheduler.__file__).parent
#: Every module of the package, those of its subpackages (and the subpackages) too.
MODULES = sorted(m.name for m in pkgutil.walk_packages([str(PACKAGE)], "kubesched.scheduler."))


def _imports_of(module: str) -> set[str]:
    """The kubesched modules ``module`` imports (at any level of its body)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    path = Path(spec.origin)
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kubesched"):
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("kubesched")}
    return out


def test_no_class_of_the_scheduler_inherits_another_of_its_parts() -> None:
    inherited: list[str] = []
    for name in MODULES:
        for cls_name, cls in inspect.getmembers(importlib.import_module(name), inspect.isclass):
            if cls.__module__ != name:
                continue
            for base in cls.__mro__[1:]:
                if base.__module__.startswith("kubesched.scheduler"):
                    inherited.append(f"{name}.{cls_name} <- {base.__module__}.{base.__name__}")
    assert inherited == []


def test_the_scheduler_package_has_no_import_circle() -> None:
    graph = {m: {i for i in _imports_of(m) if i in MODULES} for m in MODULES}
    # Peel off modules that import nothing left; a circle is what cannot be peeled.
    left = dict(graph)
    while True:
        leaves = [m for m, deps in left.items() if not deps & left.keys()]
        if not leaves:
            break
        for m in leaves:
            del left[m]
    assert left == {}


def test_options_and_stats_are_the_ground_floor() -> None:
    """Nothing of the scheduler below them: options read only the contract's feature gates."""
    assert _imports_of("kubesched.scheduler.options") == {"kubesched.framework.features"}
    assert _imports_of("kubesched.scheduler.stats") == set()


def test_the_scheduler_is_assembled_from_separate_parts_sharing_one_context() -> None:
    sched = Scheduler([profile()], _NoCluster(), SchedulerOptions(seed=1))
    assert isinstance(sched.handlers, EventHandlers)
    assert isinstance(sched.pod_cycle, PodSchedulingCycle)
    assert isinstance(sched.binding, BindingCycle)
    assert isinstance(sched.failures, FailureReporting)
    assert isinstance(sched.ctx.extenders, Extenders)
    for part in (sched.handlers, sched.pod_cycle, sched.binding, sched.failures):
        assert part.ctx is sched.ctx
    # The binding cycle and failure reporting are shared parts, not copies per cycle.
    assert sched.pod_cycle.binding is sched.binding
    assert sched.pod_cycle.failures is sched.failures is sched.handlers.failures
    assert sched.ctx.queue is sched.queue and sched.ctx.cache is sched.cache
    assert sched.ctx.results is sched.results and sched.ctx.stats is sched.stats


async def test_a_scheduling_cycle_leaves_nothing_of_itself_on_the_parts() -> None:
    h = await make_harness(
        [profile()],
        options=SchedulerOptions(
            seed=1, record_results=True, feature_gates=FeatureGates({"OpportunisticBatching": True})
        ),
        objs=[make_node("n1"), make_node("n2"), make_pod("a"), make_pod("b")],
    )
    sched = h.scheduler
    parts = (sched, sched.pod_cycle, sched.binding, sched.failures, sched.handlers)
    before = [dict(vars(p)) for p in parts]
    assert await h.run_all() == 2
    after = [dict(vars(p)) for p in parts]
    assert [set(a) for a in after] == [set(b) for b in before]
    changed = {k for k, v in after[1].items() if v is not before[1][k] and v != before[1][k]}
    # Only what carries over from one cycle to the next (where the next search starts may
    # come round to where it was).
    assert "cycles" in changed and changed <= {"cycles", "next_start_node_index"}
    assert sched.pod_cycle.cycles == 2
    await sched.stop(grace=1)


def test_each_framework_has_its_collaborators_before_its_plugins_are_built() -> None:
    seen: dict[str, Any] = {}

    class Spy:
        name = "Spy"

        def __init__(self, args: Any, handle: Any) -> None:
            seen.update(
                handle=handle,
                listers=handle.listers,
                nominator=handle.nominator,
                observer=handle.observer,
                async_preemption=handle.feature_gates.enabled("SchedulerAsyncPreemption"),
                preempt_with_extenders=handle.preempt_with_extenders,
            )

        def filter(self, *args: Any) -> None:
            return None

    observer = _Observer()
    sched = Scheduler(
        [profile(filter=["Spy"])],
        _NoCluster(),
        SchedulerOptions(seed=1, feature_gates=FeatureGates({"SchedulerAsyncPreemption": False})),
        registry=registry_with(Spy),
        observer=observer,  # type: ignore[arg-type]
        extenders=[_extender(preempt=True)],
    )
    fw = sched.frameworks["default-scheduler"]
    assert seen["listers"] is sched.listers is fw.listers
    assert seen["nominator"] is sched.ctx.nominator is fw.nominator
    assert seen["observer"] is observer
    assert seen["handle"] is fw.handle and seen["handle"] is not fw
    assert fw.activator is not None and fw.spawner is not None
    assert seen["async_preemption"] is False
    assert seen["preempt_with_extenders"] == sched.ctx.extenders.preempt


def test_without_a_preempting_extender_no_framework_preempts_through_extenders() -> None:
    sched = Scheduler([profile()], _NoCluster(), extenders=[_extender(preempt=False)])
    assert sched.frameworks["default-scheduler"].preempt_with_extenders is None
    assert sched.frameworks["default-scheduler"].observer is None  # no observer given: no plugin timing


def test_a_profiles_activator_moves_pods_through_the_queue() -> None:
    sched = Scheduler([profile()], _NoCluster())
    moved: list[list[str]] = []
    sched.queue.activate = moved.append  # type: ignore[method-assign]
    activator = sched.frameworks["default-scheduler"].activator
    assert activator is not None
    activator(["uid-1"])
    assert moved == [["uid-1"]]


class _NoCluster:
    async def start(self, handler: Any) -> None:
        return None

    async def stop(self) -> None:
        return None


class _Observer:
    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def _extender(preempt: bool) -> HTTPExtender:
    from kubesched.config.models import Extender

    return HTTPExtender(
        Extender.model_validate(
            {
                "urlPrefix": "http://127.0.0.1:1",
                "filterVerb": "filter",
                **({"preemptVerb": "preempt"} if preempt else {}),
            }
        )
    )
