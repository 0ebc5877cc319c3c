"""The Kubernetes release the embedded API server says it is, in every place it says so:
``/version``, the OpenAPI documents' ``info``.

The tables of types it serves and validates against are generated apart (openapi/types.py,
protobuf/schema.py: their KUBERNETES_VERSION), from the same release.
"""

from __future__ import annotations

MAJOR = "1"
MINOR = "37"
#: ``gitVersion``: the release, marked as this server's build of it.
GIT_VERSION = f"v{MAJOR}.{MINOR}.0-kubesched"
#: The rest of ``/version``: no build of upstream's, so a date in the release's month and the Go
#: release its modules are built with (k8s.io/api v0.37's go.mod: go 1.26).
BUILD_DATE = "2026-09-01T00:00:00Z"
GO_VERSION = "go1.26.0"


def version_info() -> dict[str, str]:
    """The body of ``/version``; since 1.33 it also names the emulated version and the oldest
    one it stays compatible with (here the release itself and the one before)."""
    return {
        "major": MAJOR,
        "minor": MINOR,
        "emulationMajor": MAJOR,
        "emulationMinor": MINOR,
        "minCompatibilityMajor": MAJOR,
        "minCompatibilityMinor": str(int(MINOR) - 1),
        "gitVersion": GIT_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": BUILD_DATE,
        "goVersion": GO_VERSION,
        "compiler": "gc",
        "platform": "linux/amd64",
    }
