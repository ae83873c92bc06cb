"""Import benchmark: gpuviz vs ``json.load`` vs HolisticTraceAnalysis, on one Kineto trace.

    python benchmarks/gen_trace.py --kernels 100000 --out /tmp/gpuviz-bench/k100k.json
    python benchmarks/bench_import.py /tmp/gpuviz-bench/k100k.json [--gz] [--skip-hta] [--repeat N]

Each contender runs in a fresh process of its own, so that imports and freed memory do not
leak from one into the next. For each it prints the wall time of the process's work (after
its imports), the whole process's wall time, its CPU time (its children's included), and its
peak memory: the peak
resident set of the process, and the peak of the sum over the process and its children,
sampled every 50 ms (gpuviz reads a large file with two child processes; HTA may
parse with a pool). Ratios are to ``json.load`` of the same file.

- ``json.load``: the standard library's parse of the uncompressed file (the reference).
- ``gpuviz``: ``gpuviz.trace.kineto.load_trace`` plus ``gpuviz.analysis.summary.summarize``
  (import only when that module is missing; the report says which).
- ``HTA``: ``hta.trace_analysis.TraceAnalysis(trace_dir=...)`` on a folder holding only a link
  to the file named ``rank-0.json`` (HTA reads a folder, rank-N naming).

With ``--gz``, the file is also compressed to ``FILE.gz`` (if not there yet) and gpuviz and
``json.load`` (of ``gzip.open``) run on that too.

Targets (issue 2): gpuviz import + summary within 0.2x ``json.load``'s wall time and 0.3x its
peak memory, at 100k and at 1M kernels; a 1M-kernel file in 15 s or less.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

_CHILD = r"""
import json, os, resource, sys, time
t0 = time.perf_counter()
which, path = sys.argv[1], sys.argv[2]
note = ""
if which == "json":
    import gzip
    t1 = time.perf_counter()
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        value = json.load(f)
    n = len(value["traceEvents"]) if isinstance(value, dict) else len(value)
elif which == "gpuviz":
    from gpuviz.trace.kineto import load_trace
    try:
        from gpuviz.analysis.summary import summarize
    except ImportError:
        summarize = None
        note = "import only (no gpuviz.analysis.summary)"
    t1 = time.perf_counter()
    trace = load_trace(path)
    t_load = time.perf_counter() - t1
    if summarize is not None:
        summarize(trace)
        note = f"load {t_load:.2f} s + summary {time.perf_counter() - t1 - t_load:.2f} s"
    n = trace.event_count
elif which == "hta":
    import logging
    logging.disable(logging.CRITICAL)
    from hta.trace_analysis import TraceAnalysis
    t1 = time.perf_counter()
    analysis = TraceAnalysis(trace_dir=path)
    n = sum(len(analysis.t.get_trace(r)) for r in analysis.t.get_ranks())
t2 = time.perf_counter()
ru = resource.getrusage(resource.RUSAGE_SELF)
rc = resource.getrusage(resource.RUSAGE_CHILDREN)  # gpuviz's import workers, HTA's pool
cpu = ru.ru_utime + ru.ru_stime + rc.ru_utime + rc.ru_stime
print(json.dumps({"work_s": t2 - t1, "imports_s": t1 - t0, "cpu_s": cpu,
                  "maxrss_mb": ru.ru_maxrss / 1024, "events": n, "note": note}))
"""


def run_one(which: str, path: str, python: str) -> dict[str, float | str]:
    """Run one contender in a fresh process; sample the memory of its process tree."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [python, "-c", _CHILD, which, path],
        env=dict(os.environ, GPUVIZ_NO_CACHE="1"),  # the import itself: never a cache hit
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ps = psutil.Process(proc.pid)
    tree_peak = 0
    children: list[psutil.Process] = []
    last_scan = 0.0
    while proc.poll() is None:
        now = time.perf_counter()
        try:
            if now - last_scan > 0.5:  # finding children scans /proc: not at every sample
                children = ps.children(recursive=True)
                last_scan = now
            rss = ps.memory_info().rss
            for c in children:
                try:
                    rss += c.memory_info().rss
                except psutil.Error:
                    pass
            tree_peak = max(tree_peak, rss)
        except psutil.Error:
            pass
        time.sleep(0.05)
    out, err = proc.communicate()
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{which} failed ({proc.returncode}):\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["process_s"] = wall
    result["tree_peak_mb"] = tree_peak / 1e6 * (1e6 / 2**20)
    return result


def _hta_folder(path: Path) -> str:
    folder = Path(tempfile.mkdtemp(prefix="gpuviz-bench-hta-"))
    suffix = ".json.gz" if path.name.endswith(".gz") else ".json"
    os.symlink(path.resolve(), folder / f"rank-0{suffix}")
    return str(folder)


def _row(name: str, r: dict[str, float | str], ref: dict[str, float | str] | None) -> str:
    peak = max(float(r["maxrss_mb"]), float(r["tree_peak_mb"]))
    text = (
        f"{name:<10} work {float(r['work_s']):7.2f} s  process {float(r['process_s']):7.2f} s"
        f"  cpu {float(r['cpu_s']):7.2f} s  peak RSS {float(r['maxrss_mb']):7.0f} MB"
        f"  (tree {float(r['tree_peak_mb']):6.0f} MB)"
    )
    if ref is not None:
        ref_peak = max(float(ref["maxrss_mb"]), float(ref["tree_peak_mb"]))
        text += (
            f"  | x json.load: work {float(r['work_s']) / float(ref['work_s']):.3f}"
            f", process {float(r['process_s']) / float(ref['process_s']):.3f}"
            f", memory {peak / ref_peak:.3f}"
        )
    if r.get("note"):
        text += f"  [{r['note']}]"
    return text


def bench(path: Path, contenders: list[str], repeat: int, python: str) -> None:
    """Run and print one file's figures (best of ``repeat`` runs by work time)."""
    size = path.stat().st_size
    print(f"\n== {path} ({size / 1e6:.0f} MB)")
    results: dict[str, dict[str, float | str]] = {}
    for which in contenders:
        target = _hta_folder(path) if which == "hta" else str(path)
        runs = []
        for _ in range(repeat if which != "hta" else 1):
            runs.append(run_one(which, target, python))
        if which == "hta":
            shutil.rmtree(target, ignore_errors=True)
        best = min(runs, key=lambda r: float(r["work_s"]))
        results[which] = best
        print(_row(which, best, results.get("json")), flush=True)
    n = {k: v["events"] for k, v in results.items()}
    print(f"events: {n}")


def main(argv: list[str] | None = None) -> int:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file", type=Path, help="an uncompressed Kineto trace (.json)")
    p.add_argument("--gz", action="store_true", help="also run on FILE.gz (made if missing)")
    p.add_argument("--skip-hta", action="store_true", help="leave HTA out (it is slow)")
    p.add_argument("--skip-json", action="store_true", help="leave json.load out")
    p.add_argument("--repeat", type=int, default=1, help="runs per contender; the best is kept")
    a = p.parse_args(argv)
    python = sys.executable
    contenders = [
        c for c, skip in (("json", a.skip_json), ("gpuviz", False), ("hta", a.skip_hta)) if not skip
    ]
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    bench(a.file, contenders, a.repeat, python)
    if a.gz:
        gz = a.file.with_name(a.file.name + ".gz")
        if not gz.exists():
            with open(a.file, "rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst, 1 << 22)
        bench(gz, [c for c in contenders if c != "hta"], a.repeat, python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
