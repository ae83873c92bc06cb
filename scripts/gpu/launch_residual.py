"""Does a finished profiler window leave a cost on each kernel launch? Host time per step.

Plain torch, no gpuviz. One process: the launch-bound step of ``benchmarks/profile_workload.py``
(about 700 tiny kernels), ``--before`` steps timed, one profiler window of ``--window`` kind
(``none``, ``cpu``: CPU activity only, ``cuda``: CPU and CUDA, so CUPTI attaches), then
``--after`` steps timed. A step is timed on the host only (from its first launch to its last,
the device synchronized outside the timing), so a per-launch cost shows undiluted. Prints one
JSON line: the medians before and after, and their ratio. ``TEARDOWN_CUPTI`` is read by Kineto
from the environment as given (``1``: CUPTI detached when the window ends).

    for w in none cpu cuda; do TEARDOWN_CUPTI=1 python scripts/gpu/launch_residual.py --window $w; done

Within a process the pace drifts (phases of 0.3-1.5 s on an H200 VM), so compare the ratio of
``cuda`` against that of ``none`` over several processes, not one ratio against 1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from profile_workload import launch_step, make_launch


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--window", choices=("none", "cpu", "cuda"), default="cuda")
    p.add_argument("--before", type=int, default=300)
    p.add_argument("--after", type=int, default=300)
    p.add_argument("--ops", type=int, default=600)
    args = p.parse_args()
    dev = torch.device("cuda")
    x, mlp, opt = make_launch(dev)

    def timed(n: int) -> list[float]:
        out = []
        for _ in range(n):
            torch.cuda.synchronize()
            t = time.perf_counter()
            launch_step(x, mlp, opt, args.ops)
            out.append((time.perf_counter() - t) * 1e3)
        torch.cuda.synchronize()
        return out

    timed(50)
    before = timed(args.before)
    if args.window != "none":
        acts = [torch.profiler.ProfilerActivity.CPU]
        if args.window == "cuda":
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=acts, record_shapes=True, profile_memory=True):
            timed(5)
    after = timed(args.after)
    b, a = statistics.median(before), statistics.median(after)
    print(
        json.dumps(
            {
                "window": args.window,
                "teardown": os.environ.get("TEARDOWN_CUPTI"),
                "before_ms": round(b, 4),
                "after_ms": round(a, 4),
                "ratio": round(a / b, 4),
            }
        ),
        flush=True,
    )


if __name__ == "__main__":
    main()
