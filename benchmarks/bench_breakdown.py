"""Attribution benchmark: every ``gpuviz breakdown`` table against the trace's import.

    python benchmarks/gen_trace.py --kernels 1000000 --stack --out /tmp/gpuviz-bench/k1m-stack.json
    python benchmarks/bench_breakdown.py /tmp/gpuviz-bench/k1m-stack.json

Imports the trace once (``load_trace``, timed, import cache off: the yardstick is a real
import of the JSON), then times, on a fresh attribution: the attribution itself (the call
forest, launches, backward links), then each table (op, op-shape, module, line, kernel, step),
and prints for each table the attribution plus that table (what one ``gpuviz breakdown --by X``
pays after the import) against the import, and the sum of all of them. Without a file it writes
``--kernels`` (default 1M) with ``gen_trace.py --stack`` (Python frames around forward ops,
a third of the ops in backward on an autograd thread with ``fwdbwd`` flows) first.

Target (issue 23): one breakdown within 0.25x the import's time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

TARGET = 0.25


def _ensure(path: Path | None, kernels: int) -> Path:
    if path is not None:
        return path
    out = Path("/tmp/gpuviz-bench") / f"k{kernels}-stack.json"
    if not out.exists():
        gen = Path(__file__).with_name("gen_trace.py")
        subprocess.run(
            [sys.executable, str(gen), "--kernels", str(kernels), "--stack", "--out", str(out)],
            check=True,
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """Print the import's time, each part's, their sum and the ratio."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace", nargs="?", type=Path, help="a Kineto trace (default: generate one)")
    p.add_argument("--kernels", type=int, default=1_000_000)
    a = p.parse_args(argv)
    os.environ["GPUVIZ_NO_CACHE"] = "1"
    path = _ensure(a.trace, a.kernels)

    from gpuviz.analysis.attribution import _attribute
    from gpuviz.analysis.breakdown import kernel_breakdown, step_breakdown_table
    from gpuviz.analysis.modules import module_table
    from gpuviz.analysis.op_table import op_table
    from gpuviz.analysis.source_lines import line_table
    from gpuviz.trace.kineto import load_trace

    t0 = time.perf_counter()
    trace = load_trace(path)
    imported = time.perf_counter() - t0
    n = int(trace.gpu_activity_mask().sum())
    parts: list[tuple[str, float]] = []
    t0 = time.perf_counter()
    att = _attribute(trace)  # uncached: the figure a first `gpuviz breakdown` pays
    parts.append(("attribution", time.perf_counter() - t0))
    for name, fn in (
        ("op", lambda: op_table(att)),
        ("op-shape", lambda: op_table(att, by_shape=True)),
        ("module", lambda: module_table(att)),
        ("line", lambda: line_table(att)),
        ("line --mine", lambda: line_table(att, mine=True)),
        ("kernel", lambda: kernel_breakdown(att)),
        ("step", lambda: step_breakdown_table(att)),
    ):
        t0 = time.perf_counter()
        table = fn()
        parts.append((f"{name} ({len(table.rows)} rows)", time.perf_counter() - t0))
    total = sum(s for _, s in parts)
    print(f"trace: {path} ({n} kernels, copies and sets; {len(trace.slices)} slices)")
    print(f"import: {imported:.2f} s")
    first = parts[0][1]
    print(f"  {parts[0][0]:<28} {first:7.3f} s")
    worst = 0.0
    for name, s in parts[1:]:
        # What one `gpuviz breakdown --by X` pays after the import: the attribution and X.
        ratio = (first + s) / imported
        worst = max(worst, ratio)
        print(f"  {name:<28} {s:7.3f} s   with the attribution: {ratio:.3f}x the import")
    print(
        f"one table at most {worst:.3f}x the import (target {TARGET}x); all seven tables "
        f"one after another: {total:.2f} s = {total / imported:.3f}x"
    )
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
