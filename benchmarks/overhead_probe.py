"""Where does the Runner's overhead over bare CUDA-event timing come from? (an experiment)

Runs the ``loops`` workload's vectorized step (N=10M) and for loop (N=10k) several ways, the
order rotating in each repetition, and prints each way's median wall and GPU ms per step, and
the median of its first timed step apart (a slow first step points at the state the step
starts from: GPU clocks after idle, cold caches):

- ``bare``: a plain loop timed with CUDA events: one warm-up step, then 5 timed steps;
- ``bare_idle``: the same with 100 ms of host-only work between the warm-up and the timed steps
  (the GPU idles, as while a Runner checks the result or writes the trace);
- ``runner``: ``Runner(profile=False)`` as it is;
- ``runner_norewarm``: without the extra untimed step before the timed ones
  (``inprocess.REWARM_MAX_S = 0``);
- ``runner_spin``: that, with 2 ms of GPU spin (``torch.cuda._sleep``) instead of the extra step:
  if it helps as much, GPU clocks are the cause, not host caches;
- ``runner_nosampler``: ``runner`` with the sampler's period set to an hour.

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

from gpuviz.workloads.loops import f  # the workload's own step function

STEPS = 5


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


def bare(fn: Any, torch: Any, idle_s: float = 0.0) -> tuple[list[float], list[float]]:
    fn()
    torch.cuda.synchronize()
    if idle_s:
        t_end = time.perf_counter() + idle_s
        while time.perf_counter() < t_end:
            pass
    return timed_loop(fn, torch, STEPS)


class _SpinningGc:
    """Stands in for ``gc`` in gpuviz.engine.inprocess: collects, then spins the GPU 2 ms."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch

    def collect(self) -> int:
        n = gc.collect()
        self.torch.cuda._sleep(int(2e-3 * 1.9e9))  # about 2 ms at H100/H200 clocks
        return n


def runner(
    strategy: str, n: int, interval_s: float = 0.05, rewarm: bool = True, spin: bool = False
) -> tuple[list[float], list[float]]:
    import torch

    from gpuviz.engine import inprocess
    from gpuviz.engine.events import Failed, StepTimed
    from gpuviz.engine.runner import Runner, RunRequest

    req = RunRequest("loops", {"n": n, "only": strategy}, device="cuda", steps=STEPS, profile=False)
    saved = inprocess.REWARM_MAX_S, inprocess.gc
    inprocess.REWARM_MAX_S = saved[0] if rewarm else 0.0
    if spin:
        inprocess.gc = _SpinningGc(torch)  # type: ignore[assignment]
    walls, gpus = [], []
    try:
        for ev in Runner(req, sample_interval_s=interval_s):
            if isinstance(ev, StepTimed) and not ev.profiled:
                walls.append(ev.wall_ms)
                gpus.append(ev.gpu_ms or 0.0)
            elif isinstance(ev, Failed):
                raise RuntimeError(ev.error)
    finally:
        inprocess.REWARM_MAX_S, inprocess.gc = saved
    return walls, gpus


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--json", default=None)
    args = ap.parse_args()
    import torch

    dev = torch.device("cuda", torch.cuda.current_device())
    res: dict[str, Any] = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__}
    for strategy, n, reps in (
        ("vectorized", 10_000_000, args.reps),
        ("for_loop", 10_000, max(4, args.reps // 2)),
    ):
        x = torch.arange(n, device=dev).to(torch.float32)
        # The workload's own steps (gpuviz.workloads.loops), so that only the harness differs.
        fn = (lambda x=x: f(x)) if strategy == "vectorized" else (lambda x=x: [f(v) for v in x])
        ways = {
            "bare": lambda fn=fn: bare(fn, torch),
            "bare_idle": lambda fn=fn: bare(fn, torch, idle_s=0.1),
            "runner": lambda s=strategy, n=n: runner(s, n),
            "runner_norewarm": lambda s=strategy, n=n: runner(s, n, rewarm=False),
            "runner_spin": lambda s=strategy, n=n: runner(s, n, rewarm=False, spin=True),
            "runner_nosampler": lambda s=strategy, n=n: runner(s, n, interval_s=3600.0),
        }
        if strategy == "for_loop":  # CPU-bound: GPU clocks and the extra step matter less
            for k in ("bare_idle", "runner_spin"):
                del ways[k]
        names = list(ways)
        got: dict[str, list[tuple[list[float], list[float]]]] = {k: [] for k in names}
        for rep in range(reps):
            k = rep % len(names)
            for name in names[k:] + names[:k]:
                gc.collect()
                got[name].append(ways[name]())

        def med(name: str, which: int, first: bool | None, got: Any = got) -> float:
            vals = []
            for run in got[name]:
                seq = run[which]
                if first is True:
                    seq = seq[:1]
                elif first is False:
                    seq = seq[1:]
                vals.append(statistics.median(seq))
            return statistics.median(vals)

        base_w, base_g = med("bare", 0, None), med("bare", 1, None)
        rows = {}
        for name in names:
            w, g = med(name, 0, None), med(name, 1, None)
            g1, g_rest = med(name, 1, True), med(name, 1, False)
            rows[name] = {
                "wall_ms": w,
                "gpu_ms": g,
                "wall_x": w / base_w,
                "gpu_x": g / base_g,
                "first_gpu_ms": g1,
                "rest_gpu_ms": g_rest,
            }
            print(
                f"{strategy:10s} {name:17s} wall {w:9.4f} ms ({w / base_w:5.3f}x)  "
                f"gpu {g:9.4f} ms ({g / base_g:5.3f}x)  gpu first {g1:9.4f} rest {g_rest:9.4f}",
                flush=True,
            )
        res[strategy] = rows
        del x
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
