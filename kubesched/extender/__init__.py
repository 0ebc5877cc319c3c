"""HTTP scheduler extenders: the client the scheduler calls, and the kit to write one with.

An extender is a web service that kube-scheduler consults over HTTP (``POST <urlPrefix>/<verb>``
with a JSON body) after its own Filter and Score plugins, and optionally for preemption and
binding. The wire format is upstream's ``k8s.io/kube-scheduler/extender/v1`` (see
:mod:`kubesched.extender.wire`).

Client side (:mod:`kubesched.extender.client`, what the scheduler uses)::

    ext = HTTPExtender(config.extenders[0])          # a validated config.models.Extender
    feasible, failed, unresolvable = await ext.filter(pod_info, node_infos)
    scores, weight = await ext.prioritize(pod_info, node_infos)   # scores: [(host, 0..10)]
    await ext.bind(pod_info, "node-1")
    victims = await ext.process_preemption(pod_info, {"node-1": Victims([...])}, snapshot)
    await ext.close()

The loops the scheduler runs over all its extenders, with upstream's semantics, are the
scheduler's own: :mod:`kubesched.scheduler.extenders`.

Server side (:mod:`kubesched.extender.kit`, what an extender author uses)::

    app = make_extender_app(filter=my_filter, prioritize=my_prioritize)
    run_extender(app, "0.0.0.0", 8888)
"""

from kubesched.extender.client import (
    DEFAULT_EXTENDER_TIMEOUT,
    ExtenderError,
    ExtenderSpec,
    HTTPExtender,
    NodeInfoLister,
    Victims,
)
from kubesched.extender.kit import ExtenderServer, make_extender_app, run_extender, serve_extender
from kubesched.extender.wire import MAX_EXTENDER_PRIORITY, MIN_EXTENDER_PRIORITY

__all__ = [
    "DEFAULT_EXTENDER_TIMEOUT",
    "MAX_EXTENDER_PRIORITY",
    "MIN_EXTENDER_PRIORITY",
    "ExtenderError",
    "ExtenderServer",
    "ExtenderSpec",
    "HTTPExtender",
    "NodeInfoLister",
    "Victims",
    "make_extender_app",
    "run_extender",
    "serve_extender",
]
