"""The queueing hint of a ResourceClaim change: a pod waits for its own claims' changes, and for
any claim giving its devices back."""

from __future__ import annotations

import copy
from types import SimpleNamespace
from typing import Any

from kubesched.framework.events import QueueingHint
from kubesched.plugins.dynamicresources.dynamic_resources import DynamicResources
from kubesched.testing.harness import ObjectListers

Obj = dict[str, Any]


def claim(name: str, allocated: bool = False) -> Obj:
    c: Obj = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": []}},
    }
    if allocated:
        c["status"] = {"allocation": {"devices": {"results": []}}}
    return c


def pod(by_template: bool = False) -> Obj:
    entry = (
        {"name": "res", "resourceClaimTemplateName": "tpl"}
        if by_template
        else {"name": "res", "resourceClaimName": "mine"}
    )
    p: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": "ns", "uid": "pod-uid"},
        "spec": {"containers": [{"name": "c"}], "resourceClaims": [entry]},
    }
    if by_template:
        p["status"] = {"resourceClaimStatuses": [{"name": "res", "resourceClaimName": "mine"}]}
    return p


def hint(p: Obj, old: Obj | None, new: Obj, *present: Obj) -> QueueingHint:
    mine = claim("mine")
    if p.get("status"):  # made from the template: the pod owns it
        mine["metadata"]["ownerReferences"] = [{"kind": "Pod", "uid": "pod-uid", "controller": True}]
    objects = [copy.deepcopy(o) for o in (present or (mine,))]
    plugin = DynamicResources(None, SimpleNamespace(listers=ObjectListers(objects), cluster=None))
    return plugin.is_schedulable_after_claim_change(p, old, new)


def test_a_claim_of_another_name_is_skipped() -> None:
    assert hint(pod(), None, claim("other")) is QueueingHint.SKIP
    assert hint(pod(True), None, claim("other")) is QueueingHint.SKIP


def test_a_claim_of_the_same_name_in_another_namespace_is_skipped() -> None:
    other = claim("mine")
    other["metadata"].update(namespace="elsewhere", uid="uid-elsewhere")
    assert hint(pod(), None, other) is QueueingHint.SKIP


def test_the_pods_own_claim_added_or_changed_queues_it() -> None:
    for p in (pod(), pod(True)):
        assert hint(p, None, claim("mine")) is QueueingHint.QUEUE
        assert hint(p, claim("mine"), claim("mine", allocated=True)) is QueueingHint.QUEUE
        assert hint(p, claim("mine"), claim("mine")) is QueueingHint.SKIP


def test_any_claim_deallocated_queues_it_unless_its_claims_are_missing() -> None:
    assert hint(pod(), claim("other", allocated=True), claim("other")) is QueueingHint.QUEUE
    assert hint(pod(), claim("other", allocated=True), claim("other"), claim("unrelated")) is QueueingHint.SKIP


def test_a_new_version_of_the_pod_is_read_anew() -> None:
    """What a pod's entries stand for is kept per pod version: the version whose status names
    the template's claim is not answered from the one before it."""
    waiting = pod(True)
    waiting["metadata"]["resourceVersion"] = "5"
    made = copy.deepcopy(waiting)
    waiting.pop("status")  # the claim is not made yet
    assert hint(waiting, None, claim("mine")) is QueueingHint.SKIP
    made["metadata"]["resourceVersion"] = "6"
    assert hint(made, None, claim("mine")) is QueueingHint.QUEUE
    assert hint(waiting, None, claim("mine")) is QueueingHint.SKIP  # the old version, still kept
