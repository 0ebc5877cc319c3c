"""What a soak is asked to do (:class:`Settings`) and the fault mix it injects by default."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


class SetupError(RuntimeError):
    """The run could not start (a process did not come up in time)."""


def default_faults(seed: int) -> dict[str, Any]:
    """The fault mix of a soak: every kind of fault, at rates a client must ride out."""
    writes = ["create", "update", "patch"]
    return {
        "seed": seed,
        "faults": [
            {"kind": "latency", "seconds": 0.002, "jitter": 0.01},
            {"kind": "throttle", "rate": 0.02, "verbs": [*writes, "delete"], "retryAfter": 1},
            {"kind": "error", "rate": 0.01, "code": 503, "verbs": ["get", "list", *writes]},
            {"kind": "error", "rate": 0.005, "code": 500, "phase": "after", "verbs": writes},
            {"kind": "conflict", "rate": 0.03},
            {"kind": "reset", "rate": 0.005, "verbs": ["get", "list", *writes]},
            {"kind": "reset", "rate": 0.01, "phase": "after", "resources": ["pods/binding"]},
            {"kind": "watchDrop", "after": [5, 30]},
            {"kind": "gone", "rate": 0.2},
            {"kind": "stall", "every": 40, "seconds": 3},
        ],
    }


@dataclass
class Settings:
    """A soak's size, faults and limits, as the command line gives them."""

    nodes: int = 5000
    pods: int = 10000
    faults: str = "default"  # "default", "none" or a YAML file
    seed: int = 1
    timeout: float = 1200.0
    config: str | None = None
    concurrency: int = 16
    kill_at: float = 0.5  # 0: never kill the leader
    keep: bool = False
    #: Waves the standby replica watches after the main checks (0: no standby), of so many pods.
    standby_cycles: int = 4
    standby_pods: int = 5000
    #: The main wave is one gang: a PodGroup whose minCount is every pod (GenericWorkload on).
    gang: bool = False
