"""Do the instruments distort what they measure? Overhead of the Runner, and trace export speed.

Times, on the GPU (or the CPU with ``--device cpu``), the ``loops`` workload's vectorized
strategy at N=10M and its for loop at N=10k in three ways:

- bare: the same step in a plain loop, timed with CUDA events only (and wall time);
- runner, profiler off: ``Runner(..., profile=False)``'s StepTimed figures;
- runner, profiler on: the unprofiled StepTimed figures of a run that also profiled (and, for
  information, its profiled step, which the profiler slows down).

20 interleaved repetitions (``--reps``; the order of the three ways rotates), each the median of ``--steps`` steps; prints the
median ratio to bare of each way. Target: at most 1.02x with the profiler off.

``--export`` also compares writing the trace of a profiled for loop at N=100k with
``export_chrome_trace(path.json.gz)`` and with gpuviz's writer (each on its own identical
profile: Kineto saves a result once).

Usage: ``python benchmarks/bench_overhead.py [--device cuda] [--reps 20] [--steps 5] [--export] [--json OUT]``
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gpuviz.workloads.loops import f  # the workload's own step function


def bare(fn: Any, device: Any, steps: int) -> tuple[float, float | None]:
    """Median wall and GPU ms of ``steps`` steps of ``fn`` with CUDA events only."""
    import torch

    cuda = device.type == "cuda"
    fn()  # warm-up, as the Runner does
    walls, gpus = [], []
    if cuda:
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    for _ in range(steps):
        if cuda:
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        if cuda:
            start.record()
        fn()
        if cuda:
            end.record()
            torch.cuda.synchronize(device)
            gpus.append(start.elapsed_time(end))
        walls.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(walls), (statistics.median(gpus) if gpus else None)


def runner(
    strategy: str, n: int, device: str, steps: int, profile: bool, out: str
) -> dict[str, Any]:
    """Median figures of one strategy run under the Runner."""
    from gpuviz.engine.events import Failed, Finished, StepTimed
    from gpuviz.engine.runner import Runner, RunRequest

    req = RunRequest(
        "loops", {"n": n, "only": strategy}, device=device, steps=steps, out=out, profile=profile
    )
    walls, gpus, pw = [], [], []
    result: dict[str, Any] = {}
    for ev in Runner(req):
        if isinstance(ev, StepTimed):
            if ev.profiled:
                pw.append(ev.wall_ms)
            else:
                walls.append(ev.wall_ms)
                if ev.gpu_ms is not None:
                    gpus.append(ev.gpu_ms)
        elif isinstance(ev, Failed):
            raise RuntimeError(ev.error + "\n" + ev.traceback)
        elif isinstance(ev, Finished):
            result = ev.result
    return {
        "wall_ms": statistics.median(walls),
        "gpu_ms": statistics.median(gpus) if gpus else None,
        "profiled_wall_ms": statistics.median(pw) if pw else None,
        "trace_write_s": result.get("trace_write_s"),
        "profiler_stop_s": result.get("profiler_stop_s"),
        "trace_figures_s": result.get("trace_figures_s"),
    }


def overhead(device_name: str, reps: int, steps: int) -> dict[str, Any]:
    import torch

    device = torch.device(device_name)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    cases = {"vectorized": 10_000_000, "for_loop": 10_000}
    out: dict[str, Any] = {}
    tmp = tempfile.mkdtemp(prefix="gpuviz-bench-")
    for strategy, n in cases.items():
        x = torch.arange(n, device=device).to(torch.float32)
        # The workload's own steps (gpuviz.workloads.loops), so that only the harness differs.
        fn = (lambda x=x: f(x)) if strategy == "vectorized" else (lambda x=x: [f(v) for v in x])
        rows: dict[str, list[float]] = {
            k: [] for k in ("off_wall", "off_gpu", "on_wall", "on_gpu", "prof_wall")
        }
        raw = []
        for rep in range(reps):
            # Rotate the order of the three ways in each repetition, so that no way always
            # runs first (after another's teardown) or last.
            got: dict[str, Any] = {}
            for way in ("bare", "off", "on")[rep % 3 :] + ("bare", "off", "on")[: rep % 3]:
                gc.collect()
                if way == "bare":
                    got["bare"] = bare(fn, device, steps)
                else:
                    got[way] = runner(
                        strategy,
                        n,
                        str(device),
                        steps,
                        way == "on",
                        os.path.join(tmp, f"{way}.json.gz"),
                    )
            (b_wall, b_gpu), off, on = got["bare"], got["off"], got["on"]
            rows["off_wall"].append(off["wall_ms"] / b_wall)
            rows["on_wall"].append(on["wall_ms"] / b_wall)
            rows["prof_wall"].append(on["profiled_wall_ms"] / b_wall)
            if b_gpu:
                rows["off_gpu"].append(off["gpu_ms"] / b_gpu)
                rows["on_gpu"].append(on["gpu_ms"] / b_gpu)
            raw.append({"bare_wall_ms": b_wall, "bare_gpu_ms": b_gpu, "off": off, "on": on})
        med = {k: statistics.median(v) for k, v in rows.items() if v}
        out[f"{strategy}@{n}"] = {
            "median_ratio_to_bare": med,
            "bare_wall_ms": statistics.median(r["bare_wall_ms"] for r in raw),
            "bare_gpu_ms": statistics.median(r["bare_gpu_ms"] for r in raw)
            if raw[0]["bare_gpu_ms"]
            else None,
            "trace_write_s": statistics.median(r["on"]["trace_write_s"] or 0 for r in raw),
            "trace_figures_s": statistics.median(r["on"]["trace_figures_s"] or 0 for r in raw),
        }
        print(
            f"{strategy} N={n}: bare {out[f'{strategy}@{n}']['bare_wall_ms']:.3f} ms wall; ratios to bare "
            + ", ".join(f"{k} {v:.3f}x" for k, v in med.items()),
            flush=True,
        )
        del x
    return out


def export_speed(device_name: str, n: int = 100_000) -> dict[str, Any]:
    import torch

    from gpuviz.engine.profiling import write_trace

    device = torch.device(device_name)
    x = torch.arange(n, device=device).to(torch.float32)
    acts = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    tmp = Path(tempfile.mkdtemp(prefix="gpuviz-export-"))

    def profiled() -> tuple[Any, float]:
        [v**2 for v in x]
        prof = torch.profiler.profile(activities=acts, record_shapes=True, profile_memory=True)
        prof.start()
        [v**2 for v in x]
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        prof.stop()
        return prof, time.perf_counter() - t0

    prof, stop_a = profiled()
    t0 = time.perf_counter()
    prof.export_chrome_trace(str(tmp / "export_chrome_trace.json.gz"))
    a = time.perf_counter() - t0
    del prof
    prof, stop_b = profiled()
    t0 = time.perf_counter()
    write_trace(prof.profiler.kineto_results, tmp / "gpuviz.json.gz")
    b = time.perf_counter() - t0
    res = {
        "n": n,
        "profiler_stop_s": [stop_a, stop_b],
        "export_chrome_trace_s": a,
        "gpuviz_write_trace_s": b,
        "speedup": a / b,
        "export_chrome_trace_bytes": (tmp / "export_chrome_trace.json.gz").stat().st_size,
        "gpuviz_bytes": (tmp / "gpuviz.json.gz").stat().st_size,
    }
    print(
        f"export at N={n}: export_chrome_trace {a:.2f} s, gpuviz {b:.2f} s ({a / b:.1f}x); "
        f"stop {stop_a:.2f}/{stop_b:.2f} s; sizes {res['export_chrome_trace_bytes'] / 1e6:.1f} / "
        f"{res['gpuviz_bytes'] / 1e6:.1f} MB",
        flush=True,
    )
    return res


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--device", default=None)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--export", action="store_true")
    ap.add_argument("--no-overhead", action="store_true")
    ap.add_argument("--json", default=None, metavar="OUT")
    args = ap.parse_args()
    import torch

    device = args.device or ("cuda" if torch.cuda.is_available() else "cpu")
    res: dict[str, Any] = {"device": device, "torch": torch.__version__}
    if device.startswith("cuda"):
        res["gpu"] = torch.cuda.get_device_name()
    if not args.no_overhead:
        res["overhead"] = overhead(device, args.reps, args.steps)
    if args.export:
        res["export"] = export_speed(device)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
