"""DynamicResources keeps what it worked out of the slices, classes and claims from one cycle to
the next (pools built, selector verdicts): a changed ResourceSlice, DeviceClass or claim must be
seen by the next cycle, on every node."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

from kubesched.framework.interface import CycleState
from kubesched.plugins.dynamicresources.dynamic_resources import DynamicResources
from kubesched.plugins.dynamicresources.state import STATE_KEY, State
from kubesched.testing import make_node
from kubesched.testing.harness import ObjectListers, as_node_infos, as_pod_info

Obj = dict[str, Any]
DRIVER = "some-driver"
CLASS = "my-class"
NODES = [make_node(f"node-{i}").label("dra", "yes").capacity(cpu="4", memory="4Gi", pods="10") for i in range(3)]


def pod() -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "my-pod", "namespace": "default", "uid": "pod-uid"},
        "spec": {
            "containers": [{"name": "c", "image": "pause"}],
            "resourceClaims": [{"name": "res", "resourceClaimName": "my-claim"}],
        },
    }


def claim(selector: str | None = None) -> Obj:
    exactly: Obj = {"deviceClassName": CLASS}
    if selector:
        exactly["selectors"] = [{"cel": {"expression": selector}}]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "my-claim", "namespace": "default", "uid": "claim-uid", "resourceVersion": "1"},
        "spec": {"devices": {"requests": [{"name": "req", "exactly": exactly}]}},
    }


def device_class(expression: str) -> Obj:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": CLASS},
        "spec": {"selectors": [{"cel": {"expression": expression}}]},
    }


def shared_slice(*devices: tuple[str, str]) -> Obj:
    """A slice reaching every node labelled ``dra=yes``: devices (name, model)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": "shared"},
        "spec": {
            "driver": DRIVER,
            "nodeSelector": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "dra", "operator": "In", "values": ["yes"]}]}]
            },
            "pool": {"name": "shared", "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": n, "attributes": {"model": {"string": m}}} for n, m in devices],
        },
    }


class Listers(ObjectListers):
    """Listers whose objects a test replaces between cycles (as the informers would)."""

    def replace(self, obj: Obj) -> None:
        kind, name = obj["kind"], obj["metadata"]["name"]
        self._by_kind[kind] = [o for o in self._by_kind.get(kind, []) if o["metadata"]["name"] != name]
        self._by_kind[kind].append(copy.deepcopy(obj))


def cycle(plugin: DynamicResources) -> dict[str, list[str]]:
    """PreFilter and Filter on every node: the devices each node would get."""
    state, pi = CycleState(), as_pod_info(pod())
    assert plugin.pre_filter(state, pi) is None
    out = {}
    for info in as_node_infos(NODES):
        if plugin.filter(state, pi, info) is None:
            s: State = state.read(STATE_KEY)
            found = s.node_allocations[info.name]
            out[info.name] = [r["device"] for res in found.results for r in res["devices"]["results"]]
    return out


def plugin_over(*objects: Obj) -> tuple[DynamicResources, Listers]:
    listers = Listers(copy.deepcopy(list(objects)))
    return DynamicResources(None, SimpleNamespace(listers=listers, cluster=None)), listers


def everywhere(*devices: str) -> dict[str, list[str]]:
    return {info.name: list(devices) for info in as_node_infos(NODES)}


ANY = f'device.driver == "{DRIVER}"'


def test_a_changed_resource_slice_is_seen_by_the_next_cycle() -> None:
    plugin, listers = plugin_over(claim(), device_class(ANY), shared_slice(("gpu-a", "a")))
    assert cycle(plugin) == everywhere("gpu-a")
    listers.replace(shared_slice(("gpu-b", "b")))
    assert cycle(plugin) == everywhere("gpu-b")


def test_a_changed_device_class_is_seen_by_the_next_cycle() -> None:
    slice_ = shared_slice(("gpu-a", "a"), ("gpu-b", "b"))
    plugin, listers = plugin_over(claim(), device_class(f'{ANY} && device.attributes["{DRIVER}"].model == "a"'), slice_)
    assert cycle(plugin) == everywhere("gpu-a")
    listers.replace(device_class(f'{ANY} && device.attributes["{DRIVER}"].model == "b"'))
    assert cycle(plugin) == everywhere("gpu-b")


def test_a_changed_claim_is_seen_by_the_next_cycle() -> None:
    slice_ = shared_slice(("gpu-a", "a"), ("gpu-b", "b"))
    plugin, listers = plugin_over(claim(f'device.attributes["{DRIVER}"].model == "a"'), device_class(ANY), slice_)
    assert cycle(plugin) == everywhere("gpu-a")
    listers.replace(claim(f'device.attributes["{DRIVER}"].model == "b"'))
    assert cycle(plugin) == everywhere("gpu-b")


def test_a_device_taken_since_is_not_offered_again() -> None:
    slice_ = shared_slice(("gpu-a", "a"), ("gpu-b", "b"))
    plugin, listers = plugin_over(claim(), device_class(ANY), slice_)
    assert cycle(plugin) == everywhere("gpu-a")
    other = claim()
    other["metadata"].update(name="other", uid="other-uid")
    other["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "req", "driver": DRIVER, "pool": "shared", "device": "gpu-a"}]}
        }
    }
    listers.replace(other)
    assert cycle(plugin) == everywhere("gpu-b")
    other = copy.deepcopy(other)
    other["status"]["allocation"]["devices"]["results"][0]["device"] = "gpu-b"
    listers.replace(other)
    assert cycle(plugin) == everywhere("gpu-a")
    del other["status"]
    listers.replace(other)
    assert cycle(plugin) == everywhere("gpu-a")
    listers.replace(claim_taking("gpu-a"))
    assert cycle(plugin) == everywhere("gpu-b")


def claim_taking(device: str) -> Obj:
    other = claim()
    other["metadata"].update(name="other", uid="other-uid")
    other["status"] = {
        "allocation": {
            "devices": {"results": [{"request": "req", "driver": DRIVER, "pool": "shared", "device": device}]}
        }
    }
    return other


def shareable_slice(memory: str) -> Obj:
    s = shared_slice()
    s["spec"]["devices"] = [
        {"name": "gpu-a", "allowMultipleAllocations": True, "capacity": {"memory": {"value": memory}}}
    ]
    return s


def asking(memory: str) -> Obj:
    c = claim()
    c["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {"memory": memory}}
    return c


def test_a_changed_capacity_request_is_seen_by_the_next_cycle() -> None:
    plugin, listers = plugin_over(asking("4Gi"), device_class(ANY), shareable_slice("8Gi"))
    assert cycle(plugin) == everywhere("gpu-a")
    listers.replace(asking("16Gi"))
    assert cycle(plugin) == {}


def test_a_changed_device_capacity_is_seen_by_the_next_cycle() -> None:
    plugin, listers = plugin_over(asking("16Gi"), device_class(ANY), shareable_slice("8Gi"))
    assert cycle(plugin) == {}
    listers.replace(shareable_slice("32Gi"))
    assert cycle(plugin) == everywhere("gpu-a")


def test_a_claim_prebind_wrote_holds_nothing_once_deleted() -> None:
    """PreBind's copy of a claim it allocated (the assumed claim) stands until the informer has
    caught up; a claim deleted with its pod before it was looked up again gives its device back
    (upstream's assume cache drops an object the informer deletes)."""
    slice_ = shared_slice(("gpu-a", "a"))
    plugin, listers = plugin_over(claim(), device_class(ANY), slice_)
    taken = claim_taking("gpu-a")
    listers.replace({**taken, "status": {}})  # the informer's copy, not yet allocated
    plugin._assumed["other-uid"] = {**taken, "metadata": {**taken["metadata"], "resourceVersion": "2"}}
    assert cycle(plugin) == {}  # assumed allocated: the one device is taken
    listers._by_kind["ResourceClaim"] = [
        o for o in listers._by_kind["ResourceClaim"] if o["metadata"]["name"] != "other"
    ]
    assert cycle(plugin) == everywhere("gpu-a")
    assert plugin._assumed == {}
    # A claim PreBind created itself (for extended resources) that the informer has not listed
    # yet holds its device until it has.
    created = claim_taking("gpu-a")
    created["metadata"].update(name="created", uid="created-uid")
    plugin._assumed["created-uid"] = created
    assert cycle(plugin) == {}
    assert cycle(plugin) == {}
