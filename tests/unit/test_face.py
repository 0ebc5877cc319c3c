"""``import kubesched``: the face plugin authors write against, pinned name by name."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import kubesched

#: The stable API. Changing this list is a deliberate act: the docs' "Writing a plugin" says
#: these names keep their meaning, and every package in plugins/ imports only them.
FACE = [
    "ActionType",
    "BatchFilterPlugin",
    "BatchScoreExtensions",
    "BatchScorePlugin",
    "BindPlugin",
    "ClusterEvent",
    "ClusterEventWithHint",
    "Code",
    "CycleState",
    "DefaultPreemptionArgs",
    "EnqueueExtensions",
    "EventResource",
    "FilterPlugin",
    "FilterStatusesPlugin",
    "GroupKey",
    "GroupVersionResource",
    "Handle",
    "Informer",
    "KubeschedError",
    "Lister",
    "Listers",
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
    "NodeBatch",
    "NodeColumns",
    "NodeInfo",
    "NodeScore",
    "Nominator",
    "PermitPlugin",
    "Placement",
    "PlacementFeasiblePlugin",
    "PlacementGeneratePlugin",
    "PlacementProgress",
    "PlacementScore",
    "PlacementScoreBounds",
    "PlacementScoreExtensions",
    "PlacementScorePlugin",
    "Plugin",
    "PodGroupAssignments",
    "PodGroupInfo",
    "PodGroupPostFilterPlugin",
    "PodGroupPostFilterResult",
    "PodGroupState",
    "PodGroupView",
    "PodGroups",
    "PodInfo",
    "PostBindPlugin",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreEnqueuePlugin",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PermitReturn",
    "PlacementGenerateReturn",
    "PlacementScoreReturn",
    "PodGroupPostFilterReturn",
    "PodGroupSchedule",
    "PostFilterReturn",
    "PreFilterReturn",
    "ScoreReturn",
    "PreScorePlugin",
    "PreemptionCandidate",
    "PreemptionEvaluator",
    "PreemptionInterface",
    "ProposedAssignment",
    "QueueSortPlugin",
    "QueuedPodInfo",
    "QueueingHint",
    "ReservePlugin",
    "Resource",
    "ScoreExtensions",
    "ScorePlugin",
    "SharedLister",
    "SignPlugin",
    "Status",
    "StatusTable",
    "WaitingPod",
    "__version__",
    "columns_of",
    "filter",
    "milli_value",
    "parse_quantity",
    "pod_usage",
    "UsageError",
    "queue_sort",
    "score",
]

#: Extension point → the Protocol that states it, and the method a plugin implements.
POINTS = {
    "PreEnqueuePlugin": "pre_enqueue",
    "QueueSortPlugin": "less",
    "EnqueueExtensions": "events_to_register",
    "PreFilterPlugin": "pre_filter",
    "PreFilterExtensions": "add_pod",
    "FilterPlugin": "filter",
    "BatchFilterPlugin": "filter_nodes",
    "FilterStatusesPlugin": "filter_statuses",
    "SignPlugin": "sign_pod",
    "PostFilterPlugin": "post_filter",
    "PreScorePlugin": "pre_score",
    "ScorePlugin": "score",
    "BatchScorePlugin": "score_nodes",
    "ScoreExtensions": "normalize_score",
    "BatchScoreExtensions": "normalize_scores",
    "ReservePlugin": "reserve",
    "PermitPlugin": "permit",
    "PreBindPlugin": "pre_bind",
    "BindPlugin": "bind",
    "PostBindPlugin": "post_bind",
    "PlacementGeneratePlugin": "generate_placements",
    "PlacementFeasiblePlugin": "placement_feasible",
    "PlacementScorePlugin": "score_placement",
    "PlacementScoreExtensions": "normalize_placement_scores",
    "PlacementScoreBounds": "placement_score_bounds",
    "PodGroupPostFilterPlugin": "pod_group_post_filter",
}


#: What a plugin reaches through its handle (the ``Handle`` protocol), member by member. Plugins
#: are given an object with these members and no other (kubesched.runtime.handle): adding one
#: here is a deliberate widening of what every plugin may depend on.
HANDLE = [
    # upstream's Handle, as this scheduler has it
    "activate",
    "cluster",
    "feature_gates",
    "get_waiting_pod",
    "informer_for",
    "iterate_waiting_pods",
    "listers",
    "nominator",
    "parallelism",
    "pod_groups",
    "profile_name",
    "reject_waiting_pod",
    "run_filter_with_nominated_pods",
    "run_in_background",
    "run_pre_filter_add_pod",
    "run_pre_filter_remove_pod",
    "run_reserve",
    "run_unreserve",
    "snapshot",
    # the scheduler's metrics, preempting extenders and cache; the cycle's plugins (preemption)
    "filter_plugins_in_play",
    "nominated_pods_counted",
    "observer",
    "placed_pod",
    "pre_filter_extensions_in_play",
    "preempt_with_extenders",
]


def test_the_face_is_exactly_the_pinned_set() -> None:
    assert sorted(kubesched.__all__) == sorted(FACE)
    assert len(set(kubesched.__all__)) == len(kubesched.__all__)


@pytest.mark.parametrize("name", FACE)
def test_every_name_of_the_face_resolves(name: str) -> None:
    assert getattr(kubesched, name) is not None


def test_star_import_gives_the_face_and_nothing_else() -> None:
    ns: dict[str, object] = {}
    exec("from kubesched import *", ns)
    assert sorted(k for k in ns if k != "__builtins__") == sorted(FACE)


def test_the_handle_offers_exactly_the_pinned_members() -> None:
    members = {name for name in vars(kubesched.Handle) if not name.startswith("_")}
    assert sorted(members) == sorted(HANDLE)
    # each stated where it is declared: what it gives, in the words of this scheduler
    undocumented = [name for name in HANDLE if not (getattr(kubesched.Handle, name).__doc__ or "").strip()]
    assert undocumented == []


@pytest.mark.parametrize("protocol", sorted(POINTS), ids=sorted(POINTS))
def test_each_extension_point_is_a_protocol_extending_plugin_with_its_contract(protocol: str) -> None:
    cls = getattr(kubesched, protocol)
    assert getattr(cls, "_is_protocol", False), f"{protocol} is not a typing.Protocol"
    assert kubesched.Plugin in cls.__mro__
    # a read-only member, so that a plugin's plain class attribute (``name = "X"``) satisfies it
    assert isinstance(inspect.getattr_static(kubesched.Plugin, "name"), property)
    method = POINTS[protocol]
    assert callable(getattr(cls, method, None)), f"{protocol} has no {method}"
    # The contract is stated where the Protocol is defined, not inherited from a parent.
    assert cls.__doc__ and cls.__doc__ is not kubesched.Plugin.__doc__
    assert len(inspect.cleandoc(cls.__doc__)) > 40


def _plugin(name: str) -> object:
    from kubesched.runtime.registry import default_registry

    return default_registry().get(name).cls(None, None) if name != "NodeResourcesFit" else _fit()


def _fit() -> object:
    from kubesched.runtime.registry import default_registry

    cls = default_registry().get("NodeResourcesFit").cls
    return cls(cls.Args(), None)


@pytest.mark.parametrize(
    ("plugin", "protocols"),
    [
        ("NodeResourcesFit", {"FilterPlugin", "BatchFilterPlugin", "FilterStatusesPlugin", "BatchScorePlugin"}),
        ("NodeName", {"FilterPlugin", "BatchFilterPlugin"}),
        ("TaintToleration", {"FilterPlugin", "BatchFilterPlugin", "BatchScorePlugin", "BatchScoreExtensions"}),
    ],
    ids=["fit", "node-name", "taints"],
)
def test_in_tree_batch_plugins_satisfy_the_batch_protocols(plugin: str, protocols: set[str]) -> None:
    instance = _plugin(plugin)
    for protocol in protocols:
        assert isinstance(instance, getattr(kubesched, protocol)), (plugin, protocol)
    assert not isinstance(instance, kubesched.QueueSortPlugin)


def test_a_plain_filter_plugin_is_not_a_batch_one() -> None:
    @kubesched.filter
    def only_linux(pod: kubesched.PodInfo, node: kubesched.NodeInfo) -> bool:
        return node.labels.get("kubernetes.io/os") == "linux"

    plugin = only_linux(None, None)
    assert isinstance(plugin, kubesched.FilterPlugin)
    assert not isinstance(plugin, kubesched.BatchFilterPlugin)


def test_error_root_is_the_one_every_family_derives_from() -> None:
    from kubesched.errors import PluginError

    assert issubclass(PluginError, kubesched.KubeschedError)


def test_importing_the_face_loads_neither_the_simulator_nor_the_kubernetes_client() -> None:
    code = (
        "import sys, kubesched\n"
        "heavy = ('kubernetes_asyncio', 'aiohttp', 'kubesched.sim', 'kubesched.scheduler', 'kubesched.runtime',"
        " 'kubesched.cluster', 'kubesched.config', 'kubesched.plugins')\n"
        "print(sorted(m for m in sys.modules if m.startswith(heavy)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _kubesched_imports(path: Path) -> set[str]:
    """Every kubesched module ``path`` imports, at any depth (also under TYPE_CHECKING)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
    return {m for m in out if m == "kubesched" or m.startswith("kubesched.")}


def test_the_contract_imports_nothing_else_of_kubesched_but_the_ground_floor() -> None:
    contract = Path(kubesched.__file__).parent / "framework"
    offenders = {
        f"{path.name}: {module}"
        for path in sorted(contract.rglob("*.py"))
        for module in _kubesched_imports(path)
        if not (module.startswith("kubesched.framework") or module in ("kubesched.errors", "kubesched.objects"))
    }
    assert offenders == set()


#: Besides the face, the faces for their own jobs: testing a plugin, writing an HTTP extender.
FACES = {"kubesched", "kubesched.testing", "kubesched.extender"}
ROOT = Path(__file__).resolve().parents[2]


def test_every_plugin_package_imports_only_the_faces() -> None:
    # the packages' own sources: not what a build left beside them (build/lib holds older copies)
    sources = sorted(path for path in (ROOT / "plugins").rglob("*.py") if "build" not in path.relative_to(ROOT).parts)
    assert sources, "no plugin packages found"
    offenders = {
        f"{path.relative_to(ROOT)}: {module}" for path in sources for module in _kubesched_imports(path) - FACES
    }
    assert offenders == set()


def test_every_documented_example_imports_only_the_faces() -> None:
    fence = re.compile(r"```python\n(.*?)```", re.DOTALL)
    found = set()
    pages = [
        ROOT / "README.md",
        *sorted((ROOT / "docs").glob("**/*.md")),
        *sorted((ROOT / "plugins").glob("*/README.md")),
    ]
    for readme in pages:
        for block in fence.findall(readme.read_text()):
            found.update(
                f"{readme.relative_to(ROOT)}: {m}"
                for m in re.findall(r"^\s*from (kubesched[\w.]*) import", block, re.M)
            )
            found.update(
                f"{readme.relative_to(ROOT)}: {m}" for m in re.findall(r"^\s*import (kubesched[\w.]*)", block, re.M)
            )
    assert found, "no example in the README, the docs or a package README imports kubesched"
    assert {entry for entry in found if entry.split(": ")[1] not in FACES} == set()
