"""``handle.informer_for``: plugins watch any resource, built-in or custom, over the in-memory
cluster; its changes reach the plugin's handlers and, as ``ClusterEvent(gvr.event_resource)``,
the queue, whose hints decide which rejected pods to retry. The docs' example is the plugin."""

from __future__ import annotations

import re
from typing import Any

import pytest
from conftest import make_harness, profile, registry_with
from docs_pages import page_path
from kubernetes_asyncio.client import Configuration

from kubesched import ActionType, ClusterEvent, ClusterEventWithHint, GroupVersionResource, QueueingHint, Status
from kubesched.cluster.kinds import BUILTIN_KINDS, handler_kind, store_kind
from kubesched.cluster.kube.cluster import KubeCluster
from kubesched.cluster.kube.paths import RESOURCES, resource_for
from kubesched.cluster.memory import InMemoryCluster
from kubesched.cluster.store import Store
from kubesched.errors import PluginError
from kubesched.runtime.framework import Collaborators, Framework
from kubesched.runtime.informers import SharedInformers
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.testing import make_node, make_pod

PAGE = page_path("writing-a-plugin.md")
QUOTAS = GroupVersionResource("scheduling.x-k8s.io", "v1alpha1", "elasticquotas")
QUOTA_KIND = "elasticquotas.scheduling.x-k8s.io"  # the Store's key for them
CONFIG_MAPS = GroupVersionResource("", "v1", "configmaps")
#: No backoff: a pod the queue moves is active at once (run_all pops only active pods).
OPTIONS = SchedulerOptions(seed=1, record_results=True, pod_initial_backoff=0.0, pod_max_backoff=0.0)


def readme_plugin() -> type:
    blocks = re.findall(r"```python\n(# my_plugins/needs_quota\.py\n.*?)```", PAGE.read_text(), re.DOTALL)
    assert len(blocks) == 1, "the docs' informer example is gone"
    ns: dict[str, Any] = {}
    exec(compile(blocks[0], "writing-a-plugin.md:needs_quota", "exec"), ns)
    cls: type = ns["NeedsQuota"]
    return cls


def quota(name: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"max": {"cpu": "10"}},
    }


def test_the_names_a_resource_goes_by() -> None:
    assert handler_kind(QUOTAS) == "elasticquotas.v1alpha1.scheduling.x-k8s.io" == QUOTAS.event_resource
    assert store_kind(QUOTAS) == QUOTA_KIND == QUOTAS.qualified_name
    assert handler_kind(CONFIG_MAPS) == store_kind(CONFIG_MAPS) == "ConfigMap"
    assert GroupVersionResource.parse("pods.v1") == GroupVersionResource("", "v1", "pods")
    # Every kind the kube backend watches is in the table, at the path it lists.
    kinds = {kind: gvr for gvr, kind in BUILTIN_KINDS.items()}
    for kind, res in RESOURCES.items():
        assert kinds[kind].collection_path == res.path and kinds[kind].api_version == res.api_version
        assert resource_for(kinds[kind]) is res
    custom = resource_for(QUOTAS)
    assert custom.custom and custom.kind == QUOTAS.event_resource
    assert custom.path == "/apis/scheduling.x-k8s.io/v1alpha1/elasticquotas"
    assert custom.object_path("ns1", "q") == "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ns1/elasticquotas/q"


async def test_a_pod_waits_for_its_quota_and_is_retried_when_one_is_created() -> None:
    needs_quota = readme_plugin()
    reg = registry_with(needs_quota)
    h = await make_harness(
        [profile(preFilter=["NeedsQuota"])],
        reg,
        OPTIONS,
        objs=[make_node("n1").capacity(cpu="4", pods=10), make_pod("p")],
    )
    sched = h.scheduler
    plugin = sched.frameworks["default-scheduler"].plugins["NeedsQuota"]
    assert plugin.quotas.has_synced() and plugin.quotas.gvr == QUOTAS
    assert [str(g) for g in sched.informers.resources()] == ["elasticquotas.v1alpha1.scheduling.x-k8s.io"]

    await h.run_all()
    assert h.node_of("p") is None
    assert sched.queue.counts()["unschedulable"] == 1
    assert "no ElasticQuota in namespace default" in sched.results["default/p"].message

    # Another namespace's quota: the hint says it does not help; the pod stays pooled.
    h.store.create(QUOTA_KIND, quota("q-other", "other"))
    await h.settle()
    assert plugin.quotas.lister.get("other", "q-other") is not None
    assert sched.queue.counts()["unschedulable"] == 1
    assert await h.run_all() == 0

    h.store.create(QUOTA_KIND, quota("q", "default"))
    await h.settle()
    assert [q["metadata"]["name"] for q in plugin.quotas.lister.list("default")] == ["q"]
    assert await h.run_all() == 1
    assert h.node_of("p") == "n1"


class Orderly:
    """Records, as each quota arrives, how many pods its pods informer knows of."""

    name = "Orderly"

    def __init__(self, args: Any, handle: Any) -> None:
        self.pods = handle.informer_for("pods.v1")
        self.pods_seen_at_quota: list[int] = []
        handle.informer_for(QUOTAS).add_event_handler(
            on_add=lambda o: self.pods_seen_at_quota.append(len(self.pods.lister.list()))
        )

    def pre_filter(self, state: Any, pod: Any) -> None:
        return None


async def test_objects_present_at_start_are_listed_before_nodes_and_pods() -> None:
    store = Store()
    store.create(QUOTA_KIND, quota("q", "default"))
    store.create("Pod", make_pod("p").obj())
    store.create("Node", make_node("n1").capacity(cpu="4", pods=10).obj())
    cluster = InMemoryCluster(store)
    sched = Scheduler(
        [profile(preFilter=["NeedsQuota", "Orderly"])], cluster, OPTIONS, registry_with(readme_plugin(), Orderly)
    )
    await sched.start()
    orderly = sched.frameworks["default-scheduler"].plugins["Orderly"]
    assert orderly.pods_seen_at_quota == [0]
    qpi = sched.queue.pop_nowait()
    assert qpi is not None
    await sched.schedule_one(qpi)
    await sched.wait_for_bindings()
    assert store.get("Pod", "default", "p")["spec"]["nodeName"] == "n1"


class Watcher:
    """Records what its informer delivers; two instances (two profiles) share one informer."""

    name = "Watcher"
    seen: list[tuple[str, str, str]] = []

    def __init__(self, args: Any, handle: Any) -> None:
        self.informer = handle.informer_for("elasticquotas.v1alpha1.scheduling.x-k8s.io")
        self.informer.add_event_handler(
            on_add=lambda o: self.seen.append(("add", o["metadata"]["name"], o["spec"]["max"]["cpu"])),
            on_update=lambda old, new: self.seen.append(
                ("update", old["spec"]["max"]["cpu"], new["spec"]["max"]["cpu"])
            ),
            on_delete=lambda o: self.seen.append(("delete", o["metadata"]["name"], "")),
        )

    def filter(self, state: Any, pod: Any, node: Any) -> None:
        return None


class Broken:
    """A handler that raises must not keep the others (nor the scheduler) from hearing."""

    name = "Broken"

    def __init__(self, args: Any, handle: Any) -> None:
        handle.informer_for(QUOTAS).add_event_handler(on_add=self.boom)

    def boom(self, obj: Any) -> None:
        raise RuntimeError("boom")

    def filter(self, state: Any, pod: Any, node: Any) -> None:
        return None


async def test_two_profiles_share_one_informer_and_handlers_hear_every_change() -> None:
    Watcher.seen = []
    reg = registry_with(Watcher, Broken)
    h = await make_harness(
        [profile("a", filter=["Broken", "Watcher"]), profile("b", filter=["Watcher"])],
        reg,
        OPTIONS,
        objs=[make_node("n1")],
    )
    a = h.scheduler.frameworks["a"].plugins["Watcher"]
    b = h.scheduler.frameworks["b"].plugins["Watcher"]
    assert a.informer is b.informer
    assert h.cluster._extra == {QUOTA_KIND: [QUOTAS.event_resource]}  # one watch
    h.store.create(QUOTA_KIND, quota("q", "default"))
    await h.settle()
    q = h.store.get(QUOTA_KIND, "default", "q")
    h.store.update(QUOTA_KIND, {**q, "spec": {"max": {"cpu": "20"}}})
    await h.settle()
    h.store.delete(QUOTA_KIND, "default", "q")
    await h.settle()
    # Each handler added twice (once per profile), in the order the store made the changes.
    assert Watcher.seen == [
        ("add", "q", "10"),
        ("add", "q", "10"),
        ("update", "10", "20"),
        ("update", "10", "20"),
        ("delete", "q", ""),
        ("delete", "q", ""),
    ]
    assert a.informer.lister.list() == []


class RegistersOnly:
    """Registers events on a custom resource without asking for its informer (upstream starts
    a dynamic informer for it anyway); rejects pods until told otherwise."""

    name = "RegistersOnly"
    hints: list[tuple[Any, Any]] = []

    def __init__(self, args: Any, handle: Any) -> None:
        self.open = False

    def pre_filter(self, state: Any, pod: Any) -> Status | None:
        return None if self.open else Status.unschedulable("closed")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        def hint(pod: Any, old: Any, new: Any) -> QueueingHint:
            self.hints.append((old, new))
            return QueueingHint.QUEUE if new is not None and new["spec"]["max"]["cpu"] == "20" else QueueingHint.SKIP

        return [ClusterEventWithHint(ClusterEvent(QUOTAS.event_resource, ActionType.UPDATE), hint)]


async def test_registering_events_on_a_resource_watches_it() -> None:
    RegistersOnly.hints = []
    h = await make_harness(
        [profile(preFilter=["RegistersOnly"])],
        registry_with(RegistersOnly),
        OPTIONS,
        objs=[make_node("n1").capacity(cpu="4", pods=10), make_pod("p")],
    )
    assert h.scheduler.informers.resources() == [QUOTAS]
    plugin = h.scheduler.frameworks["default-scheduler"].plugins["RegistersOnly"]
    await h.run_all()
    assert h.node_of("p") is None
    h.store.create(QUOTA_KIND, quota("q", "default"))  # an add: not registered, no hint asked
    await h.settle()
    assert RegistersOnly.hints == []
    q = h.store.get(QUOTA_KIND, "default", "q")
    h.store.update(QUOTA_KIND, {**q, "spec": {"max": {"cpu": "15"}}})
    await h.settle()
    assert await h.run_all() == 0  # hint said SKIP
    plugin.open = True
    q = h.store.get(QUOTA_KIND, "default", "q")
    h.store.update(QUOTA_KIND, {**q, "spec": {"max": {"cpu": "20"}}})
    await h.settle()
    assert [(old["spec"]["max"]["cpu"], new["spec"]["max"]["cpu"]) for old, new in RegistersOnly.hints] == [
        ("10", "15"),
        ("15", "20"),
    ]
    assert await h.run_all() == 1
    assert h.node_of("p") == "n1"


class BuiltIns:
    """Asks for kinds the scheduler watches anyway, and for one it does not (ConfigMaps)."""

    name = "BuiltIns"

    def __init__(self, args: Any, handle: Any) -> None:
        self.pods = handle.informer_for(GroupVersionResource("", "v1", "pods"))
        self.pdbs = handle.informer_for(GroupVersionResource("policy", "v1", "poddisruptionbudgets"))
        self.config_maps = handle.informer_for(CONFIG_MAPS)
        self.open = False

    def pre_filter(self, state: Any, pod: Any) -> Status | None:
        return None if self.config_maps.lister.get("default", "go") is not None else Status.unschedulable("no go")

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("configmaps.v1", ActionType.ADD))]


async def test_built_in_kinds_are_served_from_what_the_scheduler_receives() -> None:
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb", "namespace": "default"},
        "spec": {"minAvailable": 1},
    }
    h = await make_harness(
        [profile(preFilter=["BuiltIns"])],
        registry_with(BuiltIns),
        OPTIONS,
        objs=[make_node("n1").capacity(cpu="4", pods=10), make_pod("p"), pdb],
    )
    plugin = h.scheduler.frameworks["default-scheduler"].plugins["BuiltIns"]
    # Pods and PDBs come with the scheduler's own kinds: only ConfigMaps are watched besides.
    assert h.cluster._extra == {"ConfigMap": ["ConfigMap"]}
    assert [p["metadata"]["name"] for p in plugin.pods.lister.list()] == ["p"]
    assert plugin.pdbs.lister.get("default", "pdb") is not None
    await h.run_all()
    assert h.node_of("p") is None
    h.store.create("ConfigMap", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "go"}, "data": {}})
    await h.settle()
    assert await h.run_all() == 1
    assert h.node_of("p") == "n1"
    assert plugin.pods.lister.get("default", "p")["spec"]["nodeName"] == "n1"  # the bind's update too


def test_the_kube_backend_watches_only_what_it_does_not_already() -> None:
    cluster = KubeCluster(configuration=Configuration(host="http://127.0.0.1:1"))
    cluster.watch_resources(
        [GroupVersionResource("", "v1", "pods"), GroupVersionResource("policy", "v1", "poddisruptionbudgets")]
    )
    assert cluster._informers.extra == {}
    cluster.watch_resources([CONFIG_MAPS, QUOTAS, QUOTAS])
    assert list(cluster._informers.extra) == ["ConfigMap", QUOTAS.event_resource]
    order = [r.kind for r in cluster._informers._order()]
    assert order[-4:] == ["ConfigMap", QUOTAS.event_resource, "Node", "Pod"]


async def test_an_informer_first_asked_for_after_start_is_refused() -> None:
    h = await make_harness([profile()], objs=[make_node("n1")])
    fw = h.scheduler.frameworks["default-scheduler"]
    with pytest.raises(PluginError, match="constructor"):
        fw.informer_for(QUOTAS)
    # A standalone Framework (a test harness) has informers of its own that nothing feeds.
    informers = SharedInformers()
    alone = Framework(fw.spec, registry_with(), Collaborators(informers=informers))
    inf = alone.informer_for("elasticquotas.v1alpha1.scheduling.x-k8s.io")
    assert inf is alone.informer_for(QUOTAS) and not inf.has_synced() and inf.lister.list() == []
    # Handlers added late still hear of what is known: delivered as adds.
    inf.added(quota("q", "ns"))  # type: ignore[attr-defined]
    got: list[str] = []
    inf.add_event_handler(on_add=lambda o: got.append(o["metadata"]["name"]))
    assert got == ["q"]


class ByName:
    """Registers PDB adds by upstream's resource name rather than as Resource.POD_DISRUPTION_BUDGET."""

    name = "ByName"

    def __init__(self, args: Any, handle: Any) -> None:
        self.pods = handle.informer_for("pods.v1")  # asked for, never registered by name

    def pre_filter(self, state: Any, pod: Any) -> None:
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("poddisruptionbudgets.v1.policy", ActionType.ADD))]


async def test_a_kind_the_scheduler_handles_reaches_the_queue_by_name_only_when_registered_so() -> None:
    h = await make_harness([profile(preFilter=["ByName"])], registry_with(ByName), OPTIONS, objs=[make_node("n1")])
    seen: list[str] = []
    on_event = h.scheduler.queue.on_event

    def spy(event: ClusterEvent, *args: Any, **kwargs: Any) -> int:
        seen.append(str(event))
        return on_event(event, *args, **kwargs)

    h.scheduler.queue.on_event = spy  # type: ignore[method-assign]
    pdb = {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "pdb"}, "spec": {}}
    h.store.create("PodDisruptionBudget", pdb)
    h.store.create("Pod", make_pod("p").node("n1").obj())
    await h.settle()
    assert "poddisruptionbudgets.v1.policyAdd" in seen and "PodDisruptionBudgetAdd" in seen
    assert not [e for e in seen if e.startswith("pods.v1")]
    assert h.cluster._extra == {}  # both served from the scheduler's own kinds


class Misnamed:
    """Registers events on a name that is no resource's: logged and left out, as upstream."""

    name = "Misnamed"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    def pre_filter(self, state: Any, pod: Any) -> None:
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent("quotas", ActionType.ADD))]


def test_an_unreadable_resource_name_is_logged_and_left_out(caplog: pytest.LogCaptureFixture) -> None:
    sched = Scheduler([profile(preFilter=["Misnamed"])], InMemoryCluster(Store()), OPTIONS, registry_with(Misnamed))
    assert sched.informers.resources() == []
    assert "plugin Misnamed registers events on 'quotas'" in caplog.text


async def test_the_in_memory_cluster_writes_any_resource_by_the_name_its_informer_gives() -> None:
    from kubesched.cluster.base import ClusterError
    from kubesched.cluster.kinds import named_resource
    from kubesched.cluster.memory import InMemoryCluster
    from kubesched.cluster.store import Store

    quotas = GroupVersionResource("scheduling.x-k8s.io", "v1alpha1", "elasticquotas")
    assert named_resource(quotas.event_resource) == quotas
    assert named_resource("ConfigMap") == GroupVersionResource("", "v1", "configmaps")
    assert named_resource("ElasticQuota") is None
    cluster = InMemoryCluster(Store())
    quota = {"apiVersion": quotas.api_version, "kind": "ElasticQuota", "metadata": {"name": "q", "namespace": "a"}}
    made = await cluster.create_object(quotas.event_resource, quota)
    assert (
        cluster.store.get("elasticquotas.scheduling.x-k8s.io", "a", "q")["metadata"]["uid"] == made["metadata"]["uid"]
    )
    made["spec"] = {"max": {"cpu": "2"}}
    await cluster.update_object(quotas.event_resource, made)
    assert cluster.store.get(quotas.qualified_name, "a", "q")["spec"] == {"max": {"cpu": "2"}}
    with pytest.raises(ClusterError):  # a stale resourceVersion is a conflict, as for built-ins
        await cluster.update_object(quotas.event_resource, made)
    await cluster.delete_object(quotas.event_resource, "a", "q")
    assert cluster.store.list(quotas.qualified_name)[0] == []
