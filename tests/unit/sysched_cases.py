"""What the SySched tests (plugins/sysched) build: the SeccompProfile objects of upstream's
``sysched_test.go`` (``z-seccomp``, ``x-seccomp``, ``full-seccomp``: one rule allowing a list
of system calls) and pods naming them as upstream's tests do."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubesched.testing import PodBuilder, make_pod

#: The package's directory: tests put it on the path (the suite does not install it).
PACKAGE = Path(__file__).resolve().parents[2] / "plugins" / "sysched"

Obj = dict[str, Any]

#: The system calls the three profiles share.
COMMON = (
    "clone socket getuid setrlimit nanosleep sendto setuid getpgrp mkdir getegid getsockname clock_gettime prctl "
    "epoll_pwait futex link ftruncate access gettimeofday select getsockopt mmap write connect capget chmod "
    "arch_prctl wait4 brk stat getrlimit fsync chroot recvfrom newfstatat setresgid poll lstat listen getpgid "
    "sigreturn setreuid setgid signaldeliver recvmsg bind close setsockopt openat container getpeername lseek "
    "procexit uname statfs utime pipe getcwd chdir execve rt_sigaction set_tid_address dup ioctl munmap rename "
    "kill getpid alarm umask setresuid exit_group fstat geteuid mprotect read getppid fchown capset "
    "rt_sigprocmask accept setgroups open set_robust_list fchownat unlink getdents fcntl readlink getgid"
).split()
#: ``spoResponse``
Z_SECCOMP = [*COMMON, "fchmod"]
#: ``spoResponse1``
X_SECCOMP = [*COMMON, "dup3"]
#: ``spoResponseFull``
FULL_SECCOMP = [
    *COMMON,
    *"dup3 pivot_root _sysctl adjtimex sync acct settimeofday statx pkey_free pkey_alloc pkey_mprotect".split(),
]

ANNOTATION = "seccomp.security.alpha.kubernetes.io"


def seccomp_profile(name: str, names: list[str], action: str = "SCMP_ACT_ALLOW", namespace: str = "default") -> Obj:
    return {
        "apiVersion": "security-profiles-operator.x-k8s.io/v1beta1",
        "kind": "SeccompProfile",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "architectures": ["SCMP_ARCH_X86_64"],
            "defaultAction": "SCMP_ACT_LOG",
            "syscalls": [{"action": action, "names": list(names)}],
        },
    }


#: The objects upstream's fake client is built with.
PROFILES = [
    seccomp_profile("z-seccomp", Z_SECCOMP),
    seccomp_profile("x-seccomp", X_SECCOMP),
    seccomp_profile("full-seccomp", FULL_SECCOMP),
]


def annotated(name: str, profile: str) -> PodBuilder:
    """A pod whose SPO annotation names ``localhost/operator/default/<profile>.json``."""
    return make_pod(name).annotation(ANNOTATION, f"localhost/operator/default/{profile}.json")


def localhost(profile: str) -> Obj:
    return {"seccompProfile": {"type": "Localhost", "localhostProfile": f"localhost/operator/default/{profile}.json"}}
