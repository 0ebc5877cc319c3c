"""How ``kubesched sim serve`` serves: :class:`SimServeOptions`, the server's options, checked
and read once (``kubesched.cli.sim_serve`` builds them from the flags) and then only read.

Each default is the server's own: what ``sim serve`` does when its flag is not given."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from kubesched.framework.features import FeatureGates
from kubesched.sim.apiserver.inflight import DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT, DEFAULT_MAX_REQUESTS_INFLIGHT

if TYPE_CHECKING:
    from kubesched.sim.apiserver.faults import FaultConfig
    from kubesched.sim.scenario.timeline import Horizon

__all__ = ["PodTermination", "SimServeOptions"]

#: How a deleted pod on a node ends: at once, or Terminating for its grace period.
PodTermination = Literal["immediate", "graceful"]


@dataclass(frozen=True)
class SimServeOptions:
    """The options of a ``sim serve`` run: where and how its API server listens, how its
    simulated time runs, what it copies from a live cluster, and where it writes its files.

    The inputs it serves (the scenario, the scheduler's configuration, the token file's users)
    are read apart and handed to :func:`kubesched.sim.serve.sim_serve` beside these."""

    #: The address the API server (and the scheduler's health and metrics) listen on
    #: (``--address``).
    address: str = "127.0.0.1"
    #: The API server's port; 0 is any free one (``--port``).
    port: int = 8080
    #: Where the kubeconfig is written, mode 0600; the web view's link goes beside it as
    #: ``FILE.weblink`` (``--kubeconfig-out``).
    kubeconfig_out: str = "kubesched-sim.kubeconfig"
    #: The admin user's bearer token; None: a random one (``--token``).
    token: str | None = None
    #: Plain HTTP without authentication, on a loopback address only (``--insecure``).
    insecure: bool = False
    #: The feature gates the API server, the controllers and the scheduler run under; by
    #: default each gate's own default (``--feature-gates``).
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    #: Read-only requests served at once, over which 429 is answered; 0: no limit
    #: (``--max-requests-inflight``).
    max_requests_inflight: int = DEFAULT_MAX_REQUESTS_INFLIGHT
    #: Mutating requests served at once; 0: no limit (``--max-mutating-requests-inflight``).
    max_mutating_requests_inflight: int = DEFAULT_MAX_MUTATING_REQUESTS_INFLIGHT
    #: How a deleted pod on a node ends (``--pod-termination``).
    pod_termination: PodTermination = "immediate"
    #: Fault injection rules applied from the start; None: none (``--faults``, read).
    faults: FaultConfig | None = None
    #: How many times as fast as the wall clock simulated time runs (``--speed``).
    speed: float = 1.0
    #: The simulated time at which the server stops; None: serve until stopped (``--until``).
    until: Horizon | None = None
    #: The kubeconfig of a live cluster to copy first; None: none (``--import-from``).
    import_from: str | None = None
    #: With ``import_from``: only the nodes and pods with these labels; "": all (``--selector``).
    selector: str = ""
    #: With ``import_from``: the kubeconfig's context; None: its current one (``--import-context``).
    import_context: str | None = None
    #: With ``import_from``: keep following the live cluster (``--sync``).
    sync: bool = False
    #: With ``import_from``: where what the live cluster does is written as a scenario in time
    #: when the server stops; None: nowhere (``--record``).
    record: str | None = None
    #: The port of the scheduler's health and metrics, with a scheduler; 0 is any free one
    #: (``--scheduler-port``).
    scheduler_port: int = 0
