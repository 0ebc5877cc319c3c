"""What a workload is once read: its ops, one dataclass each (upstream scheduler_perf's opcodes,
their fields as :mod:`kubesched.bench.workload` checked them), and the workload they make up."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kubesched.bench.templates import read_template
from kubesched.bench.trace import trace_counts
from kubesched.objects import Obj


@dataclass(frozen=True)
class CreateNodes:
    count: int
    template: Path
    #: ``labelKey`` -> values cycled over the nodes (labelNodePrepareStrategy).
    cycled_label: tuple[str, tuple[str, ...]] | None = None
    #: A label key every node gets with a value of its own (uniqueNodeLabelStrategy).
    unique_label: str | None = None
    #: nodeAllocatableStrategy, or None: what each node's allocatable gets, and the CSINode made
    #: for it.
    allocatable: NodeAllocatable | None = None


@dataclass(frozen=True)
class NodeAllocatable:
    """Upstream's nodeAllocatableStrategy: ``nodeAllocatable`` (resource -> quantity, put into
    each node's allocatable), ``csiNodeAllocatable`` (driver -> ``{count: n}``: the node's CSINode
    lists the driver with that volume limit) and ``migratedPlugins`` (in-tree plugins the CSINode
    names as migrated)."""

    resources: tuple[tuple[str, str], ...] = ()
    drivers: tuple[tuple[str, int | None], ...] = ()
    migrated: tuple[str, ...] = ()


@dataclass(frozen=True)
class CreateNamespaces:
    prefix: str
    count: int
    template: Path | None = None


@dataclass(frozen=True)
class CreatePods:
    count: int
    namespace: str
    template: Path
    collect_metrics: bool = False
    skip_wait: bool = False
    #: A PersistentVolume and a PersistentVolumeClaim template: each pod gets a claim of its own,
    #: bound to a volume of its own (persistentVolumeTemplatePath, persistentVolumeClaimTemplatePath).
    volume_templates: tuple[Path, Path] | None = None
    #: templateParams: values the pod template's ``{{.name}}`` fields take besides Index and Count.
    params: tuple[tuple[str, Any], ...] = ()
    #: steadyState with its duration (seconds): ``count`` pods kept pending for that long, each
    #: one bound deleted and made again; None: the pods are made once.
    steady_seconds: float | None = None


@dataclass(frozen=True)
class CreateAny:
    template: Path
    namespace: str = ""
    count: int = 1
    params: tuple[tuple[str, Any], ...] = ()
    #: createPodGroups, createCompositePodGroups: the kind every object must be; the op ends
    #: once the scheduler has seen them all.
    kind: str | None = None


@dataclass(frozen=True)
class CreateResourceDriver:
    """Upstream's createResourceDriver: one ResourceSlice of ``max_claims`` plain devices
    (``instance-<i>``) of ``driver`` for every node whose name matches ``nodes`` (a glob)."""

    driver: str
    nodes: str
    max_claims: int


@dataclass(frozen=True)
class AllocClaims:
    """Upstream's allocResourceClaims: the namespace's ResourceClaims allocated before pods come."""

    namespace: str


@dataclass(frozen=True)
class WaitForPodGroups:
    """Upstream's waitForPodGroups: until the scheduler has seen ``count`` PodGroups of
    ``namespace``."""

    namespace: str
    count: int


@dataclass(frozen=True)
class DeletePods:
    namespace: str
    labels: tuple[tuple[str, str], ...] = ()
    per_second: int = 0
    skip_wait: bool = False


@dataclass(frozen=True)
class Churn:
    templates: tuple[Path, ...]
    interval: float
    #: ``create``: one object of each template a tick, ``number`` ticks (0: until the workload
    #: ends); ``recreate``: ``number`` slots a template, each tick deleting the object of the
    #: next slot (if any) and making a new one there.
    mode: str = "create"
    number: int = 0


@dataclass(frozen=True)
class Barrier:
    namespaces: tuple[str, ...] = ()
    #: ``Scheduled`` (bound or found unschedulable) or ``Attempted`` (tried once).
    stage: str = "Scheduled"
    #: labelSelector: only the pods with these labels are waited for.
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Sleep:
    seconds: float


@dataclass(frozen=True)
class ReplayTrace:
    """A cluster trace's nodes, then its pods all at once in order of creation (an op of ours:
    upstream has none). ``trace`` names the trace (``openb``), ``pods`` and ``nodes`` its lists
    (``default``, ``gpuspec33``; ``all_node``), the limits the first rows taken of each."""

    trace: str
    pods: str
    nodes: str = "all_node"
    node_limit: int | None = None
    pod_limit: int | None = None
    collect_metrics: bool = False

    @property
    def counts(self) -> tuple[int, int]:
        """How many nodes and pods the op makes: (0, 0) when the trace is not here."""
        return trace_counts(self.trace, self.nodes, self.pods, self.node_limit, self.pod_limit)


@dataclass(frozen=True)
class StartCollecting:
    name: str = ""
    namespaces: tuple[str, ...] = ()
    #: labelSelector: only the pods with these labels are measured.
    labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class StopCollecting:
    pass


Op = (
    CreateNodes
    | CreateNamespaces
    | CreatePods
    | CreateAny
    | CreateResourceDriver
    | AllocClaims
    | WaitForPodGroups
    | DeletePods
    | Churn
    | Barrier
    | Sleep
    | ReplayTrace
    | StartCollecting
    | StopCollecting
)


@dataclass
class Workload:
    """One runnable workload: a case's ops with one workload's params put in."""

    name: str
    ops: list[Op]
    feature_gates: dict[str, bool] = field(default_factory=dict)
    labels: tuple[str, ...] = ()
    #: Upstream's floor for this workload (pods/s), or None.
    threshold: float | None = None
    source: str = ""

    @property
    def nodes(self) -> int:
        made = sum(op.count for op in self.ops if isinstance(op, CreateNodes))
        return made + sum(op.counts[0] for op in self.ops if isinstance(op, ReplayTrace))

    @property
    def measured_pods(self) -> int:
        """Pods created with ``collectMetrics`` or inside a collecting window (in its
        namespaces, if it names any, and carrying its labelSelector's labels)."""
        n, window = 0, None
        for op in self.ops:
            if isinstance(op, StartCollecting):
                window = op
            elif isinstance(op, StopCollecting):
                window = None
            elif isinstance(op, CreatePods) and (op.collect_metrics or (window and _in_window(window, op))):
                n += op.count
            elif isinstance(op, ReplayTrace) and (op.collect_metrics or window):
                n += op.counts[1]
        return n

    @property
    def init_pods(self) -> int:
        made = sum(op.count for op in self.ops if isinstance(op, CreatePods))
        return made + sum(op.counts[1] for op in self.ops if isinstance(op, ReplayTrace)) - self.measured_pods


def _in_window(window: StartCollecting, op: CreatePods) -> bool:
    if window.namespaces and op.namespace not in window.namespaces:
        return False
    if not window.labels:
        return True
    values = {"Index": 0, "Count": op.count, **dict(op.params)}
    return has_labels(read_template(op.template, "Pod", values), window.labels)


def has_labels(obj: Obj, labels: tuple[tuple[str, str], ...]) -> bool:
    """Whether ``obj`` carries every one of ``labels`` (a labelSelector's matchLabels)."""
    have = (obj.get("metadata") or {}).get("labels") or {}
    return all(have.get(k) == v for k, v in labels)
