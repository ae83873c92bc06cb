"""Where does the Runner's overhead over bare CUDA-event timing come from? (an experiment)

Runs the ``loops`` workload's vectorized step (N=10M) and for loop (N=10k) several ways, the
order rotating in each repetition, and prints each way's median wall and GPU ms per step:

- ``bare5`` / ``bare50``: a plain loop timed with CUDA events, 5 or 50 steps after one warm-up;
- ``bare_sampler``: ``bare5`` with gpuviz's memory sampler thread running beside it;
- ``bare_idle``: ``bare5`` after 50 ms of host-only work (the GPU idles, as during a Runner's
  set-up), to see whether the GPU's clocks fall;
- ``bare_ctx``: ``bare5`` inside ``torch.cuda.device(dev)`` (the Runner's device context);
- ``runner``: ``Runner(profile=False)``; ``runner_nosampler``: the same with the sampler's period
  set to an hour (one sample at start and stop only).

Usage: ``python benchmarks/overhead_probe.py [--reps 15] [--json OUT]``
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def timed_loop(fn: Any, torch: Any, steps: int) -> tuple[list[float], list[float]]:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    walls, gpus = [], []
    for _ in range(steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)
        gpus.append(start.elapsed_time(end))
    return walls, gpus


def bare(fn: Any, torch: Any, steps: int, idle_s: float = 0.0) -> tuple[float, float]:
    fn()
    torch.cuda.synchronize()
    if idle_s:
        t_end = time.perf_counter() + idle_s
        while time.perf_counter() < t_end:
            pass
    w, g = timed_loop(fn, torch, steps)
    return statistics.median(w), statistics.median(g)


def runner(strategy: str, n: int, interval_s: float) -> tuple[float, float]:
    from gpuviz.engine.events import Failed, StepTimed
    from gpuviz.engine.runner import Runner, RunRequest

    req = RunRequest("loops", {"n": n, "only": strategy}, device="cuda", steps=5, profile=False)
    walls, gpus = [], []
    for ev in Runner(req, sample_interval_s=interval_s):
        if isinstance(ev, StepTimed) and not ev.profiled:
            walls.append(ev.wall_ms)
            gpus.append(ev.gpu_ms or 0.0)
        elif isinstance(ev, Failed):
            raise RuntimeError(ev.error)
    return statistics.median(walls), statistics.median(gpus)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    import torch

    from gpuviz.engine.sampler import MemorySampler

    dev = torch.device("cuda", torch.cuda.current_device())
    res: dict[str, Any] = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__}
    for strategy, n, reps in (("vectorized", 10_000_000, args.reps), ("for_loop", 10_000, 6)):
        x = torch.arange(n, device=dev).to(torch.float32)
        fn = (lambda x=x: x**2) if strategy == "vectorized" else (lambda x=x: [v**2 for v in x])

        def with_sampler(fn: Any = fn) -> tuple[float, float]:
            s = MemorySampler([dev], time.perf_counter())
            s.start()
            try:
                return bare(fn, torch, 5)
            finally:
                s.stop()

        def with_ctx(fn: Any = fn) -> tuple[float, float]:
            with torch.cuda.device(dev):
                return bare(fn, torch, 5)

        ways = {
            "bare5": lambda fn=fn: bare(fn, torch, 5),
            "bare50": lambda fn=fn: bare(fn, torch, 50),
            "bare_sampler": with_sampler,
            "bare_idle": lambda fn=fn: bare(fn, torch, 5, idle_s=0.05),
            "bare_ctx": with_ctx,
            "runner": lambda s=strategy, n=n: runner(s, n, 0.05),
            "runner_nosampler": lambda s=strategy, n=n: runner(s, n, 3600.0),
        }
        names = list(ways)
        got: dict[str, list[tuple[float, float]]] = {k: [] for k in names}
        for rep in range(reps):
            k = rep % len(names)
            for name in names[k:] + names[:k]:
                gc.collect()
                got[name].append(ways[name]())
        base_w = statistics.median(w for w, _ in got["bare5"])
        base_g = statistics.median(g for _, g in got["bare5"])
        rows = {}
        for name in names:
            w = statistics.median(v[0] for v in got[name])
            g = statistics.median(v[1] for v in got[name])
            rows[name] = {"wall_ms": w, "gpu_ms": g, "wall_x": w / base_w, "gpu_x": g / base_g}
            print(
                f"{strategy:10s} {name:17s} wall {w:9.4f} ms ({w / base_w:5.3f}x)  "
                f"gpu {g:9.4f} ms ({g / base_g:5.3f}x)",
                flush=True,
            )
        res[strategy] = rows
        del x
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
