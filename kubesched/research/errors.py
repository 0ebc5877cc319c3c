"""The one exception of :mod:`kubesched.research`."""

from __future__ import annotations

from kubesched.errors import ResearchError


class ReplayError(ResearchError):
    """An experiment that cannot run: a bad input file (the message names the file, the row and
    the column), a configuration that does not load, or a missing plugin package (the message
    says what to install)."""


__all__ = ["ReplayError"]
