"""The objects of upstream scheduler_perf's DRA workloads that kube-scheduler 1.35–1.37 added for
single pods (``test/integration/scheduler_perf/dra/{extendedresource,devicetaints,
partitionabledevices,consumablecapacity,prioritizedlist}``), as data: nodes with the test driver,
their ResourceSlices, DeviceClasses, claim templates, and the pod templates.

Upstream's ``createResourceDriver`` op gives every ``scheduler-perf-dra-*`` node one ResourceSlice
of ``maxClaimsPerNode`` plain devices (``instance-<i>``); the slices of the partitionable and
consumable-capacity cases reach nodes by a node selector instead. The v1 shapes of 1.37 are used:
a counter set lives in a ResourceSlice of its own in the same pool (``resourceSliceCount: 2``).

Why here and not in ``kubesched/bench/workloads/dra.yaml``: the catalogue's DRA workloads are
not sizes of the shipped cases (upstream runs most at 2 nodes and 10 pods, or as steady-state
clusters), and their objects are named otherwise (a slice per node named after the node, nodes
labelled ``node-with-dra`` for the pool slices' node selector). Their claim-template pods are the
shipped templates' (:func:`claim_template_pod`, :func:`extended_resource_pod`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchmarks.shipped import template_pod

Obj = dict[str, Any]

DRIVER = "test-driver.cdi.k8s.io"
RESOURCE = "resource.k8s.io/v1"
#: The claim template every claim-template pod names.
TEMPLATE = "test-claim-template"


def dra_node(i: int) -> Obj:
    """upstream's node-with-dra-test-driver: 4 CPU, 32Gi, 110 pods, labelled for slice selectors."""
    name = f"scheduler-perf-dra-{i}"
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "node-with-dra": "true"}},
        "spec": {},
        "status": {
            "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def driver_slices(nodes: int, devices: int) -> list[Obj]:
    """``createResourceDriver``: one slice per DRA node, ``devices`` plain devices each."""
    return [
        {
            "apiVersion": RESOURCE,
            "kind": "ResourceSlice",
            "metadata": {"name": f"scheduler-perf-dra-{n}"},
            "spec": {
                "driver": DRIVER,
                "nodeName": f"scheduler-perf-dra-{n}",
                "pool": {"name": f"scheduler-perf-dra-{n}", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": f"instance-{i}"} for i in range(devices)],
            },
        }
        for n in range(nodes)
    ]


def device_class(name: str = "test-class", expression: str | None = None, **spec: Any) -> Obj:
    return {
        "apiVersion": RESOURCE,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": expression or f'device.driver == "{DRIVER}"'}}], **spec},
    }


def claim_template(namespace: str, requests: list[Obj], constraints: list[Obj] | None = None) -> Obj:
    devices: Obj = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {
        "apiVersion": RESOURCE,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": TEMPLATE, "namespace": namespace},
        "spec": {"spec": {"devices": devices}},
    }


def claim_template_pod(namespace: str) -> Callable[[str, int], Obj]:
    """upstream's pod-with-claim-template, as kubesched bench ships it
    (``templates/pod-with-claim-template.yaml``): one claim from :data:`TEMPLATE`, no CPU or
    memory asked."""
    return template_pod("pod-with-claim-template.yaml", namespace)


# --- SchedulingWithExtendedResource -------------------------------------------------------------


def extended_resource_objects(nodes: int, devices: int, classes: int) -> Callable[[], list[Obj]]:
    """Slices of plain devices, and ``classes`` DeviceClasses each backing ``example.com/gpu-<i>``."""

    def make() -> list[Obj]:
        return [
            *driver_slices(nodes, devices),
            *(device_class(f"test-class-{i}", extendedResourceName=f"example.com/gpu-{i}") for i in range(classes)),
        ]

    return make


def extended_resource_pod(namespace: str) -> Callable[[str, int], Obj]:
    """upstream's pod-with-extended-resource, as kubesched bench ships it
    (``templates/pod-with-extended-resource.yaml``): pod ``i`` asks one ``example.com/gpu-<i>``,
    which no node advertises: DynamicResources serves it from the class that names it."""
    return template_pod("pod-with-extended-resource.yaml", namespace)


# --- SchedulingWithResourceClaimTemplateToleration -----------------------------------------------


def device_taints_objects(nodes: int, devices: int) -> Callable[[], list[Obj]]:
    """A DeviceTaintRule tainting every device NoSchedule, and claim templates that tolerate it."""

    def make() -> list[Obj]:
        rule = {
            "apiVersion": RESOURCE,
            "kind": "DeviceTaintRule",
            "metadata": {"name": "taint-all-devices"},
            # The empty selector: every device (a rule without one selects none in v1).
            "spec": {
                "deviceSelector": {},
                "taint": {"key": "example.com/taint", "value": "tainted", "effect": "NoSchedule"},
            },
        }
        tolerating = [
            {
                "name": "req-0",
                "exactly": {
                    "deviceClassName": "test-class",
                    "tolerations": [{"key": "example.com/taint", "operator": "Exists"}],
                },
            }
        ]
        return [
            rule,
            *driver_slices(nodes, devices),
            device_class(),
            claim_template("init", tolerating),
            claim_template("test", tolerating),
        ]

    return make


# --- SteadyStateClusterResourceClaimTemplatePartitionable ----------------------------------------


def _counter_device(name: str, preallocate: bool, index: int, counters: dict[str, str]) -> Obj:
    return {
        "name": name,
        "attributes": {"preallocate": {"bool": preallocate}, "dra.example.com/slice": {"int": index}},
        "capacity": {"counters": {"value": str(len(counters))}},
        "consumesCounters": [{"counterSet": "counter-set", "counters": {k: {"value": v} for k, v in counters.items()}}],
    }


def _pool_slices(index: int, devices: list[Obj], counters: list[str]) -> list[Obj]:
    """A pool of two slices reaching every DRA node: the counter set, and the devices drawing on it."""
    pool = {"name": f"resourceslice-{index}", "generation": 1, "resourceSliceCount": 2}
    selector = {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "node-with-dra", "operator": "In", "values": ["true"]}]}]
    }
    counter_set = {"name": "counter-set", "counters": {c: {"value": "1"} for c in counters}}
    return [
        {
            "apiVersion": RESOURCE,
            "kind": "ResourceSlice",
            "metadata": {"name": f"resourceslice-countersets-{index}"},
            "spec": {"driver": DRIVER, "pool": pool, "nodeSelector": selector, "sharedCounters": [counter_set]},
        },
        {
            "apiVersion": RESOURCE,
            "kind": "ResourceSlice",
            "metadata": {"name": f"resourceslice-devices-{index}"},
            "spec": {"driver": DRIVER, "pool": pool, "nodeSelector": selector, "devices": devices},
        },
    ]


def partitionable_objects(slices: int) -> Callable[[], list[Obj]]:
    """``slices`` pools of six partitionable devices over four counters (two devices drawing two
    counters each, four drawing one); claim templates for two devices of one pool, and (for the
    init pods) one claim for a preallocated two-counter device, so that the measured pods'
    allocator has to backtrack, as upstream sets it up."""

    def make() -> list[Obj]:
        out: list[Obj] = []
        for i in range(slices):
            devices = [
                _counter_device("device-2-counters-1", True, i, {"counter1": "1", "counter2": "1"}),
                _counter_device("device-2-counters-2", False, i, {"counter3": "1", "counter4": "1"}),
                *(_counter_device(f"device-1-counter-{c}", False, i, {f"counter{c}": "1"}) for c in range(1, 5)),
            ]
            out += _pool_slices(i, devices, ["counter1", "counter2", "counter3", "counter4"])
        preallocate = (
            f"device.capacity['{DRIVER}'].counters.compareTo(quantity('2')) >= 0 && "
            f"device.attributes['{DRIVER}'].preallocate"
        )
        return [
            *out,
            device_class(),
            claim_template(
                "init",
                [
                    {
                        "name": "req-0",
                        "exactly": {
                            "deviceClassName": "test-class",
                            "selectors": [{"cel": {"expression": preallocate}}],
                        },
                    }
                ],
            ),
            claim_template(
                "test",
                [{"name": "req-0", "exactly": {"deviceClassName": "test-class", "count": 2}}],
                [{"requests": ["req-0"], "matchAttribute": "dra.example.com/slice"}],
            ),
        ]

    return make


# --- SteadyStateClusterResourceClaimTemplateConsumableCapacity -----------------------------------


def consumable_capacity_objects(slices: int) -> Callable[[], list[Obj]]:
    """``slices`` pools of two shareable devices with 80Gi of consumable memory each (requests
    default 1Gi, at least 1Gi); each claim asks 10Gi twice."""

    def make() -> list[Obj]:
        memory = {"value": "80Gi", "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi"}}}
        out: list[Obj] = []
        for i in range(slices):
            shareable = {
                "name": "shareable-device",
                "allowMultipleAllocations": True,
                "attributes": {"preallocate": {"bool": False}, "dra.example.com/slice": {"int": i}},
                "capacity": {"memory": dict(memory)},
            }
            partitioned = _counter_device("device-2-counters-1", True, i, {"counter1": "1", "counter2": "1"})
            partitioned["allowMultipleAllocations"] = True
            partitioned["capacity"]["memory"] = dict(memory)
            out += _pool_slices(i, [shareable, partitioned], ["counter1", "counter2"])
        shared = f'device.driver == "{DRIVER}" && device.allowMultipleAllocations == true'
        ask = {"deviceClassName": "test-class", "capacity": {"requests": {"memory": "10Gi"}}}
        return [
            *out,
            device_class(expression=shared),
            claim_template("test", [{"name": "req-0", "exactly": dict(ask)}, {"name": "req-1", "exactly": dict(ask)}]),
        ]

    return make


# --- SteadyStateClusterResourceClaimTemplateFirstAvailable ---------------------------------------


def prioritized_list_objects(nodes: int, devices: int) -> Callable[[], list[Obj]]:
    """Plain devices; a claim template whose first alternative names a class no device matches."""

    def make() -> list[Obj]:
        first_available = [
            {
                "name": "req-0",
                "firstAvailable": [
                    {"name": "sub-0", "deviceClassName": "no-devices-class"},
                    {"name": "sub-1", "deviceClassName": "test-class"},
                ],
            }
        ]
        no_devices = device_class("no-devices-class", 'device.driver == "no-such-driver.cdi.k8s.io"')
        return [*driver_slices(nodes, devices), device_class(), no_devices, claim_template("test", first_available)]

    return make


# --- pod-level resources -------------------------------------------------------------------------


def pod_level_resources_pod(prefix: str, i: int) -> Obj:
    """upstream's pod-default, its 100m CPU and 500Mi asked at pod level (``spec.resources``, 1.34+)
    over two containers that ask nothing."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"{prefix}-{i}", "namespace": "default"},
        "spec": {
            "resources": {
                "requests": {"cpu": "100m", "memory": "500Mi"},
                "limits": {"cpu": "100m", "memory": "500Mi"},
            },
            "containers": [
                {"name": "pause", "image": "registry.k8s.io/pause:3.10", "ports": [{"containerPort": 80}]},
                {"name": "sidecar", "image": "registry.k8s.io/pause:3.10"},
            ],
        },
    }
