"""Peak memory of reading a large scenario: ``python -m benchmarks.decode_memory``.

Writes a scenario of ``--mib`` MiB (20 nodes, then one ``kind: Steps`` document whose steps each
create five pods, as a recording of a busy cluster looks), then reads it in fresh interpreters,
each reporting its own maximum resident set size (``ru_maxrss``, what ``/usr/bin/time -v`` calls
"Maximum resident set size"):

* ``imports``: the interpreter with the loader imported, nothing read (the floor);
* ``decode``: the file through the bounded decoder (:func:`kubesched.decoding.load_yaml_all`
  within a scenario's limits), as every command that reads a scenario, Steps or recording does;
* ``scenario``: :func:`kubesched.sim.scenario.reading.load_scenario`, decoding and every check
  of every object (what ``simulate`` does before it runs anything).

Memory, not time, is the measure here (the seconds are printed for orientation only: the
machine is shared). ::

    python -m benchmarks.decode_memory              # a 15 MiB file
    python -m benchmarks.decode_memory --mib 4 --json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

_NODE = """apiVersion: v1
kind: Node
metadata:
  name: node-{i}
  labels: {{kubernetes.io/hostname: node-{i}, topology.kubernetes.io/zone: zone-{zone}}}
status:
  allocatable: {{cpu: "64", memory: 256Gi, pods: "110"}}
  capacity: {{cpu: "64", memory: 256Gi, pods: "110"}}
---
"""
_POD = """  - apiVersion: v1
    kind: Pod
    metadata:
      name: pod-{n}
      namespace: default
      labels: {{app: app-{app}, tier: web}}
      annotations: {{kubesched.io/lifetime: 60s}}
    spec:
      containers:
      - name: c
        image: registry.k8s.io/pause:3.9
        resources:
          requests: {{cpu: 100m, memory: 128Mi}}
          limits: {{cpu: 200m, memory: 256Mi}}
"""

_MEASURE = """
import resource, sys, time
from kubesched.decoding import load_yaml_all, read_text
from kubesched.sim.scenario.reading import SCENARIO_LIMITS, load_scenario
what, path = sys.argv[1], sys.argv[2]
start = time.perf_counter()
if what == "decode":
    load_yaml_all(read_text(path, SCENARIO_LIMITS.max_bytes), SCENARIO_LIMITS)
elif what == "scenario":
    load_scenario(path)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, time.perf_counter() - start)
"""


def write_scenario(path: Path, mib: float) -> int:
    """A Steps scenario of at least ``mib`` MiB at ``path``; the number of pods it creates."""
    target = int(mib * 1024 * 1024)
    pods = 0
    with path.open("w", encoding="utf-8") as out:
        out.write("".join(_NODE.format(i=i, zone=i % 3) for i in range(20)))
        out.write("apiVersion: kubesched.io/v1\nkind: Steps\nsteps:\n")
        step = 0
        while out.tell() < target:
            out.write(f"- at: {step}s\n  create:\n")
            for _ in range(5):
                out.write(_POD.format(n=pods, app=pods % 50))
                pods += 1
            step += 1
    return pods


def measure(what: str, path: Path) -> tuple[float, float]:
    """Max RSS (MiB) and seconds of a fresh interpreter doing ``what`` with ``path``."""
    out = subprocess.run(
        [sys.executable, "-c", _MEASURE, what, str(path)], check=True, capture_output=True, text=True
    ).stdout.split()
    return int(out[0]) / 1024, float(out[1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.decode_memory", description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--mib", type=float, default=15.0, help="size of the generated scenario (default 15)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kubesched-decode-") as tmp:
        path = Path(tmp) / "steps.yaml"
        pods = write_scenario(path, args.mib)
        size = path.stat().st_size
        rows: dict[str, Any] = {}
        for what in ("imports", "decode", "scenario"):
            rss, seconds = measure(what, path)
            rows[what] = {"max_rss_mib": round(rss, 1), "seconds": round(seconds, 2)}
    if args.json:
        print(json.dumps({"file_bytes": size, "pods": pods, "runs": rows}, indent=2))
        return 0
    print(f"scenario: {size / 2**20:.1f} MiB, 20 nodes, {pods} pods in Steps")
    print(f"{'reading':<10} {'max RSS MiB':>12} {'seconds':>8}")
    for what, row in rows.items():
        print(f"{what:<10} {row['max_rss_mib']:>12.1f} {row['seconds']:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
