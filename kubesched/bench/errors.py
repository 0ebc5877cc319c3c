"""The error of ``kubesched bench``'s workloads."""

from __future__ import annotations

from kubesched.errors import KubeschedError


class WorkloadError(KubeschedError, ValueError):
    """A workload file that cannot be read or run; the message names the file and the field."""


__all__ = ["WorkloadError"]
