"""What ``gpuviz profile``'s step boundary costs a real launch-bound step, inside one process.

    gpuviz profile --skip 20 benchmarks/boundary_ab.py --steps 3000 --json ab.json

Processes differ by more than the cost sought, so this runs under ``gpuviz profile`` and, after
the profiled window, switches gpuviz's work at the boundary on and off in blocks of ``--block``
steps of the launch-bound step of :mod:`profile_workload` (``--ops`` tiny kernels), in a
rotating order:

- ``on``: as ``gpuviz profile`` runs;
- ``hook off``: the step sources ignore boundaries (``StepSources.pause``: the optimizer hook
  returns at once): no timing, events or progress;
- ``events off``: the boundary without its CUDA event (the step timer's switch).

Each step is timed from the end of the step before (the device synchronized at each end, so a
step's GPU work stays in it). Per round, each arm's median step; the figure is the median over
rounds of ``arm / on`` with a percentile-bootstrap 95% interval (:mod:`paired`). The boundary's
own time (from the optimizer hook's call of the session to its return) is timed too: the direct
cost; the A/B difference adds what it costs the next step (caches, the GIL). Without
``gpuviz profile`` it says so and stops. It reaches into the session's private parts, so it is
an experiment, not a test.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from paired import median_interval
from profile_workload import launch_step, make_launch

ARMS = ("on", "hook off", "events off")


def _session() -> tuple[Any, Any]:
    """The running ``gpuviz profile`` session and its step sources, or exit."""
    import gpuviz

    hook = getattr(gpuviz, "_step_hook", None)
    sources = getattr(hook, "__self__", None)
    session = getattr(getattr(sources, "on_boundary", None), "__self__", None)
    if session is None or not hasattr(session, "_timer"):
        sys.exit("boundary_ab.py: run it under gpuviz profile")
    return session, sources


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--start", type=int, default=60, help="first step of the A/B blocks (60)")
    p.add_argument("--block", type=int, default=10)
    p.add_argument("--ops", type=int, default=600)
    p.add_argument("--json", metavar="FILE")
    p.add_argument("--parts", action="store_true", help="also time the boundary's parts")
    args = p.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x, mlp, opt = make_launch(dev)
    session, sources = _session()
    inner = sources.on_boundary
    boundary_s: list[tuple[int, float]] = []

    def timed_boundary(source: str, device: Any) -> None:
        t = time.perf_counter()
        try:
            inner(source, device)
        finally:
            boundary_s.append((k, time.perf_counter() - t))

    sources.on_boundary = timed_boundary
    parts: dict[str, list[float]] = {}

    def timed_part(owner: Any, attr: str, label: str) -> None:
        f = getattr(owner, attr)

        def wrapper(*a: Any, **kw: Any) -> Any:
            t = time.perf_counter()
            try:
                return f(*a, **kw)
            finally:
                if k >= args.start:
                    parts.setdefault(label, []).append(time.perf_counter() - t)

        setattr(owner, attr, wrapper)

    if args.parts:
        for owner, attr in (
            (session._timer, "end"),
            (session._timer, "ready"),
            (session, "_advance_profiler"),
            (session, "_emit_steps"),
            (session.sink, "emit"),
            (session, "_profiling_now"),
        ):
            timed_part(owner, attr, f"{type(owner).__name__}.{attr}")
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    def arm(name: str) -> None:
        sources._enabled = name != "hook off"
        if session._timer is not None:
            session._timer._events = name != "events off"

    rows: list[tuple[int, str, float]] = []
    sync()
    last = time.perf_counter()
    name = "on"
    for k in range(args.steps):
        if k >= args.start and (k - args.start) % args.block == 0:
            b = (k - args.start) // args.block
            rnd, i = divmod(b, len(ARMS))
            name = ARMS[(i + rnd) % len(ARMS)]
            arm(name)
        launch_step(x, mlp, opt, args.ops)
        sync()
        now = time.perf_counter()
        if k >= args.start:
            rows.append((k, name, (now - last) * 1e3))
        last = now
    arm("on")
    report(rows, boundary_s, args)
    for label, v in sorted(parts.items()):
        us = [x * 1e6 for x in v]
        print(
            f"  {label}: {len(us)} calls, median {statistics.median(us):.1f} us, mean {statistics.fmean(us):.1f} us"
        )


def report(
    rows: list[tuple[int, str, float]], boundary_s: list[tuple[int, float]], args: Any
) -> None:
    """Print (and write) each arm's cost against ``on``, per round of blocks."""
    per_round: dict[int, dict[str, list[float]]] = {}
    for k, name, ms in rows:
        rnd = (k - args.start) // (args.block * len(ARMS))
        per_round.setdefault(rnd, {}).setdefault(name, []).append(ms)
    full = [r for r in per_round.values() if all(a in r for a in ARMS)]
    out: dict[str, Any] = {"rounds": len(full), "block": args.block, "ops": args.ops}
    on = [statistics.median(r["on"]) for r in full]
    out["on_ms"] = statistics.median(on)
    for a in ARMS[1:]:
        ratios = [statistics.median(r[a]) / statistics.median(r["on"]) for r in full]
        fig = median_interval(ratios)
        med, lo, hi = fig["median"], fig["lo"], fig["hi"]
        out[a] = fig
        print(f"{a}: {med:.4f}x of on [{lo:.4f}, {hi:.4f}] over {len(full)} rounds")
    inside = [s * 1e6 for k, s in boundary_s if k >= args.start]
    if inside:
        out["boundary_us_median"] = statistics.median(inside)
        out["boundary_us_mean"] = statistics.fmean(inside)
        print(
            f"boundary: median {out['boundary_us_median']:.1f} us, mean "
            f"{out['boundary_us_mean']:.1f} us (all arms); on: {out['on_ms']:.3f} ms a step"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
