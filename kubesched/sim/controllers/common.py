"""What the workload controllers share: owner references, pods made from a template, names."""

from __future__ import annotations

import copy
import random

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.framework.features import FeatureGates
from kubesched.framework.selectors import LabelSelector, SelectorError
from kubesched.objects import Obj
from kubesched.sim.apiserver.admission import admit_new_pod

#: The letters of upstream's random name suffixes (no vowels, no look-alikes).
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def suffix(seed: str, n: int = 5) -> str:
    """A name suffix like upstream's, derived from ``seed`` so that runs are reproducible."""
    rng = random.Random(seed)
    return "".join(rng.choice(_SUFFIX_ALPHABET) for _ in range(n))


class Names:
    """Fresh names for an owner's objects: ``<owner>-<5 letters>``, never one in use, drawn
    from a sequence per owner so that a run is reproducible."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._drawn: dict[str, int] = {}

    def next(self, owner: Obj, kind: str = "Pod") -> str:
        meta = owner["metadata"]
        while True:
            n = self._drawn.get(meta["uid"], 0)
            self._drawn[meta["uid"]] = n + 1
            seed = f"{meta['uid']}/{n}"
            name = f"{meta['name']}-{suffix(seed)}"
            try:
                self.store.get(kind, meta.get("namespace"), name)
            except NotFound:
                return name


def controller_ref(owner: Obj) -> Obj:
    return {
        "apiVersion": owner.get("apiVersion", ""),
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def owned_by(obj: Obj, owner: Obj) -> bool:
    uid = owner["metadata"].get("uid")
    return any(r.get("controller") and r.get("uid") == uid for r in obj["metadata"].get("ownerReferences") or ())


def selector_of(owner: Obj) -> LabelSelector | None:
    """The owner's pod selector (a ReplicationController's is a plain map); ``None`` when it
    has none that selects anything."""
    raw = (owner.get("spec") or {}).get("selector")
    if not raw:
        return None
    if owner.get("kind") == "ReplicationController":
        raw = {"matchLabels": raw}
    try:
        selector = LabelSelector.compile(raw)
    except SelectorError:
        return None
    return None if selector is None or selector.empty else selector


def owned(store: Store, kind: str, owner: Obj) -> list[Obj]:
    """Live objects of ``kind`` in the owner's namespace that it controls, after adopting the
    orphans its selector matches (no controller yet), as upstream's controllers claim them."""
    items, _ = store.list(kind, owner["metadata"].get("namespace"))
    selector = selector_of(owner)
    out = []
    for o in items:
        meta = o["metadata"]
        if meta.get("deletionTimestamp"):
            continue
        if owned_by(o, owner):
            out.append(o)
        elif (
            selector is not None
            and not any(r.get("controller") for r in meta.get("ownerReferences") or ())
            and selector.matches(meta.get("labels") or {})
        ):
            adopted = {
                **o,
                "metadata": {**meta, "ownerReferences": [*(meta.get("ownerReferences") or []), controller_ref(owner)]},
            }
            out.append(store.update(kind, adopted))
    return out


def priority_classes(store: Store) -> dict[str, Obj]:
    items, _ = store.list("PriorityClass")
    return {p["metadata"]["name"]: p for p in items}


def create_pod(
    store: Store,
    owner: Obj,
    template: Obj,
    name: str,
    extra_labels: Obj | None = None,
    gates: FeatureGates | None = None,
) -> Obj | None:
    """A pod of ``owner`` from its pod ``template``, admitted as the API server admits pods under
    its feature ``gates`` (given: the fields of gates that are off dropped first); ``None`` when
    admission refuses it (the controller tries again on the next change)."""
    tmeta = template.get("metadata") or {}
    labels = {**(tmeta.get("labels") or {}), **(extra_labels or {})}
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": owner["metadata"].get("namespace") or "default",
            "labels": labels,
            "ownerReferences": [controller_ref(owner)],
        },
        "spec": copy.deepcopy(template.get("spec") or {}),
    }
    if tmeta.get("annotations"):
        pod["metadata"]["annotations"] = dict(tmeta["annotations"])
    try:
        admitted = admit_new_pod(pod, priority_classes(store), gates)
    except Exception:  # noqa: BLE001 - an invalid template makes no pod, as upstream's FailedCreate
        return None
    admitted.setdefault("status", {}).setdefault("phase", "Pending")
    return store.create("Pod", admitted)


def delete(store: Store, kind: str, obj: Obj) -> None:
    meta = obj["metadata"]
    try:
        store.delete(kind, meta.get("namespace"), meta["name"])
    except NotFound:
        pass


def set_status(store: Store, kind: str, obj: Obj, status: Obj) -> None:
    """Write ``status`` (merged over the current one) if it changes anything."""
    try:
        current = store.get(kind, obj["metadata"].get("namespace"), obj["metadata"]["name"])
    except NotFound:
        return
    merged = {**(current.get("status") or {}), **status}
    if merged != current.get("status"):
        updated = {**current, "status": merged}
        store.update(kind, updated)


def replicas(obj: Obj, default: int = 1) -> int:
    value = (obj.get("spec") or {}).get("replicas")
    return default if value is None else max(0, int(value))


def bound(pod: Obj) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))
