"""System-call-aware placement for kubesched: the scheduler-plugins SySched plugin."""

from pathlib import Path

from .args import DEFAULT_PROFILE_NAME, DEFAULT_PROFILE_NAMESPACE, SySchedArgs
from .hosts import Hosts, remove
from .plugin import MAX_INT64, NAME, SySched, calc_score, default_normalize_score
from .profiles import (
    COUNTED_ACTIONS,
    SECCOMP_PROFILES,
    SPO_ANNOTATION,
    ProfileReadError,
    parse_name_ns,
    pod_syscalls,
    read_profile,
    syscalls_of,
)

#: The SeccompProfile CustomResourceDefinition shipped with the package.
CRD = Path(__file__).resolve().parent / "crds" / "security-profiles-operator.x-k8s.io_seccompprofiles.yaml"

__all__ = [
    "COUNTED_ACTIONS",
    "CRD",
    "DEFAULT_PROFILE_NAME",
    "DEFAULT_PROFILE_NAMESPACE",
    "MAX_INT64",
    "NAME",
    "SECCOMP_PROFILES",
    "SPO_ANNOTATION",
    "Hosts",
    "ProfileReadError",
    "SySched",
    "SySchedArgs",
    "calc_score",
    "default_normalize_score",
    "parse_name_ns",
    "pod_syscalls",
    "read_profile",
    "remove",
    "syscalls_of",
]
