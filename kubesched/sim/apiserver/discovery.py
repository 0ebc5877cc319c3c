"""The resources the embedded API server serves, and the discovery documents describing them.

Both discovery flavours are produced from one table: the legacy per-group documents
(``/api``, ``/api/v1``, ``/apis``, ``/apis/<group>/<version>``) and the aggregated
``apidiscovery.k8s.io/v2`` documents kubectl asks for first.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from kubesched.cluster.custom_resources import CRD_GROUP, CRD_KIND, CRD_PLURAL, CustomResource, CustomVersion
from kubesched.framework.features import FeatureGates
from kubesched.objects import Obj

VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(frozen=True)
class ServedResource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    #: subresource name -> (kind it answers with, verbs)
    subresources: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    verbs: tuple[str, ...] = VERBS
    #: the kind the object is stored under (events.k8s.io Events are core Events in the store)
    store_kind: str = ""
    #: the feature gate without which the resource is not served (as kube-apiserver's alpha APIs)
    gate: str = ""
    #: the custom resource (and its version) a CustomResourceDefinition declares; None for built-ins
    custom: CustomResource | None = field(default=None, compare=False)
    custom_version: CustomVersion | None = field(default=None, compare=False)
    singular_name: str = ""

    def served(self, gates: FeatureGates | None) -> bool:
        """Whether the resource is served with ``gates`` (a gated one not without gates)."""
        return not self.gate or (gates is not None and gates.enabled(self.gate))

    @property
    def group_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def singular(self) -> str:
        return self.singular_name or self.kind.lower()

    @property
    def stored_as(self) -> str:
        return self.store_kind or self.kind


_STATUS = ("get", "patch", "update")

#: Subresources answering with a kind of another API group: kind -> (group, version).
SUBRESOURCE_GROUPS: dict[str, tuple[str, str]] = {"Eviction": ("policy", "v1"), "Scale": ("autoscaling", "v1")}
_SCALE = ("get", "patch", "update")

RESOURCES: tuple[ServedResource, ...] = (
    ServedResource(
        "", "v1", "namespaces", "Namespace", False, ("ns",), subresources={"status": ("Namespace", _STATUS)}
    ),
    ServedResource("", "v1", "nodes", "Node", False, ("no",), subresources={"status": ("Node", _STATUS)}),
    ServedResource(
        "",
        "v1",
        "pods",
        "Pod",
        True,
        ("po",),
        ("all",),
        subresources={
            "binding": ("Binding", ("create",)),
            "eviction": ("Eviction", ("create",)),
            "resize": ("Pod", _STATUS),
            "status": ("Pod", _STATUS),
        },
    ),
    ServedResource("", "v1", "bindings", "Binding", True, verbs=("create",)),
    ServedResource("", "v1", "events", "Event", True, ("ev",)),
    ServedResource("events.k8s.io", "v1", "events", "Event", True, ("ev",)),
    ServedResource("coordination.k8s.io", "v1", "leases", "Lease", True),
    ServedResource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ("pc",)),
    # Workload-aware scheduling (1.37): Workload and PodGroup in v1beta1 and v1alpha3 (the same
    # fields, stored as v1beta1), CompositePodGroup in v1alpha3 behind its gate.
    *(
        r
        for version in ("v1beta1", "v1alpha3")
        for r in (
            ServedResource("scheduling.k8s.io", version, "workloads", "Workload", True),
            ServedResource(
                "scheduling.k8s.io",
                version,
                "podgroups",
                "PodGroup",
                True,
                subresources={"status": ("PodGroup", _STATUS)},
            ),
        )
    ),
    ServedResource(
        "scheduling.k8s.io",
        "v1alpha3",
        "compositepodgroups",
        "CompositePodGroup",
        True,
        subresources={"status": ("CompositePodGroup", _STATUS)},
        gate="CompositePodGroup",
    ),
    ServedResource("", "v1", "persistentvolumes", "PersistentVolume", False, ("pv",)),
    ServedResource("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ("pvc",)),
    ServedResource("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ("sc",)),
    ServedResource("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    ServedResource("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    ServedResource("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True),
    ServedResource("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",)),
    ServedResource("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False),
    ServedResource("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False),
    ServedResource(
        "resource.k8s.io",
        "v1",
        "resourceclaims",
        "ResourceClaim",
        True,
        subresources={"status": ("ResourceClaim", _STATUS)},
    ),
    ServedResource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True),
    ServedResource(
        "resource.k8s.io",
        "v1",
        "devicetaintrules",
        "DeviceTaintRule",
        False,
        subresources={"status": ("DeviceTaintRule", _STATUS)},
    ),
    ServedResource("", "v1", "services", "Service", True, ("svc",), ("all",)),
    ServedResource(
        "",
        "v1",
        "replicationcontrollers",
        "ReplicationController",
        True,
        ("rc",),
        ("all",),
        subresources={"scale": ("Scale", _SCALE), "status": ("ReplicationController", _STATUS)},
    ),
    ServedResource(
        "apps",
        "v1",
        "replicasets",
        "ReplicaSet",
        True,
        ("rs",),
        ("all",),
        subresources={"scale": ("Scale", _SCALE), "status": ("ReplicaSet", _STATUS)},
    ),
    ServedResource(
        "apps",
        "v1",
        "statefulsets",
        "StatefulSet",
        True,
        ("sts",),
        ("all",),
        subresources={"scale": ("Scale", _SCALE), "status": ("StatefulSet", _STATUS)},
    ),
    ServedResource(
        "apps",
        "v1",
        "deployments",
        "Deployment",
        True,
        ("deploy",),
        ("all",),
        subresources={"scale": ("Scale", _SCALE), "status": ("Deployment", _STATUS)},
    ),
    ServedResource(
        "apps",
        "v1",
        "daemonsets",
        "DaemonSet",
        True,
        ("ds",),
        ("all",),
        subresources={"status": ("DaemonSet", _STATUS)},
    ),
    ServedResource("batch", "v1", "jobs", "Job", True, (), ("all",), subresources={"status": ("Job", _STATUS)}),
    ServedResource("", "v1", "configmaps", "ConfigMap", True, ("cm",)),
    ServedResource("", "v1", "secrets", "Secret", True),
    # What an installation's RBAC manifest creates: stored and served, not enforced (the server
    # authorizes by token alone).
    ServedResource("", "v1", "serviceaccounts", "ServiceAccount", True, ("sa",)),
    ServedResource("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    ServedResource("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    ServedResource("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    ServedResource("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    ServedResource(
        CRD_GROUP,
        "v1",
        CRD_PLURAL,
        CRD_KIND,
        False,
        ("crd", "crds"),
        ("api-extensions",),
        subresources={"status": (CRD_KIND, _STATUS)},
    ),
)

#: The named groups and their versions, the preferred (first served) first.
GROUPS: tuple[tuple[str, str], ...] = tuple(dict.fromkeys((r.group, r.version) for r in RESOURCES if r.group).keys())


def find(
    group: str, version: str, plural: str, gates: FeatureGates | None = None, custom: Sequence[ServedResource] = ()
) -> ServedResource | None:
    """The resource a path names; a gated one only when ``gates`` has its gate on. ``custom``
    are the custom resources served besides the built-in ones."""
    r = _lookup(group, version, plural, custom)
    return r if r is not None and r.served(gates) else None


def _lookup(group: str, version: str, plural: str, custom: Sequence[ServedResource] = ()) -> ServedResource | None:
    for r in RESOURCES:
        if r.group == group and r.version == version and r.plural == plural:
            return r
    for r in custom:
        if r.group == group and r.version == version and r.plural == plural:
            return r
    return None


_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """A sort key putting versions in Kubernetes' order: GA before beta before alpha, higher
    numbers first, then any other names alphabetically (as the API server orders a custom
    resource's versions)."""
    m = _VERSION.match(version)
    if m is None:
        return (3, 0, 0, version)
    level = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (level, -int(m.group(1)), -int(m.group(3) or 0), "")


def custom_resource_list(resources: Sequence[CustomResource]) -> tuple[ServedResource, ...]:
    """The served versions of ``resources`` as :class:`ServedResource` rows."""
    out: list[ServedResource] = []
    for c in resources:
        for v in sorted(c.served_versions, key=lambda v: version_priority(v.name)):
            subs: dict[str, tuple[str, tuple[str, ...]]] = {}
            if v.status:
                subs["status"] = (c.kind, _STATUS)
            out.append(
                ServedResource(
                    c.group,
                    v.name,
                    c.plural,
                    c.kind,
                    c.namespaced,
                    c.short_names,
                    c.categories,
                    subresources=subs,
                    store_kind=c.key,
                    custom=c,
                    custom_version=v,
                    singular_name=c.singular,
                )
            )
    return tuple(out)


def _groups(custom: Sequence[ServedResource]) -> tuple[tuple[str, str], ...]:
    return GROUPS + tuple(dict.fromkeys((r.group, r.version) for r in custom if (r.group, r.version) not in GROUPS))


def split_resource_path(
    group: str, version: str, rest: list[str], custom: Sequence[ServedResource] = ()
) -> tuple[bool, str | None, list[str]]:
    """The path of a resource request after ``/api/v1`` or ``/apis/GROUP/VERSION``: whether it
    is the legacy ``watch/`` form, the namespace (taken only for a namespaced kind), and what
    follows it, ``plural[/name[/subresource]]``."""
    watch = False
    if rest and rest[0] == "watch":
        watch, rest = True, rest[1:]
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        res = _lookup(group, version, rest[2], custom)
        if res is not None and res.namespaced:
            namespace, rest = rest[1], rest[2:]
    return watch, namespace, rest


# --- legacy discovery --------------------------------------------------------------------------


def api_versions(server_address: str) -> Obj:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def _versions(group: str, custom: Sequence[ServedResource] = ()) -> list[str]:
    return [v for g, v in _groups(custom) if g == group]


def _group_entry(group: str, custom: Sequence[ServedResource] = ()) -> Obj:
    versions = [{"groupVersion": f"{group}/{v}", "version": v} for v in _versions(group, custom)]
    return {"name": group, "versions": versions, "preferredVersion": versions[0]}


def api_group_list(custom: Sequence[ServedResource] = ()) -> Obj:
    names = dict.fromkeys(g for g, _ in _groups(custom))
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group_entry(g, custom) for g in names]}


def api_group(group: str, custom: Sequence[ServedResource] = ()) -> Obj | None:
    if not _versions(group, custom):
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, custom)}


def api_resource_list(
    group: str, version: str, gates: FeatureGates | None = None, custom: Sequence[ServedResource] = ()
) -> Obj | None:
    items = [r for r in (*RESOURCES, *custom) if r.group == group and r.version == version and r.served(gates)]
    if not items:
        return None
    out: list[Obj] = []
    for r in items:
        entry: Obj = {
            "name": r.plural,
            "singularName": r.singular,
            "namespaced": r.namespaced,
            "kind": r.kind,
            "verbs": list(r.verbs),
        }
        if r.short_names:
            entry["shortNames"] = list(r.short_names)
        if r.categories:
            entry["categories"] = list(r.categories)
        out.append(entry)
        for sub, (kind, verbs) in r.subresources.items():
            sub_entry: Obj = {
                "name": f"{r.plural}/{sub}",
                "singularName": "",
                "namespaced": r.namespaced,
                "kind": kind,
                "verbs": list(verbs),
            }
            if kind in SUBRESOURCE_GROUPS:
                sub_entry["group"], sub_entry["version"] = SUBRESOURCE_GROUPS[kind]
            out.append(sub_entry)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": out,
    }


# --- aggregated discovery ----------------------------------------------------------------------

AGGREGATED_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
AGGREGATED_V2BETA1 = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> str | None:
    """The aggregated discovery media type the client accepts first, if any."""
    for part in accept.split(","):
        params = {p.strip().split("=", 1)[0]: p.strip().split("=", 1)[-1] for p in part.split(";")[1:] if "=" in p}
        if params.get("g") == "apidiscovery.k8s.io" and params.get("as") == "APIGroupDiscoveryList":
            if params.get("v") == "v2":
                return AGGREGATED_V2
            if params.get("v") == "v2beta1":
                return AGGREGATED_V2BETA1
    return None


def _discovery_resource(r: ServedResource) -> Obj:
    entry: Obj = {
        "resource": r.plural,
        "responseKind": {"group": r.group, "version": r.version, "kind": r.kind},
        "scope": "Namespaced" if r.namespaced else "Cluster",
        "singularResource": r.singular,
        "verbs": list(r.verbs),
    }
    if r.short_names:
        entry["shortNames"] = list(r.short_names)
    if r.categories:
        entry["categories"] = list(r.categories)
    if r.subresources:
        entry["subresources"] = [
            {
                "subresource": sub,
                "responseKind": {
                    "group": SUBRESOURCE_GROUPS.get(kind, (r.group if kind != "Binding" else "", r.version))[0],
                    "version": SUBRESOURCE_GROUPS.get(kind, ("", r.version))[1],
                    "kind": kind,
                },
                "verbs": list(verbs),
            }
            for sub, (kind, verbs) in r.subresources.items()
        ]
    return entry


def aggregated_discovery(
    core: bool, media_type: str, gates: FeatureGates | None = None, custom: Sequence[ServedResource] = ()
) -> Obj:
    """``/api`` (core) or ``/apis`` (named groups) as an APIGroupDiscoveryList."""
    version = "v2" if media_type == AGGREGATED_V2 else "v2beta1"
    groups = [""] if core else list(dict.fromkeys(g for g, _ in _groups(custom)))
    items = []
    for g in groups:
        items.append(
            {
                "metadata": {"name": g, "creationTimestamp": None},
                "versions": [
                    {
                        "version": v,
                        "resources": [
                            _discovery_resource(r)
                            for r in (*RESOURCES, *custom)
                            if r.group == g and r.version == v and r.served(gates)
                        ],
                        "freshness": "Current",
                    }
                    for v in (["v1"] if core else _versions(g, custom))
                ],
            }
        )
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }
