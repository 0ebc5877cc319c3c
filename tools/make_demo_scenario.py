"""Write config/scenarios/demo.yaml: the scenario `kubesched simulate` runs with no arguments.

Deterministic (fixed seed), so the file only changes when this script does:
    python tools/make_demo_scenario.py > config/scenarios/demo.yaml
"""

from __future__ import annotations

import random
import sys

import yaml

ZONES = ["zone-a", "zone-b", "zone-c"]


def node(
    name: str,
    zone: str,
    cpu: str,
    memory: str,
    labels: dict[str, str],
    taints: list[dict[str, str]] | None = None,
    gpus: int = 0,
    unschedulable: bool = False,
) -> dict:
    alloc = {"cpu": cpu, "memory": memory, "pods": "110", "ephemeral-storage": "100Gi"}
    if gpus:
        alloc["nvidia.com/gpu"] = str(gpus)
    n = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "topology.kubernetes.io/region": "demo",
                "topology.kubernetes.io/zone": zone,
                **labels,
            },
        },
        "spec": {},
        "status": {
            "capacity": dict(alloc),
            "allocatable": alloc,
            "images": [
                {"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 300_000},
                {"names": ["docker.io/library/nginx:1.27"], "sizeBytes": 70_000_000},
            ],
        },
    }
    if taints:
        n["spec"]["taints"] = taints
    if unschedulable:
        n["spec"]["unschedulable"] = True
    return n


def pod(
    name: str,
    scheduler: str,
    cpu: str,
    memory: str,
    image: str = "docker.io/library/nginx:1.27",
    ns: str = "default",
    **spec_extra,
) -> dict:
    p = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": ns, "labels": {"app": name.rsplit("-", 1)[0]}},
        "spec": {
            "schedulerName": scheduler,
            "containers": [{"name": "main", "image": image, "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
            **spec_extra,
        },
    }
    return p


def main() -> None:
    rng = random.Random(7)
    docs: list[dict] = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": -10},
    ]
    # 30 general nodes in three zones, 4 GPU nodes tainted for GPU work, 2 cordoned nodes.
    for i in range(30):
        zone = ZONES[i % 3]
        size = ["4", "8", "16"][i % 3]
        docs.append(
            node(f"node-{i:02d}", zone, size, f"{int(size) * 4}Gi", {"node.kubernetes.io/instance-type": f"m.{size}x"})
        )
    for i in range(4):
        docs.append(
            node(
                f"gpu-{i}",
                ZONES[i % 3],
                "32",
                "128Gi",
                {"accelerator": "nvidia-a100"},
                taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}],
                gpus=4,
            )
        )
    for i in range(2):
        docs.append(node(f"cordoned-{i}", ZONES[i], "8", "32Gi", {}, unschedulable=True))
    # Some pods already running.
    for i in range(20):
        p = pod(f"running-{i:02d}", "default-scheduler", "500m", "1Gi")
        p["spec"]["nodeName"] = f"node-{(i * 7) % 30:02d}"
        docs.append(p)
    # Pending pods for both profiles.
    for i in range(160):
        cpu = rng.choice(["100m", "250m", "500m", "1", "2"])
        mem = rng.choice(["128Mi", "512Mi", "1Gi", "2Gi", "4Gi"])
        docs.append(pod(f"web-{i:03d}", "default-scheduler", cpu, mem, ns=rng.choice(["default", "team-a"])))
    for i in range(120):
        cpu = rng.choice(["250m", "500m", "1"])
        docs.append(pod(f"batch-{i:03d}", "bin-packing-scheduler", cpu, "1Gi", priorityClassName="low"))
    for i in range(12):
        docs.append(
            pod(
                f"train-{i:02d}",
                "default-scheduler",
                "4",
                "16Gi",
                priorityClassName="high",
                tolerations=[{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
                nodeSelector={"accelerator": "nvidia-a100"},
            )
        )
        docs[-1]["spec"]["containers"][0]["resources"]["limits"] = {"nvidia.com/gpu": "1"}
    for i in range(8):
        docs.append(
            pod(
                f"zonal-{i}",
                "default-scheduler",
                "500m",
                "512Mi",
                affinity={
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["zone-b"]}
                                    ]
                                }
                            ]
                        }
                    }
                },
            )
        )
    # Unschedulable on purpose, each for a different reason.
    docs.append(pod("too-big-0", "default-scheduler", "64", "1Gi"))
    docs.append(pod("too-big-1", "bin-packing-scheduler", "1", "1Ti"))
    docs.append(
        pod("gpu-without-toleration", "default-scheduler", "1", "1Gi", nodeSelector={"accelerator": "nvidia-a100"})
    )
    docs.append(
        pod("nowhere-zone", "default-scheduler", "100m", "64Mi", nodeSelector={"topology.kubernetes.io/zone": "zone-x"})
    )
    docs.append(pod("gated", "default-scheduler", "100m", "64Mi", schedulingGates=[{"name": "example.com/approval"}]))
    # Pod anti-affinity: one cache replica per node.
    for i in range(6):
        p = pod(f"cache-{i}", "default-scheduler", "250m", "256Mi")
        p["metadata"]["labels"] = {"app": "cache"}
        p["spec"]["affinity"] = {
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
        docs.append(p)
    # Topology spread: evenly over the three zones.
    for i in range(9):
        p = pod(f"spread-{i}", "default-scheduler", "100m", "128Mi")
        p["metadata"]["labels"] = {"app": "spread"}
        p["spec"]["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
                "labelSelector": {"matchLabels": {"app": "spread"}},
            }
        ]
        docs.append(p)
    # A local volume that exists on one node only: the pod using it must go there.
    docs.append(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {"name": "local"},
            "provisioner": "kubernetes.io/no-provisioner",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "local-pv-node-05"},
            "spec": {
                "capacity": {"storage": "10Gi"},
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "local": {"path": "/mnt/disks/ssd1"},
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": "kubernetes.io/hostname", "operator": "In", "values": ["node-05"]}
                                ]
                            }
                        ]
                    }
                },
            },
        }
    )
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "db-data", "namespace": "default"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "local",
                "resources": {"requests": {"storage": "5Gi"}},
            },
        }
    )
    db = pod("db", "default-scheduler", "100m", "256Mi")
    db["spec"]["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "db-data"}}]
    docs.append(db)
    # Preemption: a node reserved for this demo, already full of low-priority pods; the critical
    # pod fits only by evicting some of them.
    docs.append(
        node(
            "preempt-node",
            "zone-a",
            "8",
            "32Gi",
            {"demo": "preemption"},
            taints=[{"key": "demo", "value": "preemption", "effect": "NoSchedule"}],
        )
    )
    for i in range(7):
        filler = pod(f"filler-{i}", "default-scheduler", "1", "1Gi", priorityClassName="low")
        filler["spec"]["nodeName"] = "preempt-node"
        docs.append(filler)
    critical = pod(
        "critical",
        "default-scheduler",
        "3",
        "4Gi",
        priorityClassName="high",
        nodeSelector={"demo": "preemption"},
        tolerations=[{"key": "demo", "operator": "Equal", "value": "preemption", "effect": "NoSchedule"}],
    )
    docs.append(critical)
    hostport = []
    for i in range(40):
        p = pod(f"hostport-{i:02d}", "default-scheduler", "100m", "64Mi")
        p["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080}]
        hostport.append(p)
    docs.extend(hostport)
    sys.stdout.write("# Generated by tools/make_demo_scenario.py; edit that script, not this file.\n")
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
