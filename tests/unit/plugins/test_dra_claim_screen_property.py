"""DynamicResources screens its ResourceClaim event (``claim_screen``, ``pod_claim_keys``): where
the screen gives a key the pod's keys lack, the queueing hint answers SKIP — over random pods
(claims by name or from templates, statuses naming them or not, namespaces) and random claim
changes (made, allocated, deallocated, renamed, in another namespace), with the claims present
or not. The queue passes over such pods unasked, so this promise is what keeps it exact."""

from __future__ import annotations

import copy
import itertools
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.framework.events import QueueingHint
from kubesched.plugins.dynamicresources.dynamic_resources import DynamicResources
from kubesched.plugins.dynamicresources.events import claim_screen, pod_claim_keys
from kubesched.testing.harness import ObjectListers

Obj = dict[str, Any]
NAMES = st.sampled_from(["a", "b", "c", "p-res-x"])
_UIDS = itertools.count()
NAMESPACES = st.sampled_from(["ns", "other", None])


def _claim(name: str, namespace: str | None, allocated: bool, owner: bool) -> Obj:
    meta: Obj = {"name": name, "uid": f"uid-{name}-{namespace}"}
    if namespace is not None:
        meta["namespace"] = namespace
    if owner:
        meta["ownerReferences"] = [{"kind": "Pod", "uid": "owner", "controller": True}]
    c: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": meta, "spec": {}}
    if allocated:
        c["status"] = {"allocation": {"devices": {"results": []}}}
    return c


@st.composite
def pods(draw: st.DrawFn) -> Obj:
    entries, statuses = [], []
    for i in range(draw(st.integers(0, 3))):
        if draw(st.booleans()):
            entries.append({"name": f"e{i}", "resourceClaimName": draw(NAMES)})
        else:
            entries.append({"name": f"e{i}", "resourceClaimTemplateName": "tpl"})
            if draw(st.booleans()):
                statuses.append({"name": f"e{i}", "resourceClaimName": draw(NAMES)})
    # A uid of its own: the hint keeps what it read of a pod by (uid, resourceVersion), and
    # another test's pod of the same uid and version must not find this one's.
    meta: Obj = {"name": "p", "uid": f"screen-{next(_UIDS)}", "resourceVersion": "1"}
    namespace = draw(NAMESPACES)
    if namespace is not None:
        meta["namespace"] = namespace
    p: Obj = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"resourceClaims": entries}}
    if statuses:
        p["status"] = {"resourceClaimStatuses": statuses}
    return p


@st.composite
def changes(draw: st.DrawFn) -> tuple[Obj | None, Obj]:
    name, namespace, owner = draw(NAMES), draw(NAMESPACES), draw(st.booleans())
    new = _claim(name, namespace, draw(st.booleans()), owner)
    if draw(st.booleans()):
        return None, new
    old = _claim(name, namespace, draw(st.booleans()), owner)
    if draw(st.booleans()):
        old["status"] = dict(old.get("status") or {}, reservedFor=[{"name": "x"}])
    return old, new


@settings(max_examples=400, deadline=None)
@given(pods(), changes(), st.lists(st.tuples(NAMES, NAMESPACES, st.booleans(), st.booleans()), max_size=4))
def test_a_claim_the_screen_rules_out_is_one_the_hint_skips(
    pod: Obj, change: tuple[Obj | None, Obj], present: list[tuple[str, str | None, bool, bool]]
) -> None:
    old, new = change
    objects = [_claim(*p) for p in present] + [copy.deepcopy(new)]
    for c in [*objects, new, *([old] if old is not None else [])]:
        for ref in c["metadata"].get("ownerReferences") or ():
            ref["uid"] = pod["metadata"]["uid"]  # made from the pod's template: the pod owns it
    plugin = DynamicResources(None, SimpleNamespace(listers=ObjectListers(objects), cluster=None))
    key = claim_screen(old, new)
    answer = plugin.is_schedulable_after_claim_change(pod, old, new)
    if key is not None and key not in pod_claim_keys(pod):
        assert answer is QueueingHint.SKIP
    deallocated = old is not None and "allocation" in (old.get("status") or {}) and "status" not in new
    assert (key is None) == deallocated


def test_the_screen_is_the_claims_namespace_and_name() -> None:
    assert claim_screen(None, _claim("a", None, False, False)) == ("default", "a")
    assert claim_screen(_claim("a", "ns", True, False), _claim("a", "ns", True, False)) == ("ns", "a")
    assert claim_screen(_claim("a", "ns", True, False), _claim("a", "ns", False, False)) is None
    p = {
        "metadata": {"namespace": "ns", "uid": "u", "resourceVersion": "1"},
        "spec": {
            "resourceClaims": [
                {"name": "e", "resourceClaimName": "a"},
                {"name": "t", "resourceClaimTemplateName": "tpl"},
            ]
        },
    }
    assert pod_claim_keys(p) == {("ns", "a"), ("ns", None)}
