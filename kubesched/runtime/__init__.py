"""Runs the plugin contract (upstream's ``pkg/scheduler/framework/runtime``).

* ``framework``: a profile's :class:`Framework` and its plugins per extension point;
* ``handle``: the ``Handle`` its plugins are given (:class:`PluginHandle`: the protocol alone);
* ``calls``: binding a plugin method and reading what it returns;
* ``prefilter``: PreFilter, and the nodes it leaves;
* ``scoring``: Score, NormalizeScore and weights over the feasible nodes;
* ``signing``: pod signatures for opportunistic batching;
* ``batch_filter``: Filter over a batch of nodes;
* ``waiting_pods``: pods held at Permit;
* ``profile``: what a profile enables, and the error for one that cannot be built;
* ``registry``: plugin name → class, from the ``kubesched.plugins`` entry points;
* ``local_plugins``: ``--plugin module:Class`` without packaging.
"""
