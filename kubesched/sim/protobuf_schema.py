"""The protobuf messages kubectl's typed clients send, by field number: what
:mod:`kubesched.sim.protobuf` needs to turn them into JSON (the numbers are Kubernetes' own, from
the API's ``generated.proto`` files).

A message maps each field number to a :class:`Field`: its JSON name, its type (a scalar type, a
special type, or the name of another message) and whether it repeats or is a map. Special types:
``time`` (meta/v1 Time: seconds since the epoch), ``quantity`` (its one string field) and
``intorstring``. A map's values have the field's type.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    json: str
    type: str
    kind: str = "single"  # or "repeated", "map"


def _f(json: str, type: str, kind: str = "single") -> Field:
    return Field(json, type, kind)


MESSAGES: dict[str, dict[int, Field]] = {
    "ObjectMeta": {
        1: _f("name", "string"),
        2: _f("generateName", "string"),
        3: _f("namespace", "string"),
        4: _f("selfLink", "string"),
        5: _f("uid", "string"),
        6: _f("resourceVersion", "string"),
        7: _f("generation", "int64"),
        8: _f("creationTimestamp", "time"),
        9: _f("deletionTimestamp", "time"),
        10: _f("deletionGracePeriodSeconds", "int64"),
        11: _f("labels", "string", "map"),
        12: _f("annotations", "string", "map"),
        13: _f("ownerReferences", "OwnerReference", "repeated"),
        14: _f("finalizers", "string", "repeated"),
    },
    "OwnerReference": {
        1: _f("kind", "string"),
        3: _f("name", "string"),
        4: _f("uid", "string"),
        5: _f("apiVersion", "string"),
        6: _f("controller", "bool"),
        7: _f("blockOwnerDeletion", "bool"),
    },
    "LabelSelector": {
        1: _f("matchLabels", "string", "map"),
        2: _f("matchExpressions", "LabelSelectorRequirement", "repeated"),
    },
    "LabelSelectorRequirement": {
        1: _f("key", "string"),
        2: _f("operator", "string"),
        3: _f("values", "string", "repeated"),
    },
    "DeleteOptions": {
        1: _f("gracePeriodSeconds", "int64"),
        2: _f("preconditions", "Preconditions"),
        3: _f("orphanDependents", "bool"),
        4: _f("propagationPolicy", "string"),
        5: _f("dryRun", "string", "repeated"),
        6: _f("ignoreStoreReadErrorWithClusterBreakingPotential", "bool"),
    },
    "Preconditions": {1: _f("uid", "string"), 2: _f("resourceVersion", "string")},
    # core/v1
    "Namespace": {1: _f("metadata", "ObjectMeta"), 2: _f("spec", "NamespaceSpec"), 3: _f("status", "NamespaceStatus")},
    "NamespaceSpec": {1: _f("finalizers", "string", "repeated")},
    "NamespaceStatus": {1: _f("phase", "string"), 2: _f("conditions", "NamespaceCondition", "repeated")},
    "NamespaceCondition": {
        1: _f("type", "string"),
        2: _f("status", "string"),
        4: _f("lastTransitionTime", "time"),
        5: _f("reason", "string"),
        6: _f("message", "string"),
    },
    "ConfigMap": {
        1: _f("metadata", "ObjectMeta"),
        2: _f("data", "string", "map"),
        3: _f("binaryData", "bytes", "map"),
        4: _f("immutable", "bool"),
    },
    "Secret": {
        1: _f("metadata", "ObjectMeta"),
        2: _f("data", "bytes", "map"),
        3: _f("type", "string"),
        4: _f("stringData", "string", "map"),
        5: _f("immutable", "bool"),
    },
    # scheduling.k8s.io/v1
    "PriorityClass": {
        1: _f("metadata", "ObjectMeta"),
        2: _f("value", "int32"),
        3: _f("globalDefault", "bool"),
        4: _f("description", "string"),
        5: _f("preemptionPolicy", "string"),
    },
    # policy/v1
    "Eviction": {1: _f("metadata", "ObjectMeta"), 2: _f("deleteOptions", "DeleteOptions")},
}

#: The kinds a protobuf body may carry, and their message.
KIND_MESSAGES: dict[str, str] = {
    "Namespace": "Namespace",
    "ConfigMap": "ConfigMap",
    "Secret": "Secret",
    "PriorityClass": "PriorityClass",
    "Eviction": "Eviction",
    "DeleteOptions": "DeleteOptions",
}
