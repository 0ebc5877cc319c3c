"""Regenerate the embedded API server's tables of Kubernetes types from upstream's definitions.

Two modules are written, both generated and never edited by hand:

* ``kubesched/sim/apiserver/openapi/types.py`` — the fields of each OpenAPI definition the
  server publishes and validates against, from the OpenAPI v2 document of kubernetes/kubernetes;
* ``kubesched/sim/apiserver/protobuf/schema.py`` — the protobuf messages kubectl's typed clients
  send, by field number, from the ``generated.proto`` files of ``k8s.io/api`` and
  ``k8s.io/apimachinery``.

Both hold only the types listed in :data:`OPENAPI_DEFINITIONS` and :data:`PROTOBUF_MESSAGES`
below (what the server serves); a protobuf field whose message is not listed is left out.

The script reads local files only. Download, for the release ``X.Y`` wanted:

* ``https://raw.githubusercontent.com/kubernetes/kubernetes/vX.Y.0/api/openapi-spec/swagger.json``
  (a JSON schema of the same definitions under ``$defs`` is read too, as the
  ``kubernetes-validate`` package ships them: ``kubernetes-json-schema/vX.Y.0-local/_definitions.json``);
* the repositories ``https://github.com/kubernetes/api`` and
  ``https://github.com/kubernetes/apimachinery`` at tag ``v0.Y.0`` (or only their
  ``generated.proto`` files) into one directory, which is searched recursively.

Then::

    python tools/gen_api_tables.py --version X.Y --swagger swagger.json --proto DIR

When an input is not the release's own (the ``.proto`` files of a commit past the last tag, say),
``--openapi-source`` and ``--proto-source`` name what it is in the generated module's header.

``--check`` writes nothing and exits 1 when a module differs from what it would write.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OPENAPI_OUT = ROOT / "kubesched" / "sim" / "apiserver" / "openapi" / "types.py"
PROTOBUF_OUT = ROOT / "kubesched" / "sim" / "apiserver" / "protobuf" / "schema.py"

_CORE = "io.k8s.api.core.v1."
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."

#: The OpenAPI definitions the server publishes: its kinds, their lists, and every type they
#: reach that is an object of its own.
OPENAPI_DEFINITIONS: tuple[str, ...] = (
    "io.k8s.api.coordination.v1.Lease",
    "io.k8s.api.coordination.v1.LeaseList",
    "io.k8s.api.coordination.v1.LeaseSpec",
    *(
        _CORE + name
        for name in (
            "AWSElasticBlockStoreVolumeSource Affinity AppArmorProfile AttachedVolume AzureDiskVolumeSource "
            "AzureFileVolumeSource Binding CSIVolumeSource Capabilities CephFSVolumeSource CinderVolumeSource "
            "ClusterTrustBundleProjection ConfigMapEnvSource ConfigMapKeySelector ConfigMapNodeConfigSource "
            "ConfigMapProjection ConfigMapVolumeSource Container ContainerExtendedResourceRequest ContainerImage "
            "ContainerPort ContainerResizePolicy ContainerRestartRule ContainerRestartRuleOnExitCodes "
            "ContainerState ContainerStateRunning ContainerStateTerminated ContainerStateWaiting ContainerStatus "
            "ContainerUser DaemonEndpoint DownwardAPIProjection DownwardAPIVolumeFile DownwardAPIVolumeSource "
            "EmptyDirVolumeSource EnvFromSource EnvVar EnvVarSource EphemeralContainer EphemeralVolumeSource "
            "EvictionResponder "
            "Event EventList EventSeries EventSource ExecAction FCVolumeSource FileKeySelector FlexVolumeSource "
            "FlockerVolumeSource GCEPersistentDiskVolumeSource GRPCAction GitRepoVolumeSource "
            "GlusterfsVolumeSource HTTPGetAction HTTPHeader HostAlias HostIP HostPathVolumeSource "
            "ISCSIVolumeSource ImageVolumeSource ImageVolumeStatus KeyToPath Lifecycle LifecycleHandler "
            "LinuxContainerUser LocalObjectReference NFSVolumeSource Namespace NamespaceCondition NamespaceList "
            "NamespaceSpec NamespaceStatus Node NodeAddress NodeAffinity NodeAllocatableResourceClaimStatus "
            "NodeCondition NodeConfigSource NodeConfigStatus NodeDaemonEndpoints NodeFeatures NodeList NodePodPreemptionPolicy "
            "NodeRuntimeHandler NodeRuntimeHandlerFeatures NodeSelector NodeSelectorRequirement NodeSelectorTerm "
            "NodeSpec NodeStatus NodeSwapStatus NodeSystemInfo ObjectFieldSelector ObjectReference "
            "PersistentVolumeClaimSpec PersistentVolumeClaimTemplate PersistentVolumeClaimVolumeSource "
            "PhotonPersistentDiskVolumeSource Pod PodAffinity PodAffinityTerm PodAntiAffinity "
            "PodCertificateProjection PodCondition PodDNSConfig PodDNSConfigOption "
            "PodExtendedResourceClaimStatus PodIP PodList PodOS PodReadinessGate PodResourceClaim "
            "PodResourceClaimStatus PodSchedulingGate PodSchedulingGroup PodSecurityContext PodSpec PodStatus PodVolumeHealth "
            "PortworxVolumeSource PreferredSchedulingTerm Probe ProjectedVolumeSource QuobyteVolumeSource "
            "RBDVolumeSource ResourceClaim ResourceFieldSelector ResourceHealth ResourceRequirements "
            "ResourceStatus SELinuxOptions ScaleIOVolumeSource SeccompProfile SecretEnvSource SecretKeySelector "
            "SecretProjection SecretVolumeSource SecurityContext ServiceAccountTokenProjection SleepAction "
            "StorageOSVolumeSource Sysctl TCPSocketAction Taint Toleration TopologySpreadConstraint "
            "TypedLocalObjectReference TypedObjectReference Volume VolumeDevice VolumeMount VolumeMountStatus "
            "VolumeProjection VolumeResourceRequirements VolumeStatus VsphereVirtualDiskVolumeSource "
            "WeightedPodAffinityTerm WindowsSecurityContextOptions"
        ).split()
    ),
    "io.k8s.api.events.v1.Event",
    "io.k8s.api.events.v1.EventList",
    "io.k8s.api.events.v1.EventSeries",
    *(
        "io.k8s.api.resource.v1." + name
        for name in (
            "AllocatedDeviceStatus AllocationResult CELDeviceSelector CapacityRequestPolicy CapacityRequestPolicyRange "
            "CapacityRequirements Counter CounterSet Device DeviceAllocationConfiguration DeviceAllocationResult "
            "DeviceAttribute DeviceCapacity DeviceClaim DeviceClaimConfiguration DeviceClass DeviceClassConfiguration "
            "DeviceClassList DeviceClassSpec DeviceConstraint DeviceCounterConsumption DeviceDerivedAttribute "
            "DeviceRequest DeviceRequestAllocationResult DeviceSelector DeviceSubRequest DeviceTaint DeviceTaintRule "
            "DeviceTaintRuleList DeviceTaintRuleSpec DeviceTaintRuleStatus DeviceTaintSelector DeviceToleration "
            "ExactDeviceRequest NetworkDeviceData NodeAllocatableMapping NodeAllocatableOverhead "
            "NodeAllocatableResource OpaqueDeviceConfiguration ResourceClaim ResourceClaimConsumerReference "
            "ResourceClaimList ResourceClaimSpec ResourceClaimStatus ResourceClaimTemplate ResourceClaimTemplateList "
            "ResourceClaimTemplateSpec ResourcePool ResourceSlice ResourceSliceList ResourceSliceSpec"
        ).split()
    ),
    "io.k8s.api.scheduling.v1.PriorityClass",
    "io.k8s.api.scheduling.v1.PriorityClassList",
    # What an installation's RBAC manifest creates (kubectl apply -f config/rbac.yaml).
    "io.k8s.api.core.v1.ServiceAccount",
    "io.k8s.api.core.v1.ServiceAccountList",
    *(
        "io.k8s.api.rbac.v1." + name
        for name in (
            "AggregationRule ClusterRole ClusterRoleBinding ClusterRoleBindingList ClusterRoleList PolicyRule Role "
            "RoleBinding RoleBindingList RoleList RoleRef Subject"
        ).split()
    ),
    # Workload-aware scheduling (1.37): Workload and PodGroup in v1beta1 and v1alpha3, and
    # v1alpha3's CompositePodGroup.
    *(
        f"io.k8s.api.scheduling.{version}.{name}"
        for version in ("v1beta1", "v1alpha3")
        for name in (
            "AllCompositeDisruptionMode AllDisruptionMode BasicSchedulingPolicy CompositeBasicSchedulingPolicy "
            "CompositeDisruptionMode CompositeGangSchedulingPolicy CompositePodGroupSchedulingConstraints "
            "CompositePodGroupSchedulingPolicy CompositePodGroupTemplate DisruptionMode GangSchedulingPolicy "
            "PodGroup PodGroupList PodGroupResourceClaim PodGroupResourceClaimStatus PodGroupSchedulingConstraints "
            "PodGroupSchedulingPolicy PodGroupSpec PodGroupStatus PodGroupTemplate SingleCompositeDisruptionMode "
            "SingleDisruptionMode TopologyConstraint TypedLocalObjectReference Workload WorkloadList "
            "WorkloadReference WorkloadSpec"
        ).split()
    ),
    *(
        "io.k8s.api.scheduling.v1alpha3." + name
        for name in (
            "CompositePodGroup CompositePodGroupList CompositePodGroupSpec CompositePodGroupStatus "
            "WorkloadPodGroupAllDisruptionMode WorkloadPodGroupBasicSchedulingPolicy WorkloadPodGroupDisruptionMode "
            "WorkloadPodGroupGangSchedulingPolicy WorkloadPodGroupResourceClaim "
            "WorkloadPodGroupSchedulingConstraints WorkloadPodGroupSchedulingPolicy "
            "WorkloadPodGroupSingleDisruptionMode"
        ).split()
    ),
    *(
        "io.k8s.api.storage.v1." + name
        for name in "CSIDriver CSIDriverList CSIDriverSpec CSIStorageCapacity CSIStorageCapacityList TokenRequest".split()
    ),
    # The bodies of pods/eviction and of the review APIs (decoded as kube-apiserver decodes them).
    "io.k8s.api.policy.v1.Eviction",
    *(
        "io.k8s.api.authorization.v1." + name
        for name in (
            "FieldSelectorAttributes LabelSelectorAttributes NonResourceAttributes ResourceAttributes "
            "SubjectAccessReview SubjectAccessReviewSpec SubjectAccessReviewStatus"
        ).split()
    ),
    *(
        "io.k8s.api.authentication.v1." + name
        for name in "TokenReview TokenReviewSpec TokenReviewStatus UserInfo".split()
    ),
    *(
        _META + name
        for name in (
            "Condition DeleteOptions FieldSelectorRequirement LabelSelector LabelSelectorRequirement ListMeta "
            "ManagedFieldsEntry ObjectMeta OwnerReference Preconditions ShardInfo Status StatusCause StatusDetails"
        ).split()
    ),
    # CustomResourceDefinitions; a version's schema (JSONSchemaProps) stays free-form.
    *(
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1." + name
        for name in (
            "CustomResourceColumnDefinition CustomResourceConversion CustomResourceDefinition "
            "CustomResourceDefinitionCondition CustomResourceDefinitionList CustomResourceDefinitionNames "
            "CustomResourceDefinitionSpec CustomResourceDefinitionStatus CustomResourceDefinitionVersion "
            "CustomResourceSubresourceScale CustomResourceSubresourceStatus CustomResourceSubresources "
            "CustomResourceValidation SelectableField ServiceReference WebhookClientConfig WebhookConversion"
        ).split()
    ),
)

_PB_META = "k8s.io.apimachinery.pkg.apis.meta.v1."
_PB_CORE = "k8s.io.api.core.v1."

#: The protobuf messages a body may hold, by package (the table's sections, in this order).
PROTOBUF_MESSAGES: tuple[str, ...] = (
    *(
        _PB_META + name
        for name in (
            "ObjectMeta OwnerReference LabelSelector LabelSelectorRequirement DeleteOptions Preconditions"
        ).split()
    ),
    *(
        _PB_CORE + name
        for name in (
            "Namespace NamespaceSpec NamespaceStatus NamespaceCondition ConfigMap Secret PodTemplateSpec PodSpec "
            "Container ContainerPort EnvVar ResourceRequirements LocalObjectReference Toleration VolumeMount"
        ).split()
    ),
    *(
        "k8s.io.api.apps.v1." + name
        for name in "Deployment DeploymentSpec DeploymentStrategy RollingUpdateDeployment DeploymentStatus".split()
    ),
    *("k8s.io.api.batch.v1." + name for name in "Job JobSpec JobStatus".split()),
    "k8s.io.api.scheduling.v1.PriorityClass",
    "k8s.io.api.policy.v1.Eviction",
)

#: The kinds a protobuf body may carry, and their message.
KIND_MESSAGES: dict[str, str] = {
    "Namespace": "Namespace",
    "ConfigMap": "ConfigMap",
    "Secret": "Secret",
    "PriorityClass": "PriorityClass",
    "Eviction": "Eviction",
    "DeleteOptions": "DeleteOptions",
    "Deployment": "Deployment",
    "Job": "Job",
}

#: Message types the decoder reads as one value of their own (see the schema's docstring).
_SPECIAL_MESSAGES = {
    "k8s.io.apimachinery.pkg.apis.meta.v1.Time": "time",
    "k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime": "time",
    "k8s.io.apimachinery.pkg.api.resource.Quantity": "quantity",
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": "intorstring",
}
_PROTO_SCALARS = frozenset(
    "string bytes bool int32 int64 uint32 uint64 sint32 sint64 fixed32 fixed64 sfixed32 sfixed64 float double".split()
)


class InputError(Exception):
    """An input that is missing, malformed, or lacks a type the tables hold."""


# --- OpenAPI ------------------------------------------------------------------------------------


def openapi_definitions(document: Mapping[str, Any]) -> dict[str, Any]:
    """The definitions of an OpenAPI v2 document (``definitions``) or a JSON schema (``$defs``)."""
    defs = document.get("definitions") or document.get("$defs")
    if not isinstance(defs, dict):
        raise InputError("no 'definitions' (OpenAPI v2) nor '$defs' (JSON schema) in the document")
    return defs


def _types_of(schema: Mapping[str, Any]) -> list[str]:
    """The JSON types a schema allows besides null (a JSON schema may list several)."""
    t = schema.get("type")
    listed = t if isinstance(t, list) else [t] if t else []
    return [x for x in listed if x != "null"]


def field_type(schema: Mapping[str, Any], defs: Mapping[str, Any], selected: frozenset[str]) -> str:
    """A property's type in the table's notation (see the generated module's docstring).

    A reference to a listed definition stays a reference; any other is replaced by what it is:
    Time and MicroTime a ``date-time``, Quantity a ``string``, IntOrString a free-form ``object``
    (it is either), FieldsV1 and RawExtension ``object``."""
    ref = schema.get("$ref")
    if ref is None and isinstance(schema.get("allOf"), list) and len(schema["allOf"]) == 1:
        ref = schema["allOf"][0].get("$ref")
    if ref is not None:
        name = ref.rsplit("/", 1)[-1]
        if name in selected:
            return f"#{name}"
        if name not in defs:
            raise InputError(f"reference to {name}, which the document does not define")
        return field_type(defs[name], defs, selected)
    alternatives = schema.get("oneOf") or schema.get("anyOf")
    if alternatives:
        kinds = {t for alt in alternatives for t in _types_of(alt)}
        # int-or-string is either; a Quantity (string or number) is read as its string form
        return "object" if "integer" in kinds else "string"
    types = _types_of(schema)
    kind = types[0] if types else "object"
    if kind == "array":
        return f"[{field_type(schema.get('items') or {}, defs, selected)}]"
    if kind == "object":
        extra = schema.get("additionalProperties")
        return f"{{{field_type(extra, defs, selected)}}}" if isinstance(extra, dict) else "object"
    if kind == "string" and schema.get("format") == "int-or-string":
        return "object"
    if kind == "string" and schema.get("format") == "date-time":
        return "date-time"
    return str(kind)


def openapi_table(document: Mapping[str, Any], names: Iterable[str] = OPENAPI_DEFINITIONS) -> dict[str, dict[str, str]]:
    """Each listed definition's fields, ``{definition: {field: type}}``, both sorted by name."""
    defs = openapi_definitions(document)
    selected = frozenset(names)
    missing = sorted(selected - set(defs))
    if missing:
        raise InputError(f"the document does not define {', '.join(missing)}")
    return {
        name: {
            prop: field_type(schema, defs, selected)
            for prop, schema in sorted((defs[name].get("properties") or {}).items())
        }
        for name in sorted(selected)
    }


# --- protobuf -----------------------------------------------------------------------------------

_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;", re.M)
_MESSAGE = re.compile(r"^message\s+(\w+)\s*\{(.*?)^\}", re.M | re.S)
_FIELD = re.compile(
    r"^\s*(?:(optional|repeated)\s+([\w.]+)|map\s*<\s*\w+\s*,\s*([\w.]+)\s*>)\s+(\w+)\s*=\s*(\d+)\s*[;\[]", re.M
)


@dataclass(frozen=True)
class ProtoField:
    name: str
    number: int
    type: str  # a scalar type or a message's full name
    kind: str  # "single", "repeated" or "map"


def parse_proto(text: str) -> dict[str, list[ProtoField]]:
    """The messages of one ``generated.proto``, by full name (``package.Message``)."""
    found = _PACKAGE.search(text)
    if found is None:
        raise InputError("a .proto file without a package line")
    package = found.group(1)
    messages: dict[str, list[ProtoField]] = {}
    for message in _MESSAGE.finditer(text):
        body = "\n".join(line.split("//", 1)[0] for line in message.group(2).splitlines())
        out = []
        for label, typ, map_value, name, number in _FIELD.findall(body):
            typ = typ or map_value
            if typ not in _PROTO_SCALARS:
                typ = typ.lstrip(".") if "." in typ else f"{package}.{typ}"
            kind = "map" if map_value else "repeated" if label == "repeated" else "single"
            out.append(ProtoField(name, int(number), typ, kind))
        messages[f"{package}.{message.group(1)}"] = out
    return messages


def read_protos(directory: Path) -> dict[str, list[ProtoField]]:
    """Every message of every ``*.proto`` under ``directory``."""
    files = sorted(directory.rglob("*.proto"))
    if not files:
        raise InputError(f"no .proto file under {directory}")
    messages: dict[str, list[ProtoField]] = {}
    for path in files:
        messages.update(parse_proto(path.read_text(encoding="utf-8")))
    return messages


def protobuf_table(
    messages: Mapping[str, list[ProtoField]], names: Iterable[str] = PROTOBUF_MESSAGES
) -> dict[str, dict[int, tuple[str, str, str]]]:
    """Each listed message by its short name: ``{number: (json name, type, kind)}``, sorted by
    number. A field of a message that is not listed is left out: the decoder refuses it."""
    names = tuple(names)
    short = {full: full.rsplit(".", 1)[-1] for full in names}
    if len(set(short.values())) != len(short):
        raise InputError("two listed messages share a name")
    missing = [n for n in names if n not in messages]
    if missing:
        raise InputError(f"the .proto files do not define {', '.join(missing)}")
    table: dict[str, dict[int, tuple[str, str, str]]] = {}
    for full in names:
        fields: dict[int, tuple[str, str, str]] = {}
        for f in sorted(messages[full], key=lambda f: f.number):
            if f.type in _PROTO_SCALARS:
                typ = f.type
            elif f.type in _SPECIAL_MESSAGES:
                typ = _SPECIAL_MESSAGES[f.type]
            elif f.type in short:
                typ = short[f.type]
            else:
                continue
            fields[f.number] = (f.name, typ, f.kind)
        table[short[full]] = fields
    return table


# --- the modules --------------------------------------------------------------------------------


#: What the header names as the inputs when ``--openapi-source``/``--proto-source`` say nothing.
DEFAULT_OPENAPI_SOURCE = "api/openapi-spec/swagger.json"
DEFAULT_PROTO_SOURCE = "the generated.proto files of k8s.io/api and k8s.io/apimachinery"


def _header(version: str, sources: str) -> str:
    return (
        f"# Generated from Kubernetes {version} ({sources}) by\n"
        f"#   python tools/gen_api_tables.py --version {version} --swagger <swagger.json> --proto <dir>\n"
        "# Do not edit: change the selection in tools/gen_api_tables.py and run it again.\n"
    )


def render_openapi(table: Mapping[str, Mapping[str, str]], version: str, source: str = DEFAULT_OPENAPI_SOURCE) -> str:
    """The ``openapi/types.py`` module for ``table``."""
    lines = [
        _header(version, source),
        f'"""The fields of the Kubernetes API types the embedded API server serves (v{version}).',
        "",
        "One entry per OpenAPI definition: JSON field name -> type, where a type is ``string``,",
        "``integer``, ``number``, ``boolean``, ``date-time``, ``object`` (free-form), ``#<definition>``",
        "(a reference), ``[<type>]`` (an array) or ``{<type>}`` (a map with string keys). This is enough",
        "to publish OpenAPI documents and to find unknown fields for ``fieldValidation``.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "#: The Kubernetes release these definitions were generated from.",
        f'KUBERNETES_VERSION = "{version}"',
        "",
        "DEFINITIONS: dict[str, dict[str, str]] = {",
    ]
    for name, props in table.items():
        if not props:
            lines.append(f'    "{name}": {{}},')
            continue
        lines.append(f'    "{name}": {{')
        lines.extend(f'        "{prop}": "{typ}",' for prop, typ in props.items())
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_protobuf(
    table: Mapping[str, Mapping[int, tuple[str, str, str]]], version: str, source: str = DEFAULT_PROTO_SOURCE
) -> str:
    """The ``protobuf/schema.py`` module for ``table``."""
    lines = [
        _header(version, source),
        '"""The protobuf messages kubectl\'s typed clients send, by field number: what',
        ":mod:`kubesched.sim.apiserver.protobuf.decode` needs to turn them into JSON (the numbers are",
        "Kubernetes' own, from the API's ``generated.proto`` files).",
        "",
        "A message maps each field number to a :class:`Field`: its JSON name, its type (a scalar type, a",
        "special type, or the name of another message) and whether it repeats or is a map. Special types:",
        "``time`` (meta/v1 Time: seconds since the epoch), ``quantity`` (its one string field) and",
        "``intorstring``. A map's values have the field's type. A field whose message is not in the",
        "table is not in it either.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from dataclasses import dataclass",
        "",
        "#: The Kubernetes release these messages were generated from.",
        f'KUBERNETES_VERSION = "{version}"',
        "",
        "",
        "@dataclass(frozen=True)",
        "class Field:",
        "    json: str",
        "    type: str",
        '    kind: str = "single"  # or "repeated", "map"',
        "",
        "",
        'def _f(json: str, type: str, kind: str = "single") -> Field:',
        "    return Field(json, type, kind)",
        "",
        "",
        "MESSAGES: dict[str, dict[int, Field]] = {",
    ]
    for name, fields in table.items():
        lines.append(f'    "{name}": {{')
        for number, (json_name, typ, kind) in fields.items():
            extra = "" if kind == "single" else f', "{kind}"'
            lines.append(f'        {number}: _f("{json_name}", "{typ}"{extra}),')
        lines.append("    },")
    lines += [
        "}",
        "",
        "#: The kinds a protobuf body may carry, and their message.",
        "KIND_MESSAGES: dict[str, str] = {",
    ]
    lines.extend(f'    "{kind}": "{message}",' for kind, message in KIND_MESSAGES.items())
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--version", required=True, help="the Kubernetes release of the inputs, as 1.32")
    parser.add_argument("--swagger", type=Path, help="swagger.json (or a JSON schema with $defs)")
    parser.add_argument("--proto", type=Path, help="a directory holding the generated.proto files")
    parser.add_argument(
        "--openapi-source",
        default=DEFAULT_OPENAPI_SOURCE,
        help="what the OpenAPI input is, for the header (say so when it is not the release's own swagger.json)",
    )
    parser.add_argument(
        "--proto-source",
        default=DEFAULT_PROTO_SOURCE,
        help="what the .proto input is, for the header (say so when it is not the release's tag)",
    )
    parser.add_argument("--openapi-out", type=Path, default=OPENAPI_OUT)
    parser.add_argument("--protobuf-out", type=Path, default=PROTOBUF_OUT)
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a module would change")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"\d+\.\d+", args.version):
        parser.error(f"--version must be MAJOR.MINOR, not {args.version!r}")
    if args.swagger is None and args.proto is None:
        parser.error("give --swagger, --proto or both")
    outputs: list[tuple[Path, str]] = []
    try:
        if args.swagger is not None:
            document = json.loads(args.swagger.read_text(encoding="utf-8"))
            table = openapi_table(document)
            outputs.append((args.openapi_out, render_openapi(table, args.version, args.openapi_source)))
        if args.proto is not None:
            messages = protobuf_table(read_protos(args.proto))
            outputs.append((args.protobuf_out, render_protobuf(messages, args.version, args.proto_source)))
    except (OSError, ValueError, InputError) as exc:
        print(f"gen_api_tables: {exc}", file=sys.stderr)
        return 2
    stale = False
    for path, text in outputs:
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if args.check:
            if current != text:
                print(f"{path} is not what the inputs generate", file=sys.stderr)
                stale = True
        elif current != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
