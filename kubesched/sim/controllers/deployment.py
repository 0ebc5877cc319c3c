"""Deployment: one ReplicaSet per pod template, named ``<deployment>-<template hash>`` and
labelled with ``pod-template-hash`` as upstream names them; the current template's ReplicaSet
gets ``spec.replicas``. A changed template replaces the old ReplicaSet's pods at once (old
ReplicaSets are scaled to 0): rolling updates' pacing (maxSurge, maxUnavailable) is not
simulated."""

from __future__ import annotations

import copy
import json
import zlib

from kubesched.cluster.store import Store
from kubesched.objects import Obj
from kubesched.sim.controllers.common import bound, controller_ref, owned, replicas, set_status

TEMPLATE_HASH = "pod-template-hash"
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: Obj, collisions: int = 0) -> str:
    """A short, stable digest of a pod template (the shape of upstream's pod-template-hash)."""
    digest = zlib.crc32(json.dumps([template, collisions], sort_keys=True).encode())
    out = []
    for _ in range(10):
        digest, r = divmod(digest, len(_SAFE))
        out.append(_SAFE[r])
        if not digest:
            break
    return "".join(out)


def reconcile_deployment(store: Store, deploy: Obj) -> None:
    spec = deploy.get("spec") or {}
    template = spec.get("template") or {}
    want = replicas(deploy)
    h = template_hash(template, int((deploy.get("status") or {}).get("collisionCount") or 0))
    name = f"{deploy['metadata']['name']}-{h}"
    current: Obj | None = None
    for rs in owned(store, "ReplicaSet", deploy):
        if (rs["metadata"].get("labels") or {}).get(TEMPLATE_HASH) == h:
            current = rs
        elif replicas(rs) != 0:
            store.update("ReplicaSet", {**rs, "spec": {**rs["spec"], "replicas": 0}})
    if current is None:
        rs_template = copy.deepcopy(template)
        rs_template.setdefault("metadata", {}).setdefault("labels", {})[TEMPLATE_HASH] = h
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})[TEMPLATE_HASH] = h
        current = store.create(
            "ReplicaSet",
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": name,
                    "namespace": deploy["metadata"].get("namespace") or "default",
                    "labels": dict(rs_template["metadata"]["labels"]),
                    "ownerReferences": [controller_ref(deploy)],
                },
                "spec": {"replicas": want, "selector": selector, "template": rs_template},
            },
        )
    elif replicas(current) != want:
        current = store.update("ReplicaSet", {**current, "spec": {**current["spec"], "replicas": want}})
    sets = owned(store, "ReplicaSet", deploy)
    pods = [p for rs in sets for p in owned(store, "Pod", rs)]
    new_pods = [p for p in pods if (p["metadata"].get("labels") or {}).get(TEMPLATE_HASH) == h]
    on_nodes = sum(1 for p in pods if bound(p))
    set_status(
        store,
        "Deployment",
        deploy,
        {
            "observedGeneration": int(deploy["metadata"].get("generation") or 1),
            "replicas": len(pods),
            "updatedReplicas": len(new_pods),
            "readyReplicas": on_nodes,
            "availableReplicas": on_nodes,
            "unavailableReplicas": max(0, want - on_nodes),
        },
    )
