"""CustomResourceDefinitions and custom objects in the embedded API server.

A definition (``apiextensions.k8s.io/v1``) is validated and defaulted as kube-apiserver's
apiextensions part does (the estimated cost of its CEL rules kept within upstream's limits too),
and given the status it reaches at once there: ``acceptedNames``, the ``NamesAccepted`` and
``Established`` conditions, ``storedVersions``. Its resource is served
from then on (the store's :class:`~kubesched.cluster.custom_resources.CustomResourceRegistry`
follows it). A custom object is pruned, defaulted and validated against the structural schema
of its version (:mod:`kubesched.sim.apiserver.validation.structural`), kept in the storage
version, and served in any served version (the ``None`` conversion: only ``apiVersion`` changes).
With the ``status`` subresource, the main resource ignores status changes, the status one
everything else, and ``metadata.generation`` counts the changes outside status and metadata.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from kubesched.cluster.custom_resources import (
    CRD_GROUP,
    CRD_KIND,
    CustomResource,
    CustomResourceRegistry,
    parse_definition,
)
from kubesched.cluster.store import now_rfc3339
from kubesched.objects import Obj
from kubesched.sim.apiserver.discovery import ServedResource, custom_resource_list
from kubesched.sim.apiserver.errors import invalid
from kubesched.sim.apiserver.validation import structural
from kubesched.sim.apiserver.validation.celcost.limits import schema_cost_causes
from kubesched.sim.apiserver.validation.crd_schema import validate_schema
from kubesched.sim.apiserver.validation.decode import check_decodable
from kubesched.sim.apiserver.validation.meta import (
    Cause,
    invalid_cause,
    not_supported_cause,
    required_cause,
    validate_object_meta,
    validate_object_meta_update,
)


class CustomResources:
    """The resources a registry's definitions serve, as :class:`ServedResource` rows (rebuilt when
    the registry changes)."""

    def __init__(self, registry: CustomResourceRegistry) -> None:
        self.registry = registry
        self._generation = -1
        self._resources: tuple[ServedResource, ...] = ()

    def resources(self) -> tuple[ServedResource, ...]:
        if self._generation != self.registry.generation:
            self._resources = custom_resource_list(list(self.registry))
            self._generation = self.registry.generation
        return self._resources


def is_definition(res: ServedResource) -> bool:
    return res.kind == CRD_KIND and res.group == CRD_GROUP


# --- definitions -----------------------------------------------------------------------------------

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_KIND = re.compile(r"^[A-Za-z][A-Za-z0-9]*$")
_DNS_1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_DNS_1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
    "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def _default_definition(crd: Obj) -> None:
    """The defaults the API server gives a definition (SetDefaults)."""
    spec = crd.setdefault("spec", {})
    if not isinstance(spec, dict):
        return
    names = spec.get("names")
    if isinstance(names, dict) and isinstance(names.get("kind"), str):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", f"{names['kind']}List")
    conversion = spec.setdefault("conversion", {})
    if isinstance(conversion, dict):
        conversion.setdefault("strategy", "None")


#: The names a definition declares, in pairs checked alike: the one required, the pattern both
#: must match, and what upstream says when one does not.
_NAME_RULES = (
    (
        ("plural", "singular"),
        _DNS_LABEL,
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
        "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used "
        "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
    ),
    (("kind", "listKind"), _KIND, "may have mixed case, but should otherwise match: [a-z]([-a-z0-9]*[a-z0-9])?"),
)


def _validate_names(names: Any, path: str) -> list[Cause]:
    causes: list[Cause] = []
    if not isinstance(names, dict):
        return [required_cause(path)]
    for (required, optional), pattern, message in _NAME_RULES:
        for key in (required, optional):
            value = names.get(key)
            if key == required and not value:
                causes.append(required_cause(f"{path}.{key}"))
            elif isinstance(value, str) and value and not pattern.match(value):
                causes.append(invalid_cause(f"{path}.{key}", value, message))
            elif key == "listKind" and value and value == names.get("kind"):
                causes.append(invalid_cause(f"{path}.listKind", value, "kind and listKind may not be the same"))
    return causes


def validate_definition(crd: Obj, old: Obj | None) -> list[Cause]:
    """The field errors of a definition (ValidateCustomResourceDefinition's main checks)."""
    meta = crd.get("metadata") or {}
    causes = validate_object_meta(meta) if old is None else validate_object_meta_update(meta)
    spec = crd.get("spec")
    if not isinstance(spec, dict):
        return [*causes, required_cause("spec")]
    group = spec.get("group")
    names: Obj = spec["names"] if isinstance(spec.get("names"), dict) else {}
    if not group:
        causes.append(required_cause("spec.group"))
    elif not isinstance(group, str) or not _DNS_SUBDOMAIN.match(group):
        causes.append(invalid_cause("spec.group", group, _SUBDOMAIN_MESSAGE))
    elif "." not in group:
        causes.append(invalid_cause("spec.group", group, "should be a domain with at least one dot"))
    if isinstance(group, str) and (
        group in ("k8s.io", "kubernetes.io") or group.endswith((".k8s.io", ".kubernetes.io"))
    ):
        approval = (meta.get("annotations") or {}).get("api-approved.kubernetes.io")
        if not approval:
            causes.append(
                required_cause(
                    "metadata.annotations[api-approved.kubernetes.io]",
                    'protected groups must have approval annotation "api-approved.kubernetes.io", see '
                    "https://github.com/kubernetes/enhancements/pull/1111",
                )
            )
    plural = names.get("plural")
    if group and plural and meta.get("name") != f"{plural}.{group}":
        causes.append(
            invalid_cause("metadata.name", meta.get("name") or "", 'must be spec.names.plural+"."+spec.group')
        )
    causes += _validate_names(spec.get("names"), "spec.names")
    scope = spec.get("scope")
    if not scope:
        causes.append(required_cause("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        causes.append(not_supported_cause("spec.scope", scope, ("Cluster", "Namespaced")))
    versions = spec.get("versions")
    if not isinstance(versions, list) or not versions:
        causes.append(invalid_cause("spec.versions", "null", "must have exactly one version marked as storage version"))
        return causes
    storage = [v for v in versions if isinstance(v, dict) and v.get("storage") is True]
    if len(storage) != 1:
        causes.append(invalid_cause("spec.versions", "", "must have exactly one version marked as storage version"))
    seen: set[str] = set()
    duplicate = False
    for i, v in enumerate(versions):
        where = f"spec.versions[{i}]"
        if not isinstance(v, dict):
            causes.append(required_cause(where))
            continue
        name = v.get("name")
        if not name:
            causes.append(required_cause(f"{where}.name"))
        elif not isinstance(name, str) or not _DNS_1035.match(name):
            causes.append(invalid_cause(f"{where}.name", name, _DNS_1035_MESSAGE))
        elif name in seen:
            duplicate = True
        seen.add(str(name))
        schema = (v.get("schema") or {}).get("openAPIV3Schema") if isinstance(v.get("schema"), dict) else None
        if not isinstance(schema, dict):
            causes.append(required_cause(f"{where}.schema.openAPIV3Schema"))
        else:
            found = validate_schema(schema, f"{where}.schema.openAPIV3Schema")
            # As upstream, the rules' cost is estimated only over a schema otherwise valid, and a
            # version's schema an update leaves as it was is held to the total limit alone.
            unchanged = old is not None and _stored_schema(old, name) == schema
            causes += found or schema_cost_causes(schema, f"{where}.schema.openAPIV3Schema", not unchanged)
        for j, column in enumerate(v.get("additionalPrinterColumns") or ()):
            col_where = f"{where}.additionalPrinterColumns[{j}]"
            if not isinstance(column, dict):
                continue
            for key in ("name", "type", "jsonPath"):
                if not column.get(key):
                    causes.append(required_cause(f"{col_where}.{key}"))
            if column.get("type") and column["type"] not in ("integer", "number", "string", "boolean", "date"):
                causes.append(
                    not_supported_cause(
                        f"{col_where}.type", column["type"], ("integer", "number", "string", "boolean", "date")
                    )
                )
    if duplicate:
        causes.append(invalid_cause("spec.versions", "", "must contain unique version names"))
    if old is not None:
        old_spec = old.get("spec") or {}
        old_names = old_spec.get("names") or {}
        if old_spec.get("group") != group:
            causes.append(invalid_cause("spec.group", group, "field is immutable"))
        if old_names.get("plural") != names.get("plural"):
            causes.append(invalid_cause("spec.names.plural", names.get("plural"), "field is immutable"))
        # Once established (at once, here), the scope and kind stay.
        if old_spec.get("scope") != scope:
            causes.append(invalid_cause("spec.scope", scope, "field is immutable"))
        if old_names.get("kind") != names.get("kind"):
            causes.append(invalid_cause("spec.names.kind", names.get("kind"), "field is immutable"))
        declared = {str(v.get("name")) for v in versions if isinstance(v, dict)}
        for i, name in enumerate((old.get("status") or {}).get("storedVersions") or ()):
            if name not in declared:
                causes.append(
                    invalid_cause(
                        f"status.storedVersions[{i}]",
                        name,
                        f"missing from spec.versions; {name} was previously a storage version, and must remain in "
                        f"spec.versions until a storage migration ensures no data remains persisted in {name} and "
                        f"removes {name} from status.storedVersions",
                    )
                )
    return causes


def _stored_schema(old: Obj, name: Any) -> Any:
    """The ``openAPIV3Schema`` the stored definition ``old`` gives version ``name``."""
    for v in (old.get("spec") or {}).get("versions") or ():
        if isinstance(v, dict) and v.get("name") == name and isinstance(v.get("schema"), dict):
            return v["schema"].get("openAPIV3Schema")
    return None


def _condition(kind: str, reason: str, message: str, old: Obj | None) -> Obj:
    for c in ((old or {}).get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == kind and c.get("status") == "True":
            return {**c, "reason": reason, "message": message}
    return {"type": kind, "status": "True", "lastTransitionTime": now_rfc3339(), "reason": reason, "message": message}


def definition_status(crd: Obj, old: Obj | None) -> Obj:
    """The status the API server's controllers give an accepted definition at once."""
    spec = crd.get("spec") or {}
    names = dict(spec.get("names") or {})
    stored = list(((old or {}).get("status") or {}).get("storedVersions") or ())
    for v in spec.get("versions") or ():
        if isinstance(v, dict) and v.get("storage") is True and v.get("name") not in stored:
            stored.append(v["name"])
    return {
        "acceptedNames": names,
        "conditions": [
            _condition("NamesAccepted", "NoConflicts", "no conflicts found", old),
            _condition("Established", "InitialNamesAccepted", "the initial names have been accepted", old),
        ],
        "storedVersions": stored,
    }


def admit_definition(crd: Obj, old: Obj | None, registry: CustomResourceRegistry) -> Obj:
    """A definition as created or updated: defaulted, validated (422 naming the field), with
    its status. A definition whose plural or kind another one of its group took is refused, and
    one whose schema does not decode (400, as over HTTP: scenarios and benchmarks come here
    directly)."""
    check_decodable(CRD_KIND, CRD_GROUP, "v1", crd)
    _default_definition(crd)
    name = (crd.get("metadata") or {}).get("name") or ""
    causes = validate_definition(crd, old)
    if causes:
        raise invalid(CRD_KIND, CRD_GROUP, name, causes)
    resource = parse_definition(crd)
    if resource is not None:
        for other in registry:
            if other.name != resource.name and other.group == resource.group and other.kind == resource.kind:
                raise invalid(
                    CRD_KIND,
                    CRD_GROUP,
                    name,
                    [invalid_cause("spec.names.kind", resource.kind, f'"{resource.kind}" is already in use')],
                )
    crd["status"] = definition_status(crd, old)
    return crd


def prepare_definition_update(old: Obj, new: Obj, sub: str) -> Obj:
    """The main resource ignores status changes, the status subresource everything else."""
    if sub == "status":
        result = copy.deepcopy(old)
        result["status"] = new.get("status") or {}
        result["metadata"]["resourceVersion"] = (new.get("metadata") or {}).get("resourceVersion")
        return result
    new["status"] = copy.deepcopy(old.get("status") or {})
    if new.get("spec") != old.get("spec"):
        new["metadata"]["generation"] = int(old["metadata"].get("generation") or 1) + 1
    else:
        new["metadata"]["generation"] = old["metadata"].get("generation") or 1
    return new


# --- custom objects --------------------------------------------------------------------------------


def _schema(res: ServedResource) -> Obj | None:
    version = res.custom_version
    return version.schema if version is not None else None


def storage_api_version(custom: CustomResource) -> str:
    return f"{custom.group}/{custom.storage_version}"


def served_view(res: ServedResource, obj: Obj) -> Obj:
    """A stored custom object as the version of ``res`` serves it: its ``apiVersion``, and the
    defaults of that version's schema applied (as the API server defaults what it reads)."""
    schema = _schema(res)
    if schema is None:
        return {**obj, "kind": res.kind, "apiVersion": res.group_version}
    shown = copy.deepcopy(obj)
    structural.prune_nulls(shown, schema)
    structural.apply_defaults(shown, schema)
    shown["kind"], shown["apiVersion"] = res.kind, res.group_version
    return shown


def unknown_fields(res: ServedResource, obj: Obj) -> list[str]:
    """The fields of ``obj`` its version's schema prunes."""
    return structural.prune(copy.deepcopy(obj), _schema(res))


def _invalid(res: ServedResource, name: str, causes: list[Cause]) -> Exception:
    return invalid(res.kind, res.group, name, causes)


def admit_custom_new(res: ServedResource, obj: Obj) -> Obj:
    """A custom object as created: pruned, defaulted, validated, in the storage version; its
    status dropped when the status subresource is declared (create cannot set it)."""
    custom, version = res.custom, res.custom_version
    assert custom is not None and version is not None
    meta = obj["metadata"]
    name = meta.get("name") or meta.get("generateName") or ""
    if version.status:
        obj.pop("status", None)
    structural.normalize(obj, version.schema)
    causes = validate_object_meta(meta) + structural.check(obj, None, version.schema)
    if causes:
        raise _invalid(res, name, causes)
    meta["generation"] = 1
    obj["apiVersion"] = storage_api_version(custom)
    return obj


def admit_custom_update(res: ServedResource, old: Obj, new: Obj, sub: str) -> Obj:
    """A custom object as updated through the main resource or ``status``."""
    custom, version = res.custom, res.custom_version
    assert custom is not None and version is not None
    if sub == "status":
        result = copy.deepcopy(old)
        if "status" in new:
            result["status"] = new["status"]
        else:
            result.pop("status", None)
        result["metadata"]["resourceVersion"] = (new.get("metadata") or {}).get("resourceVersion")
        new = result
    elif version.status:
        if "status" in old:
            new["status"] = copy.deepcopy(old["status"])
        else:
            new.pop("status", None)
    structural.normalize(new, version.schema)
    old_seen = copy.deepcopy(old)
    structural.normalize(old_seen, version.schema)
    causes = validate_object_meta_update(new.get("metadata") or {})
    only = ("status",) if sub == "status" else ()
    skip = (lambda top: top not in only) if only else None
    causes += structural.check(new, old_seen, version.schema, skip)
    if causes:
        raise _invalid(res, old["metadata"]["name"], causes)
    if sub != "status":
        # Every change but metadata's counts; status's too when it has no subresource of its own.
        ignored = ("metadata", "apiVersion", "kind", *(("status",) if version.status else ()))
        changed = {k: v for k, v in new.items() if k not in ignored} != {
            k: v for k, v in old_seen.items() if k not in ignored
        }
        generation = int(old["metadata"].get("generation") or 1)
        new["metadata"]["generation"] = generation + 1 if changed else generation
    new["apiVersion"] = storage_api_version(custom)
    return new
