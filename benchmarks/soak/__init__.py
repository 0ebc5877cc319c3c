"""The soak: the real processes (``sim serve`` with faults on, two ``kubesched run`` replicas), a
leader killed mid-run: is every pod bound once? ``python -m benchmarks.soak --help`` says what
it checks.

One job per module: :mod:`.settings` (what to run, the default faults), :mod:`.processes` (the
subprocesses), :mod:`.api` (a client that rides out faults), :mod:`.runner` (the run),
:mod:`.checks` (the verdicts), :mod:`.report` (tables and JSON), :mod:`.cli` (the command line).
"""

from benchmarks.soak.checks import EVENT_GRACE, judge
from benchmarks.soak.report import Check, Report
from benchmarks.soak.runner import Soak
from benchmarks.soak.settings import Settings, SetupError, default_faults

__all__ = [
    "EVENT_GRACE",
    "Check",
    "Report",
    "Settings",
    "SetupError",
    "Soak",
    "default_faults",
    "judge",
]
