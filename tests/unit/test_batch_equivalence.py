"""Property tests: the batch path decides exactly as the per-node path.

The snapshot keeps numpy columns of every node; Filter plugins may answer for a whole
:class:`NodeBatch` at once (``filter_nodes``), Score plugins likewise (``score_nodes``), and
normalizing plugins over an array (``normalize_scores``); any of them may decline with None.
Whatever batch forms the plugins of the default profile have (the tests look them up, they do
not list them), they must give what the per-node forms give, on any cluster:

* plugin level: random small clusters (allocatable amounts including 0, an extended resource,
  hugepages, labels with numeric values for Gt/Lt, taints of every effect, cordons, images,
  pods already placed with host ports, requests, pod-level requests, resizes in flight and pod
  (anti-)affinity) and a random pod (requests or none, pod-level requests, tolerations,
  nodeSelector, node affinity of every operator and matchFields, pod (anti-)affinity, spread
  constraints, host ports, ``spec.nodeName``), under random plugin
  args (scoring strategies, resources and weights, addedAffinity); each plugin's batch form
  against its per-node form, and the runtime (``run_filter_batch``, ``run_score`` over a
  NodeBatch) against its per-node path, over two cycles so that columns updated row by row are
  covered too;
* scheduler level: random scenarios (up to 200 nodes, so that percentageOfNodesToScore and the
  rotating start index matter; pods that fit nowhere; preemption) simulated with
  ``batch=False`` and ``batch=True`` give the same report;
* amounts of 2**52 or more, which int64 and float64 cannot follow: the columns say so
  (``exact`` false), the resource plugins decline, the results stay the same.

Examples are derandomized (``KUBESCHED_FUZZ_EXAMPLES`` runs more, with fresh seeds), as in
``test_scenario_fuzz.py``. ``--hypothesis-show-statistics`` shows which batch forms answered or
declined. The discrepancies they found are pinned at the end, as plain tests.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fuzzing import fuzz_settings
from hypothesis import currently_in_test_context, event, given
from hypothesis import strategies as st

from kubesched.backend.cache import Cache, Snapshot
from kubesched.config import load_config
from kubesched.framework.columns import EXACT_LIMIT, NodeBatch
from kubesched.framework.features import FeatureGates
from kubesched.framework.interface import CycleState, NodeScore
from kubesched.framework.pod_requests import aggregate_container_requests
from kubesched.framework.resources import quantity_of
from kubesched.framework.status import Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import Framework, ProfileSpec
from kubesched.runtime.registry import default_registry
from kubesched.sim.run.simulate import SimulationSettings, simulate
from kubesched.sim.scenario.reading import parse_scenario
from kubesched.testing import make_node, make_pod

REPO = Path(__file__).resolve().parents[2]
REGISTRY = default_registry()
DEFAULT_PROFILE = load_config(None).profiles[0]
#: default-scheduler and bin-packing-scheduler (MostAllocated), as `kubesched simulate` runs them.
PROFILES = load_config(REPO / "config" / "kubesched.yaml").profiles

MB = 1024 * 1024
ZONE = "topology.kubernetes.io/zone"
HOSTNAME = "kubernetes.io/hostname"
GPU = "example.com/gpu"
HUGEPAGES = "hugepages-2Mi"
#: Only ever in amounts too large for the columns.
FOO = "example.com/foo"

#: Plugin-level clusters are nodes n0, n1, ...: names that selectors may refer to.
NODE_NAMES = [f"n{i}" for i in range(10)]
LABEL_VALUES = {ZONE: ["z0", "z1", "z2"], "disk": ["ssd", "hdd"], "gen": ["1", "3", "10", "0", "x"]}
TAINT_KEYS = ["dedicated", "gpu", "node.kubernetes.io/unschedulable"]
EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]
IMAGES = {"nginx:1.25": 300 * MB, "redis:7": 80 * MB, "busybox:latest": 2 * MB, "trainer:v1": 2000 * MB}
#: ``busybox`` is normalized to ``busybox:latest``; ``absent:1`` is on no node.
POD_IMAGES = ["nginx:1.25", "redis:7", "busybox", "trainer:v1", "absent:1"]
APPS = ["web", "db"]
#: Amounts at and around the columns' exact limit (2**52), on one node.
HUGE_AMOUNTS = [("memory", "8Ei"), (FOO, "1E"), (FOO, str(EXACT_LIMIT)), (FOO, str(EXACT_LIMIT - 1))]
#: Resource names a scoring strategy may list ("pods" is never scored, upstream ignores it).
SCORED_RESOURCES = ["cpu", "memory", "ephemeral-storage", GPU, HUGEPAGES, "pods"]


def sometimes(strategy: st.SearchStrategy[Any], one_in: int = 4) -> st.SearchStrategy[Any]:
    """``strategy`` about once in ``one_in`` draws, else None (the simplest choice, which
    Hypothesis favours, is None)."""
    return st.sampled_from(range(one_in)).flatmap(lambda i: strategy if i == one_in - 1 else st.none())


# --- nodes -----------------------------------------------------------------------------------------


@st.composite
def node_specs(draw: st.DrawFn) -> dict[str, Any]:
    """Everything a node carries but its name (large clusters repeat a few of these)."""
    alloc = {
        "cpu": draw(st.sampled_from(["16", "16", "4", "2", "500m", "0"])),
        "memory": draw(st.sampled_from(["16Gi", "16Gi", "4Gi", "512Mi", "0"])),
        "pods": draw(st.sampled_from(["110", "110", "3", "1", "0"])),
    }
    for name, amounts in (("ephemeral-storage", ["10Gi", "0"]), (GPU, ["4", "1", "0"]), (HUGEPAGES, ["128Mi", "0"])):
        amount = draw(st.sampled_from([*amounts, None]))
        if amount is not None:
            alloc[name] = amount
    labels = {}
    for key, values in LABEL_VALUES.items():
        value = draw(st.sampled_from([None, *values]))
        if value is not None:
            labels[key] = value
    taints = draw(
        sometimes(
            st.lists(
                st.tuples(st.sampled_from(TAINT_KEYS), st.sampled_from(["", "a"]), st.sampled_from(EFFECTS)),
                min_size=1,
                max_size=3,
                unique_by=lambda t: (t[0], t[2]),
            ),
            3,
        )
    )
    return {
        "alloc": alloc,
        "labels": labels,
        "taints": taints or [],
        "unschedulable": draw(st.sampled_from([False, False, False, True])),
        "images": draw(st.lists(st.sampled_from(sorted(IMAGES)), max_size=3, unique=True)),
    }


def node_obj(name: str, spec: dict[str, Any], huge: tuple[str, str] | None = None) -> dict[str, Any]:
    alloc = dict(spec["alloc"])
    if huge is not None:
        alloc[huge[0]] = huge[1]
    b = make_node(name).set("status.allocatable", alloc).set("status.capacity", dict(alloc))
    for key, value in spec["labels"].items():
        b.label(key, value)
    for key, value, effect in spec["taints"]:
        b.taint(key, value, effect)
    if spec["unschedulable"]:
        b.unschedulable()
    for image in spec["images"]:
        b.image(IMAGES[image], image)
    return b.obj()


#: A plain node: room for a few small pods, no taints, labels or images.
PLAIN: dict[str, Any] = {
    "alloc": {"cpu": "4", "memory": "8Gi", "pods": "110"},
    "labels": {},
    "taints": [],
    "unschedulable": False,
    "images": [],
}


# --- pods ------------------------------------------------------------------------------------------

#: cpu and memory often (or nothing: best-effort), other resources now and then.
REQUESTS = st.tuples(
    st.fixed_dictionaries(
        {}, optional={"cpu": st.sampled_from(["100m", "1", "3", "0"]), "memory": st.sampled_from(["128Mi", "2Gi", "0"])}
    ),
    sometimes(
        st.fixed_dictionaries(
            {},
            optional={
                "ephemeral-storage": st.just("1Gi"),
                GPU: st.sampled_from(["1", "2"]),
                HUGEPAGES: st.just("64Mi"),
            },
        ),
        3,
    ),
).map(lambda parts: {**parts[0], **(parts[1] or {})})
SOFT_REQUESTS = st.fixed_dictionaries(
    {}, optional={"cpu": st.sampled_from(["100m", "1"]), "memory": st.sampled_from(["128Mi", "1Gi"])}
)
HOST_PORTS = st.lists(
    st.fixed_dictionaries(
        {"hostPort": st.sampled_from([80, 8080]), "protocol": st.sampled_from(["TCP", "UDP"])},
        optional={"hostIP": st.sampled_from(["127.0.0.1", "0.0.0.0"])},
    ).map(lambda p: {"containerPort": p["hostPort"], **p}),
    max_size=2,
    unique_by=lambda p: (p["hostPort"], p["protocol"]),
)


def container(image: str, requests: dict[str, str], ports: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"name": "c", "image": image, "resources": {"requests": requests}}
    # Extended resources and hugepages need limits equal to their requests.
    limits = {k: v for k, v in requests.items() if k not in ("cpu", "memory", "ephemeral-storage")}
    if limits:
        c["resources"]["limits"] = limits
    if ports:
        c["ports"] = ports
    return c


@st.composite
def tolerations(draw: st.DrawFn) -> dict[str, str]:
    key = draw(st.sampled_from(["", *TAINT_KEYS]))
    t = {"key": key} if key else {}
    # An empty key tolerates every taint, with operator Exists only; "" is Equal.
    operator = "Exists" if not key else draw(st.sampled_from(["Exists", "Equal", ""]))
    if operator:
        t["operator"] = operator
    if operator != "Exists":
        value = draw(st.sampled_from(["", "a", "b"]))
        if value:
            t["value"] = value
    effect = draw(st.sampled_from(["", *EFFECTS]))
    if effect:
        t["effect"] = effect
    return t


def label_requirements(names: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    keys = [*LABEL_VALUES, HOSTNAME, "missing"]

    def values_of(key: str) -> list[str]:
        return LABEL_VALUES.get(key) or (names if key == HOSTNAME else ["v"])

    in_or_not = st.sampled_from(keys).flatmap(
        lambda key: st.fixed_dictionaries(
            {
                "key": st.just(key),
                "operator": st.sampled_from(["In", "NotIn"]),
                "values": st.lists(st.sampled_from(values_of(key)), min_size=1, max_size=2, unique=True),
            }
        )
    )
    exists = st.fixed_dictionaries(
        {"key": st.sampled_from(keys), "operator": st.sampled_from(["Exists", "DoesNotExist"])}
    )
    # "gen" holds integers (and "x"); zones are never integers, so Gt/Lt on them match nothing.
    compare = st.fixed_dictionaries(
        {
            "key": st.sampled_from(["gen", ZONE]),
            "operator": st.sampled_from(["Gt", "Lt"]),
            "values": st.integers(-3, 11).map(lambda v: [str(v)]),
        }
    )
    return st.one_of(in_or_not, exists, compare)


def node_selector_terms(names: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """A term: label expressions, a ``metadata.name`` field, both (ANDed), or neither (matches no node)."""
    field = st.fixed_dictionaries(
        {
            "key": st.just("metadata.name"),
            "operator": st.sampled_from(["In", "NotIn"]),
            "values": st.sampled_from([*names, "nosuch"]).map(lambda n: [n]),
        }
    )
    return st.fixed_dictionaries(
        {},
        optional={
            "matchExpressions": st.lists(label_requirements(names), min_size=1, max_size=2),
            "matchFields": st.lists(field, min_size=1, max_size=1),
        },
    )


def node_affinities(names: list[str], hard: bool = True) -> st.SearchStrategy[dict[str, Any]]:
    """``v1.NodeAffinity`` (only preferred terms unless ``hard``): also the shape of
    NodeAffinityArgs.addedAffinity."""
    required = st.fixed_dictionaries(
        {"nodeSelectorTerms": st.lists(node_selector_terms(names), min_size=1, max_size=2)}
    )
    preferred = st.lists(
        st.fixed_dictionaries({"weight": st.integers(1, 100), "preference": node_selector_terms(names)}),
        min_size=1,
        max_size=2,
    )
    return st.fixed_dictionaries(
        {},
        optional={
            **({"requiredDuringSchedulingIgnoredDuringExecution": required} if hard else {}),
            "preferredDuringSchedulingIgnoredDuringExecution": preferred,
        },
    )


POD_AFFINITY_TERMS = st.fixed_dictionaries(
    {
        "labelSelector": st.sampled_from(APPS).map(lambda app: {"matchLabels": {"app": app}}),
        "topologyKey": st.sampled_from([ZONE, HOSTNAME]),
    }
)


def pod_affinities(hard: bool) -> st.SearchStrategy[dict[str, Any]]:
    """``podAffinity`` or ``podAntiAffinity`` (only preferred terms unless ``hard``)."""
    required = st.lists(POD_AFFINITY_TERMS, min_size=1, max_size=1)
    preferred = st.lists(
        st.fixed_dictionaries({"weight": st.integers(1, 100), "podAffinityTerm": POD_AFFINITY_TERMS}),
        min_size=1,
        max_size=1,
    )
    return st.fixed_dictionaries(
        {},
        optional={
            **({"requiredDuringSchedulingIgnoredDuringExecution": required} if hard else {}),
            "preferredDuringSchedulingIgnoredDuringExecution": preferred,
        },
    )


def spread_constraints(hard: bool) -> st.SearchStrategy[list[dict[str, Any]]]:
    return st.lists(
        st.fixed_dictionaries(
            {
                "maxSkew": st.integers(1, 2),
                "topologyKey": st.sampled_from([ZONE, HOSTNAME]),
                "whenUnsatisfiable": st.sampled_from(
                    ["DoNotSchedule", "ScheduleAnyway"] if hard else ["ScheduleAnyway"]
                ),
                "labelSelector": st.sampled_from(APPS).map(lambda app: {"matchLabels": {"app": app}}),
            }
        ),
        min_size=1,
        max_size=1,
    )


#: Pod-level requests (``spec.resources``): they replace the containers' sum of what they name.
POD_LEVEL = st.fixed_dictionaries(
    {}, optional={"cpu": st.sampled_from(["500m", "2", "5"]), "memory": st.sampled_from(["256Mi", "3Gi"])}
)
RESIZE_INFEASIBLE = {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}


@st.composite
def counted_as_1_37(draw: st.DrawFn, pod: dict[str, Any], running: bool) -> dict[str, Any]:
    """``pod`` with, now and then, pod-level requests and, for a running pod, a resize in flight:
    what the kubelet allocated to each container (and to the pod), maybe found infeasible."""
    level = draw(sometimes(POD_LEVEL, 4))
    if level:
        # The API server refuses a pod-level request below what its containers ask.
        containers = aggregate_container_requests(pod)
        for name in ("cpu", "memory"):
            if name in level and containers.get(name, 0) > quantity_of(name, level[name]):
                level[name] = f"{containers[name]}m" if name == "cpu" else str(containers[name])
        pod["spec"]["resources"] = {"requests": level}
        note("pod-level requests")
    if running and draw(st.integers(0, 3)) == 0:
        status = pod.setdefault("status", {})
        status["containerStatuses"] = [
            {
                "name": c["name"],
                "image": c["image"],
                "imageID": "",
                "ready": True,
                "restartCount": 0,
                "allocatedResources": draw(SOFT_REQUESTS),
            }
            for c in pod["spec"]["containers"]
        ]
        if level and draw(st.booleans()):
            status["allocatedResources"] = draw(POD_LEVEL)
            status["resources"] = {"requests": draw(POD_LEVEL)}
        if draw(st.integers(0, 3)) == 0:
            status["conditions"] = [dict(RESIZE_INFEASIBLE)]
        note("resized")
    return pod


@st.composite
def pending_pods(draw: st.DrawFn, name: str, names: list[str], pinned: bool = True) -> dict[str, Any]:
    """A pod to schedule. Half of them have only preferences (and cpu and memory requests), so
    that some nodes are feasible and scoring gets its turn; the others may also have host ports,
    other resources, nodeSelector, required (anti-)affinity, hard spread constraints and, with
    ``pinned``, ``spec.nodeName`` (a scenario would take such a pod as running)."""
    hard = draw(st.booleans())
    b = make_pod(name).label("app", draw(st.sampled_from(APPS)))
    spec = b.spec
    requests = REQUESTS if hard else SOFT_REQUESTS
    ports = draw(HOST_PORTS) if hard else []
    for i in range(draw(st.integers(1, 2))):
        c = container(draw(st.sampled_from(POD_IMAGES)), draw(requests), ports if i == 0 else None)
        spec["containers"].append({**c, "name": f"c{i}"})
    if draw(st.booleans()):
        spec["initContainers"] = [{**container(draw(st.sampled_from(POD_IMAGES)), draw(requests)), "name": "init"}]
    spec["tolerations"] = draw(st.lists(tolerations(), max_size=3))
    affinity = {
        key: value
        for key, strategy in (
            ("nodeAffinity", node_affinities(names, hard)),
            ("podAffinity", pod_affinities(hard)),
            ("podAntiAffinity", pod_affinities(hard)),
        )
        if (value := draw(sometimes(strategy, 2)))
    }
    if affinity:
        spec["affinity"] = affinity
    spec["topologySpreadConstraints"] = draw(sometimes(spread_constraints(hard), 2)) or []
    priority = draw(st.sampled_from([None, 0, 1000]))
    if priority is not None:
        spec["priority"] = priority
    if not hard:
        return draw(counted_as_1_37(b.obj(), running=False))
    huge = draw(sometimes(st.sampled_from(["1", "1E"]), 4))
    if huge is not None:
        resources = spec["containers"][0]["resources"]
        resources["requests"][FOO] = huge
        resources["limits"] = {**resources.get("limits", {}), FOO: huge}
    spec["nodeSelector"] = draw(
        st.fixed_dictionaries({}, optional={ZONE: st.sampled_from(LABEL_VALUES[ZONE]), "disk": st.just("ssd")})
    )
    if pinned:
        node_name = draw(sometimes(st.sampled_from([*names, "nosuch"]), 3))
        if node_name is not None:
            spec["nodeName"] = node_name
    return draw(counted_as_1_37(b.obj(), running=False))


@st.composite
def placed_pods(draw: st.DrawFn, name: str, node: str) -> dict[str, Any]:
    """A pod running on ``node``: requests, maybe host ports and pod (anti-)affinity (which count
    for the pods to schedule too), a low priority (preemption victims)."""
    b = make_pod(name).node(node).label("app", draw(st.sampled_from(APPS))).priority(draw(st.sampled_from([-10, 0])))
    b.spec["containers"].append(container(draw(st.sampled_from(POD_IMAGES)), draw(REQUESTS), draw(HOST_PORTS)))
    kind = draw(sometimes(st.sampled_from(["podAffinity", "podAntiAffinity"])))
    if kind is not None:
        b.spec["affinity"] = {kind: draw(pod_affinities(hard=True))}
    return draw(counted_as_1_37(b.obj(), running=True))


# --- profiles --------------------------------------------------------------------------------------

RESOURCE_SPECS = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from(SCORED_RESOURCES), "weight": st.integers(1, 100)}),
    min_size=1,
    max_size=4,
    unique_by=lambda r: r["name"],
)
SHAPES = st.lists(st.integers(0, 100), min_size=1, max_size=4, unique=True).flatmap(
    lambda us: st.lists(st.integers(0, 10), min_size=len(us), max_size=len(us)).map(
        lambda scores: [{"utilization": u, "score": s} for u, s in zip(sorted(us), scores)]
    )
)
SCORING_STRATEGIES = st.one_of(
    st.fixed_dictionaries({"type": st.sampled_from(["LeastAllocated", "MostAllocated"]), "resources": RESOURCE_SPECS}),
    st.fixed_dictionaries(
        {
            "type": st.just("RequestedToCapacityRatio"),
            "resources": RESOURCE_SPECS,
            "requestedToCapacityRatio": st.fixed_dictionaries({"shape": SHAPES}),
        }
    ),
)
#: Args (as a configuration gives them) that differ from the default profile's.
ARG_VARIANTS: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "NodeResourcesFit": st.fixed_dictionaries(
        {"scoringStrategy": SCORING_STRATEGIES},
        optional={"ignoredResources": st.just([GPU]), "ignoredResourceGroups": st.just(["example.com"])},
    ),
    "NodeResourcesBalancedAllocation": st.lists(
        st.sampled_from(SCORED_RESOURCES), min_size=1, max_size=4, unique=True
    ).map(lambda names: {"resources": [{"name": n, "weight": 1} for n in names]}),
    "NodeAffinity": node_affinities(NODE_NAMES).map(lambda added: {"addedAffinity": added}),
}


def with_args(profile: ProfileSpec, **raw: dict[str, Any]) -> ProfileSpec:
    """``profile`` with these plugins' args, given as a configuration gives them."""
    args = dict(profile.plugin_args)
    for plugin, value in raw.items():
        args[plugin] = REGISTRY.get(plugin).cls.Args.model_validate(value)
    return dataclasses.replace(profile, plugin_args=args)


@st.composite
def profiles(draw: st.DrawFn) -> ProfileSpec:
    """The default profile, with some plugins' args replaced by a random variant."""
    raw = {}
    for plugin, variants in ARG_VARIANTS.items():
        value = draw(sometimes(variants, 2))
        if value is not None:
            raw[plugin] = value
            event(f"args: {plugin} {value.get('scoringStrategy', {}).get('type', '')}".rstrip())
    return with_args(DEFAULT_PROFILE, **raw)


# --- comparing one cycle ---------------------------------------------------------------------------


def note(text: str) -> None:
    """A Hypothesis event (shown with ``--hypothesis-show-statistics``), when in a Hypothesis test."""
    if currently_in_test_context():
        event(text)


def summary(status: Status | None) -> tuple[Code, list[str], str] | None:
    """What a Status says (Status's ``==`` leaves out the plugin)."""
    return None if status is None else (status.code, list(status.reasons), status.plugin)


def passed(status: Status | None) -> bool:
    return status is None or status.code is Code.SUCCESS


def score_of(value: Any) -> int:
    """A per-node score: a bare int, or ``(score, status)``."""
    if isinstance(value, tuple):
        value, status = value
        assert passed(status), status
    return int(value)


async def awaited(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def assert_cycle_agrees(
    fw: Framework, snapshot: Snapshot, pod: PodInfo, rows: np.ndarray, noise: Callable[[int], list[int]]
) -> None:
    """A scheduling cycle of ``pod`` over the snapshot's nodes at ``rows`` (in that order), twice:
    the batch path with state ``b``, the per-node path with state ``n``; every step agrees."""
    cols = snapshot.columns()
    batch = NodeBatch(cols, rows)
    nodes = [cols.node(int(r)) for r in rows]
    assert [ni.name for ni in nodes] == batch.names() == [snapshot.list()[r].name for r in rows.tolist()]
    note("columns exact" if cols.exact else "columns inexact")
    state_b, state_n = CycleState(), CycleState()
    pre_b, pre_n = await fw.run_pre_filter(state_b, pod), await fw.run_pre_filter(state_n, pod)
    assert (pre_b[0] and pre_b[0].node_names, summary(pre_b[1]), pre_b[2]) == (
        pre_n[0] and pre_n[0].node_names,
        summary(pre_n[1]),
        pre_n[2],
    )
    assert state_b.skip_filter_plugins == state_n.skip_filter_plugins
    ok = assert_filter_agrees(fw, state_b, state_n, pod, batch, nodes)
    note("no node feasible" if not ok.any() else "every node feasible" if ok.all() else "some nodes feasible")
    if ok.any():
        await assert_score_agrees(fw, state_b, state_n, pod, NodeBatch(cols, rows[ok]), noise)


def assert_filter_agrees(
    fw: Framework, state_b: CycleState, state_n: CycleState, pod: PodInfo, batch: NodeBatch, nodes: list[NodeInfo]
) -> np.ndarray:
    """Filter: each plugin's ``filter_nodes`` against its ``filter`` on every node, then the
    runtime's verdicts, Statuses and traces. Returns which nodes passed."""
    for name in [b.name for b in fw.filter_plugins]:
        filter_nodes = getattr(fw.plugins[name], "filter_nodes", None)
        if filter_nodes is None or name in state_b.skip_filter_plugins:
            continue
        verdicts = filter_nodes(state_b, pod, batch)
        if verdicts is None:
            note(f"{name}.filter_nodes declined")
            continue
        want = [passed(fw.plugins[name].filter(state_n, pod, ni)) for ni in nodes]
        assert np.asarray(verdicts, bool).tolist() == want, name
        note(f"{name}.filter_nodes answered")
    for name in [b.name for b in fw.filter_plugins]:
        filter_statuses = getattr(fw.plugins[name], "filter_statuses", None)
        if filter_statuses is None or name in state_b.skip_filter_plugins:
            continue
        bulk = filter_statuses(state_b, pod, batch)
        if bulk is None:
            note(f"{name}.filter_statuses declined")
            continue
        assert [summary(s) for s in bulk] == [summary(fw.plugins[name].filter(state_n, pod, ni)) for ni in nodes], name
        note(f"{name}.filter_statuses answered")

    statuses = [fw.run_filter(state_n, pod, ni) for ni in nodes]
    result = fw.run_filter_batch(state_b, pod, batch)
    assert result.ok.tolist() == [s is None for s in statuses]
    # All rejected nodes at once (bulk statuses where a plugin has them), as a diagnosis asks.
    failed = [pos for pos, s in enumerate(statuses) if s is not None]
    assert [(n, summary(st)) for n, st in fw.run_filter_batch(state_b, pod, batch).rejected(failed)] == [
        (nodes[pos].name, summary(statuses[pos])) for pos in failed
    ]
    for pos, (ni, status) in enumerate(zip(nodes, statuses)):
        assert summary(result.status(pos)) == summary(status), ni.name
        trace: dict[str, str] = {}
        fw.run_filter_traced(state_n, pod, ni, trace)
        assert result.trace(pos) == trace, ni.name
        if status is not None:
            note(f"rejected by {status.plugin}")
    return result.ok


async def assert_score_agrees(
    fw: Framework,
    state_b: CycleState,
    state_n: CycleState,
    pod: PodInfo,
    feasible: NodeBatch,
    noise: Callable[[int], list[int]],
) -> None:
    """PreScore over the feasible nodes (a NodeBatch, a list); each plugin's ``score_nodes``
    against its ``score``, ``normalize_scores`` against ``normalize_score`` (of those scores and
    of ``noise``); then the runtime's totals, raw and final scores over a NodeBatch and a list."""
    listed = list(feasible)
    status_b = await fw.run_pre_score(state_b, pod, feasible)
    status_n = await fw.run_pre_score(state_n, pod, listed)
    assert summary(status_b) == summary(status_n)
    assert state_b.skip_score_plugins == state_n.skip_score_plugins
    if status_b is not None:
        return
    scored = [b.name for b in fw.score_plugins if b.name not in state_b.skip_score_plugins]
    for name in scored:
        plugin = fw.plugins[name]
        per_node = [score_of(plugin.score(state_n, pod, ni)) for ni in listed]
        score_nodes = getattr(plugin, "score_nodes", None)
        got = score_nodes(state_b, pod, feasible) if score_nodes is not None else None
        if got is not None:
            assert np.asarray(got).tolist() == per_node, name
            note(f"{name}.score_nodes answered")
        elif score_nodes is not None:
            note(f"{name}.score_nodes declined")
        if callable(getattr(plugin, "normalize_scores", None)) and callable(getattr(plugin, "normalize_score", None)):
            for raw in (per_node, noise(len(listed))):
                scores = [NodeScore(ni.name, v) for ni, v in zip(listed, raw)]
                if not passed(await awaited(plugin.normalize_score(state_n, pod, scores))):
                    continue
                normalized = plugin.normalize_scores(state_b, pod, np.array(raw, np.int64))
                if normalized is None:
                    note(f"{name}.normalize_scores declined")
                    continue
                assert np.asarray(normalized).tolist() == [s.score for s in scores], (name, raw)
                note(f"{name}.normalize_scores answered")
    raw_b: dict[str, dict[str, int]] = {}
    final_b: dict[str, dict[str, int]] = {}
    raw_n: dict[str, dict[str, int]] = {}
    final_n: dict[str, dict[str, int]] = {}
    totals_b, status_b = await fw.run_score(state_b, pod, feasible, raw_b, final_b)
    totals_n, status_n = await fw.run_score(state_n, pod, listed, raw_n, final_n)
    assert (totals_b, summary(status_b), raw_b, final_b) == (totals_n, summary(status_n), raw_n, final_n)


def build(nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> tuple[Cache, Snapshot]:
    cache = Cache()
    for node in nodes:
        cache.add_node(node)
    for pod in pods:
        cache.add_pod(PodInfo(pod))
    snapshot = Snapshot()
    cache.update_snapshot(snapshot)
    return cache, snapshot


# --- plugin level ----------------------------------------------------------------------------------


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    specs = draw(st.lists(node_specs(), min_size=1, max_size=len(NODE_NAMES)))
    huge = draw(sometimes(st.tuples(st.integers(0, len(specs) - 1), st.sampled_from(HUGE_AMOUNTS)), 8))
    nodes = [
        node_obj(NODE_NAMES[i], spec, huge[1] if huge is not None and huge[0] == i else None)
        for i, spec in enumerate(specs)
    ]
    placed = draw(st.lists(st.sampled_from(NODE_NAMES[: len(nodes)]), max_size=8))
    pods = [draw(placed_pods(f"running-{i}", node)) for i, node in enumerate(placed)]
    return nodes, pods


@fuzz_settings(200)
@given(clusters(), profiles(), st.data())
def test_batch_forms_agree_with_per_node_forms(
    cluster: tuple[list[dict[str, Any]], list[dict[str, Any]]], profile: ProfileSpec, data: st.DataObject
) -> None:
    """Two cycles over one cache: the second after nodes changed and pods came and went, so the
    columns it reads were updated row by row (or rebuilt, when the node order changed)."""
    nodes, running = cluster
    n = len(nodes)
    names = NODE_NAMES[:n]
    cache, snapshot = build(nodes, running)
    fw = Framework(profile, REGISTRY)
    fw.set_snapshot(snapshot)

    def noise(k: int) -> list[int]:
        return data.draw(st.lists(st.integers(0, 1000), min_size=k, max_size=k), label="raw scores")

    pod = PodInfo(data.draw(pending_pods("pod", names), label="pod"))
    order = data.draw(st.permutations(range(n)), label="order")
    rows = np.asarray(order[: data.draw(st.integers(1, n), label="nodes")], np.intp)
    asyncio.run(assert_cycle_agrees(fw, snapshot, pod, rows, noise))

    for i, spec in data.draw(st.dictionaries(st.integers(0, n - 1), node_specs(), max_size=2), label="updates").items():
        cache.update_node(None, node_obj(names[i], spec))
    uids = [p["metadata"]["uid"] for p in running]
    for uid in data.draw(st.sets(st.sampled_from(uids)) if uids else st.just(set()), label="pods gone"):
        cache.remove_pod(uid)
    for i, node in enumerate(data.draw(st.lists(st.sampled_from(names), max_size=3), label="new pods on")):
        cache.add_pod(PodInfo(data.draw(placed_pods(f"later-{i}", node))))
    cache.update_snapshot(snapshot)
    pod = PodInfo(data.draw(pending_pods("pod-2", names), label="second pod"))
    start = data.draw(st.integers(0, n - 1), label="start")
    asyncio.run(assert_cycle_agrees(fw, snapshot, pod, (start + np.arange(n)) % n, noise))


# --- amounts the columns cannot hold exactly -------------------------------------------------------


@pytest.mark.parametrize(
    ("node_amount", "pod_amount", "exact", "declined"),
    [
        ((FOO, str(EXACT_LIMIT - 1)), (FOO, "1"), True, (False, False, False)),
        ((FOO, str(EXACT_LIMIT)), (FOO, "1"), False, (True, True, True)),
        ((FOO, "1E"), (FOO, "1E"), False, (True, True, True)),
        (("memory", "8Ei"), ("memory", "1Gi"), False, (True, True, True)),
        (("cpu", "4"), ("memory", "8Ei"), True, (True, True, True)),
        # Scoring reads cpu and memory only: their batch forms need not decline.
        (("cpu", "4"), (FOO, str(EXACT_LIMIT)), True, (True, False, False)),
    ],
    ids=["node-2**52-1", "node-2**52", "node-1E", "node-memory-8Ei", "pod-memory-8Ei", "pod-2**52"],
)
def test_amounts_of_2_52_or_more_make_the_resource_plugins_decline(
    node_amount: tuple[str, str], pod_amount: tuple[str, str], exact: bool, declined: tuple[bool, bool, bool]
) -> None:
    """int64 and float64 follow Python's integers only below 2**52: at or above it, on a node
    (the columns are then inexact) or in the pod's requests, NodeResourcesFit (filter_nodes,
    score_nodes) and NodeResourcesBalancedAllocation (score_nodes) leave the nodes to their
    per-node forms, and every result is the same."""
    nodes = [
        node_obj("n0", {**PLAIN, "alloc": {**PLAIN["alloc"], node_amount[0]: node_amount[1]}}),
        node_obj("n1", PLAIN),
        node_obj("n2", {**PLAIN, "alloc": {**PLAIN["alloc"], FOO: "2"}}),
    ]
    _, snapshot = build(nodes, [make_pod("r").node("n1").req(cpu="1", memory="1Gi").obj()])
    cols = snapshot.columns()
    assert cols.exact is exact
    pod = PodInfo(make_pod("p").container(requests={"cpu": "500m", pod_amount[0]: pod_amount[1]}).obj())
    fw = Framework(DEFAULT_PROFILE, REGISTRY)
    fw.set_snapshot(snapshot)
    rows = np.arange(len(nodes))

    async def batch_forms() -> list[Any]:
        state = CycleState()
        await fw.run_pre_filter(state, pod)
        await fw.run_pre_score(state, pod, NodeBatch(cols, rows))
        fit, balanced = fw.plugins["NodeResourcesFit"], fw.plugins["NodeResourcesBalancedAllocation"]
        return [
            fit.filter_nodes(state, pod, NodeBatch(cols, rows)),
            fit.score_nodes(state, pod, NodeBatch(cols, rows)),
            balanced.score_nodes(state, pod, NodeBatch(cols, rows)),
        ]

    assert tuple(v is None for v in asyncio.run(batch_forms())) == declined
    asyncio.run(assert_cycle_agrees(fw, snapshot, pod, rows, lambda k: [7 * i for i in range(k)]))


# --- scheduler level -------------------------------------------------------------------------------


def without_uid(obj: dict[str, Any]) -> dict[str, Any]:
    """The simulation numbers uids in document order: the same in every run."""
    obj["metadata"].pop("uid", None)
    return obj


@st.composite
def scenarios(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Nodes (1-12 random ones, or 130-200 of which three in four are plain, zones interleaved,
    so that Filter may stop at the 100th feasible node), pods running on them at low priority,
    pods to schedule; sometimes a pod that must preempt, sometimes one that fits nowhere."""
    if draw(st.booleans()):
        others = draw(st.lists(node_specs(), min_size=1, max_size=3))
        count = draw(st.integers(130, 200))
        specs = [others[i // 4 % len(others)] if i % 4 == 3 else PLAIN for i in range(count)]
        specs = [{**spec, "labels": {**spec["labels"], ZONE: f"z{i % 3}"}} for i, spec in enumerate(specs)]
    else:
        specs = draw(st.lists(node_specs(), min_size=1, max_size=12))
    names = [f"n{i:03d}" for i in range(len(specs))]
    preempt = draw(st.booleans())
    if preempt:
        # Room on n000 only once the filler there is gone.
        specs[0] = PLAIN
    huge = draw(sometimes(st.sampled_from(HUGE_AMOUNTS), 5))
    docs = [node_obj(name, spec, huge if i == 1 else None) for i, (name, spec) in enumerate(zip(names, specs))]
    running = draw(st.lists(st.sampled_from(names), max_size=10))
    docs += [draw(placed_pods(f"running-{i}", node)) for i, node in enumerate(running)]
    pods = [draw(pending_pods(f"p{i}", names[:12], pinned=False)) for i in range(draw(st.integers(1, 12)))]
    for pod in pods:
        pod["spec"]["schedulerName"] = draw(st.sampled_from([p.scheduler_name for p in PROFILES]))
    if preempt:
        docs.append(make_pod("filler").node(names[0]).priority(-10).req(cpu=PLAIN["alloc"]["cpu"]).obj())
        pods.append(make_pod("urgent").priority(1000).node_selector(**{HOSTNAME: names[0]}).req(cpu="1").obj())
    if draw(st.booleans()):
        pods.append(make_pod("too-big").req(cpu="1000").obj())
    return [without_uid(d) for d in docs + pods]


def report(
    docs: list[dict[str, Any]],
    batch: bool,
    plugin_results: bool = True,
    percentage: int | None = None,
    profiles: list[ProfileSpec] = PROFILES,
    gates: FeatureGates | None = None,
) -> dict[str, Any]:
    settings = SimulationSettings(
        batch=batch,
        plugin_results=plugin_results,
        percentage_of_nodes_to_score=percentage,
        horizon=60.0,
        feature_gates=gates if gates is not None else FeatureGates(),
    )
    out = asyncio.run(simulate(profiles, parse_scenario(copy.deepcopy(docs)), settings)).to_json()
    # Wall-clock figures are the only part that may differ.
    del out["summary"]["seconds"], out["summary"]["podsPerSecond"]
    return out


@fuzz_settings(80)
@given(scenarios(), st.booleans(), st.sampled_from([None, 50, 100]))
def test_simulations_with_and_without_batches_report_the_same(
    docs: list[dict[str, Any]], plugin_results: bool, percentage: int | None
) -> None:
    """Without plugin results, the batch path computes no Status for a rejected node unless the
    pod fits nowhere; with them, every processed node's trace. Either way, the same report."""
    per_node = report(docs, False, plugin_results, percentage)
    assert report(docs, True, plugin_results, percentage) == per_node
    summary_ = per_node["summary"]
    event(f"{'100+' if summary_['nodes'] >= 100 else 'few'} nodes")
    for key in ("scheduled", "unschedulable", "errors"):
        if summary_[key]:
            event(f"some {key}")
    if summary_["preempted"]:
        event("preemption")
    if any(0 < len(p["filter"]) < summary_["nodes"] for p in per_node["pods"]):
        event("Filter stopped before the last node")


def test_a_large_cluster_samples_rotates_preempts_and_diagnoses_the_same() -> None:
    """150 nodes in 3 zones: each small pod stops at the 100th feasible node, the next pod starts
    where it stopped; a pod that fits nowhere gets a message counting every node; a
    high-priority pod preempts a low-priority one. Batch and per-node runs report the same."""
    names = [f"n{i:03d}" for i in range(150)]
    docs = [
        make_node(n).zone(f"z{i % 3}").capacity(cpu="4", memory="16Gi", pods="110").obj() for i, n in enumerate(names)
    ]
    docs.append(make_node("tainted").taint("dedicated").capacity(cpu="4", memory="16Gi", pods="110").obj())
    docs += [make_pod(f"filler-{i}").node(names[i]).priority(-10).req(cpu="4").obj() for i in range(10)]
    docs += [make_pod(f"small-{i}").req(cpu="100m", memory="128Mi").obj() for i in range(6)]
    docs.append(make_pod("too-big").req(cpu="64").obj())
    docs.append(make_pod("urgent").priority(1000).node_selector(**{HOSTNAME: names[0]}).req(cpu="1").obj())
    docs = [without_uid(d) for d in docs]

    per_node = report(docs, False, True, None)
    assert report(docs, True, True, None) == per_node
    assert report(docs, True, False, None) == report(docs, False, False, None)

    pods = {p["name"]: p for p in per_node["pods"]}
    filtered = [set(pods[f"small-{i}"]["filter"]) for i in range(2)]
    assert all(100 <= len(f) < 151 for f in filtered), [len(f) for f in filtered]
    assert filtered[0] != filtered[1], "the second pod starts where the first stopped"
    assert pods["too-big"]["phase"] == "Unschedulable"
    assert pods["too-big"]["message"].startswith("0/151 nodes are available: 1 node(s) had untolerated taint")
    assert "150 Insufficient cpu" in pods["too-big"]["message"]
    assert per_node["summary"]["preempted"] == ["default/filler-0"]
    assert pods["urgent"]["node"] == names[0]


# --- pod groups (GenericWorkload) ------------------------------------------------------------------

#: GenericWorkload on: the default profiles hold GangScheduling, pods naming a PodGroup are placed
#: by the group's cycle, each member through the per-pod algorithm on one path or the other.
GROUP_GATES = FeatureGates().replace(GenericWorkload=True)
#: default-scheduler and bin-packing-scheduler (whose pods default spreading leaves unsignable),
#: and a profile without default spreading, whose identical pods opportunistic batching hints.
#: With TopologyAwareWorkloadScheduling too: the placement algorithm (a group with a zone
#: constraint is tried zone by zone, members restricted to the zone's nodes, the best scored).
TOPOLOGY_GATES = GROUP_GATES.replace(TopologyAwareWorkloadScheduling=True)


def group_profiles(gates: FeatureGates) -> list[ProfileSpec]:
    return [
        *load_config(REPO / "config" / "kubesched.yaml", feature_gates=gates).profiles,
        dataclasses.replace(
            load_config(REPO / "benchmarks" / "no-topology-defaults.yaml", feature_gates=gates).profiles[0],
            scheduler_name="batching-scheduler",
        ),
    ]


GROUP_PROFILES = group_profiles(GROUP_GATES)
TOPOLOGY_PROFILES = group_profiles(TOPOLOGY_GATES)


def pod_group_doc(name: str, min_count: int | None, topology: str | None = None) -> dict[str, Any]:
    """A PodGroup: a gang of ``min_count``, or (None) the basic policy; with ``topology``, its
    members in one domain of that key."""
    policy = {"gang": {"minCount": min_count}} if min_count is not None else {"basic": {}}
    spec: dict[str, Any] = {"schedulingPolicy": policy}
    if topology is not None:
        spec["schedulingConstraints"] = {"topology": [{"key": topology}]}
    return {
        "apiVersion": "scheduling.k8s.io/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def member_of(pod: dict[str, Any], group: str, scheduler: str) -> dict[str, Any]:
    pod["spec"]["schedulingGroup"] = {"podGroupName": group}
    pod["spec"]["schedulerName"] = scheduler
    return pod


@st.composite
def pod_group_scenarios(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, tuple[int | None, list[str]]]]:
    """Nodes as :func:`scenarios` draws them (a few random ones, or 130-200 mostly plain), pods
    running on them, then 1-4 pod groups (gangs of a random ``minCount`` or basic groups) of
    identical members (one drawn pod, copied) or mixed ones, sometimes with a member that fits
    nowhere, each group under one profile; and a few pods in no group. Also each group's
    ``minCount`` (None: basic) and members."""
    if draw(st.booleans()):
        others = draw(st.lists(node_specs(), min_size=1, max_size=3))
        count = draw(st.integers(130, 200))
        specs = [others[i // 4 % len(others)] if i % 4 == 3 else PLAIN for i in range(count)]
        specs = [{**spec, "labels": {**spec["labels"], ZONE: f"z{i % 3}"}} for i, spec in enumerate(specs)]
    else:
        specs = draw(st.lists(node_specs(), min_size=1, max_size=12))
    names = [f"n{i:03d}" for i in range(len(specs))]
    docs = [node_obj(name, spec) for name, spec in zip(names, specs, strict=True)]
    running = draw(st.lists(st.sampled_from(names), max_size=6))
    docs += [draw(placed_pods(f"running-{i}", node)) for i, node in enumerate(running)]
    groups: dict[str, tuple[int | None, list[str]]] = {}
    pods: list[dict[str, Any]] = []
    for g in range(draw(st.integers(1, 4))):
        group = f"g{g}"
        scheduler = draw(st.sampled_from([p.scheduler_name for p in GROUP_PROFILES]))
        size = draw(st.integers(1, 5))
        if draw(st.booleans()):
            template = draw(pending_pods(f"{group}-m", names[:12], pinned=False), label="identical member")
            members = []
            for i in range(size):
                pod = copy.deepcopy(template)
                pod["metadata"]["name"] = f"{group}-m{i}"
                members.append(pod)
        else:
            members = [draw(pending_pods(f"{group}-m{i}", names[:12], pinned=False)) for i in range(size)]
        if draw(st.integers(0, 3)) == 0:
            members.append(make_pod(f"{group}-too-big").req(cpu="1000").obj())
        min_count = draw(st.integers(1, len(members))) if draw(st.booleans()) else None
        topology = draw(st.sampled_from([None, None, ZONE, HOSTNAME]), label="topology constraint")
        docs.append(pod_group_doc(group, min_count, topology))
        pods += [member_of(m, group, scheduler) for m in members]
        groups[group] = (min_count, [m["metadata"]["name"] for m in members])
    for i in range(draw(st.integers(0, 3))):
        pod = draw(pending_pods(f"single-{i}", names[:12], pinned=False))
        pod["spec"]["schedulerName"] = draw(st.sampled_from([p.scheduler_name for p in GROUP_PROFILES]))
        pods.append(pod)
    docs += draw(st.permutations(pods))
    return [without_uid(d) for d in docs], groups


@fuzz_settings(80)
@given(pod_group_scenarios(), st.booleans(), st.sampled_from([None, 50]), st.booleans())
def test_pod_groups_are_placed_the_same_with_and_without_batches(
    drawn: tuple[list[dict[str, Any]], dict[str, tuple[int | None, list[str]]]],
    plugin_results: bool,
    percentage: int | None,
    topology: bool,
) -> None:
    """Each group's members go to the same nodes, with the same outcomes and messages, whether
    Filter and Score run over the node columns or node by node (opportunistic batching on, as
    1.37 has it, in both), by the default algorithm (GenericWorkload; topology constraints
    ignored) or by the placement algorithm (TopologyAwareWorkloadScheduling too); and a gang is
    all or nothing: none of its members bound, or at least ``minCount``."""
    docs, groups = drawn
    profiles, gates = (TOPOLOGY_PROFILES, TOPOLOGY_GATES) if topology else (GROUP_PROFILES, GROUP_GATES)
    event("placement algorithm" if topology else "default algorithm")
    per_node = report(docs, False, plugin_results, percentage, profiles, gates)
    assert report(docs, True, plugin_results, percentage, profiles, gates) == per_node
    pods = {p["name"]: p for p in per_node["pods"]}
    for group, (min_count, members) in groups.items():
        bound = [m for m in members if pods[m]["phase"] == "Scheduled"]
        if min_count is not None:
            assert not bound or len(bound) >= min_count, (group, min_count, bound)
            event("a gang placed" if bound else "a gang left unplaced")
        else:
            event("a basic group partly placed" if 0 < len(bound) < len(members) else "a basic group, all or none")


def test_a_gang_of_identical_pods_one_a_node_is_placed_the_same_with_and_without_batching_or_hints() -> None:
    """Seven nodes of distinct sizes with room for one pod each, a gang of five identical pods
    under the profile that batches them: opportunistic batching hints every member after the
    first, and the columns or not, hints or not, each member lands on the same node; a gang of
    eight on the same nodes binds none, on every path."""
    sizes = [4, 8, 16, 32, 64, 128, 256]
    nodes = [make_node(f"n{i}").capacity(cpu=str(c), memory=f"{c}Gi", pods="1").obj() for i, c in enumerate(sizes)]

    def gang(size: int) -> list[dict[str, Any]]:
        members = [
            member_of(make_pod(f"w{i}").req(cpu="3500m", memory="3584Mi").obj(), "train", "batching-scheduler")
            for i in range(size)
        ]
        return [without_uid(d) for d in [*nodes, pod_group_doc("train", size), *members]]

    def run(docs: list[dict[str, Any]], columns: bool, hints: bool) -> Any:
        gates = GROUP_GATES.replace(OpportunisticBatching=hints)
        settings = SimulationSettings(batch=columns, feature_gates=gates)
        return asyncio.run(simulate(GROUP_PROFILES, parse_scenario(copy.deepcopy(docs)), settings))

    # Five: the first member is a full cycle, the other four take hints. Eight: six hints fill
    # the nodes, the eighth member fits nowhere (a full cycle) and the gang is undone — in each
    # of its attempts (it is tried again after each backoff, up to the simulation's horizon).
    for size, placed, hints_used in ((5, 5, 4), (8, 0, 6)):
        docs = gang(size)
        results = {(c, h): run(docs, c, h) for c in (False, True) for h in (False, True)}
        where = {k: {p["name"]: p.get("node") for p in r.pods} for k, r in results.items()}
        assert all(w == where[(False, False)] for w in where.values()), where
        assert sum(1 for n in where[(False, False)].values() if n is not None) == placed
        sched = results[(True, True)].scheduler
        hinted = sched.batching.stats.attempts.get("hint_used", 0)
        assert sched.group_cycle is not None
        attempts = sum(sched.group_cycle.outcomes.values())
        assert (attempts == 1) is (placed > 0)
        assert hinted == hints_used * attempts


# --- found by the tests above ------------------------------------------------------------------------


def test_a_null_taint_value_is_not_the_string_none() -> None:
    """The API server decodes ``value: null`` as "" (a toleration with no value tolerates it),
    while ``value: "None"`` is a value like any other: the columns must not give the two taint
    lists one code (keyed by ``str()`` of each field they did, and the batch filter let the pod
    onto n1, whose taint it does not tolerate)."""
    nodes = [
        make_node("n0").set("spec.taints", [{"key": "k", "value": None, "effect": "NoSchedule"}]).obj(),
        make_node("n1").set("spec.taints", [{"key": "k", "value": "None", "effect": "NoSchedule"}]).obj(),
    ]
    _, snapshot = build(nodes, [])
    fw = Framework(DEFAULT_PROFILE, REGISTRY)
    fw.set_snapshot(snapshot)
    pod = PodInfo(make_pod("p").toleration(key="k", operator="Equal").obj())
    asyncio.run(assert_cycle_agrees(fw, snapshot, pod, np.arange(2), lambda k: [0] * k))


def test_fit_scores_every_node_when_no_scoring_resource_counts_for_the_pod() -> None:
    """A profile scoring only an extended resource (as GPU bin-packing profiles do) and a pod that
    does not request it: every node scores 0 and the pod is scheduled, in a batch too (the
    vectorized scorers once sized their result by the first resource's column, returned [] and
    failed the pod)."""
    profile = with_args(
        DEFAULT_PROFILE,
        NodeResourcesFit={"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": GPU, "weight": 1}]}},
    )
    docs = [node_obj("n0", PLAIN), node_obj("n1", PLAIN), without_uid(make_pod("p").req(cpu="1").obj())]
    per_node = report(docs, False, profiles=[profile])
    assert per_node["pods"][0]["phase"] == "Scheduled"
    assert report(docs, True, profiles=[profile]) == per_node
