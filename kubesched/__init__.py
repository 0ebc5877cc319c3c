"""kubesched: the Kubernetes scheduling framework on asyncio.

This module is the face plugin authors write against, and the stable API: every name in
``__all__`` keeps its meaning across releases; everything else in the package (the runtime,
the scheduler, the simulator, ...) may change. ``tests/unit/test_face.py`` pins the set, so a
change to it is a deliberate act.

* one ``typing.Protocol`` per extension point, each extending :class:`Plugin`, with the batch
  forms (:class:`BatchFilterPlugin`, :class:`FilterStatusesPlugin`, :class:`BatchScorePlugin`,
  :class:`BatchScoreExtensions`) beside the per-node contract;
* outcomes: :class:`Status` and its :class:`Code`; what plugins share and read:
  :class:`CycleState`, :class:`PodInfo`, :class:`NodeInfo`, :class:`QueuedPodInfo`,
  :class:`Resource` and quantity parsing; results: :class:`NodeScore`, :class:`PreFilterResult`,
  :class:`PostFilterResult`;
* what a plugin reaches through its handle: :class:`Handle`, :class:`SharedLister`,
  :class:`Listers`, :class:`Nominator`, :class:`WaitingPod`, :class:`PodGroups`;
* the pod-group cycle (workload-aware scheduling): the points :class:`PlacementGeneratePlugin`,
  :class:`PlacementFeasiblePlugin`, :class:`PlacementScorePlugin` (with
  :class:`PlacementScoreExtensions`), :class:`PodGroupPostFilterPlugin`, and what they read:
  :class:`PodGroupInfo`, :class:`PodGroupState`, :class:`Placement`, :class:`PlacementProgress`,
  :class:`ProposedAssignment`, :class:`PodGroupAssignments`, :class:`PlacementScore`,
  :class:`PodGroupPostFilterResult`;
* preemption for a PostFilter (upstream's ``preemption.Evaluator``): :class:`PreemptionEvaluator`
  runs the generic flow over the hooks of a :class:`PreemptionInterface` (eligibility, victims on
  a node, how many candidates); it proposes :class:`PreemptionCandidate` nodes;
* queueing hints: :class:`ClusterEvent`, :class:`ClusterEventWithHint`, :class:`ActionType`,
  :class:`EventResource`, :class:`QueueingHint`;
* the snapshot's columns for batch forms: :class:`NodeColumns`, :class:`NodeBatch`,
  :func:`columns_of`;
* plugins from plain functions: :func:`filter`, :func:`score`, :func:`queue_sort`;
* the root of every error kubesched raises on purpose: :class:`KubeschedError`.

Importing it loads the contract only (numpy, no simulator, no Kubernetes client). Tests of a
plugin use ``kubesched.testing``; an HTTP extender uses ``kubesched.extender``.
"""

from kubesched.errors import KubeschedError
from kubesched.framework.columns import NodeBatch, NodeColumns, columns_of
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, QueueingHint
from kubesched.framework.events import Resource as EventResource
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
    Placement,
    PlacementProgress,
    PlacementScore,
    PodGroupAssignments,
    PodGroupInfo,
    PodGroupPostFilterResult,
    PodGroupState,
    ProposedAssignment,
)
from kubesched.framework.preemption import PreemptionEvaluator, PreemptionInterface
from kubesched.framework.preemption_candidates import Candidate as PreemptionCandidate
from kubesched.framework.resources import Resource, milli_value, parse_quantity
from kubesched.framework.simple import filter, queue_sort, score
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo, QueuedPodInfo

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
    "EnqueueExtensions",
    "EventResource",
    "FilterPlugin",
    "FilterStatusesPlugin",
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
    "PlacementScoreExtensions",
    "PlacementScorePlugin",
    "Plugin",
    "PodGroupAssignments",
    "PodGroupInfo",
    "PodGroupPostFilterPlugin",
    "PodGroupPostFilterResult",
    "PodGroupState",
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
    "WaitingPod",
    "__version__",
    "columns_of",
    "filter",
    "milli_value",
    "parse_quantity",
    "queue_sort",
    "score",
]
