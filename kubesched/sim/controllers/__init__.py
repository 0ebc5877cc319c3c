"""Workload controllers of the simulated cluster: what kube-controller-manager does for
Deployments, ReplicaSets, Jobs, StatefulSets and DaemonSets, enough for their pods to exist and
be scheduled (there is no kubelet: pods never run, finish or become ready by themselves).

:class:`ControllerManager` follows the store and reconciles each changed workload."""

from kubesched.sim.controllers.manager import ControllerManager

__all__ = ["ControllerManager"]
