"""The scheduler: pop a pod, run its scheduling cycle, spawn its binding cycle.

Scheduling cycles are serial: one pod is decided at a time, against a snapshot of the cache
taken at the start of its cycle. Binding cycles run concurrently as tasks the scheduler owns;
each handles its own failure (Unreserve in reverse order, forget the assumed pod, requeue).

A pod is never lost: it ends bound, or unschedulable with a FailedScheduling event and a
``PodScheduled=False`` condition, waiting in the queue for an event that could make it fit.

One module per job, as upstream's ``pkg/scheduler``; no part inherits another, each is built
with what it reads and the parts it calls:

* :mod:`.scheduler` -- :class:`Scheduler`: builds the context and the parts, runs the loop
  (start, run, stop), and is what embedding programs use;
* :mod:`.context` -- :class:`SchedulerContext`, what the parts share (options, stats, clock,
  cache, snapshot, queue, frameworks, observer, results, extenders, the owners of tasks);
* :mod:`.eventhandlers` -- what the informers' add/update/delete events do to cache and queue;
* :mod:`.schedule_one` -- the pod's scheduling cycle: filter, score, select a host, reserve, permit;
* :mod:`.podgroup` -- a pod group's scheduling cycle (a package): its members placed together,
  each through the pod cycle's algorithm, all or none;
* :mod:`.binding_cycle` -- the binding cycle: wait on permit, pre-bind, bind, post-bind;
* :mod:`.failures` -- failure handling: requeue, FailedScheduling event and condition;
* :mod:`.extenders` -- the loops over HTTP extenders (filter, prioritize, preempt, bind);
* :mod:`.batching` -- opportunistic batching of identical pods;
* :mod:`.options`, :mod:`.stats` -- :class:`SchedulerOptions` and :class:`Stats`, the ground floor;
* :mod:`.errors` -- :class:`FitError` and its :class:`Diagnosis`;
* :mod:`.results` -- :class:`PodResult`, a pod's last attempt plugin by plugin;
* :mod:`.listers` -- :class:`ObjectCache`, the other cluster objects plugins read;
* :mod:`.observer` -- the :class:`Observer` protocol metrics implement.

Tunables are read from the module that uses them (e.g. ``binding_cycle.VERIFY_BIND_WAITS``).
"""

from kubesched.framework.events import ActionType
from kubesched.scheduler.context import SchedulerContext, loop_time
from kubesched.scheduler.errors import Diagnosis, FitError
from kubesched.scheduler.listers import ObjectCache
from kubesched.scheduler.observer import NullObserver, Observer
from kubesched.scheduler.options import SchedulerOptions
from kubesched.scheduler.results import PodResult
from kubesched.scheduler.schedule_one import num_feasible_nodes_to_find
from kubesched.scheduler.scheduler import Scheduler
from kubesched.scheduler.stats import Stats

__all__ = [
    "ActionType",
    "Diagnosis",
    "FitError",
    "NullObserver",
    "ObjectCache",
    "Observer",
    "PodResult",
    "Scheduler",
    "SchedulerContext",
    "SchedulerOptions",
    "Stats",
    "loop_time",
    "num_feasible_nodes_to_find",
]
