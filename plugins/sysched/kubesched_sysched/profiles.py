"""A pod's system calls, from the Security Profiles Operator's SeccompProfile objects.

What upstream's ``getSyscalls`` reads, in this order, the results united:

1. the pod's ``spec.securityContext.seccompProfile`` when its ``type`` is ``Localhost`` and it
   has a ``localhostProfile``;
2. each app container's ``securityContext.seccompProfile``, the same way (init and ephemeral
   containers are not read);
3. the first annotation whose key contains ``seccomp.security.alpha.kubernetes.io`` (the SPO
   binding webhook writes one) whose profile can be read (one that cannot is logged and the next
   such annotation tried). Go visits a map in no fixed order; here the keys are visited sorted.

A ``localhostProfile`` (or annotation value) names its SeccompProfile by its last two path
elements, ``.../<namespace>/<name>.json`` (the extension dropped): the path SPO installs a
profile at, ``operator/<namespace>/<name>.json``. A path of fewer than two elements, or an empty
namespace or name, names none.

``Unconfined`` and ``RuntimeDefault`` profiles are not ``Localhost``: they give nothing, as
upstream. When nothing at all was found, the pod is taken to make every system call of the
default profile (the args' ``defaultProfileNamespace``/``defaultProfileName``); if that cannot be
read either, the set is empty (and Score gives the pod the largest score on every node).

A profile's system calls are the ``names`` of its ``spec.syscalls`` entries whose ``action`` is
``SCMP_ACT_ALLOW`` or ``SCMP_ACT_LOG``; other actions (errno, kill, trace, ...) deny or divert
the call and are not counted. A profile that cannot be read (not found, malformed) is logged with
upstream's words and gives nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from kubesched import GroupVersionResource, KubeschedError

log = logging.getLogger(__name__)

#: The Security Profiles Operator's API group.
SPO_GROUP = "security-profiles-operator.x-k8s.io"
#: The SeccompProfile resource, at the version upstream's plugin reads.
SECCOMP_PROFILES = GroupVersionResource(SPO_GROUP, "v1beta1", "seccompprofiles")
#: What an annotation key naming a pod's seccomp profile contains.
SPO_ANNOTATION = "seccomp.security.alpha.kubernetes.io"
LOCALHOST = "Localhost"
#: The actions under which a profile's system calls count as made.
COUNTED_ACTIONS = ("SCMP_ACT_ALLOW", "SCMP_ACT_LOG")

READ_POD_CONTEXT = "Failed to read syscall CR by parsing pod security context"
READ_CONTAINER_CONTEXT = "Failed to read syscall CR by parsing container security context"
READ_ANNOTATION = "Failed to read syscall CR by parsing pod annotation"
READ_DEFAULT = "Failed to read the CR of all syscalls"

#: Looks a SeccompProfile up by ``(namespace, name)``; ``None``: there is none.
ProfileLookup = Callable[[str, str], Mapping[str, Any] | None]


class ProfileReadError(KubeschedError):
    """A SeccompProfile that could not be read: not found, or not of the resource's shape."""


def parse_name_ns(profile_path: str) -> tuple[str, str]:
    """``(namespace, name)`` of the SeccompProfile a localhost profile path names: its last two
    elements, the extension of the last dropped; ``("", "")`` for a path of fewer than two."""
    if not profile_path:
        return "", ""
    parts = profile_path.split("/")
    if len(parts) < 2:
        return "", ""
    last = parts[-1]
    dot = last.rfind(".")
    name = last[:dot] if dot >= 0 else last
    return parts[-2], name


def syscalls_of(profile: Mapping[str, Any]) -> set[str]:
    """The system calls a SeccompProfile object lets through (allowed or logged)."""
    meta = profile.get("metadata") or {}
    where = f'{SECCOMP_PROFILES.qualified_name} "{meta.get("name", "")}"'
    spec = profile.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise ProfileReadError(f"{where}: spec: expected an object")
    entries = spec.get("syscalls")
    if entries is None:
        entries = []
    if not isinstance(entries, list):
        raise ProfileReadError(f"{where}: spec.syscalls: expected a list")
    found: set[str] = set()
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            raise ProfileReadError(f"{where}: spec.syscalls[{i}]: expected an object")
        if entry.get("action") not in COUNTED_ACTIONS:
            continue
        names = entry.get("names") or []
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ProfileReadError(f"{where}: spec.syscalls[{i}].names: expected a list of strings")
        found.update(names)
    return found


def read_profile(lookup: ProfileLookup, name: str, namespace: str) -> set[str]:
    """The system calls of SeccompProfile ``namespace/name``; nothing for an empty name or
    namespace; :class:`ProfileReadError` when it is not there or cannot be read."""
    if not name or not namespace:
        return set()
    profile = lookup(namespace, name)
    if profile is None:
        raise ProfileReadError(f'{SECCOMP_PROFILES.qualified_name} "{name}" not found')
    return syscalls_of(profile)


def _localhost_path(context: Any) -> str | None:
    """The ``localhostProfile`` of a security context whose seccomp profile is ``Localhost``."""
    if not isinstance(context, Mapping):
        return None
    profile = context.get("seccompProfile")
    if not isinstance(profile, Mapping) or profile.get("type") != LOCALHOST:
        return None
    path = profile.get("localhostProfile")
    return path if isinstance(path, str) else None


def _from_path(lookup: ProfileLookup, path: str | None, failure: str) -> set[str]:
    if path is None:
        return set()
    ns, name = parse_name_ns(path)
    if not ns or not name:
        return set()
    try:
        return read_profile(lookup, name, ns)
    except ProfileReadError as exc:
        log.error("%s: %s", failure, exc)
        return set()


def pod_syscalls(pod: Mapping[str, Any], lookup: ProfileLookup, default_namespace: str, default_name: str) -> set[str]:
    """The system calls ``pod`` is taken to make (see the module doc)."""
    spec = pod.get("spec") or {}
    found = _from_path(lookup, _localhost_path(spec.get("securityContext")), READ_POD_CONTEXT)
    for container in spec.get("containers") or ():
        if isinstance(container, Mapping):
            found |= _from_path(lookup, _localhost_path(container.get("securityContext")), READ_CONTAINER_CONTEXT)
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    if isinstance(annotations, Mapping):
        for key in sorted(str(k) for k in annotations):
            if SPO_ANNOTATION not in key:
                continue
            value = annotations[key]
            ns, name = parse_name_ns(value if isinstance(value, str) else "")
            if ns and name:
                try:
                    found |= read_profile(lookup, name, ns)
                except ProfileReadError as exc:
                    log.error("%s: %s", READ_ANNOTATION, exc)
                    continue
            break
    if not found:
        try:
            found = read_profile(lookup, default_name, default_namespace)
        except ProfileReadError as exc:
            log.error("%s: %s", READ_DEFAULT, exc)
    return found
