"""Objects and probes for the tests transcribed from upstream's workload integration tests
(test/integration/scheduler/podgroup and .../preemption/podgroup): builders shaped like
upstream's ``st.MakePod()``/``st.MakePodGroup()``/``st.MakeCompositePodGroup()``, the recording
plugins those tests register (a Bind plugin noting each pod's nominated node when it is bound, a
PodGroupPostFilter plugin noting each call, a preset score, a counting Reserve), and the checks
they poll (scheduled, unschedulable, preempted, the PodGroup condition).

Each case runs on the real scheduler (``kubesched.testing.running_scheduler``: queue, cache,
pod-group cycle, preemption, binding, events and conditions written to the in-memory store)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import Any

from kubesched import Status
from kubesched.cluster.base import NotFound
from kubesched.scheduler import SchedulerOptions
from kubesched.testing import Harness, make_node, make_pod, running_scheduler

Obj = dict[str, Any]

#: Upstream's waits are 10 s; ours fail sooner (the whole set stays well under two minutes).
TIMEOUT = 1.5


# --- objects ---------------------------------------------------------------------------------------
def node(name: str, cpu: str, **labels: str) -> Obj:
    """A node of ``cpu`` CPUs, 4Gi and 32 pods (upstream's usual capacity)."""
    b = make_node(name).capacity(cpu=cpu, memory="4Gi", pods="32")
    for k, v in labels.items():
        b = b.label(k, v)
    return b.obj()


def hostname_node(name: str, cpu: str) -> Obj:
    return make_node(name).capacity(cpu=cpu, memory="4Gi", pods="32").label("kubernetes.io/hostname", name).obj()


def pod(
    name: str,
    cpu: str | None = "1",
    priority: int = 0,
    group: str = "",
    node: str = "",
    labels: dict[str, str] | None = None,
    host_port: int = 0,
    node_selector: dict[str, str] | None = None,
    preemption_policy: str = "",
    grace: int | None = 0,
    pod_level_cpu: str = "",
    anti_affinity_key: str = "",
    spread: Obj | None = None,
) -> Obj:
    """``st.MakePod().Name(name).Req(cpu).Priority(p).PodGroupName(group).Node(node)...``; ``grace``
    0 is ``ZeroTerminationGracePeriod()``."""
    b = make_pod(name).priority(priority)
    if cpu is not None and not pod_level_cpu:
        b = b.container(
            requests={"cpu": cpu}, ports=[{"containerPort": host_port, "hostPort": host_port}] if host_port else None
        )
    else:
        b = b.container(ports=[{"containerPort": host_port, "hostPort": host_port}] if host_port else None)
    for k, v in (labels or {}).items():
        b = b.label(k, v)
    if node:
        b = b.node(node)
    if node_selector:
        b = b.node_selector(**node_selector)
    if preemption_policy:
        b = b.preemption_policy(preemption_policy)
    if group:
        b = b.pod_group(group)
    obj = b.obj()
    spec = obj["spec"]
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    if pod_level_cpu:
        spec["resources"] = {"requests": {"cpu": pod_level_cpu}}
    if anti_affinity_key:
        spec["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {
                        "labelSelector": {"matchExpressions": [{"key": anti_affinity_key, "operator": "Exists"}]},
                        "topologyKey": "kubernetes.io/hostname",
                    }
                ]
            }
        }
    if spread is not None:
        spec["topologySpreadConstraints"] = [spread]
    return obj


def _policy(min_count: int | None, key: str = "minCount") -> Obj:
    return {"gang": {key: min_count}} if min_count is not None else {"basic": {}}


def pod_group(
    name: str,
    priority: int | None = None,
    min_count: int | None = None,
    disruption: str = "",
    preemption_policy: str = "",
    topology_key: str = "",
    parent: str = "",
) -> Obj:
    """``st.MakePodGroup()``: a gang of ``min_count`` (``BasicPolicy()`` without it);
    ``disruption`` ``"all"``/``"single"``; ``parent`` a CompositePodGroup."""
    spec: Obj = {"schedulingPolicy": _policy(min_count)}
    if priority is not None:
        spec["priority"] = priority
    if disruption:
        spec["disruptionMode"] = {disruption: {}}
    if preemption_policy:
        spec["preemptionPolicy"] = preemption_policy
    if topology_key:
        spec["schedulingConstraints"] = {"topology": [{"key": topology_key}]}
    if parent:
        spec["parentCompositePodGroupName"] = parent
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"pg-{name}", "generation": 1},
        "spec": spec,
    }


def composite(
    name: str,
    priority: int | None = None,
    min_group_count: int | None = None,
    disruption: str = "",
    preemption_policy: str = "",
    parent: str = "",
) -> Obj:
    """``st.MakeCompositePodGroup()``: ``BasicPolicy()`` unless ``min_group_count``."""
    spec: Obj = {"schedulingPolicy": _policy(min_group_count, "minGroupCount")}
    if priority is not None:
        spec["priority"] = priority
    if disruption:
        spec["disruptionMode"] = {disruption: {}}
    if preemption_policy:
        spec["preemptionPolicy"] = preemption_policy
    if parent:
        spec["parentCompositePodGroupName"] = parent
    return {
        "apiVersion": "scheduling.k8s.io/v1alpha3",
        "kind": "CompositePodGroup",
        "metadata": {"name": name, "namespace": "default", "uid": f"cpg-{name}", "generation": 1},
        "spec": spec,
    }


# --- recording plugins -----------------------------------------------------------------------------
@dataclass
class Record:
    """What the recording plugins saw: ``events`` ("Bind:<pod>", "PodGroupPostFilter:<group>")
    in order, and each bound pod's nominated node at Bind."""

    events: list[str] = field(default_factory=list)
    nominated_at_bind: dict[str, str] = field(default_factory=dict)


RECORD = Record()


class RecordingBinder:
    """Notes the pod's ``status.nominatedNodeName`` and "Bind:<pod>", then lets DefaultBinder bind."""

    name = "RecordingBinder"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def bind(self, state: Any, pod: Any, node_name: str) -> Status:
        nominated = (pod.pod.get("status") or {}).get("nominatedNodeName")
        if nominated:
            RECORD.nominated_at_bind[pod.name] = nominated
        RECORD.events.append(f"Bind:{pod.name}")
        return Status.skip()


class RecordingPodGroupPostFilter:
    """A PodGroupPostFilter before DefaultPreemption's: notes "PodGroupPostFilter:<group>" and
    fails, so that DefaultPreemption's runs next."""

    name = "RecordingPodGroupPostFilter"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    async def pod_group_post_filter(self, state: Any, group: Any, schedule: Any) -> tuple[None, Status]:
        RECORD.events.append(f"PodGroupPostFilter:{group.name}")
        return None, Status.unschedulable("injected PodGroupPostFilter log")


class PresetScore:
    """Upstream's mockScorePlugin: a score per node name, set by the case (``SCORES``)."""

    name = "PresetScore"
    scores: dict[str, int] = {}

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def score(self, state: Any, pod: Any, node: Any) -> int:
        return PresetScore.scores.get(node.name, 0)

    def score_extensions(self) -> None:
        return None


class CountingReserve:
    """Upstream's mockReservePlugin: counts the reserved pods labelled ``test-plugin=true``; Filter
    rejects such a pod ("already reserved") once that count plus the node's pods labelled
    ``resource-taken=true`` reaches ``max_pods``."""

    name = "CountingReserve"
    max_pods = 2
    reserved = 0

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def reserve(self, state: Any, pod: Any, node_name: str) -> None:
        if pod.labels.get("test-plugin") == "true":
            CountingReserve.reserved += 1

    def unreserve(self, state: Any, pod: Any, node_name: str) -> None:
        if pod.labels.get("test-plugin") == "true":
            CountingReserve.reserved -= 1

    def filter(self, state: Any, pod: Any, node: Any) -> Status | None:
        if pod.labels.get("test-plugin") != "true":
            return None
        taken = sum(1 for p in node.pods if p.labels.get("resource-taken") == "true")
        if CountingReserve.reserved + taken >= CountingReserve.max_pods:
            return Status.unschedulable("already reserved")
        return None


RECORDERS = (RecordingBinder, RecordingPodGroupPostFilter)


def config(*extra: str) -> Obj:
    """Upstream's profile: DefaultBinder and DefaultPreemption disabled, then the recording
    Bind and PodGroupPostFilter plugins enabled before them, then ``extra`` plugins."""
    enabled = [
        {"name": "RecordingBinder"},
        {"name": "DefaultBinder"},
        {"name": "RecordingPodGroupPostFilter"},
        {"name": "DefaultPreemption"},
        *({"name": e} for e in extra),
    ]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {
                    "multiPoint": {
                        "enabled": enabled,
                        "disabled": [{"name": "DefaultBinder"}, {"name": "DefaultPreemption"}],
                    }
                },
            }
        ],
    }


def binder_config(*extra: str) -> Obj:
    """Upstream's other profile: DefaultBinder disabled, then the recording Bind plugin enabled
    before it (upstream's wraps it), DefaultPreemption left as it is, then ``extra`` plugins."""
    enabled = [{"name": "RecordingBinder"}, {"name": "DefaultBinder"}, *({"name": e} for e in extra)]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "DefaultBinder"}]}},
            }
        ],
    }


@contextlib.asynccontextmanager
async def scheduler(
    gates: dict[str, bool],
    cfg: Obj | None = None,
    plugins: Iterable[type] = (),
    max_backoff: float = 1.0,
    initial_backoff: float = 0.0,
) -> AsyncIterator[Harness]:
    """A running scheduler with upstream's backoff (initial ``initial_backoff``, 0 unless told;
    max ``max_backoff`` seconds), and no kubelet: a victim deleted with a grace period stays
    Terminating on its node, as in upstream's integration tests."""
    RECORD.events.clear()
    RECORD.nominated_at_bind.clear()
    CountingReserve.reserved = 0
    options = SchedulerOptions(
        seed=1, record_results=True, pod_initial_backoff=initial_backoff, pod_max_backoff=max_backoff
    )
    async with running_scheduler(
        config=cfg,
        plugins=[*RECORDERS, PresetScore, CountingReserve, *plugins],
        options=options,
        feature_gates=gates,
        pod_termination="graceful",
    ) as h:
        yield h


# --- probes ----------------------------------------------------------------------------------------
def exists(h: Harness, name: str) -> bool:
    try:
        h.pod(name)
    except NotFound:
        return False
    return True


def preempted(h: Harness, name: str) -> bool:
    """Upstream's check: gone, terminating, or carrying the DisruptionTarget condition."""
    if not exists(h, name):
        return True
    p = h.pod(name)
    if p["metadata"].get("deletionTimestamp"):
        return True
    return h.condition(name, "DisruptionTarget") is not None


def scheduled(h: Harness, name: str) -> bool:
    return exists(h, name) and h.node_of(name) is not None


def unschedulable(h: Harness, name: str) -> bool:
    """Upstream's PodUnschedulable: not bound, PodScheduled False with reason Unschedulable."""
    if not exists(h, name) or h.node_of(name) is not None:
        return False
    cond = h.condition(name, "PodScheduled")
    return cond is not None and cond.get("status") == "False" and cond.get("reason") == "Unschedulable"


def preempted_events(h: Harness, names: Iterable[str]) -> int:
    """How many of ``names`` got a ``Preempted`` event (read from the store even once deleted)."""
    count = 0
    for n in names:
        evs = [e for e in h.store.list("Event")[0] if (e.get("involvedObject") or {}).get("name") == n]
        if any(e.get("reason") == "Preempted" for e in evs):
            count += 1
    return count


def preempted_event_messages(h: Harness, name: str) -> list[str]:
    evs = [e for e in h.store.list("Event")[0] if (e.get("involvedObject") or {}).get("name") == name]
    return [str(e.get("message", "")) for e in evs if e.get("reason") == "Preempted"]


async def wait_all(h: Harness, check: Any, names: Iterable[str], timeout: float = TIMEOUT) -> None:
    names = list(names)
    try:
        await h.wait_for(lambda: all(check(h, n) for n in names), timeout)
    except TimeoutError:
        state = {n: describe(h, n) for n in names}
        raise AssertionError(f"{check.__name__} not reached for {names}: {state}") from None


def describe(h: Harness, name: str) -> str:
    if not exists(h, name):
        return "gone"
    node = h.node_of(name)
    if node:
        return f"on {node}"
    cond = h.condition(name, "PodScheduled") or {}
    nominated = (h.pod(name).get("status") or {}).get("nominatedNodeName")
    return f"pending ({cond.get('reason', '-')}: {cond.get('message', '')}; nominated {nominated})"


def states(h: Harness, names: Iterable[str]) -> dict[str, str]:
    return {n: describe(h, n) for n in names}


def in_queue_waiting(h: Harness, name: str) -> bool:
    """Upstream's "in the unschedulable pods pool": gated at PreEnqueue, parked unschedulable,
    or (a member whose PodGroup is unseen) waiting incomplete for it."""
    if not exists(h, name):
        return False
    where = h.scheduler.queue.where(str(h.pod(name)["metadata"]["uid"]))
    return where in ("gated", "unschedulable", "incomplete")


def pdb(name: str, min_available: int, **match: str) -> Obj:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default", "uid": f"pdb-{name}"},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": dict(match)}},
    }


# --- the common shape of the preemption tables -----------------------------------------------------
@dataclass
class Setup:
    """What a preemption case creates, in upstream's order: nodes, CompositePodGroups, PodGroups,
    a PodDisruptionBudget, the initial pods (awaited bound), then the preemptors' own
    CompositePodGroups and PodGroups, then the preemptors. ``temp_remove`` deletes every group
    (composites too) before the preemptors come and recreates them once all wait in the queue;
    ``remove_before`` deletes that CompositePodGroup before the preemptors come."""

    nodes: list[Obj]
    initial: list[Obj]
    preemptors: list[Obj]
    composites: list[Obj] = field(default_factory=list)
    groups: list[Obj] = field(default_factory=list)
    preemptor_composites: list[Obj] = field(default_factory=list)
    preemptor_groups: list[Obj] = field(default_factory=list)
    pdb: Obj | None = None
    temp_remove: bool = False
    remove_before: str = ""

    def names(self) -> list[str]:
        return [p["metadata"]["name"] for p in (*self.initial, *self.preemptors)]


async def create_setup(h: Harness, s: Setup) -> None:
    h.add(*s.nodes)
    h.add(*s.composites)
    h.add(*s.groups)
    if s.pdb is not None:
        h.add(s.pdb)
    h.add(*s.initial)
    await wait_all(h, scheduled, [p["metadata"]["name"] for p in s.initial])
    h.add(*s.preemptor_composites)
    h.add(*s.preemptor_groups)
    RECORD.events.clear()
    if s.temp_remove:
        for g in s.composites:
            h.delete("CompositePodGroup", g["metadata"]["name"])
        for g in s.groups:
            h.delete("PodGroup", g["metadata"]["name"])
    if s.remove_before:
        h.delete("CompositePodGroup", s.remove_before)
    h.add(*s.preemptors)
    if s.temp_remove:
        await wait_all(h, in_queue_waiting, [p["metadata"]["name"] for p in s.preemptors])
        h.add(*s.composites)
        h.add(*s.groups)


def running(h: Harness, name: str) -> bool:
    """Upstream's "stays running": still there and not terminating."""
    return exists(h, name) and not h.pod(name)["metadata"].get("deletionTimestamp")


def preempted_by(h: Harness, names: Iterable[str], prefixes: tuple[str, ...]) -> int:
    """How many of ``names`` got a ``Preempted`` event whose message starts with one of ``prefixes``."""
    return sum(any(m.startswith(prefixes) for m in preempted_event_messages(h, n)) for n in names)


def nominated(h: Harness, name: str) -> str:
    return str((h.pod(name).get("status") or {}).get("nominatedNodeName") or "")
