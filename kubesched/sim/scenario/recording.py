"""What a live cluster did, written as a scenario in time (``sim serve --import-from KUBECONFIG
--sync --record FILE``), for ``simulate --scenario FILE`` and ``compare --scenario FILE`` to
replay.

The recorder sees what the importer copies (:mod:`kubesched.sim.importer`): first the cluster as
it was when the recording began, then, while ``--sync`` follows it, every object that appears or
goes, at the time it was seen (seconds since the recording began, on the wall clock). The file is
the existing scenario format:

* the cluster at the start as plain documents: namespaces, priority classes, storage and the
  other imported kinds, nodes, pods (those on a node keep ``spec.nodeName``: they are running);
* one ``kind: Steps`` document: at each time something changed, a step that ``create``\\ s what
  appeared, ``delete``\\ s what went, and ``patch``\\ es a node whose scheduling view changed
  (labels, taints, cordon, allocatable: a merge patch of just those). A pod that appeared pending is created pending — the
  replay's scheduler places it — and one that appeared on a node already (a DaemonSet's, a static
  one) keeps its node.

Every pod carries where the live cluster was seen to run it, as the annotation
``kubesched.io/observed-node`` (with ``kubesched.io/observed-at``, when it was seen bound, in
seconds), and a pod seen to finish (Succeeded or Failed) without being deleted gets
``kubesched.io/lifetime``: how long it ran. What the simulator writes on pods (its
``kubesched.io/*-result`` annotations) is left out.
"""

from __future__ import annotations

import copy
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from kubesched.objects import Obj
from kubesched.sim.scenario.steps import LIFETIME, STEPS_KIND

#: Where the live cluster ran the pod, and when it was seen bound (seconds since the start).
OBSERVED_NODE = "kubesched.io/observed-node"
OBSERVED_AT = "kubesched.io/observed-at"
_OURS = "kubesched.io/"
#: Kinds whose copies are written first (a pod's namespace and priority class before the pod).
_FIRST = {"Namespace": 0, "PriorityClass": 1, "Node": 8, "Pod": 9}


@dataclass
class _Seen:
    """One object's life as observed."""

    kind: str
    obj: Obj
    created: float
    initial: bool
    #: For pods: whether it had a node when first seen, which node it ran on and since when.
    created_bound: bool = False
    node: str | None = None
    bound_at: float | None = None
    finished: float | None = None
    deleted: float | None = None
    #: For nodes: what the scheduler reads of it as last seen, and each change (time, merge patch).
    view: Obj | None = None
    patches: list[tuple[float, Obj]] | None = None


class Recorder:
    """Collects what the importer copies (:meth:`observe`) and writes it (:meth:`write`)."""

    def __init__(self, wall: Callable[[], float] = time.monotonic) -> None:
        self._wall = wall
        self._start: float | None = None
        self._seen: list[_Seen] = []
        self._current: dict[tuple[str, str, str], _Seen] = {}

    def begin(self) -> None:
        """The cluster as copied so far is the start; from now on changes are timed."""
        self._start = self._wall()

    def now(self) -> float:
        return 0.0 if self._start is None else round(self._wall() - self._start, 3)

    def observe(self, etype: str, kind: str, obj: Obj) -> None:
        """A copied object: ``ADDED``/``MODIFIED`` (as it is now) or ``DELETED``."""
        meta = obj.get("metadata") or {}
        key = (kind, meta.get("namespace") or "", meta.get("name") or "")
        t = self.now()
        if etype == "DELETED":
            seen = self._current.pop(key, None)
            if seen is not None:
                seen.deleted = t
            return
        seen = self._current.get(key)
        node = (obj.get("spec") or {}).get("nodeName") if kind == "Pod" else None
        if seen is None:
            seen = _Seen(kind, copy.deepcopy(obj), t, initial=self._start is None, created_bound=bool(node))
            self._current[key] = seen
            self._seen.append(seen)
        elif kind == "Pod":
            seen.obj = copy.deepcopy(obj)
        if kind == "Node":
            self._node_changed(seen, obj, t)
        if kind != "Pod":
            return
        if node and seen.node is None:
            seen.node, seen.bound_at = node, t
        if (obj.get("status") or {}).get("phase") in ("Succeeded", "Failed") and seen.finished is None:
            seen.finished = t

    @staticmethod
    def _node_changed(seen: _Seen, obj: Obj, t: float) -> None:
        """Record the change of what a scheduler reads of a node, as a merge patch."""
        view = _node_view(obj)
        if seen.view is None:
            seen.view = view
            return
        patch = _merge_diff(seen.view, view)
        if patch:
            seen.view = view
            if seen.patches is None:
                seen.patches = []
            seen.patches.append((t, patch))

    def documents(self) -> list[Obj]:
        """The scenario: the start's objects, then the Steps document (when anything changed)."""
        start = sorted((s for s in self._seen if s.initial), key=lambda s: _FIRST.get(s.kind, 5))
        docs = [self._document(s) for s in start]
        steps: dict[float, Obj] = {}
        for s in self._seen:
            if not s.initial:
                steps.setdefault(s.created, {}).setdefault("create", []).append(self._document(s))
            if s.deleted is not None:
                meta = s.obj.get("metadata") or {}
                ref = {"kind": s.kind, "name": meta.get("name")}
                if meta.get("namespace"):
                    ref["namespace"] = meta["namespace"]
                steps.setdefault(s.deleted, {}).setdefault("delete", []).append(ref)
            for at, patch in s.patches or ():
                name = (s.obj.get("metadata") or {}).get("name")
                steps.setdefault(at, {}).setdefault("patch", []).append({"kind": s.kind, "name": name, "patch": patch})
        if steps:
            docs.append(
                {
                    "apiVersion": "kubesched.io/v1",
                    "kind": STEPS_KIND,
                    "steps": [{"at": at, **steps[at]} for at in sorted(steps)],
                }
            )
        return docs

    def _document(self, seen: _Seen) -> Obj:
        obj = copy.deepcopy(seen.obj)
        meta = obj.setdefault("metadata", {})
        for key in ("creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generateName"):
            meta.pop(key, None)
        if seen.kind == "Node":
            status = obj.get("status") or {}
            obj["status"] = {k: status[k] for k in ("capacity", "allocatable") if k in status}
        if seen.kind != "Pod":
            return obj
        annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if not k.startswith(_OURS)}
        if LIFETIME in (meta.get("annotations") or {}):
            annotations[LIFETIME] = meta["annotations"][LIFETIME]
        if seen.node is not None:
            annotations[OBSERVED_NODE] = seen.node
            annotations[OBSERVED_AT] = f"{seen.bound_at:g}"
        if seen.finished is not None and seen.deleted is None:
            began = seen.bound_at if seen.bound_at is not None else seen.created
            annotations[LIFETIME] = f"{max(0.0, seen.finished - began):g}s"
        if annotations:
            meta["annotations"] = annotations
        else:
            meta.pop("annotations", None)
        spec = obj.setdefault("spec", {})
        if not seen.created_bound:
            spec.pop("nodeName", None)
        obj.pop("status", None)
        return obj

    def write(self, path: str | os.PathLike[str]) -> int:
        """Write the scenario (atomically: a reader never sees half of it); how many documents."""
        docs = self.documents()
        target = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(target))
        fd, tmp = tempfile.mkstemp(prefix=".record-", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                yaml.safe_dump_all(docs, out, sort_keys=False)
            os.replace(tmp, target)
        except BaseException:
            os.unlink(tmp)
            raise
        return len(docs)


def _node_view(node: Obj) -> Obj:
    """What a scheduler reads of a node that changes while it runs."""
    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    return {
        "metadata": {"labels": dict(meta.get("labels") or {})},
        "spec": {"taints": list(spec.get("taints") or []), "unschedulable": bool(spec.get("unschedulable"))},
        "status": {"allocatable": dict(status.get("allocatable") or {})},
    }


def _merge_diff(old: Any, new: Any) -> Any:
    """The merge patch (RFC 7386) that turns ``old`` into ``new``: changed keys, ``None`` for
    removed ones, lists whole; ``{}`` when they are equal."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return new
    patch: Obj = {}
    for key in old.keys() - new.keys():
        patch[key] = None
    for key, value in new.items():
        if key not in old:
            patch[key] = value
        elif old[key] != value:
            patch[key] = _merge_diff(old[key], value)
    return patch


__all__ = ["OBSERVED_AT", "OBSERVED_NODE", "Recorder"]
