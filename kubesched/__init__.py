"""kubesched: the Kubernetes scheduling framework on asyncio.

This module is the face plugin authors write against, and the stable API: every name in
``__all__`` keeps its meaning across releases; everything else in the package (the runtime,
the scheduler, the simulator, ...) may change. ``tests/unit/test_face.py`` pins the set, so a
change to it is a deliberate act.

* one ``typing.Protocol`` per extension point, each extending :class:`Plugin`, with the batch
  forms (:class:`BatchFilterPlugin`, :class:`FilterStatusesPlugin`, :class:`BatchScorePlugin`,
  :class:`BatchScoreExtensions`) beside the per-node contract;
* outcomes: :class:`Status` and its :class:`Code` (many nodes' at once: :class:`StatusTable`); what plugins share and read:
  :class:`CycleState`, :class:`PodInfo`, :class:`NodeInfo`, :class:`QueuedPodInfo`,
  :class:`Resource` and quantity parsing; results: :class:`NodeScore`, :class:`PreFilterResult`,
  :class:`PostFilterResult`; and what each point's method may return, the type a plugin's method
  is checked against: ``PreFilterReturn``, ``PostFilterReturn``, ``ScoreReturn``,
  ``PermitReturn``, ``PlacementGenerateReturn``, ``PlacementScoreReturn``,
  ``PodGroupPostFilterReturn`` (and ``PodGroupSchedule``, what PodGroupPostFilter is given);
* what a plugin reaches through its handle: :class:`Handle`, :class:`SharedLister`,
  :class:`Listers`, :class:`Nominator`, :class:`WaitingPod`, :class:`PodGroups`;
* the pod-group cycle (workload-aware scheduling): the points :class:`PlacementGeneratePlugin`,
  :class:`PlacementFeasiblePlugin`, :class:`PlacementScorePlugin` (with
  :class:`PlacementScoreExtensions` and :class:`PlacementScoreBounds`),
  :class:`PodGroupPostFilterPlugin`, and what they read:
  :class:`GroupKey` (which group: kind, namespace, name), :class:`PodGroupInfo` (with its
  object read through a :class:`PodGroupView`), :class:`PodGroupState`, :class:`Placement`, :class:`PlacementProgress`,
  :class:`ProposedAssignment`, :class:`PodGroupAssignments`, :class:`PlacementScore`,
  :class:`PodGroupPostFilterResult`;
* preemption for a PostFilter (upstream's ``preemption.Evaluator``): :class:`PreemptionEvaluator`
  runs the generic flow over the hooks of a :class:`PreemptionInterface` (eligibility, victims on
  a node, how many candidates); it proposes :class:`PreemptionCandidate` nodes;
  :class:`DefaultPreemptionArgs` are DefaultPreemption's args, for a plugin that takes the same;
* queueing hints: :class:`ClusterEvent`, :class:`ClusterEventWithHint`, :class:`ActionType`,
  :class:`EventResource`, :class:`QueueingHint`;
* the snapshot's columns for batch forms: :class:`NodeColumns`, :class:`NodeBatch`,
  :func:`columns_of`;
* plugins from plain functions: :func:`filter`, :func:`score`, :func:`queue_sort`;
* the root of every error kubesched raises on purpose: :class:`KubeschedError`.

Importing it loads nothing yet: each name is imported when first used, and then the contract
only (numpy, no simulator, no Kubernetes client). Tests of a
plugin use ``kubesched.testing``; an HTTP extender uses ``kubesched.extender``.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.errors import KubeschedError
    from kubesched.framework.columns import NodeBatch, NodeColumns, columns_of
    from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
    from kubesched.framework.informers import GroupVersionResource, Informer, Lister
    from kubesched.framework.interface import (
        MAX_NODE_SCORE,
        MIN_NODE_SCORE,
        BatchFilterPlugin,
        BatchScoreExtensions,
        BatchScorePlugin,
        BindPlugin,
        CycleState,
        EnqueueExtensions,
        FilterPlugin,
        FilterStatusesPlugin,
        Handle,
        Listers,
        NodeScore,
        Nominator,
        PermitPlugin,
        PlacementFeasiblePlugin,
        PlacementGeneratePlugin,
        PlacementScoreBounds,
        PlacementScoreExtensions,
        PlacementScorePlugin,
        Plugin,
        PodGroupPostFilterPlugin,
        PodGroups,
        PostBindPlugin,
        PostFilterPlugin,
        PostFilterResult,
        PreBindPlugin,
        PreEnqueuePlugin,
        PreFilterExtensions,
        PreFilterPlugin,
        PreFilterResult,
        PreScorePlugin,
        QueueSortPlugin,
        ReservePlugin,
        ScoreExtensions,
        ScorePlugin,
        SharedLister,
        SignPlugin,
        WaitingPod,
    )
    from kubesched.framework.podgroup import (
        GroupKey,
        Placement,
        PlacementProgress,
        PlacementScore,
        PodGroupAssignments,
        PodGroupInfo,
        PodGroupPostFilterResult,
        PodGroupState,
        PodGroupView,
        ProposedAssignment,
    )
    from kubesched.framework.preemption import PreemptionEvaluator, PreemptionInterface
    from kubesched.framework.preemption_args import DefaultPreemptionArgs
    from kubesched.framework.preemption_candidates import Candidate as PreemptionCandidate
    from kubesched.framework.resources import Resource, milli_value, parse_quantity
    from kubesched.framework.results import (
        PermitReturn,
        PlacementGenerateReturn,
        PlacementScoreReturn,
        PodGroupPostFilterReturn,
        PodGroupSchedule,
        PostFilterReturn,
        PreFilterReturn,
        ScoreReturn,
    )
    from kubesched.framework.simple import filter, queue_sort, score
    from kubesched.framework.status import Code, Status, StatusTable
    from kubesched.framework.types import NodeInfo, PodInfo, QueuedPodInfo
    from kubesched.framework.usage import UsageError, pod_usage

#: Where each name of the face lives: it is imported when first asked for (PEP 562), so that
#: ``import kubesched`` (and the command line, ``python -m kubesched --help``) does not load
#: numpy and the framework until a name that needs them is used.
_LAZY: dict[str, tuple[str, str]] = {
    "ActionType": ("kubesched.framework.events", "ActionType"),
    "BatchFilterPlugin": ("kubesched.framework.interface", "BatchFilterPlugin"),
    "BatchScoreExtensions": ("kubesched.framework.interface", "BatchScoreExtensions"),
    "BatchScorePlugin": ("kubesched.framework.interface", "BatchScorePlugin"),
    "BindPlugin": ("kubesched.framework.interface", "BindPlugin"),
    "ClusterEvent": ("kubesched.framework.events", "ClusterEvent"),
    "ClusterEventWithHint": ("kubesched.framework.events", "ClusterEventWithHint"),
    "Code": ("kubesched.framework.status", "Code"),
    "CycleState": ("kubesched.framework.interface", "CycleState"),
    "EnqueueExtensions": ("kubesched.framework.interface", "EnqueueExtensions"),
    "EventResource": ("kubesched.framework.events", "EventResource"),
    "FilterPlugin": ("kubesched.framework.interface", "FilterPlugin"),
    "FilterStatusesPlugin": ("kubesched.framework.interface", "FilterStatusesPlugin"),
    "GroupKey": ("kubesched.framework.podgroup", "GroupKey"),
    "GroupVersionResource": ("kubesched.framework.informers", "GroupVersionResource"),
    "Handle": ("kubesched.framework.interface", "Handle"),
    "Informer": ("kubesched.framework.informers", "Informer"),
    "KubeschedError": ("kubesched.errors", "KubeschedError"),
    "Lister": ("kubesched.framework.informers", "Lister"),
    "Listers": ("kubesched.framework.interface", "Listers"),
    "MAX_NODE_SCORE": ("kubesched.framework.interface", "MAX_NODE_SCORE"),
    "MIN_NODE_SCORE": ("kubesched.framework.interface", "MIN_NODE_SCORE"),
    "NodeBatch": ("kubesched.framework.columns", "NodeBatch"),
    "NodeColumns": ("kubesched.framework.columns", "NodeColumns"),
    "NodeInfo": ("kubesched.framework.types", "NodeInfo"),
    "NodeScore": ("kubesched.framework.interface", "NodeScore"),
    "Nominator": ("kubesched.framework.interface", "Nominator"),
    "PermitPlugin": ("kubesched.framework.interface", "PermitPlugin"),
    "Placement": ("kubesched.framework.podgroup", "Placement"),
    "PlacementFeasiblePlugin": ("kubesched.framework.interface", "PlacementFeasiblePlugin"),
    "PlacementGeneratePlugin": ("kubesched.framework.interface", "PlacementGeneratePlugin"),
    "PlacementProgress": ("kubesched.framework.podgroup", "PlacementProgress"),
    "PlacementScore": ("kubesched.framework.podgroup", "PlacementScore"),
    "PlacementScoreBounds": ("kubesched.framework.interface", "PlacementScoreBounds"),
    "PlacementScoreExtensions": ("kubesched.framework.interface", "PlacementScoreExtensions"),
    "PlacementScorePlugin": ("kubesched.framework.interface", "PlacementScorePlugin"),
    "Plugin": ("kubesched.framework.interface", "Plugin"),
    "PodGroupAssignments": ("kubesched.framework.podgroup", "PodGroupAssignments"),
    "PodGroupInfo": ("kubesched.framework.podgroup", "PodGroupInfo"),
    "PodGroupPostFilterPlugin": ("kubesched.framework.interface", "PodGroupPostFilterPlugin"),
    "PodGroupPostFilterResult": ("kubesched.framework.podgroup", "PodGroupPostFilterResult"),
    "PodGroupState": ("kubesched.framework.podgroup", "PodGroupState"),
    "PodGroupView": ("kubesched.framework.podgroup", "PodGroupView"),
    "PodGroups": ("kubesched.framework.interface", "PodGroups"),
    "PodInfo": ("kubesched.framework.types", "PodInfo"),
    "PostBindPlugin": ("kubesched.framework.interface", "PostBindPlugin"),
    "PostFilterPlugin": ("kubesched.framework.interface", "PostFilterPlugin"),
    "PostFilterResult": ("kubesched.framework.interface", "PostFilterResult"),
    "PreBindPlugin": ("kubesched.framework.interface", "PreBindPlugin"),
    "PreEnqueuePlugin": ("kubesched.framework.interface", "PreEnqueuePlugin"),
    "PreFilterExtensions": ("kubesched.framework.interface", "PreFilterExtensions"),
    "PreFilterPlugin": ("kubesched.framework.interface", "PreFilterPlugin"),
    "PreFilterResult": ("kubesched.framework.interface", "PreFilterResult"),
    "PermitReturn": ("kubesched.framework.results", "PermitReturn"),
    "PlacementGenerateReturn": ("kubesched.framework.results", "PlacementGenerateReturn"),
    "PlacementScoreReturn": ("kubesched.framework.results", "PlacementScoreReturn"),
    "PodGroupPostFilterReturn": ("kubesched.framework.results", "PodGroupPostFilterReturn"),
    "PodGroupSchedule": ("kubesched.framework.results", "PodGroupSchedule"),
    "PostFilterReturn": ("kubesched.framework.results", "PostFilterReturn"),
    "PreFilterReturn": ("kubesched.framework.results", "PreFilterReturn"),
    "ScoreReturn": ("kubesched.framework.results", "ScoreReturn"),
    "PreScorePlugin": ("kubesched.framework.interface", "PreScorePlugin"),
    "PreemptionCandidate": ("kubesched.framework.preemption_candidates", "Candidate"),
    "PreemptionEvaluator": ("kubesched.framework.preemption", "PreemptionEvaluator"),
    "DefaultPreemptionArgs": ("kubesched.framework.preemption_args", "DefaultPreemptionArgs"),
    "PreemptionInterface": ("kubesched.framework.preemption", "PreemptionInterface"),
    "ProposedAssignment": ("kubesched.framework.podgroup", "ProposedAssignment"),
    "QueueSortPlugin": ("kubesched.framework.interface", "QueueSortPlugin"),
    "QueuedPodInfo": ("kubesched.framework.types", "QueuedPodInfo"),
    "QueueingHint": ("kubesched.framework.events", "QueueingHint"),
    "ReservePlugin": ("kubesched.framework.interface", "ReservePlugin"),
    "Resource": ("kubesched.framework.resources", "Resource"),
    "ScoreExtensions": ("kubesched.framework.interface", "ScoreExtensions"),
    "ScorePlugin": ("kubesched.framework.interface", "ScorePlugin"),
    "SharedLister": ("kubesched.framework.interface", "SharedLister"),
    "SignPlugin": ("kubesched.framework.interface", "SignPlugin"),
    "Status": ("kubesched.framework.status", "Status"),
    "StatusTable": ("kubesched.framework.status", "StatusTable"),
    "WaitingPod": ("kubesched.framework.interface", "WaitingPod"),
    "columns_of": ("kubesched.framework.columns", "columns_of"),
    "filter": ("kubesched.framework.simple", "filter"),
    "milli_value": ("kubesched.framework.resources", "milli_value"),
    "parse_quantity": ("kubesched.framework.resources", "parse_quantity"),
    "pod_usage": ("kubesched.framework.usage", "pod_usage"),
    "UsageError": ("kubesched.framework.usage", "UsageError"),
    "queue_sort": ("kubesched.framework.simple", "queue_sort"),
    "score": ("kubesched.framework.simple", "score"),
}


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    import importlib

    value = getattr(importlib.import_module(module), attr)
    globals()[name] = value  # asked once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__version__ = "0.1.0"

__all__ = [
    "MAX_NODE_SCORE",
    "MIN_NODE_SCORE",
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
