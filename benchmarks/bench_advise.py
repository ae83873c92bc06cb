"""Advisor benchmark: ``advise(trace)`` against the trace's import, on one Kineto trace.

    python benchmarks/gen_trace.py --kernels 1000000 --out /tmp/gpuviz-bench/k1m.json
    python benchmarks/bench_advise.py /tmp/gpuviz-bench/k1m.json [--repeat 3]

Imports the trace once (``load_trace``, timed), then runs ``advise`` ``--repeat`` times on it
and prints, side by side: the import's wall time, advise's (best and median of the repeats,
the first one including the advisor's module imports), their ratio, and where advise spends
its time (the shared figures: steps, coverages, idle gaps; then each rule). Without a file it
writes ``--kernels`` (default 1M) to ``/tmp/gpuviz-bench/`` with ``gen_trace.py`` first.

The import cache is off (``GPUVIZ_NO_CACHE=1``): the yardstick is a real import of the JSON.

Target (issue 12): advise within 0.25x the import's time, all numpy over the columns.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET = 0.25


def _ensure(path: Path | None, kernels: int) -> Path:
    if path is not None:
        return path
    out = Path("/tmp/gpuviz-bench") / f"k{kernels}.json"
    if not out.exists():
        gen = Path(__file__).with_name("gen_trace.py")
        subprocess.run(
            [sys.executable, str(gen), "--kernels", str(kernels), "--out", str(out)], check=True
        )
    return out


def _parts(trace: object) -> list[tuple[str, float]]:
    """Seconds of each shared figure, then of each rule, on a fresh context."""
    from gpuviz.analysis.advisor import AdviceContext, rules

    ctx = AdviceContext(trace)  # type: ignore[arg-type]
    out = []
    for name in ("activity", "comm", "steps", "coverages", "breakdown", "gaps"):
        t0 = time.perf_counter()
        getattr(ctx, name)
        out.append((name, time.perf_counter() - t0))
    for kind, check in rules().items():
        t0 = time.perf_counter()
        check(ctx)
        out.append((kind, time.perf_counter() - t0))
    return out


def main(argv: list[str] | None = None) -> int:
    """Print import and advise times, their ratio, and the advise breakdown."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file", nargs="?", type=Path, help="a Kineto trace (default: generate one)")
    p.add_argument("--kernels", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    path = _ensure(a.file, a.kernels)
    os.environ["GPUVIZ_NO_CACHE"] = "1"  # a cache hit would make the yardstick meaningless

    from gpuviz.trace.kineto import load_trace

    t0 = time.perf_counter()
    trace = load_trace(path)
    import_s = time.perf_counter() - t0
    from gpuviz.analysis.advisor import advise

    runs = []
    for _ in range(max(a.repeat, 1)):
        t0 = time.perf_counter()
        advice = advise(trace)
        runs.append(time.perf_counter() - t0)
    best, med = min(runs), statistics.median(runs)
    n_kernels = int((trace.slices.kind == 1).sum())
    print(
        f"file: {path} ({path.stat().st_size / 1e6:.0f} MB, {n_kernels} kernels, "
        f"{len(trace.slices)} slices)"
    )
    print(f"{'import (load_trace)':<24}{import_s:9.2f} s")
    print(f"{'advise, first run':<24}{runs[0]:9.2f} s   ratio {runs[0] / import_s:.3f}")
    print(f"{'advise, best':<24}{best:9.2f} s   ratio {best / import_s:.3f}")
    print(
        f"{'advise, median':<24}{med:9.2f} s   ratio {med / import_s:.3f}   "
        f"(target <= {TARGET}: {'met' if med / import_s <= TARGET else 'NOT met'})"
    )
    print(f"findings: {', '.join(f'{f.kind} ({f.severity})' for f in advice.findings) or 'none'}")
    if advice.errors:
        print(f"rule errors: {advice.errors}")
    print("where advise's time goes (fresh context, seconds):")
    for name, s in _parts(trace):
        print(f"  {name:<22}{s:8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
