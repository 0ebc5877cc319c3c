"""``kubesched run``: the scheduler against a cluster, with health, metrics and leader election.

The order of things follows kube-scheduler: serve health and metrics; start the informers and
wait until they have synced (/readyz turns ready); if leader election is on, wait to become
the leader; then schedule. SIGTERM stops popping pods, lets binding cycles in flight finish
(bounded), releases the lease so another replica takes over at once, and exits 0. Losing the
lease stops scheduling at once and exits 1, as upstream does.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.config import SchedulerConfig, effective_config
from kubesched.framework.features import FeatureGates
from kubesched.scheduler import Scheduler, SchedulerOptions
from kubesched.server.health import HealthApp
from kubesched.server.metrics import PrometheusObserver
from kubesched.server.serving import Serving, ServingOptions
from kubesched.server.zpages import ZPages
from kubesched.tasks import TaskSet, stop_or

log = logging.getLogger("kubesched")

#: How long in-flight binding cycles may take to finish after SIGTERM.
SHUTDOWN_GRACE_SECONDS = 30.0


@dataclass
class RunOptions:
    kubeconfig: str | None = None
    context: str | None = None
    #: Where and how /healthz, /readyz, /livez and /metrics are served.
    serving: ServingOptions = field(default_factory=ServingOptions)
    record_results: bool = False
    identity: str | None = None
    #: ``--feature-gates`` (kubesched.config.feature_gates), 1.37's defaults unless changed.
    feature_gates: FeatureGates = field(default_factory=FeatureGates)
    #: ``--pod-max-in-unschedulable-pods-duration``: how long a pod may stay unschedulable before
    #: it is retried anyway (seconds); None: the scheduler's default (5m, as upstream).
    max_unschedulable_duration: float | None = None
    #: What /flagz lists: every flag with its value (see kubesched.server.flags.flag_values).
    flags: dict[str, str] = field(default_factory=dict)
    #: Whether /flagz and /statusz are served (the ComponentFlagz and ComponentStatusz gates).
    flagz: bool = True
    statusz: bool = True
    #: For tests: an already-built cluster (anything implementing the Cluster protocol with
    #: ``leases()``), instead of one built from the kubeconfig.
    cluster: Any = None


def default_identity() -> str:
    """``<hostname>_<pid>``: unique per process, readable in the Lease's holderIdentity."""
    return f"{socket.gethostname()}_{os.getpid()}"


def build_cluster(cfg: SchedulerConfig, opts: RunOptions) -> Any:
    from kubesched.cluster.base import ClusterError, watched_kinds
    from kubesched.cluster.kube.cluster import KubeCluster

    cc = cfg.model.clientConnection
    path = opts.kubeconfig or cc.kubeconfig or None
    if path and not os.path.isfile(os.path.expanduser(path)):
        raise ClusterError(f"kubeconfig {path}: no such file", 0)
    return KubeCluster(
        kubeconfig=path,
        context=opts.context,
        qps=float(cc.qps),
        burst=int(cc.burst),
        # The scheduler below paces the collector (gc_pacing), so frozen objects are seen again.
        keep_from_collector=True,
        watched_kinds=watched_kinds(opts.feature_gates),
    )


def scheduler_options(cfg: SchedulerConfig, opts: RunOptions) -> SchedulerOptions:
    """The scheduler's options from the configuration and the command line."""
    m = cfg.model
    options = SchedulerOptions(
        parallelism=m.parallelism,
        percentage_of_nodes_to_score=m.percentageOfNodesToScore,
        pod_initial_backoff=float(m.podInitialBackoffSeconds),
        pod_max_backoff=float(m.podMaxBackoffSeconds),
        record_results=opts.record_results,
        result_annotations=opts.record_results,
        feature_gates=opts.feature_gates,
        gc_pacing=True,
    )
    if opts.max_unschedulable_duration is not None:
        options.max_unschedulable_duration = opts.max_unschedulable_duration
    return options


async def run(
    cfg: SchedulerConfig, opts: RunOptions, stop: asyncio.Event | None = None, *, signals: bool = True
) -> int:
    """Run until ``stop`` is set (or SIGTERM/SIGINT). Returns the process exit code.

    ``signals=False`` leaves SIGTERM and SIGINT to the caller, which then stops the run through
    ``stop`` (``sim serve``: its handlers stay in place across the scheduler's restarts, so a
    signal that comes while one run ends and the next begins is not lost)."""
    cluster = opts.cluster if opts.cluster is not None else build_cluster(cfg, opts)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    for sig in (signal.SIGTERM, signal.SIGINT) if signals else ():
        try:
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
        except (NotImplementedError, RuntimeError):  # not the main thread (tests)
            pass

    m = cfg.model
    from kubesched.extender import HTTPExtender

    extenders = [HTTPExtender(spec) for spec in (m.extenders or [])]
    observer = PrometheusObserver(feature_gates=opts.feature_gates)
    options = scheduler_options(cfg, opts)
    sched = Scheduler(cfg.profiles, cluster, options, observer=observer, extenders=extenders)
    observer.watch_scheduler(sched)
    zpages = ZPages(effective_config(cfg), opts.flags, paths=lambda: health.paths())
    health = HealthApp(
        observer,
        ready=lambda: sched.synced,
        problems=getattr(cluster, "health_problems", None),
        unready=getattr(cluster, "readiness_problems", None),
        zpages=zpages,
        flagz=opts.flagz,
        statusz=opts.statusz,
        pods=_pods(cluster),
        # Upstream's /metrics/resources answers once it leads (informers synced first).
        leading=lambda: sched.leading and sched.synced,
    )
    # The health server's application, served on the secure (and, if asked, the insecure) port.
    serving = Serving(health.app, opts.serving, _reviews(cluster))
    elector = None
    lost = asyncio.Event()
    try:
        # The scheduling loop is this scope's: leaving it (a return, an error) cancels the loop
        # if it still runs and waits until it has ended, before the lease, the informers and
        # the health server stop below.
        async with TaskSet("kubesched run", log) as tasks:
            await serving.start()
            le = m.leaderElection
            if le.leaderElect:
                sched.set_leading(False)
            if await stop_or(stop, sched.start(), name="scheduler start"):
                return 0
            log.info("informers synced: %d nodes, %d pods cached", len(sched.cache.nodes), sched.cache.pod_count())
            # What the informers listed lives as long as the process: keep the collector from
            # rescanning it, or a full collection pauses the loop for tens of milliseconds.
            gc.freeze()
            if le.leaderElect:
                from kubesched.cluster.leader import LeaderElector

                identity = opts.identity or default_identity()
                elector = LeaderElector(
                    cluster.leases(renew_deadline=float(le.renewDeadline)),
                    identity=identity,
                    namespace=le.resourceNamespace,
                    name=le.resourceName,
                    lease_duration=float(le.leaseDuration),
                    renew_deadline=float(le.renewDeadline),
                    retry_period=float(le.retryPeriod),
                )
                log.info(
                    "attempting to acquire leader lease %s/%s as %s", le.resourceNamespace, le.resourceName, identity
                )
                if await stop_or(stop, elector.acquire(), name="acquire the leader lease"):
                    return 0
                log.info("successfully acquired lease %s/%s", le.resourceNamespace, le.resourceName)
                elector.start_renewing(on_lost=lost.set)
                sched.set_leading(True)
            loop_task = tasks.spawn(sched.run(start=False), name="scheduling-loop")
            # Until a stop, a lost lease, or the loop's end (asyncio.wait only watches the loop:
            # it is not cancelled with the wait).
            await stop_or((stop, lost), asyncio.wait([loop_task]), name="wait for the scheduling loop")
            if lost.is_set():
                # Another replica may already be scheduling: not one more pod from us.
                log.error("leaderelection lost")
                loop_task.cancel()
                await asyncio.gather(loop_task, return_exceptions=True)
                return 1
            if loop_task.done() and not stop.is_set():
                exc = loop_task.exception()
                log.error("the scheduling loop ended unexpectedly: %r", exc)
                return 1
            log.info("shutting down: letting %d binding cycle(s) finish", sched.in_flight())
            await sched.stop(grace=SHUTDOWN_GRACE_SECONDS)
            await asyncio.gather(loop_task, return_exceptions=True)
            if elector is not None:
                await elector.release()
            return 0
    finally:
        if elector is not None:
            await elector.stop_renewing()
        await cluster.stop()
        await serving.stop()
        for ext in extenders:
            await ext.close()
        for sig in installed:
            loop.remove_signal_handler(sig)


def _pods(cluster: Any) -> Callable[[], list[dict[str, Any]]] | None:
    """Every pod of the cluster as its informer holds it (``/metrics/resources``), if the
    cluster can tell."""
    listed = getattr(cluster, "listed", None)
    if listed is None:
        return None
    return lambda: list(listed("Pod"))


def _reviews(cluster: Any) -> Any:
    """Where the secure port's TokenReviews and SubjectAccessReviews go: the scheduler's cluster."""
    from kubesched.cluster.kube.delegated_auth import reviews_for

    return reviews_for(cluster)
