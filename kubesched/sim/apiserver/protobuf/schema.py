# Generated from Kubernetes 1.37 (generated.proto of k8s.io/api, apimachinery: master of 2026-07-24, past v0.37.0-beta.0) by
#   python tools/gen_api_tables.py --version 1.37 --swagger <swagger.json> --proto <dir>
# Do not edit: change the selection in tools/gen_api_tables.py and run it again.

"""The protobuf messages kubectl's typed clients send, by field number: what
:mod:`kubesched.sim.apiserver.protobuf.decode` needs to turn them into JSON (the numbers are
Kubernetes' own, from the API's ``generated.proto`` files).

A message maps each field number to a :class:`Field`: its JSON name, its type (a scalar type, a
special type, or the name of another message) and whether it repeats or is a map. Special types:
``time`` (meta/v1 Time: seconds since the epoch), ``quantity`` (its one string field) and
``intorstring``. A map's values have the field's type. A field whose message is not in the
table is not in it either.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The Kubernetes release these messages were generated from.
KUBERNETES_VERSION = "1.37"


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
    "Preconditions": {
        1: _f("uid", "string"),
        2: _f("resourceVersion", "string"),
    },
    "Namespace": {
        1: _f("metadata", "ObjectMeta"),
        2: _f("spec", "NamespaceSpec"),
        3: _f("status", "NamespaceStatus"),
    },
    "NamespaceSpec": {
        1: _f("finalizers", "string", "repeated"),
    },
    "NamespaceStatus": {
        1: _f("phase", "string"),
        2: _f("conditions", "NamespaceCondition", "repeated"),
    },
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
    "PodTemplateSpec": {
        1: _f("metadata", "ObjectMeta"),
        2: _f("spec", "PodSpec"),
    },
    "PodSpec": {
        2: _f("containers", "Container", "repeated"),
        3: _f("restartPolicy", "string"),
        4: _f("terminationGracePeriodSeconds", "int64"),
        5: _f("activeDeadlineSeconds", "int64"),
        6: _f("dnsPolicy", "string"),
        7: _f("nodeSelector", "string", "map"),
        8: _f("serviceAccountName", "string"),
        9: _f("serviceAccount", "string"),
        10: _f("nodeName", "string"),
        11: _f("hostNetwork", "bool"),
        12: _f("hostPID", "bool"),
        13: _f("hostIPC", "bool"),
        15: _f("imagePullSecrets", "LocalObjectReference", "repeated"),
        16: _f("hostname", "string"),
        17: _f("subdomain", "string"),
        19: _f("schedulerName", "string"),
        20: _f("initContainers", "Container", "repeated"),
        21: _f("automountServiceAccountToken", "bool"),
        22: _f("tolerations", "Toleration", "repeated"),
        24: _f("priorityClassName", "string"),
        25: _f("priority", "int32"),
        27: _f("shareProcessNamespace", "bool"),
        29: _f("runtimeClassName", "string"),
        30: _f("enableServiceLinks", "bool"),
        31: _f("preemptionPolicy", "string"),
        32: _f("overhead", "quantity", "map"),
        35: _f("setHostnameAsFQDN", "bool"),
        37: _f("hostUsers", "bool"),
        40: _f("resources", "ResourceRequirements"),
        41: _f("hostnameOverride", "string"),
    },
    "Container": {
        1: _f("name", "string"),
        2: _f("image", "string"),
        3: _f("command", "string", "repeated"),
        4: _f("args", "string", "repeated"),
        5: _f("workingDir", "string"),
        6: _f("ports", "ContainerPort", "repeated"),
        7: _f("env", "EnvVar", "repeated"),
        8: _f("resources", "ResourceRequirements"),
        9: _f("volumeMounts", "VolumeMount", "repeated"),
        13: _f("terminationMessagePath", "string"),
        14: _f("imagePullPolicy", "string"),
        16: _f("stdin", "bool"),
        17: _f("stdinOnce", "bool"),
        18: _f("tty", "bool"),
        20: _f("terminationMessagePolicy", "string"),
        24: _f("restartPolicy", "string"),
    },
    "ContainerPort": {
        1: _f("name", "string"),
        2: _f("hostPort", "int32"),
        3: _f("containerPort", "int32"),
        4: _f("protocol", "string"),
        5: _f("hostIP", "string"),
    },
    "EnvVar": {
        1: _f("name", "string"),
        2: _f("value", "string"),
    },
    "ResourceRequirements": {
        1: _f("limits", "quantity", "map"),
        2: _f("requests", "quantity", "map"),
    },
    "LocalObjectReference": {
        1: _f("name", "string"),
    },
    "Toleration": {
        1: _f("key", "string"),
        2: _f("operator", "string"),
        3: _f("value", "string"),
        4: _f("effect", "string"),
        5: _f("tolerationSeconds", "int64"),
    },
    "VolumeMount": {
        1: _f("name", "string"),
        2: _f("readOnly", "bool"),
        3: _f("mountPath", "string"),
        4: _f("subPath", "string"),
        5: _f("mountPropagation", "string"),
        6: _f("subPathExpr", "string"),
        7: _f("recursiveReadOnly", "string"),
        8: _f("bindMountOptions", "string", "repeated"),
    },
    "Deployment": {
        1: _f("metadata", "ObjectMeta"),
        2: _f("spec", "DeploymentSpec"),
        3: _f("status", "DeploymentStatus"),
    },
    "DeploymentSpec": {
        1: _f("replicas", "int32"),
        2: _f("selector", "LabelSelector"),
        3: _f("template", "PodTemplateSpec"),
        4: _f("strategy", "DeploymentStrategy"),
        5: _f("minReadySeconds", "int32"),
        6: _f("revisionHistoryLimit", "int32"),
        7: _f("paused", "bool"),
        9: _f("progressDeadlineSeconds", "int32"),
    },
    "DeploymentStrategy": {
        1: _f("type", "string"),
        2: _f("rollingUpdate", "RollingUpdateDeployment"),
    },
    "RollingUpdateDeployment": {
        1: _f("maxUnavailable", "intorstring"),
        2: _f("maxSurge", "intorstring"),
    },
    "DeploymentStatus": {
        1: _f("observedGeneration", "int64"),
        2: _f("replicas", "int32"),
        3: _f("updatedReplicas", "int32"),
        4: _f("availableReplicas", "int32"),
        5: _f("unavailableReplicas", "int32"),
        7: _f("readyReplicas", "int32"),
        8: _f("collisionCount", "int32"),
        9: _f("terminatingReplicas", "int32"),
    },
    "Job": {
        1: _f("metadata", "ObjectMeta"),
        2: _f("spec", "JobSpec"),
        3: _f("status", "JobStatus"),
    },
    "JobSpec": {
        1: _f("parallelism", "int32"),
        2: _f("completions", "int32"),
        3: _f("activeDeadlineSeconds", "int64"),
        4: _f("selector", "LabelSelector"),
        5: _f("manualSelector", "bool"),
        6: _f("template", "PodTemplateSpec"),
        7: _f("backoffLimit", "int32"),
        8: _f("ttlSecondsAfterFinished", "int32"),
        9: _f("completionMode", "string"),
        10: _f("suspend", "bool"),
        12: _f("backoffLimitPerIndex", "int32"),
        13: _f("maxFailedIndexes", "int32"),
        14: _f("podReplacementPolicy", "string"),
        15: _f("managedBy", "string"),
    },
    "JobStatus": {
        2: _f("startTime", "time"),
        3: _f("completionTime", "time"),
        4: _f("active", "int32"),
        5: _f("succeeded", "int32"),
        6: _f("failed", "int32"),
        7: _f("completedIndexes", "string"),
        9: _f("ready", "int32"),
        10: _f("failedIndexes", "string"),
        11: _f("terminating", "int32"),
    },
    "PriorityClass": {
        1: _f("metadata", "ObjectMeta"),
        2: _f("value", "int32"),
        3: _f("globalDefault", "bool"),
        4: _f("description", "string"),
        5: _f("preemptionPolicy", "string"),
    },
    "Eviction": {
        1: _f("metadata", "ObjectMeta"),
        2: _f("deleteOptions", "DeleteOptions"),
    },
}

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
