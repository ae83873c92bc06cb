"""Where a ``gpuviz summary FILE --json --no-cache`` process's time goes (issue 25 start-up).

    python benchmarks/gen_trace.py --kernels 100000 --out /tmp/gpuviz-bench/k100k.json
    python benchmarks/startup_phases.py /tmp/gpuviz-bench/k100k.json [--repeat 3] [--workers N]

Each round runs the real command (``gpuviz.cli.main``) in a fresh process, its phases timed
by wrapping the functions the command calls: the interpreter's start (``python -c pass``, run
beside it), the imports (the modules the command imports where it uses them are imported up
front), the read (``load_trace``; the join of the column parts, ``_assemble``, on its own
line), the analysis (``gpu_activity``, then ``summarize`` beside steps and MFU), the JSON
text, and the rest (parsing argv, printing). For each it prints the wall time and this process's CPU time;
the read's line adds its children's CPU (the import children that decode chunks); the
process's line is its whole wall time (start and exit included) and CPU from its first line
on. The output is thrown away. ``--workers N`` sets ``GPUVIZ_IMPORT_WORKERS`` (0: no
children). Timings on a shared machine are noisy: compare rounds made side by side.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_import import compile_sources

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import contextlib, io, json, os, resource, sys, time
def now():
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.perf_counter(), r.ru_utime + r.ru_stime, c.ru_utime + c.ru_stime
T0 = now()
phases = {}
def timed(mod, name, key):
    f = getattr(mod, name)
    def g(*a, **k):
        t = now()
        try:
            return f(*a, **k)
        finally:
            u = now()
            w, cpu, ch = phases.get(key, (0.0, 0.0, 0.0))
            phases[key] = (w + u[0] - t[0], cpu + u[1] - t[1], ch + u[2] - t[2])
    setattr(mod, name, g)
import gpuviz.cli
import gpuviz.commands.summary as cmd
import gpuviz.analysis.activity, gpuviz.analysis.summary
import gpuviz.trace.kineto as kin
# What the command imports where it is used: counted with the imports, not the phases.
import gpuviz.analysis.hardware, gpuviz.analysis.steps, gpuviz.commands.peak_options
import gpuviz.commands.reading, gpuviz.trace.cache_memo, gpuviz.trace.kineto_parallel
timed(kin, "load_trace", "read")
timed(kin, "_assemble", "assemble")
timed(cmd, "_analyse", "analysis")  # the summary and the MFU, side by side on two threads
timed(cmd, "json_text", "json")
imported = now()
phases["imports"] = (imported[0] - T0[0], imported[1] - T0[1], 0.0)
with contextlib.redirect_stdout(io.StringIO()):
    code = gpuviz.cli.main(["summary", sys.argv[1], "--json", "--no-cache"])
end = now()
phases["total"] = (end[0] - T0[0], end[1] - T0[1], end[2])
print(json.dumps({"code": code, "phases": phases}), file=sys.stderr)
sys.stderr.flush()
os._exit(code)  # as gpuviz.cli.entry leaves after a command that only reads files
"""


def one_round(trace: str, env: dict[str, str]) -> dict[str, tuple[float, float, float]]:
    """One process: its phases, and the interpreter's start measured beside it."""
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
    start = time.perf_counter() - t
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-c", CHILD, trace], check=True, env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - t
    got = json.loads(p.stderr.strip().splitlines()[-1])
    ph = {k: tuple(v) for k, v in got["phases"].items()}
    read, asm = ph.get("read", (0, 0, 0)), ph.get("assemble", (0, 0, 0))
    total = ph.pop("total")
    parts = [v for k, v in ph.items() if k != "assemble"]
    return {
        "interpreter start": (start, 0.0, 0.0),
        "imports": ph["imports"],
        "read: decode": (read[0] - asm[0], read[1] - asm[1], read[2]),
        "read: assemble": asm,
        "analysis": ph.get("analysis", (0, 0, 0)),
        "json text": ph.get("json", (0, 0, 0)),
        "argv, output, rest": (
            total[0] - sum(v[0] for v in parts),
            total[1] - sum(v[1] for v in parts),
            0.0,
        ),
        "process": (wall, total[1], total[2]),
    }


def main(argv: list[str] | None = None) -> int:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace", help="a Kineto trace file")
    p.add_argument("--repeat", type=int, default=3, help="rounds")
    p.add_argument("--workers", type=int, default=None, help="GPUVIZ_IMPORT_WORKERS")
    a = p.parse_args(argv)
    compile_sources(REPO)
    # As the gpuviz command sets it for itself (gpuviz.cli.blas_threads), which this child,
    # importing numpy before it calls main, would not get.
    env = dict(os.environ, GPUVIZ_NO_CACHE="1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    env["PYTHONPATH"] = os.pathsep.join(x for x in (str(REPO), env.get("PYTHONPATH")) if x)
    if a.workers is not None:
        env["GPUVIZ_IMPORT_WORKERS"] = str(a.workers)
    rounds = []
    for k in range(a.repeat):
        r = one_round(a.trace, env)
        rounds.append(r)
        print(f"round {k + 1} (load {os.getloadavg()[0]:.2f}): "
              + ", ".join(f"{name} {v[0]:.3f}" for name, v in r.items()), flush=True)  # fmt: skip
    print("median over rounds: wall s / CPU s (children's CPU)")
    for name in rounds[0]:
        w = statistics.median(r[name][0] for r in rounds)
        c = statistics.median(r[name][1] for r in rounds)
        ch = statistics.median(r[name][2] for r in rounds)
        extra = f" ({ch:.3f})" if ch else ""
        print(f"  {name:<22} {w:7.3f} / {c:.3f}{extra}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
