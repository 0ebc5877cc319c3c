"""The simulator's own JSON API, beside the Kubernetes API on the same server (the paths and verbs
of kube-scheduler-simulator's API, which the web view and scripts use):

* ``GET /api/v1/schedulerconfiguration``: the scheduler's effective configuration.
* ``POST /api/v1/schedulerconfiguration``: a KubeSchedulerConfiguration (JSON or YAML) to run
  instead; refused with ``400`` and every ``path: reason`` when invalid. The cluster stays, and
  the pods still pending are tried again under the new profiles.
* ``PUT /api/v1/schedulerconfiguration/reset``: back to the configuration it started with.
* ``PUT /api/v1/reset``: the cluster back to the scenario it started from, and the configuration.
* ``GET /api/v1/export``: the cluster as a scenario (``kind: List``; ``?format=yaml`` for
  multi-document YAML), which ``simulate --scenario`` and ``POST /api/v1/import`` read.
* ``POST /api/v1/import``: a scenario's objects added to the cluster, checked as ``simulate``
  checks scenarios.
* ``GET /api/v1/results/<namespace>/<pod>``: what the scheduler decided for the pod, attempt by
  attempt, each plugin on each node.
* ``GET /api/v1/featuregates``: the feature gates this server (and its scheduler) runs with:
  each gate's value, 1.37's default and stage (kubesched's own path; the web view lists the
  gates changed from their defaults).
"""

from __future__ import annotations

import asyncio
import copy
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import yaml

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.decoding import DecodeError, load_yaml_all
from kubesched.errors import KubeschedError
from kubesched.framework.features import GATES, FeatureGates
from kubesched.objects import Obj
from kubesched.sim.apiserver.errors import APIError, bad_request, method_not_allowed, not_found
from kubesched.sim.apiserver.requests import BODY_LIMITS, INLINE_BODY_BYTES
from kubesched.sim.apiserver.validation.meta import go_quote
from kubesched.sim.scenario.reading import OTHER_KINDS

#: The first path segment after ``/api/v1/`` that this API answers.
PATHS = frozenset({"schedulerconfiguration", "reset", "export", "import", "results", "featuregates"})

#: Metadata the API server sets, left out of an export so that the scenario loads anywhere.
_SERVER_FIELDS = ("uid", "resourceVersion", "creationTimestamp", "managedFields", "generation", "selfLink")
#: What an export holds, in the order a scenario creates it. Events and Leases are the cluster's
#: own doing, and pods a workload controls are made again by it.
EXPORTED_KINDS = ("Namespace", "PriorityClass", *OTHER_KINDS, "Node", "Pod")
RESULT_HISTORY = "kubesched.io/result-history"


@dataclass
class SchedulerControl:
    """What the API needs of the running scheduler: its configuration as a dict, and how to
    replace it (``apply(cfg)`` with a parsed configuration; ``None`` for the start one;
    ``apply(cfg, between)`` calls ``between()`` while no scheduler runs, between the two)."""

    current: Callable[[], Obj]
    apply: Callable[..., Awaitable[None]]
    parse: Callable[[Any], Any]


class SimulatorAPI:
    """The simulator's API: :meth:`handle` answers the paths in :attr:`paths`, which the API
    server mounts under ``/api/v1/``."""

    paths = PATHS

    def __init__(
        self,
        store: Store,
        reset_cluster: Callable[[], None],
        load_scenario: Callable[[list[Any]], None],
        scheduler: SchedulerControl | None = None,
        feature_gates: FeatureGates | None = None,
    ) -> None:
        self.store = store
        self.feature_gates = feature_gates if feature_gates is not None else FeatureGates()
        self.reset_cluster = reset_cluster
        self.load_scenario = load_scenario
        self.scheduler = scheduler

    async def handle(self, method: str, rest: list[str], query: Any, body: bytes) -> tuple[int, Any, str]:
        """``(status, body, content type)`` for ``/api/v1/<rest>``."""
        head = rest[0]
        if head == "schedulerconfiguration":
            return await self._configuration(method, rest[1:], body)
        if head == "reset" and len(rest) == 1:
            if method != "PUT":
                raise method_not_allowed()
            if self.scheduler is None:
                self.reset_cluster()
            else:
                # Reset while no scheduler runs: one that still ran would see the deletions and
                # the objects made again in any order (each kind is its own watch), and could
                # place a pod made again on a node about to go.
                await self.scheduler.apply(None, self.reset_cluster)
            return 202, {"status": "reset"}, "application/json"
        if head == "export" and len(rest) == 1:
            if method != "GET":
                raise method_not_allowed()
            return self._export(query.get("format", "json"))
        if head == "import" and len(rest) == 1:
            if method != "POST":
                raise method_not_allowed()
            docs = await _documents(body)
            self.load_scenario(docs)
            return 201, {"status": "imported", "objects": sum(1 for d in docs if d)}, "application/json"
        if head == "featuregates" and len(rest) == 1:
            if method != "GET":
                raise method_not_allowed()
            return 200, self._feature_gates(), "application/json"
        if head == "results" and len(rest) == 3:
            if method != "GET":
                raise method_not_allowed()
            return 200, self._results(rest[1], rest[2]), "application/json"
        raise APIError(404, "NotFound", "the server could not find the requested resource")

    # --- scheduler configuration ----------------------------------------------------------------
    async def _configuration(self, method: str, rest: list[str], body: bytes) -> tuple[int, Any, str]:
        if self.scheduler is None:
            raise APIError(
                404, "NotFound", "no scheduler runs in this server: start `sim serve --with-scheduler` to configure one"
            )
        if rest == ["reset"]:
            if method != "PUT":
                raise method_not_allowed()
            await self.scheduler.apply(None)
            return 202, self.scheduler.current(), "application/json"
        if rest:
            raise APIError(404, "NotFound", "the server could not find the requested resource")
        if method == "GET":
            return 200, self.scheduler.current(), "application/json"
        if method != "POST":
            raise method_not_allowed()
        docs = await _documents(body)
        if len(docs) != 1 or not isinstance(docs[0], dict):
            raise bad_request("the body must be one KubeSchedulerConfiguration")
        try:
            cfg = self.scheduler.parse(docs[0])
        except KubeschedError as exc:  # ConfigError, PluginError: ours, naming the field or plugin
            raise bad_request(f"invalid KubeSchedulerConfiguration: {exc}") from None
        await self.scheduler.apply(cfg)
        return 202, self.scheduler.current(), "application/json"

    def _feature_gates(self) -> Obj:
        gates = self.feature_gates
        return {
            "gates": [
                {
                    "name": name,
                    "enabled": gates.enabled(name),
                    "default": spec.default,
                    "stage": spec.stage,
                    "locked": spec.locked,
                }
                for name, spec in sorted(GATES.items())
            ],
            "changed": dict(sorted(gates.changed().items())),
        }

    # --- export, results ------------------------------------------------------------------------
    def _export(self, fmt: str) -> tuple[int, Any, str]:
        items: list[Obj] = []
        # CustomResourceDefinitions first, their objects before the nodes and pods.
        custom = [c.key for c in self.store.custom_resources]
        for kind in ("CustomResourceDefinition", *EXPORTED_KINDS[:-2], *custom, *EXPORTED_KINDS[-2:]):
            objs, _ = self.store.list(kind)
            for obj in objs:
                if kind == "CustomResourceDefinition":
                    obj = {k: v for k, v in obj.items() if k != "status"}  # the server's to set
                controlled = any(r.get("controller") for r in obj["metadata"].get("ownerReferences") or ())
                if controlled and kind in ("Pod", "ReplicaSet"):
                    continue  # its workload (a ReplicaSet's: its Deployment) makes it again
                items.append(_exported(obj))
        if fmt == "yaml":
            text = yaml.safe_dump_all(items, sort_keys=False)
            return 200, text, "application/yaml"
        if fmt != "json":
            raise bad_request(f'format: Unsupported value: {go_quote(fmt)}: supported values: "json", "yaml"')
        return 200, {"apiVersion": "v1", "kind": "List", "items": items}, "application/json"

    def _results(self, namespace: str, name: str) -> Obj:
        try:
            pod = self.store.get("Pod", namespace, name)
        except NotFound:
            raise not_found("pods", "", name) from None
        annotations = pod["metadata"].get("annotations") or {}
        raw = annotations.get(RESULT_HISTORY)
        history = json.loads(raw) if raw else []
        return {
            "namespace": namespace,
            "name": name,
            "node": (pod.get("spec") or {}).get("nodeName") or None,
            "schedulerName": (pod.get("spec") or {}).get("schedulerName", ""),
            "attempts": history,
        }


def _exported(obj: Obj) -> Obj:
    out: Obj = {k: obj[k] for k in ("apiVersion", "kind") if k in obj}
    out.update(copy.deepcopy({k: v for k, v in obj.items() if k not in out}))
    meta = out.get("metadata") or {}
    for key in _SERVER_FIELDS:
        meta.pop(key, None)
    annotations = meta.get("annotations") or {}
    for key in [k for k in annotations if k.startswith("kubesched.io/")]:
        del annotations[key]
    if not annotations:
        meta.pop("annotations", None)
    if out.get("kind") == "Pod" and not (out.get("spec") or {}).get("nodeName"):
        out.pop("status", None)  # pending: the importer schedules it afresh
    return out


async def _documents(body: bytes) -> list[Any]:
    """A JSON or YAML body as its documents (a ``kind: List`` stays one document), decoded within
    the API server's body limits; large bodies off the event loop, as the API server decodes
    them (see kubesched.sim.apiserver.requests)."""
    if not body.strip():
        raise bad_request("the body of the request was empty")
    if len(body) <= INLINE_BODY_BYTES:
        return _decode_documents(body)
    return await asyncio.to_thread(_decode_documents, body)


def _decode_documents(body: bytes) -> list[Any]:
    try:
        return [d for d in load_yaml_all(body, BODY_LIMITS) if d is not None]
    except (yaml.YAMLError, DecodeError) as exc:
        raise bad_request(f"the body is neither JSON nor YAML: error converting YAML to JSON: {exc}") from None
