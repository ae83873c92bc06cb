"""Where the importer's own process spends its time (cProfile), with a given number of children.

    python benchmarks/import_profile.py TRACE [--workers N] [--top 30]

Prints the wall time of ``load_trace``, then the importer process's top functions by own time
and by cumulative time (the children are not profiled: what is shown is the serial part that
more cores do not shorten).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--top", type=int, default=30)
    args = ap.parse_args()
    os.environ["GPUVIZ_NO_CACHE"] = "1"
    if args.workers is not None:
        os.environ["GPUVIZ_IMPORT_WORKERS"] = str(args.workers)
    from gpuviz.trace.kineto import load_trace

    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    trace = load_trace(args.trace)
    prof.disable()
    wall = time.perf_counter() - t0
    print(f"{args.trace}: {trace.event_count} events in {wall:.2f} s, workers={args.workers}")
    stats = pstats.Stats(prof)
    stats.sort_stats("tottime").print_stats(args.top)
    stats.sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
