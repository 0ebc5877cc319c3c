"""The scheduling cycle of a pod group (workload-aware scheduling, ``GenericWorkload``): a
group's pending members placed together in one cycle, all of them or none.

It sits beside the pod's cycle (:mod:`kubesched.scheduler.schedule_one`), whose per-pod
algorithm each member goes through, and shares its binding cycle and failure reporting:

* :mod:`.cycle` -- :class:`~.cycle.PodGroupSchedulingCycle`: gathers a group's members from the
  queue, has them placed, and submits the result (Permit and binding, or failure, preemption);
* :mod:`.algorithm` -- :class:`~.algorithm.PodGroupAlgorithm`: where a group's members go
  (placements, PlacementFeasible, PlacementScore; all or nothing);
* :mod:`.composite` -- :class:`~.composite.CompositeAlgorithm`: where a CompositePodGroup
  hierarchy's members go, over the group algorithm;
* :mod:`.condition` -- the PodGroup's ``PodGroupInitiallyScheduled`` condition.
"""
