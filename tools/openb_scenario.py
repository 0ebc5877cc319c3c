"""Write a `kubesched simulate` scenario from the Alibaba GPU trace (openb), which is not shipped.

    python tools/openb_scenario.py --pods gpuspec33 --pod-limit 2000 > /tmp/openb.yaml
    python -m kubesched simulate --scenario /tmp/openb.yaml --output json > /tmp/result.json

The trace is read from $KUBESCHED_TRACES/alibaba-gpu-v2023 or ../shared/traces/alibaba-gpu-v2023;
see kubesched/sim/scenario/openb.py for how rows become Nodes and Pods.
"""

from __future__ import annotations

import argparse
import sys

import yaml

from kubesched.sim.scenario.openb import TraceError, load_openb


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pods", default="default", help="pod list: default, gpuspec33, multigpu50, cpu050")
    ap.add_argument("--nodes", default="all_node", help="node list: all_node or gpu_node")
    ap.add_argument("--node-limit", type=int)
    ap.add_argument("--pod-limit", type=int)
    ap.add_argument("--scheduler-name", default="default-scheduler")
    ap.add_argument(
        "--churn",
        action="store_true",
        help="pods arrive at their creation times and end at their deletion times (a Steps document)",
    )
    args = ap.parse_args()
    try:
        sc = load_openb(
            args.pods,
            args.nodes,
            node_limit=args.node_limit,
            pod_limit=args.pod_limit,
            scheduler_name=args.scheduler_name,
            churn=args.churn,
        )
    except TraceError as exc:
        print(f"openb_scenario: {exc}", file=sys.stderr)
        return 2
    docs: list[object] = [*sc.nodes, *sc.pending_pods]
    if sc.steps:
        steps = [{"at": f"{s.at:g}s", "create": s.create} for s in sc.steps]
        docs.append({"apiVersion": "kubesched.io/v1", "kind": "Steps", "steps": steps})
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
