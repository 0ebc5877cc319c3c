"""``kubesched sim serve``: the simulated cluster as a running service — the store, its API
server, the workload controllers, the simulator API and, with ``--with-scheduler``, a scheduler
that the simulator API can reconfigure while the cluster stays.

Time passes with the wall clock (``--speed`` times as fast): the scenario's Steps and its pods'
lifetimes happen as the clock reaches them (:mod:`kubesched.sim.run.paced`), and ``--until``
stops the server at that simulated time. With ``--import-from ... --sync --record FILE`` what
the live cluster does is written to FILE as a scenario in time when the server stops."""

from __future__ import annotations

import asyncio
import copy
import logging
import signal
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kubesched.cluster.base import NotFound
from kubesched.cluster.store import Store
from kubesched.errors import ConfigurationError
from kubesched.framework.features import FeatureGates
from kubesched.scheduler.gc_pacing import GcPacer
from kubesched.sim.apiserver.authn import generate_token
from kubesched.sim.apiserver.server import APIServer, ensure_defaults, write_private_file
from kubesched.sim.controllers import ControllerManager
from kubesched.sim.run.paced import PacedTimeline
from kubesched.sim.scenario.clock import PacedClock, stamp
from kubesched.sim.scenario.loading import load_scenario_into
from kubesched.sim.scenario.reading import ScenarioError, parse_scenario
from kubesched.sim.serve_options import SimServeOptions
from kubesched.sim.simulator_api import SchedulerControl, SimulatorAPI
from kubesched.tasks import TaskSet, stop_or

log = logging.getLogger(__name__)


class SchedulerSupervisor:
    """Runs ``kubesched run`` against the embedded server, and runs it again with another
    configuration when asked: informers list the cluster afresh, so the pods still pending are
    tried under the new profiles."""

    def __init__(self, cfg: Any, options: Any, stop: asyncio.Event) -> None:
        self.start_cfg = cfg
        self.cfg = cfg
        self.options = options
        self.stop = stop
        self._restart = asyncio.Event()
        self._running = False
        #: What to do while no scheduler runs, each with the future its caller awaits.
        self._between: list[tuple[Callable[[], None], asyncio.Future[None]]] = []

    async def apply(self, cfg: Any | None, between: Callable[[], None] | None = None) -> None:
        """Run the scheduler again under ``cfg`` (None: the one it started with). ``between``,
        if given, is called after the running scheduler has stopped and before the next one
        starts, and this returns once it has been (raising what it raised): a cluster reset
        must not be half seen by a scheduler that places pods meanwhile."""
        self.cfg = cfg if cfg is not None else self.start_cfg
        if between is None:
            self._restart.set()
            return
        if not self._running:
            between()
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._between.append((between, done))
        self._restart.set()
        await done

    def _run_between(self) -> None:
        work, self._between = self._between, []
        for call, done in work:
            try:
                call()
            except Exception as exc:  # noqa: BLE001 - handed to the caller awaiting it
                done.set_exception(exc)
            else:
                done.set_result(None)

    def current(self) -> dict[str, Any]:
        from kubesched.config import effective_config

        return effective_config(self.cfg)

    async def _relay(self, inner: asyncio.Event) -> None:
        """Set ``inner`` (the running scheduler's stop) on a stop or a restart."""
        await stop_or(self.stop, self._restart.wait(), name="wait for a restart")
        inner.set()

    async def run(self) -> int:
        from kubesched.server.app import run

        self._running = True
        try:
            while True:
                inner = asyncio.Event()
                self._restart.clear()
                self._run_between()

                # The relay lives as long as this run of the scheduler.
                async with TaskSet("sim-serve scheduler", log) as tasks:
                    tasks.spawn(self._relay(inner), name="sim-serve scheduler relay")
                    # sim serve's own signal handlers stop it (relayed to ``inner``).
                    code = await run(self.cfg, self.options, inner, signals=False)
                if self.stop.is_set() or not self._restart.is_set():
                    return int(code)
        finally:
            self._running = False
            self._run_between()


async def sim_serve(options: SimServeOptions, scenario: Any, cfg: Any, users: Any) -> int:
    """Serve ``scenario`` (None: an empty cluster) as ``options`` say until stopped (a signal or
    ``options.until``), with a scheduler under ``cfg`` if given; ``users`` are the API server's
    users beside the admin. The exit code: the scheduler's, 0 without one, 2 when the live
    cluster to import cannot be read."""
    store = Store()
    if scenario is not None:
        load_scenario_into(store, scenario, now=datetime.now(UTC))
    importer = None
    recorder = None
    if options.import_from:
        from kubesched.sim.importer import Importer

        importer = Importer(store, options.import_from, options.selector, options.import_context)
        if options.record:
            from kubesched.sim.scenario.recording import Recorder

            recorder = Recorder()
            importer.observers.append(recorder.observe)
        try:
            n = await importer.run_once()
        except Exception as exc:  # noqa: BLE001 - the source cannot be read: say so, start nothing
            await importer.close()
            print(f"kubesched: --import-from {options.import_from}: {exc}", file=sys.stderr, flush=True)
            return 2
        if recorder is not None:
            recorder.begin()
        print(f"imported {n} object(s) from {options.import_from}", flush=True)
    initial = {kind: copy.deepcopy(store.list(kind)[0]) for kind in store.kinds()}
    # A token always, loopback or not: every local user and process can reach loopback too. And
    # HTTPS, as kubectl sends no credentials over plain HTTP. --insecure (loopback only) is the
    # explicit way out, for load probes and tools that speak plain HTTP.
    # The API server validates under the scheduler's gates (TaintTolerationComparisonOperators).
    gates = options.feature_gates
    store.follow_gates(gates)
    store.pod_termination = options.pod_termination
    if options.insecure:
        server = APIServer(
            store,
            host=options.address,
            port=options.port,
            feature_gates=gates,
            max_requests_inflight=options.max_requests_inflight,
            max_mutating_requests_inflight=options.max_mutating_requests_inflight,
        )
    else:
        token = options.token or generate_token()
        server = APIServer(
            store,
            host=options.address,
            port=options.port,
            token=token,
            users=users,
            tls=True,
            feature_gates=gates,
            max_requests_inflight=options.max_requests_inflight,
            max_mutating_requests_inflight=options.max_mutating_requests_inflight,
        )
    if options.faults is not None:
        server.faults.configure(options.faults)
        print(f"fault injection: {len(options.faults.faults)} rule(s), seed {options.faults.seed}", flush=True)
    # The simulated clock starts now: steps' times and lifetimes count from here.
    clock = PacedClock(options.speed)
    until = options.until
    timeline = PacedTimeline(
        store, list(scenario.steps) if scenario is not None else [], clock, until, lambda line: print(line, flush=True)
    )
    controllers = ControllerManager(store, gates, now=lambda: stamp(clock.started_at, clock)())
    controllers.start()
    stop = asyncio.Event()
    supervisor: SchedulerSupervisor | None = None
    if cfg is not None:
        from kubesched.config import parse_config
        from kubesched.server.app import RunOptions
        from kubesched.server.serving import ServingOptions

        def fast_client(c: Any) -> Any:
            # The embedded server is on this machine: a client-side rate limit meant to protect a
            # shared API server would only slow the simulation down.
            cc = c.model.clientConnection
            cc.qps, cc.burst = max(float(cc.qps), 5000.0), max(int(cc.burst), 10000)
            return c

        def parse(obj: Any) -> Any:
            return fast_client(parse_config(obj))

        supervisor = SchedulerSupervisor(fast_client(cfg), None, stop)
        server.simulator = SimulatorAPI(
            store,
            lambda: _reset_all(store, initial, timeline, gates),
            lambda docs: _import(store, docs, gates),
            SchedulerControl(supervisor.current, supervisor.apply, parse),
            gates,
        )
    else:
        server.simulator = SimulatorAPI(
            store,
            lambda: _reset_all(store, initial, timeline, gates),
            lambda docs: _import(store, docs, gates),
            feature_gates=gates,
        )
    await server.start()
    code = 0
    # The server's background work: each task ends once ``stop`` is set, and none outlives this.
    tasks = TaskSet("sim serve", log)
    try:
        kubeconfig, web_link = _write_files(server, options.kubeconfig_out)
        print(f"kubesched embedded API server on {server.url}", flush=True)
        if server.token:
            # The link carries the admin token: stdout is often a log file others can read.
            print(f"web view: its link (with the admin token) is in {web_link}", flush=True)
        else:
            print(f"web view: {server.url}/", flush=True)
        print(f"kubeconfig written to {kubeconfig}; try:  kubectl --kubeconfig {kubeconfig} get nodes", flush=True)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        if importer is not None and options.sync:
            tasks.spawn(importer.sync(stop), name="import sync")
        if clock.speed != 1.0 or until is not None:
            print(f"simulated time runs {clock.speed:g}x the wall clock", flush=True)
        leads = (lambda: _scheduler_leads(store, cfg, stop)) if cfg is not None else None
        tasks.spawn(timeline.run(stop, leads), name="simulated time")
        if recorder is not None and options.record:
            tasks.spawn(_save_now_and_then(recorder, options.record, stop), name="record")
        if supervisor is None:
            # The scheduler, when it runs here, paces the collector for the whole process.
            tasks.spawn(_pace_collector(server, stop), name="collector pacing")
        if supervisor is not None:
            supervisor.options = RunOptions(
                kubeconfig=kubeconfig,
                # Secure serving as in a cluster, delegating to this server: the admin token reads /metrics.
                serving=ServingOptions(bind_address=options.address, secure_port=options.scheduler_port),
                record_results=True,
                feature_gates=gates,
            )
            print(
                f"scheduler running with {len(cfg.profiles)} profile(s): "
                + ", ".join(p.scheduler_name for p in cfg.profiles),
                flush=True,
            )
            code = await supervisor.run()
        else:
            await stop.wait()
    finally:
        stop.set()
        # Each task ends on its own once ``stop`` is set; should this wait be cut short (the
        # server cancelled), leaving the scope cancels what is left and waits for it.
        async with tasks:
            await tasks.wait()
        if importer is not None:
            await importer.close()
        if recorder is not None and options.record:
            docs = recorder.write(options.record)
            print(f"recorded {docs} document(s) to {options.record}", flush=True)
        await server.stop()
        await controllers.stop()
    return code


async def _pace_collector(
    server: APIServer, stop: asyncio.Event, every: float = 1.0, pacer: GcPacer | None = None
) -> None:
    """The collector paced as ``kubesched run`` paces it (:class:`GcPacer`), until ``stop``: a
    server holding a cluster of ten thousand pods and their events would otherwise pause for a
    full collection over all of them again and again while it is busy, finding nothing to free
    (stored objects hold no cycles). Busy is having answered a request in the last ``every``
    seconds; everything is collected when idle, and in any case every ten minutes."""
    pacer = pacer if pacer is not None else GcPacer()
    seen = server.requests
    while not await stop_or(stop, timeout=every):
        pacer.tick(idle=server.requests == seen)
        seen = server.requests


#: How often a recording is saved while it runs (a server that is killed loses at most this much).
RECORD_EVERY = 30.0


async def _save_now_and_then(recorder: Any, path: str, stop: asyncio.Event) -> None:
    """Save the recording every :data:`RECORD_EVERY` seconds until ``stop`` (the last save is
    the server's, when it stops)."""
    while not await stop_or(stop, timeout=RECORD_EVERY):
        try:
            recorder.write(path)
        except OSError as exc:
            print(f"kubesched: --record {path}: {exc}", file=sys.stderr, flush=True)


async def _scheduler_leads(store: Store, cfg: Any, stop: asyncio.Event, patience: float = 60.0) -> None:
    """Until the embedded scheduler holds its lease (it schedules from then on), at most
    ``patience`` seconds: simulated time starts when pods can be placed, however long the
    scheduler took to come up."""
    election = cfg.model.leaderElection
    loop = asyncio.get_running_loop()
    deadline = loop.time() + patience
    while not stop.is_set() and loop.time() < deadline:
        if not election.leaderElect:
            return
        try:
            lease = store.get("Lease", election.resourceNamespace, election.resourceName)
            if (lease.get("spec") or {}).get("holderIdentity"):
                return
        except NotFound:
            pass
        await asyncio.sleep(0.05)


def web_link_path(kubeconfig: str) -> str:
    """Where ``sim serve`` writes the web view's link: beside the kubeconfig, ``<kubeconfig>.weblink``."""
    return f"{kubeconfig}.weblink"


def _write_files(server: APIServer, kubeconfig_out: str) -> tuple[str, str]:
    """Write the kubeconfig and, beside it, the web view's link (``URL/#token=...``), both 0600
    and never through a symbolic link; a path that cannot be written is refused naming the flag."""
    link = web_link_path(kubeconfig_out)
    fragment = f"#token={server.token}" if server.token else ""
    try:
        kubeconfig = server.write_kubeconfig(kubeconfig_out)
        write_private_file(link, f"{server.url}/{fragment}\n")
    except OSError as exc:
        where = exc.filename or kubeconfig_out
        raise ConfigurationError(f"--kubeconfig-out: {where}: {exc.strerror or exc}") from exc
    return kubeconfig, link


def _reset_all(
    store: Store, initial: dict[str, list[dict[str, Any]]], timeline: PacedTimeline, gates: FeatureGates | None = None
) -> None:
    """``PUT /api/v1/reset``: the cluster back at its start, and its time back at 0."""
    _reset(store, initial, gates)
    timeline.restart()


def _reset(store: Store, initial: dict[str, list[dict[str, Any]]], gates: FeatureGates | None = None) -> None:
    """Delete what was made since the start, and bring back what was there then: the objects
    the cluster started from, and the namespaces and priority classes every server has
    (:func:`~kubesched.sim.apiserver.server.ensure_defaults`), which the server made at its start."""
    for kind in store.kinds():
        items, _ = store.list(kind)
        for obj in items:
            meta = obj["metadata"]
            try:
                store.delete(kind, meta.get("namespace"), meta["name"])
            except NotFound:
                pass
    for kind, objs in initial.items():
        for obj in objs:
            fresh = copy.deepcopy(obj)
            fresh["metadata"].pop("resourceVersion", None)
            store.create(kind, fresh)
    ensure_defaults(store, gates)


def _import(store: Store, docs: list[Any], gates: Any = None) -> None:
    """Add a scenario's objects, refusing the whole of it when it is invalid (400), holds an
    object larger than etcd stores (413, as the object's own endpoint answers it) or names an
    object that exists already (409). Its pods are admitted under the server's feature ``gates``."""
    from kubesched.framework.features import FeatureGates
    from kubesched.sim.apiserver.errors import APIError, bad_request
    from kubesched.sim.apiserver.validation.decode import check_stored_size

    try:
        scenario = parse_scenario(
            docs,
            "import",
            known_definitions=store.list("CustomResourceDefinition")[0],
            gates=gates if gates is not None else FeatureGates(),
        )
    except ScenarioError as exc:
        raise bad_request(str(exc)) from None
    for obj in [*scenario.namespaces, *scenario.priority_classes, *scenario.others, *scenario.nodes, *scenario.pods]:
        check_stored_size(obj)
    taken = []
    for obj in [*scenario.nodes, *scenario.others, *scenario.pods]:
        meta = obj["metadata"]
        try:
            store.get(obj["kind"], meta.get("namespace") if obj["kind"] != "Node" else None, meta["name"])
            taken.append(f"{obj['kind']} {meta.get('namespace') + '/' if meta.get('namespace') else ''}{meta['name']}")
        except (NotFound, KeyError):
            pass
    for obj in [*scenario.custom_resource_definitions, *scenario.custom_objects]:
        check_stored_size(obj)
        meta = obj["metadata"]
        key = store.custom_resources.store_key_for(obj["apiVersion"], obj["kind"]) or obj["kind"]
        try:
            store.get(key, meta.get("namespace"), meta["name"])
            taken.append(f"{obj['kind']} {meta.get('namespace') + '/' if meta.get('namespace') else ''}{meta['name']}")
        except NotFound:
            pass
    if taken:
        raise APIError(409, "AlreadyExists", f"these objects exist already: {', '.join(taken)}")
    load_scenario_into(store, scenario, now=datetime.now(UTC))
