"""Import benchmark: gpuviz vs ``json.load`` vs HolisticTraceAnalysis, on a Kineto trace.

    python benchmarks/gen_trace.py --kernels 100000 --out /tmp/gpuviz-bench/k100k.json
    python benchmarks/bench_import.py /tmp/gpuviz-bench/k100k.json [--gz] [--skip-hta] [--repeat N]
    python benchmarks/gen_trace.py --kernels 8000 --world 64 --out /tmp/gpuviz-bench/r64
    python benchmarks/bench_import.py /tmp/gpuviz-bench/r64 --skip-hta --repeat 3

TRACE is a file or a folder of per-rank files. Each contender runs in a fresh process of its
own, so that imports and freed memory do not leak from one into the next. For each it prints
the wall time of the process's work (after its imports), its CPU time for that work (its
children's included), the whole process's wall time, and its peak memory: the peak resident
set of the process, and the peak of the sum over the process and its children, sampled every
10 ms, the children looked up at every sample (gpuviz decodes large imports in child
processes that live a fraction of a second; HTA may parse with a pool). Ratios are to
``json.load`` of the same files, in the same round. Memory is given twice: the sum of resident
sets, which counts the pages that the children share once per process (a forked child's
whole inheritance from the importer, a spawned one's libraries), and the sum of proportional
sets (PSS), which splits each shared page among its users: the memory the tree takes. Both
include the memory-backed scratch files (``memfd``) through which gpuviz's import hands work
to its children and gets their replies: those pages are in no process's resident set.

- ``json``: the standard library's ``json.load`` of every file, all held parsed at once (the
  reference; for a folder, the list of every rank's parsed file).
- ``gpuviz``: ``gpuviz.trace.kineto.load_trace`` plus ``gpuviz.analysis.summary.summarize``,
  on all the cores it may use (the note says how many import children it started).
- ``gpuviz-1p`` (with ``--single``): the same in one process (``GPUVIZ_IMPORT_WORKERS=0``).
- ``gpuviz-plain`` (with ``--plain-args``): the same with the args text kept uncompressed
  (``GPUVIZ_ARGS_ZLIB=0``): what compressing it costs in time and saves in memory.
- ``gpuviz-spawn`` (with ``--spawn``): the same with the children spawned as fresh
  interpreters (``GPUVIZ_IMPORT_START=spawn``), as on macOS, instead of forked from the
  importer (the default on Linux).
- ``gpuviz-par`` (with ``--parallel``): the same with a child for every core but one, however
  busy the cores are (``GPUVIZ_IMPORT_WORKERS``; by default gpuviz counts only idle cores).
- ``gpuviz-wN`` (with ``--workers N,N,...``): the same with exactly N children, for each N:
  time against memory, since every child holds about 35 MB (Python, numpy, msgspec).
- ``before`` (with ``--baseline DIR``): the same, by the gpuviz source tree in DIR (for example
  ``git worktree add DIR main``), so that before and after are measured side by side.
- ``HTA``: ``hta.trace_analysis.TraceAnalysis(trace_dir=...)`` on a folder holding only links
  to the files, named ``rank-N.json`` (HTA reads a folder, rank-N naming).

With ``--repeat N`` the contenders take turns, N rounds, so that each round's ratios compare
runs made under about the same load (other processes share the CPUs). It prints each round,
then the best round's figures and the range of the ratios over all rounds.

With ``--gz``, the file is also compressed to ``FILE.gz`` (if not there yet) and gpuviz and
``json.load`` (of ``gzip.open``) run on that too.

Targets (issue 14): gpuviz import + summary within 0.2x ``json.load``'s wall time and 0.3x its
peak memory, at 100k and at 1M kernels; a folder of 64 rank files within 0.25x the time of
``json.load`` of all its files and 0.3x the memory of holding them parsed.
"""

from __future__ import annotations

import argparse
import compileall
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_CHILD = r"""
import json, os, resource, sys, time
t0 = time.perf_counter()
which, path = sys.argv[1], sys.argv[2]
note = ""
def cpu():
    ru = resource.getrusage(resource.RUSAGE_SELF)
    rc = resource.getrusage(resource.RUSAGE_CHILDREN)  # gpuviz's import workers, HTA's pool
    return ru.ru_utime + ru.ru_stime + rc.ru_utime + rc.ru_stime
if which == "json":
    import gzip
    files = ([os.path.join(path, f) for f in sorted(os.listdir(path))
              if f.endswith((".json", ".json.gz"))] if os.path.isdir(path) else [path])
    t1 = time.perf_counter()
    c1 = cpu()
    held = []
    for p in files:
        opener = gzip.open if p.endswith(".gz") else open
        with opener(p, "rb") as f:
            held.append(json.load(f))
    n = sum(len(v["traceEvents"]) if isinstance(v, dict) else len(v) for v in held)
elif which.startswith("gpuviz") or which == "before":
    import gpuviz
    from gpuviz.trace import kineto_worker
    from gpuviz.trace.kineto import load_trace
    children = [0]
    _pool_init = kineto_worker.WorkerPool.__init__
    def _count_children(self, n, *rest):  # the children the import decides to start
        children[0] = max(children[0], n)
        _pool_init(self, n, *rest)
    kineto_worker.WorkerPool.__init__ = _count_children
    try:
        from gpuviz.analysis.summary import summarize
    except ImportError:
        summarize = None
        note = "import only (no gpuviz.analysis.summary)"
    t1 = time.perf_counter()
    c1 = cpu()
    trace = load_trace(path)
    t_load = time.perf_counter() - t1
    if summarize is not None:
        summarize(trace)
        note = f"load {t_load:.2f} s + summary {time.perf_counter() - t1 - t_load:.2f} s"
    note += f"; {children[0]} children"
    if which == "before":
        note += f"; gpuviz from {os.path.dirname(os.path.dirname(gpuviz.__file__))}"
    n = trace.event_count
elif which == "hta":
    import logging
    logging.disable(logging.CRITICAL)
    from hta.trace_analysis import TraceAnalysis
    t1 = time.perf_counter()
    c1 = cpu()
    analysis = TraceAnalysis(trace_dir=path)
    n = sum(len(analysis.t.get_trace(r)) for r in analysis.t.get_ranks())
t2 = time.perf_counter()
c2 = cpu()
ru = resource.getrusage(resource.RUSAGE_SELF)
rc = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"work_s": t2 - t1, "imports_s": t1 - t0, "cpu_s": c2 - c1,
                  "maxrss_mb": ru.ru_maxrss / 1024, "child_maxrss_mb": rc.ru_maxrss / 1024,
                  "events": n, "note": note}))
"""


def run_one(
    which: str, path: str, python: str, baseline: str | None = None
) -> dict[str, float | str]:
    """Run one contender in a fresh process; sample the memory of its process tree."""
    env = dict(os.environ, GPUVIZ_NO_CACHE="1")  # the import itself: never a cache hit
    if which == "gpuviz-1p":
        env["GPUVIZ_IMPORT_WORKERS"] = "0"
    if which == "gpuviz-plain":
        env["GPUVIZ_ARGS_ZLIB"] = "0"
    if which == "gpuviz-spawn":
        env["GPUVIZ_IMPORT_START"] = "spawn"
    if which == "gpuviz-par":
        env["GPUVIZ_IMPORT_WORKERS"] = str(max((os.cpu_count() or 2) - 1, 1))
    if which.startswith("gpuviz-w"):  # --workers N: exactly N children
        env["GPUVIZ_IMPORT_WORKERS"] = which.removeprefix("gpuviz-w")
    cwd = None
    if which == "before" and baseline:
        env["PYTHONPATH"] = os.pathsep.join([baseline, env.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        )
        cwd = baseline  # ``python -c`` puts its working folder first on sys.path
    code, out, err, wall, (tree_peak, tree_pss_peak, scratch_peak) = run_sampled(
        [python, "-c", _CHILD, which, os.path.abspath(path)], env=env, cwd=cwd
    )
    if code != 0:
        raise RuntimeError(f"{which} failed ({code}):\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result["process_s"] = wall
    if tree_peak:
        # The process's own peak, which the kernel keeps exactly, bounds the tree's from below.
        own = float(result["maxrss_mb"]) * 2**20
        result["tree_peak_mb"] = max(tree_peak, own) / 2**20
        result["tree_pss_peak_mb"] = tree_pss_peak / 2**20
        result["scratch_peak_mb"] = scratch_peak / 2**20
    else:  # no sampling: the process's peak plus its largest child's (a bound)
        result["tree_peak_mb"] = float(result["maxrss_mb"]) + float(result["child_maxrss_mb"])
    return result


COMPILED_DEPENDENCIES = ("numpy", "msgspec", "typing_extensions")
"""The packages a ``gpuviz summary`` imports, byte-compiled too where they were installed
without (``pip install --no-compile``, as the GPU host's numpy and its wheels are).
msgspec imports ``typing_extensions`` where it is installed: uncompiled on the H200 host,
its import took 50 ms of a 0.2 s ``gpuviz summary`` start (2026-11-29)."""


def compile_sources(*trees: str | os.PathLike[str]) -> None:
    """Byte-compile the ``gpuviz`` package of each source tree, as installing it does, and
    the :data:`COMPILED_DEPENDENCIES` where their folders can be written.

    Where ``PYTHONDONTWRITEBYTECODE`` is set (this project's VM sets it), a source checkout never
    gets its ``__pycache__``: every contender process then compiles gpuviz's ~100 modules
    again, about 0.08 s of a 0.9 s ``gpuviz summary`` on the 2-core VM, which no installed
    gpuviz pays. Existing ``.pyc`` files are read even with that variable set. The 16-core
    H200 host sets it too, and its numpy has no ``.pyc`` files: ``import numpy`` took 0.31-0.40 s
    there (2026-11-29), against 0.08-0.13 s compiled on the VM, in every contender that
    imports it and none that does not (``python -c json.load``).
    """
    import importlib.util

    for tree in trees:
        pkg = Path(tree) / "gpuviz"
        if pkg.is_dir():
            compileall.compile_dir(str(pkg), quiet=1)
    for name in COMPILED_DEPENDENCIES:
        spec = importlib.util.find_spec(name)
        if spec is None:
            continue
        for folder in spec.submodule_search_locations or []:
            if os.access(folder, os.W_OK):
                compileall.compile_dir(folder, quiet=1, workers=0)
        if spec.submodule_search_locations is None and spec.origin:  # a module, not a package
            if os.access(os.path.dirname(spec.origin), os.W_OK):
                compileall.compile_file(spec.origin, quiet=1)


def run_sampled(
    cmd: list[str], env: dict[str, str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> tuple[int, str, str, float, tuple[int, int, int]]:
    """Run ``cmd`` as a fresh process, sampling its tree's memory (:func:`sample_tree_memory`).

    Returns its exit status, stdout, stderr, wall seconds and the memory peaks. Output goes to
    files, not pipes: the sampler reads nothing until the process ends, and a child that
    writes more than a pipe holds (a 64-rank summary's JSON) would wait on it forever.
    """
    with tempfile.TemporaryFile("w+") as out_f, tempfile.TemporaryFile("w+") as err_f:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=out_f, stderr=err_f, text=True)
        peaks = sample_tree_memory(proc)
        proc.wait()
        wall = time.perf_counter() - start
        out_f.seek(0)
        err_f.seek(0)
        return proc.returncode, out_f.read(), err_f.read(), wall, peaks


def sample_tree_memory(proc: subprocess.Popen[str]) -> tuple[int, int, int]:
    """Sample a running process's tree until it exits: the peaks of the sum of its resident
    sets, of its proportional sets (PSS), and of its memory-backed scratch files, in bytes
    (the first two include the scratch files; all 0 where Linux does not tell them).

    Every 10 ms, the whole tree: an import's children live for a fraction of a second
    (forked ones start in ms), so they are looked for at every sample, through the kernel's
    lists of children, which is quick, not by scanning /proc. A lone process's resident set
    is read from statm, which costs nothing; smaps_rollup walks the page tables, which held
    json.load (800 MB) back by a quarter on 2 cores.
    """
    tree_peak = tree_pss_peak = scratch_peak = 0
    if _smaps_rollup(proc.pid) is None:
        return 0, 0, 0
    while proc.poll() is None:
        pids = _tree(proc.pid)
        rss = pss = 0
        for pid in pids:
            got = _smaps_rollup(pid) if len(pids) > 1 else _statm_rss(pid)
            if got is not None:
                rss += got[0]
                pss += got[1]
        scratch = _scratch_bytes(pids)
        scratch_peak = max(scratch_peak, scratch)
        tree_peak = max(tree_peak, rss + scratch)
        tree_pss_peak = max(tree_pss_peak, pss + scratch)
        time.sleep(0.01)
    return tree_peak, tree_pss_peak, scratch_peak


def _scratch_bytes(pids: list[int]) -> int:
    """Memory held in the tree's memory-backed scratch files (``memfd``), each counted once.

    gpuviz's import hands chunks and replies to its children through such files. Their pages
    are in no process's resident set (they are read with ``pread``, never mapped), yet they
    are memory the import holds.
    """
    seen: set[tuple[int, int]] = set()
    total = 0
    for pid in pids:
        fd_dir = f"/proc/{pid}/fd"
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            path = os.path.join(fd_dir, fd)
            try:
                if not os.readlink(path).startswith("/memfd:"):
                    continue
                st = os.stat(path)
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if key not in seen:
                seen.add(key)
                total += st.st_blocks * 512
    return total


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants, from the kernel's lists of each task's children."""
    out = [pid]
    for p in out:  # grows as children are found
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                with open(f"/proc/{p}/task/{t}/children", "rb") as f:
                    out.extend(int(c) for c in f.read().split())
            except (OSError, ValueError):
                pass
    return out


def _statm_rss(pid: int) -> tuple[int, int] | None:
    """A process's resident set size in bytes, twice (as RSS and as PSS), from statm."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            pages = int(f.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    rss = pages * os.sysconf("SC_PAGE_SIZE")
    return rss, rss


def _smaps_rollup(pid: int) -> tuple[int, int] | None:
    """A process's resident and proportional set sizes in bytes (shared pages split among
    their users, for PSS), or None where Linux does not tell them."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            text = f.read()
    except OSError:
        return None
    rss = pss = 0
    for line in text.splitlines():
        if line.startswith(b"Rss:"):
            rss = int(line.split()[1]) * 1024
        elif line.startswith(b"Pss:"):
            pss = int(line.split()[1]) * 1024
    return rss, pss


def _hta_folder(path: Path) -> str:
    folder = Path(tempfile.mkdtemp(prefix="gpuviz-bench-hta-"))
    files = (
        sorted(f for f in path.iterdir() if f.name.endswith((".json", ".json.gz")))
        if path.is_dir()
        else [path]
    )
    for i, f in enumerate(files):
        suffix = ".json.gz" if f.name.endswith(".gz") else ".json"
        os.symlink(f.resolve(), folder / f"rank-{i}{suffix}")
    return str(folder)


def _peak(r: dict[str, float | str]) -> float:
    return max(float(r["maxrss_mb"]), float(r["tree_peak_mb"]))


def _peak_pss(r: dict[str, float | str]) -> float:
    """The peak memory with pages shared between the processes counted once: the largest of
    the process's own peak RSS and the sampled sum of PSS over its tree."""
    return max(float(r["maxrss_mb"]), float(r.get("tree_pss_peak_mb", 0.0)))


def _row(name: str, r: dict[str, float | str], ref: dict[str, float | str] | None) -> str:
    text = (
        f"{name:<10} work {float(r['work_s']):7.2f} s  cpu {float(r['cpu_s']):7.2f} s"
        f"  process {float(r['process_s']):7.2f} s  peak RSS {float(r['maxrss_mb']):7.0f} MB"
        f"  (tree {float(r['tree_peak_mb']):6.0f} MB, PSS {float(r.get('tree_pss_peak_mb', 0)):6.0f},"
        f" of which scratch files {float(r.get('scratch_peak_mb', 0)):4.0f})"
    )
    if ref is not None:
        text += (
            f"  | x json.load: work {float(r['work_s']) / float(ref['work_s']):.3f}"
            f", cpu {float(r['cpu_s']) / float(ref['cpu_s']):.3f}"
            f", memory {_peak(r) / _peak(ref):.3f} (PSS {_peak_pss(r) / _peak(ref):.3f})"
        )
    if r.get("note"):
        text += f"  [{r['note']}]"
    return text


def _size(path: Path) -> int:
    if path.is_dir():
        return sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    return path.stat().st_size


def bench(
    path: Path, contenders: list[str], repeat: int, python: str, baseline: str | None = None
) -> None:
    """Run and print one trace's figures: ``repeat`` rounds, the contenders taking turns."""
    files = len([f for f in path.iterdir() if f.is_file()]) if path.is_dir() else 1
    print(f"\n== {path} ({_size(path) / 1e6:.0f} MB in {files} file{'s' * (files > 1)})")
    rounds: list[dict[str, dict[str, float | str]]] = []
    hta_dir = _hta_folder(path) if "hta" in contenders else ""
    try:
        for k in range(repeat):
            results: dict[str, dict[str, float | str]] = {}
            print(f"round {k + 1}/{repeat}, load average {os.getloadavg()[0]:.1f}:")
            for which in contenders:
                if which == "hta" and k:
                    continue  # slow; once is enough
                target = hta_dir if which == "hta" else str(path)
                results[which] = run_one(which, target, python, baseline)
                print("  " + _row(which, results[which], results.get("json")), flush=True)
            rounds.append(results)
    finally:
        if hta_dir:
            shutil.rmtree(hta_dir, ignore_errors=True)
    print(f"events: { ({k: v['events'] for k, v in rounds[0].items()}) }")
    if repeat > 1 and "json" in contenders:
        for which in contenders:
            if which in ("json", "hta"):
                continue
            work = [float(r[which]["work_s"]) / float(r["json"]["work_s"]) for r in rounds]
            cpu = [float(r[which]["cpu_s"]) / float(r["json"]["cpu_s"]) for r in rounds]
            mem = [_peak(r[which]) / _peak(r["json"]) for r in rounds]
            pss = [_peak_pss(r[which]) / _peak(r["json"]) for r in rounds]
            print(
                f"{which:<10} x json.load over {repeat} rounds: work {min(work):.3f}-{max(work):.3f}"
                f" (median {statistics.median(work):.3f}), cpu {min(cpu):.3f}-{max(cpu):.3f},"
                f" memory {min(mem):.3f}-{max(mem):.3f} (PSS {min(pss):.3f}-{max(pss):.3f})"
            )


def main(argv: list[str] | None = None) -> int:
    """The command line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("trace", type=Path, help="an uncompressed Kineto trace (.json), or a folder")
    p.add_argument("--gz", action="store_true", help="also run on FILE.gz (made if missing)")
    p.add_argument("--skip-hta", action="store_true", help="leave HTA out (it is slow)")
    p.add_argument("--skip-json", action="store_true", help="leave json.load out")
    p.add_argument("--single", action="store_true", help="also gpuviz in one process")
    p.add_argument("--parallel", action="store_true", help="also gpuviz with children forced")
    p.add_argument("--spawn", action="store_true", help="also gpuviz with spawned children")
    p.add_argument(
        "--plain-args", action="store_true", help="also gpuviz with the args text uncompressed"
    )
    p.add_argument("--repeat", type=int, default=1, help="rounds (contenders take turns)")
    p.add_argument(
        "--workers", metavar="N,N,...", help="also gpuviz with exactly N children, for each N"
    )
    p.add_argument("--baseline", metavar="DIR", help="also gpuviz from this source tree ('before')")
    a = p.parse_args(argv)
    python = sys.executable
    contenders = [
        c
        for c, skip in (
            ("json", a.skip_json),
            ("before", not a.baseline),
            ("gpuviz", False),
            ("gpuviz-plain", not a.plain_args),
            ("gpuviz-spawn", not a.spawn),
            ("gpuviz-1p", not a.single),
            ("gpuviz-par", not a.parallel),
            ("hta", a.skip_hta),
        )
        if not skip
    ]
    if a.workers:  # before HTA, which is slow
        at = contenders.index("hta") if "hta" in contenders else len(contenders)
        contenders[at:at] = [f"gpuviz-w{int(n)}" for n in a.workers.split(",")]
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    baseline = str(Path(a.baseline).resolve()) if a.baseline else None
    compile_sources(Path(__file__).resolve().parents[1], *([baseline] if baseline else []))
    bench(a.trace, contenders, a.repeat, python, baseline)
    if a.gz and a.trace.is_file():
        gz = a.trace.with_name(a.trace.name + ".gz")
        if not gz.exists():
            with open(a.trace, "rb") as src, gzip.open(gz, "wb", compresslevel=6) as dst:
                shutil.copyfileobj(src, dst, 1 << 22)
        bench(gz, [c for c in contenders if c != "hta"], a.repeat, python, baseline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
