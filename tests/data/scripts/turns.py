"""Takes turns as ``benchmarks/profile_workload.py --turns R,W`` does, without torch.

For the lockstep tests of ``benchmarks/bench_profile.py`` (it takes the workload scripts'
``--steps``, ``--times`` and ``--device``). ``--die-at K``: under ``gpuviz profile`` only, exits
with status 3 at step K, before its turn is done.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=10)
p.add_argument("--times")
p.add_argument("--device")
p.add_argument("--turns", required=True)
p.add_argument("--die-at", type=int, default=-1)
args = p.parse_args()
turn_in, turn_out = (int(fd) for fd in args.turns.split(","))
times = []
for k in range(args.steps):
    if not os.read(turn_in, 1):
        sys.exit(0)
    start = time.perf_counter()
    if k == args.die_at and "gpuviz" in sys.modules:
        print(f"dying at step {k}", file=sys.stderr)
        sys.exit(3)
    time.sleep(0.001)
    times.append((time.perf_counter() - start) * 1e3)
    os.write(turn_out, b"x")
print(f"took {len(times)} turns")
if args.times:
    with open(args.times, "w") as f:
        json.dump(times, f)
