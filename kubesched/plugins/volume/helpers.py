"""Storage helpers shared by the volume plugins (upstream's ``component-helpers/storage/volume``,
``csi-translation-lib`` and the listers' not-found errors), over Kubernetes JSON dicts."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from kubesched.framework.events import QueueingHint
from kubesched.framework.resources import QuantityError, parse_quantity
from kubesched.framework.selectors import NodeSelector, SelectorError
from kubesched.framework.types import PodInfo

# --- well-known names ---------------------------------------------------------------------------

ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
ANN_MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"

BINDING_IMMEDIATE = "Immediate"
BINDING_WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"

LABEL_ZONE = "topology.kubernetes.io/zone"
LABEL_REGION = "topology.kubernetes.io/region"
LABEL_BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
LABEL_BETA_REGION = "failure-domain.beta.kubernetes.io/region"

READ_WRITE_ONCE_POD = "ReadWriteOncePod"

ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
_RESOURCE_NAME_LENGTH_LIMIT = 63


# --- not-found errors, worded as the informer listers word them ---------------------------------

_LISTER_RESOURCE = {
    "PersistentVolumeClaim": "persistentvolumeclaim",
    "PersistentVolume": "persistentvolume",
    "StorageClass": "storageclass.storage.k8s.io",
    "CSINode": "csinode.storage.k8s.io",
}


def not_found(kind: str, name: str) -> str:
    """``persistentvolumeclaim "x" not found``: the message of a lister's NotFound error."""
    return f'{_LISTER_RESOURCE.get(kind, kind.lower())} "{name}" not found'


# --- objects ------------------------------------------------------------------------------------


def meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("metadata") or {}


def spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("spec") or {}


def name_of(obj: Mapping[str, Any]) -> str:
    return str(meta(obj).get("name") or "")


def namespace_of(obj: Mapping[str, Any]) -> str:
    return str(meta(obj).get("namespace") or "default")


def annotations_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return meta(obj).get("annotations") or {}


def labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    return meta(obj).get("labels") or {}


def pvc_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def resource_version(obj: Mapping[str, Any]) -> int:
    """``metadata.resourceVersion`` as a number (0 when absent or not numeric)."""
    try:
        return int(meta(obj).get("resourceVersion") or 0)
    except (TypeError, ValueError):
        return 0


def pvc_class(pvc: Mapping[str, Any]) -> str:
    """The claim's storage class: the beta annotation first, then ``spec.storageClassName``."""
    ann = annotations_of(pvc)
    if ANN_BETA_STORAGE_CLASS in ann:
        return ann[ANN_BETA_STORAGE_CLASS]
    return str(spec(pvc).get("storageClassName") or "")


def pv_class(pv: Mapping[str, Any]) -> str:
    """The volume's storage class: the beta annotation first, then ``spec.storageClassName``."""
    ann = annotations_of(pv)
    if ANN_BETA_STORAGE_CLASS in ann:
        return ann[ANN_BETA_STORAGE_CLASS]
    return str(spec(pv).get("storageClassName") or "")


def storage_quantity(resources: Mapping[str, Any] | None) -> int:
    """The ``storage`` entry of a resource list in bytes (0 when absent or unreadable)."""
    value = (resources or {}).get("storage")
    if value is None:
        return 0
    try:
        return int(parse_quantity(value))
    except (QuantityError, ValueError, TypeError):
        return 0


def pvc_request(pvc: Mapping[str, Any]) -> int:
    return storage_quantity((spec(pvc).get("resources") or {}).get("requests"))


def pv_capacity(pv: Mapping[str, Any]) -> int:
    return storage_quantity(spec(pv).get("capacity"))


# --- pod volumes --------------------------------------------------------------------------------


def ephemeral_claim_name(pod: Mapping[str, Any], volume: Mapping[str, Any]) -> str:
    """The PVC of a generic ephemeral volume is named ``<pod>-<volume>``."""
    return f"{name_of(pod)}-{volume.get('name', '')}"


def volume_claim(pod: Mapping[str, Any], volume: Mapping[str, Any]) -> tuple[str, bool] | None:
    """``(claim name, is ephemeral)`` for a volume backed by a PVC, ``None`` otherwise."""
    src = volume.get("persistentVolumeClaim")
    if src is not None:
        return str((src or {}).get("claimName") or ""), False
    if volume.get("ephemeral") is not None:
        return ephemeral_claim_name(pod, volume), True
    return None


def pod_claim_names(pod: Mapping[str, Any], include_ephemeral: bool = True) -> list[str]:
    names: list[str] = []
    for v in spec(pod).get("volumes") or ():
        claim = volume_claim(pod, v)
        if claim is not None and (include_ephemeral or not claim[1]):
            names.append(claim[0])
    return names


def pod_obj(pod: Any) -> Mapping[str, Any]:
    """The pod dict behind a queueing hint's ``pod`` argument (a PodInfo or the dict itself)."""
    return pod.pod if isinstance(pod, PodInfo) else pod


def queue_if_pod_claim(pod: Any, new: Any, include_ephemeral: bool) -> QueueingHint:
    """Hint for a claim event: queue when ``new`` is one of the pod's claims (in its namespace),
    or when the event carries no object to tell."""
    p = pod_obj(pod)
    if not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    if namespace_of(new) != namespace_of(p):
        return QueueingHint.SKIP
    return QueueingHint.QUEUE if name_of(new) in pod_claim_names(p, include_ephemeral) else QueueingHint.SKIP


def volume_is_for_pod(pod: Mapping[str, Any], pvc: Mapping[str, Any]) -> str | None:
    """``None`` when the ephemeral volume's claim is controlled by ``pod``, else the reason."""
    uid = meta(pod).get("uid")
    for ref in meta(pvc).get("ownerReferences") or ():
        if ref.get("controller") and ref.get("uid") == uid:
            return None
    return (
        f"PVC {namespace_of(pvc)}/{name_of(pvc)} was not created for pod "
        f"{namespace_of(pod)}/{name_of(pod)} (pod is not owner)"
    )


# --- node affinity and topology -----------------------------------------------------------------


def check_pv_node_affinity(pv: Mapping[str, Any], node_labels: Mapping[str, str]) -> bool:
    """Whether the node (known by its labels only, as upstream checks it) satisfies the PV's
    required node affinity. A PV without one fits everywhere; an unreadable one fits nowhere."""
    required = (spec(pv).get("nodeAffinity") or {}).get("required")
    if required is None:
        return True
    try:
        selector = NodeSelector.compile(required)
    except SelectorError:
        return False
    return selector is not None and selector.matches(node_labels, "")


def match_topology_selector_terms(terms: Iterable[Mapping[str, Any]] | None, node_labels: Mapping[str, str]) -> bool:
    """StorageClass ``allowedTopologies``: no terms match every node; otherwise any term whose
    every ``matchLabelExpressions`` entry has the node's label among its values."""
    terms = list(terms or ())
    if not terms:
        return True
    for term in terms:
        exprs = term.get("matchLabelExpressions") or ()
        ok = True
        for expr in exprs:
            value = node_labels.get(expr.get("key", ""))
            if value is None or value not in (expr.get("values") or ()):
                ok = False
                break
        if ok:
            return True
    return False


def zones_to_set(value: str) -> set[str] | None:
    """A zone label value (``a__b`` lists several zones) as a set; ``None`` when malformed."""
    zones = {z.strip() for z in value.split("__")}
    if "" in zones:
        return None
    return zones


# --- CSI ----------------------------------------------------------------------------------------


def csi_attach_limit_key(driver: str) -> str:
    """The resource name under which a driver's attach limit is published: the prefix and the
    driver name, shortened with a hash when the whole would exceed a resource name's length."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= _RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver


def migrated_plugins(csi_node: Mapping[str, Any] | None) -> set[str]:
    if csi_node is None:
        return set()
    raw = annotations_of(csi_node).get(ANN_MIGRATED_PLUGINS) or ""
    return {p for p in raw.split(",") if p}


#: In-tree volume plugins whose volumes migrate to a CSI driver: the in-tree plugin name, the
#: volume source field, and the CSI driver that serves them.
IN_TREE_PLUGINS: dict[str, tuple[str, str]] = {
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "ebs.csi.aws.com"),
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
}
IN_TREE_DRIVER_BY_PLUGIN = {plugin: driver for plugin, driver in IN_TREE_PLUGINS.values()}


def _in_tree_handle(field: str, src: Mapping[str, Any], zone: str = "UNSPECIFIED") -> str:
    if field == "awsElasticBlockStore":
        vid = str(src.get("volumeID") or "")
        # aws://<zone>/<id> names the same volume as <id>.
        return vid.rsplit("/", 1)[-1] if vid.startswith("aws://") else vid
    if field == "gcePersistentDisk":
        return f"projects/UNSPECIFIED/zones/{zone}/disks/{src.get('pdName', '')}"
    if field == "azureDisk":
        return str(src.get("diskURI") or "")
    return str(src.get("volumeID") or "")


def in_tree_source(source: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]] | None:
    """``(field, source)`` of the migratable in-tree volume source in ``source``, if any."""
    for field in IN_TREE_PLUGINS:
        src = source.get(field)
        if src is not None:
            return field, src or {}
    return None


def is_csi_migration_on(csi_node: Mapping[str, Any] | None, plugin: str) -> bool:
    """Migration of an in-tree plugin is on for a node when its CSINode lists the plugin."""
    if csi_node is None or plugin not in IN_TREE_DRIVER_BY_PLUGIN:
        return False
    return plugin in migrated_plugins(csi_node)


def translated_csi(pv_or_volume: Mapping[str, Any], is_pv: bool) -> tuple[str, str, str] | None:
    """``(in-tree plugin, CSI driver, volume handle)`` for a migratable in-tree PV or inline
    volume, ``None`` for anything else. Handles identify the volume uniquely (for counting),
    built as the CSI translation library builds them for the fields it needs."""
    source = spec(pv_or_volume) if is_pv else pv_or_volume
    found = in_tree_source(source)
    if found is None:
        return None
    field, src = found
    plugin, driver = IN_TREE_PLUGINS[field]
    zone = "UNSPECIFIED"
    if is_pv and field == "gcePersistentDisk":
        lbl = labels_of(pv_or_volume)
        zone = lbl.get(LABEL_ZONE) or lbl.get(LABEL_BETA_ZONE) or "UNSPECIFIED"
    return plugin, driver, _in_tree_handle(field, src, zone)
