"""Where the importer's own time goes while a single large file imports (issue 25 start-up).

    python benchmarks/startup_timeline.py /tmp/gpuviz-bench/k100k.json [--workers N] [--profile]

Runs ``gpuviz summary FILE --json --no-cache`` in this process (modules imported first) with
the importer's steps wrapped: starting the children, each chunk sent, each reply taken in (and
how long the importer waited for it), each chunk it decoded itself, each merge, each of the
summary's analysis imports run while the children decode (``meanwhile``), each file's finish,
stopping the children, the assembly and the analysis. It prints, per step, its count, its
seconds in all, and when the first began and the last ended, so that what the importer
does while the children decode (and what it waits for) is seen next to the whole. With
``--profile`` the importer (not its children) also runs under cProfile, and the 30 functions
with the most time of their own are printed after the steps. The output of the command is
thrown away.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import shutil
import sys
import tempfile
import time
from typing import Any

START = time.perf_counter()  # before the imports, which the first line times
# As the gpuviz command sets it for itself (gpuviz.cli.blas_threads) before numpy loads.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from import_timeline import Event, _now, _wrap  # noqa: E402  (the rank folder's timeline)

import gpuviz.cli  # noqa: E402
import gpuviz.commands.summary as summary_cmd  # noqa: E402
from gpuviz.trace import (  # noqa: E402
    kineto,
    kineto_chunk_decoder,
    kineto_decode,
    kineto_parallel,
    kineto_worker,
)

STEPS = (
    (kineto_worker.WorkerPool, "__init__", "start children"),
    (kineto_worker.WorkerPool, "close", "stop children"),
    (kineto_worker.Worker, "_send", "send a chunk"),
    (kineto_worker.Worker, "receive", "take a reply in"),
    (kineto_worker.LocalDecoder, "decode", "decode a chunk here"),
    (kineto_decode.FileReader, "merge", "merge a reply"),
    (kineto_decode.FileReader, "finish", "finish the file"),
    (kineto_decode.FileReader, "read_chunk", "read a chunk here (odd)"),
    (kineto_parallel._Pipeline, "run", "pipeline"),
    (kineto_parallel._Meanwhile, "step", "an analysis import"),
    (kineto, "_assemble", "assemble"),
    (kineto, "load_trace", "load_trace"),
    (summary_cmd, "_analyse", "analysis"),
    (summary_cmd, "json_text", "json text"),
)
"""The importer's steps: what is wrapped, and its label."""
BINNED = {"send a chunk": "sent", "merge a reply": "merged", "decode a chunk here": "here"}
"""The steps counted per bin, by the time each began."""


def _log_children(folder: str) -> None:
    """Make each decoder's chunk decoding append ``start end`` to ``folder/<pid>``."""
    real = kineto_chunk_decoder.ChunkDecoder.process

    def process(self: Any, *args: Any, **kw: Any) -> Any:
        t = _now()
        try:
            return real(self, *args, **kw)
        finally:
            with open(os.path.join(folder, str(os.getpid())), "a") as f:
                f.write(f"{t:.6f} {_now():.6f}\n")

    kineto_chunk_decoder.ChunkDecoder.process = process  # type: ignore[method-assign]


def _steps(log: list[Event]) -> dict[str, tuple[int, float, float, float]]:
    """Per step: its count, seconds in all, when the first began and the last ended."""
    out: dict[str, tuple[int, float, float, float]] = {}
    for t, what, _, d in log:
        n, s, first, last = out.get(what, (0, 0.0, t, t + d))
        out[what] = (n + 1, s + d, min(first, t), max(last, t + d))
    return out


def _bins(folder: str, log: list[Event], began: float, ended: float) -> None:
    """Print, per 20 ms bin: chunks sent, merged and decoded here, and children decoding (on
    average)."""
    width = 0.02
    n = int((ended - began) / width) + 1
    busy = [0.0] * n
    for name in os.listdir(folder):
        if name == str(os.getpid()):
            continue
        with open(os.path.join(folder, name)) as f:
            for line in f:
                t, u = map(float, line.split())
                for b in range(
                    max(int((t - began) / width), 0), min(int((u - began) / width) + 1, n)
                ):
                    lo, hi = began + b * width, began + (b + 1) * width
                    busy[b] += max(0.0, min(u, hi) - max(t, lo)) / width
    print(f"  {'from s':>7}" + "".join(f"{c:>8}" for c in BINNED.values()) + "  children busy")
    for b in range(n):
        lo, hi = began + b * width, began + (b + 1) * width
        counts = [sum(1 for t, what, *_ in log if what == k and lo <= t < hi) for k in BINNED]
        print(f"  {lo:7.3f}" + "".join(f"{c:>8}" for c in counts) + f"{busy[b]:>15.1f}")


def main(argv: list[str] | None = None) -> int:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace")
    p.add_argument("--workers", type=int, default=None, help="GPUVIZ_IMPORT_WORKERS")
    p.add_argument("--profile", action="store_true", help="cProfile the importer too")
    a = p.parse_args(argv)
    if a.workers is not None:
        os.environ["GPUVIZ_IMPORT_WORKERS"] = str(a.workers)
    log: list[Event] = []
    for owner, name, label in STEPS:
        _wrap(owner, name, log, label, lambda *_: 0)
    folder = tempfile.mkdtemp(prefix="gpuviz-timeline-")
    _log_children(folder)
    prof = cProfile.Profile() if a.profile else None
    if prof is not None:
        os.register_at_fork(after_in_child=prof.disable)
        prof.enable()
    imports = time.perf_counter() - START
    began = _now()
    with contextlib.redirect_stdout(io.StringIO()):
        code = gpuviz.cli.main(["summary", a.trace, "--json", "--no-cache"])
    ended = _now()
    if prof is not None:
        prof.disable()
    print(f"imports {imports:.3f} s; the command {ended - began:.3f} s (exit {code}); "
          f"children: {kineto_worker.worker_count(kineto_worker.estimated_bytes(a.trace))}")  # fmt: skip
    print(f"  {'step':<26}{'count':>7}{'seconds':>9}{'first':>8}{'last':>8}")
    steps = _steps(log)
    for label, (n, s, first, last) in sorted(steps.items(), key=lambda kv: kv[1][2]):
        print(f"  {label:<26}{int(n):>7}{s:>9.3f}{first:>8.3f}{last:>8.3f}")
    pipeline = steps.get("pipeline")
    if pipeline is not None:
        _bins(folder, log, pipeline[2], pipeline[3])
    shutil.rmtree(folder, ignore_errors=True)
    if prof is not None:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(30)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
