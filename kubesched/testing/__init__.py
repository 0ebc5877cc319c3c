"""What a plugin author imports in tests: object builders and a harness that runs extension points."""

from kubesched.testing.builders import NodeBuilder, PodBuilder, make_node, make_pod
from kubesched.testing.harness import (
    afilter_nodes,
    as_node_infos,
    as_pod_info,
    ascore_nodes,
    filter_nodes,
    framework_for,
    reasons,
    score_nodes,
)
from kubesched.testing.processes import sim_serve_process

__all__ = [
    "NodeBuilder",
    "PodBuilder",
    "afilter_nodes",
    "as_node_infos",
    "as_pod_info",
    "ascore_nodes",
    "filter_nodes",
    "framework_for",
    "make_node",
    "make_pod",
    "reasons",
    "score_nodes",
    "sim_serve_process",
]
