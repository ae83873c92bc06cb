"""Allocator snapshot benchmarks: ``gpuviz memory`` and the Memory view, three cases.

    python benchmarks/bench_memory.py synthetic [...]   synthetic snapshots: figures and frames
    python benchmarks/bench_memory.py real [...]        a large snapshot made from a recorded one
    python benchmarks/bench_memory.py ranks [...]       a folder of rank snapshots

``python benchmarks/bench_memory.py CASE --help`` describes each case.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import pickle
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

SYNTHETIC_DOC = """Allocator snapshot benchmark: gpuviz open + figures vs ``pickle.load``, and the view's first frame.

    python benchmarks/bench_memory.py synthetic [--entries 100000 1000000] [--dir /tmp/gpuviz-bench-mem]
                                                [--repeat 3] [--no-view]

Snapshots are made by ``gpuviz.trace.synthetic_snapshot`` in PyTorch's real layout (a training
loop through a caching-allocator model: segments with blocks, the ring-buffer history with
shared frame dicts, annotations) and pickled as ``torch.cuda.memory._dump_snapshot`` does.
They are kept in ``--dir`` and reused.

Each contender runs in a fresh process per repetition, so freed memory and warm caches do not
leak from one into the next; the table shows the best of ``--repeat`` runs of each, and the
ratio to ``pickle.load`` of the same file:

- ``pickle.load``: the standard library's unpickler on the file (what memory_viz's loader and
  most scripts do; it would also run any code the file names).
- ``gpuviz``: ``load_snapshot`` (the no-globals unpickler, columns, allocation intervals) plus
  ``snapshot_figures`` (everything ``gpuviz memory --json`` prints).
- ``view first frame`` (Qt, offscreen, 1600x900): from the timeline's drawing model (which
  the app builds in its loader thread, reported apart as ``model``) to the first painted frame
  of the active memory timeline: the widget, the LOD raster of the full window, the paint.
  ``zoom`` is the next frame after zooming to 1% of the window; ``pan``, the median of 10
  frames that each pan that view by a tenth (issue 25: at most 16 ms).

Targets (issue 13): open + figures at most 1.5x ``pickle.load``; the first frame at 1M entries
at most 100 ms.
"""

REAL_DOC = """A large snapshot made from a real one (issue 25): ``gpuviz memory --json`` vs ``pickle.load``.

    python benchmarks/bench_memory.py real [--entries 3000000] [--rounds 5]
        [--source tests/data/snapshots/snap_train.pickle.gz] [--dir /tmp/gpuviz-bench-snapreal]

The file is made by repeating the device trace of a snapshot recorded on an H100 (TinyGPT
training, 7,372 entries) until it has ``--entries`` entries: each repetition's times are shifted
past the previous one's end and its addresses past the previous one's range, so allocs and frees
still pair within it. As PyTorch writes them, frame dicts are shared by every entry (the pickle's
memo makes each one object), a frames list is shared as the recording shares it (an alloc and
its frees) but new in each repetition, and every entry has its own ``compile_context`` string.
The annotations are repeated the same way; the segments are the recording's final state. It
is pickled as ``torch.cuda.memory._dump_snapshot`` does, kept in ``--dir`` and reused.

Both contenders are whole processes, alternated in each round so that the machine's load hits
both alike, timed from start to exit, their peak memory the kernel's ``ru_maxrss`` of each (``wait4``):

- ``pickle.load``: ``python -c 'import pickle; pickle.load(open(F, "rb"))'``.
- ``gpuviz``: ``gpuviz memory --json F`` (output to /dev/null).

It prints each round and the medians of time, peak and the per-round ratios. Targets: time at
most 1.5x, peak at most 1.0x ``pickle.load``'s.

12M entries make a 1 GB file. Its memory estimate (gpuviz.trace.snapshot_pickle: an upper
bound, 20 GB) passes half the RAM of a machine with less than 41 GB: set
``GPUVIZ_MAX_MEMORY=22G`` there (gpuviz takes about 3.2 GB, ``pickle.load`` 6.2 GB).
"""

RANKS_DOC = """Reading a folder of rank snapshots: one process, threads, or forked processes.

Usage::

    python benchmarks/bench_memory.py ranks [--ranks 8] [--entries 100000] [--dir /tmp/gpuviz-bench-ranks]

Writes ``--ranks`` copies of a synthetic ``--entries``-entry snapshot
(:func:`gpuviz.trace.synthetic_snapshot.make_snapshot`) as ``rank-N.memory.pickle``, then times
what ``gpuviz memory DIR --json`` computes (every rank's figures) three ways, best of
``--repeat``: in this process one file after the other, in a thread pool of one thread per
core, and in :func:`gpuviz.analysis.allocator_ranks.map_ranks`'s process pool; and the whole
``gpuviz memory DIR --json`` process; the app's drawing models (what ``gpuviz open DIR``
reads) one after the other and in processes, and a ``gpuviz open DIR --screenshot`` process
(which includes the app's start and the views' settling, about 0.3 s). Prints one JSON object with the machine's core count and
load.
"""


# synthetic

_CHILD = r"""
import json, sys, time
which, path = sys.argv[1], sys.argv[2]
if which == "pickle":
    import pickle
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        value = pickle.load(f)
    dt = time.perf_counter() - t0
    n = len(value["device_traces"][0])
    print(json.dumps({"s": dt, "entries": n}))
elif which == "gpuviz":
    from gpuviz.trace.allocator_snapshot import load_snapshot
    from gpuviz.analysis.allocator import snapshot_figures
    t0 = time.perf_counter()
    snap = load_snapshot(path)
    t1 = time.perf_counter()
    fig = snapshot_figures(snap)
    t2 = time.perf_counter()
    d = fig.devices[0]
    print(json.dumps({"s": t2 - t0, "load_s": t1 - t0, "figures_s": t2 - t1,
                      "entries": d.trace_entries, "peak": d.peak_allocated_bytes}))
elif which == "view":
    import os
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication
    from gpuviz.trace.allocator_snapshot import load_snapshot
    from gpuviz.analysis.allocator_timeline import build_timelines
    from gpuviz.gui.views.memory.qt_memory_timeline import QtMemoryTimeline
    app = QApplication([])
    snap = load_snapshot(path)
    t0 = time.perf_counter()
    (model,) = build_timelines(snap)  # the app does this in its loader thread
    t1 = time.perf_counter()
    widget = QtMemoryTimeline(model)
    widget.resize(1600, 900)
    widget.show()
    app.processEvents()
    t2 = time.perf_counter()
    widget.render_now()  # the LOD: columns and raster for the full view
    t3 = time.perf_counter()
    widget.graphics.grab()  # paint everything once
    t4 = time.perf_counter()
    # a zoom to 1% of the window, as a user's next frame
    a, b = widget._x_extent()
    widget.plot.setXRange(a + (b - a) * 0.4, a + (b - a) * 0.41, padding=0)
    t5 = time.perf_counter()
    widget.render_now()
    widget.graphics.grab()
    t6 = time.perf_counter()
    # then pans by a tenth of the view, each a frame: the raster and the paint
    pans = []
    for i in range(1, 13):
        x0 = a + (b - a) * (0.4 + 0.001 * i)
        widget.plot.setXRange(x0, x0 + (b - a) * 0.01, padding=0)
        t7 = time.perf_counter()
        widget.render_now()
        widget.graphics.grab()
        pans.append(time.perf_counter() - t7)
    pans = sorted(pans[2:])
    print(json.dumps({"model_s": t1 - t0, "widget_s": t2 - t1, "lod_s": t3 - t2,
                      "paint_s": t4 - t3, "first_frame_s": t4 - t1, "zoom_frame_s": t6 - t5,
                      "pan_frame_s": pans[len(pans) // 2]}))
"""


def _run(which: str, path: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, which, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    if out.returncode != 0:
        raise SystemExit(f"{which} on {path} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _snapshot(folder: Path, entries: int) -> Path:
    path = folder / f"snapshot-{entries}.pickle"
    if not path.exists():
        sys.path.insert(0, str(ROOT))
        from gpuviz.trace.synthetic_snapshot import make_snapshot, write_snapshot

        t0 = time.perf_counter()
        raw, _ = make_snapshot(entries, seed=entries)
        write_snapshot(path, raw)
        del raw
        print(
            f"made {path} ({path.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t0:.1f} s"
        )
    return path


def main_synthetic(argv: list[str]) -> None:
    """``synthetic``: open + figures vs ``pickle.load``, and the view's frames."""
    p = argparse.ArgumentParser(
        description=SYNTHETIC_DOC, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--entries", type=int, nargs="+", default=[100_000, 1_000_000])
    p.add_argument("--dir", type=Path, default=Path("/tmp/gpuviz-bench-mem"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-view", action="store_true", help="skip the Qt first-frame measurement")
    args = p.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in args.entries:
        path = _snapshot(args.dir, n)
        best: dict[str, dict] = {}
        for _ in range(args.repeat):
            # alternate the contenders so that machine load hits both alike
            for which in ("pickle", "gpuviz"):
                r = _run(which, path)
                if which not in best or r["s"] < best[which]["s"]:
                    best[which] = r
        view = None if args.no_view else _run("view", path)
        rows.append((n, path, best, view))

    print()
    print(
        f"{'entries':>10} {'file MiB':>9} {'pickle.load s':>14} {'gpuviz s':>9} "
        f"{'(load':>7} {'figures)':>9} {'ratio':>6} {'target':>7}   view first frame"
    )
    for n, path, best, view in rows:
        pk, gv = best["pickle"], best["gpuviz"]
        ratio = gv["s"] / pk["s"]
        vf = (
            "-"
            if view is None
            else f"{1000 * view['first_frame_s']:.1f} ms (widget {1000 * view['widget_s']:.0f}, "
            f"lod {1000 * view['lod_s']:.0f}, paint {1000 * view['paint_s']:.0f}; model "
            f"{1000 * view['model_s']:.0f} ms in the loader; zoom frame {1000 * view['zoom_frame_s']:.0f} ms, "
            f"pan frame {1000 * view['pan_frame_s']:.1f} ms)"
        )
        print(
            f"{n:>10} {path.stat().st_size / 2**20:>9.1f} {pk['s']:>14.3f} {gv['s']:>9.3f} "
            f"{gv['load_s']:>7.3f} {gv['figures_s']:>9.3f} {ratio:>6.2f} {'<= 1.5':>7}   {vf}"
        )
    print(
        "\nbest of",
        args.repeat,
        "fresh processes each; view: 1600x900 offscreen, target <= 100 ms at 1M",
    )


# real

_PICKLE = "import pickle, sys\nwith open(sys.argv[1], 'rb') as f:\n    pickle.load(f)\n"
_GPUVIZ = (
    "import runpy, sys\nsys.argv = ['gpuviz', 'memory', '--json', sys.argv[1]]\n"
    "runpy.run_module('gpuviz', run_name='__main__')\n"
)


def _new_str(s: str) -> str:
    return (s + ".")[:-1]  # a new object of the same value: the pickler memoizes by identity


def make_snapshot(source: Path, entries: int) -> dict[str, Any]:
    """The recorded snapshot with its trace repeated to about ``entries`` entries."""
    opener = gzip.open if source.name.endswith(".gz") else open
    with opener(source, "rb") as f:
        base = pickle.load(f)
    trace = base["device_traces"][0]
    t0, t1 = trace[0]["time_us"], trace[-1]["time_us"]
    span_t = t1 - t0 + 1000
    addrs = [e["addr"] for e in trace if "addr" in e]
    span_a = ((max(addrs) - min(addrs)) // (1 << 30) + 2) << 30
    anns = base.get("external_annotations", [])
    out: list[dict[str, Any]] = []
    out_ann: list[dict[str, Any]] = []
    k = 0
    while len(out) < entries:
        dt, da = k * span_t, k * span_a
        lists: dict[int, list[Any]] = {}  # the recording's sharing of frames lists, per repetition
        for e in trace:
            if len(out) >= entries:
                break
            e2 = dict(e)
            e2["time_us"] = e["time_us"] + dt
            if "addr" in e:
                e2["addr"] = e["addr"] + da
            fr = e.get("frames")
            if isinstance(fr, list):
                e2["frames"] = lists.setdefault(id(fr), list(fr))
            if "compile_context" in e:
                e2["compile_context"] = _new_str(e["compile_context"])
            out.append(e2)
        for a in anns:
            a2 = dict(a)
            a2["time_us"] = a["time_us"] + dt
            out_ann.append(a2)
        k += 1
    snap = dict(base)
    snap["device_traces"] = [out]
    snap["external_annotations"] = out_ann
    return snap


def _snapshot_real(folder: Path, source: Path, entries: int) -> Path:
    path = folder / f"real-{source.name.split('.')[0]}-{entries}.pickle"
    if not path.exists():
        t = time.perf_counter()
        snap = make_snapshot(source, entries)
        tmp = path.with_suffix(".tmp")
        with open(tmp, "wb") as f:
            pickle.dump(snap, f)  # as torch.cuda.memory._dump_snapshot does
        tmp.rename(path)
        del snap
        print(
            f"made {path} ({path.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t:.0f} s",
            flush=True,
        )
    return path


def _run_real(code: str, path: Path) -> dict[str, float]:
    """Run ``python -c code path``: its wall time and peak resident memory (MB).

    The peak is the child's ``ru_maxrss`` as the kernel reports it at its exit (``wait4``):
    ``gpuviz memory`` ends with ``os._exit`` after its output, which skips ``atexit``, so the
    child cannot report its own ``VmHWM``."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stderr is not None
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    s = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"failed on {path} (exit {proc.returncode}):\n{err[-2000:]}")
    return {"s": s, "hwm_mb": usage.ru_maxrss / 1024}


def main_real(argv: list[str]) -> None:
    """``real``: a large snapshot made from a real one, ``gpuviz memory --json`` vs ``pickle.load``."""
    p = argparse.ArgumentParser(
        description=REAL_DOC, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--entries", type=int, nargs="+", default=[3_000_000])
    p.add_argument(
        "--source", type=Path, default=ROOT / "tests/data/snapshots/snap_train.pickle.gz"
    )
    p.add_argument("--dir", type=Path, default=Path("/tmp/gpuviz-bench-snapreal"))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--json", type=Path, help="write the figures here too")
    args = p.parse_args(argv)
    args.dir.mkdir(parents=True, exist_ok=True)
    results = []
    for n in args.entries:
        path = _snapshot_real(args.dir, args.source, n)
        runs: dict[str, list[dict[str, float]]] = {"pickle": [], "gpuviz": []}
        for k in range(args.rounds):
            for which, code in (("pickle", _PICKLE), ("gpuviz", _GPUVIZ)):
                r = _run_real(code, path)
                runs[which].append(r)
                print(
                    f"{n:>10} round {k + 1} {which:<7} {r['s']:7.2f} s  peak {r['hwm_mb']:7.0f} MB",
                    flush=True,
                )
        pk, gv = runs["pickle"], runs["gpuviz"]
        row = {
            "entries": n,
            "file_mb": path.stat().st_size / 2**20,
            "rounds": args.rounds,
            "pickle_s": statistics.median(r["s"] for r in pk),
            "pickle_hwm_mb": statistics.median(r["hwm_mb"] for r in pk),
            "gpuviz_s": statistics.median(r["s"] for r in gv),
            "gpuviz_hwm_mb": statistics.median(r["hwm_mb"] for r in gv),
            "time_ratio": statistics.median(g["s"] / q["s"] for g, q in zip(gv, pk)),
            "hwm_ratio": statistics.median(g["hwm_mb"] / q["hwm_mb"] for g, q in zip(gv, pk)),
        }
        results.append(row)
        print(
            f"{n:>10} entries, {row['file_mb']:.0f} MiB, medians of {args.rounds} rounds: "
            f"pickle.load {row['pickle_s']:.2f} s {row['pickle_hwm_mb']:.0f} MB; gpuviz "
            f"{row['gpuviz_s']:.2f} s {row['gpuviz_hwm_mb']:.0f} MB; ratios: time "
            f"{row['time_ratio']:.2f}x (<= 1.5), peak {row['hwm_ratio']:.2f}x (<= 1.0)",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


# ranks


def _best(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main_ranks(argv: list[str]) -> None:
    """``ranks``: a folder of rank snapshots, one process, threads or forked processes."""
    ap = argparse.ArgumentParser(
        description=RANKS_DOC, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--dir", default="/tmp/gpuviz-bench-ranks")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    from gpuviz.analysis.allocator_ranks import (
        RankTimelines,
        map_ranks,
        rank_figures_of,
        rank_snapshot_files,
    )
    from gpuviz.trace.kineto_worker import usable_cores
    from gpuviz.trace.synthetic_snapshot import make_snapshot, write_snapshot

    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    first = folder / "rank-0.memory.pickle"
    if not first.exists():
        write_snapshot(first, make_snapshot(args.entries)[0])
    for r in range(1, args.ranks):
        p = folder / f"rank-{r}.memory.pickle"
        if not p.exists():
            p.write_bytes(first.read_bytes())
    files = [f for r, f in rank_snapshot_files(folder) if r < args.ranks]
    cores = usable_cores()

    def threads() -> None:
        with ThreadPoolExecutor(cores) as ex:
            list(ex.map(rank_figures_of, files))

    out = {
        "cores": cores,
        "load_1min": os.getloadavg()[0],
        "ranks": len(files),
        "entries": args.entries,
        "file_bytes": first.stat().st_size,
        "sequential_s": _best(lambda: map_ranks(rank_figures_of, files, workers=0), args.repeat),
        "threads_s": _best(threads, args.repeat),
        # the default count (idle cores only), and one process a core whatever the load
        "processes_s": _best(lambda: map_ranks(rank_figures_of, files), args.repeat),
        "processes_all_cores_s": _best(
            lambda: map_ranks(rank_figures_of, files, workers=min(cores, len(files))),
            args.repeat,
        ),
        # what the app's loader does: every rank's drawing model (figures, curves, pyramid)
        "app_models_sequential_s": _best(
            lambda: map_ranks(RankTimelines(), files, workers=0), args.repeat
        ),
        "app_models_processes_s": _best(
            lambda: map_ranks(RankTimelines(), files, workers=min(cores, len(files))),
            args.repeat,
        ),
    }
    cmd = [sys.executable, "-m", "gpuviz", "memory", str(folder), "--json"]
    # this checkout first, then whatever path the caller set (packages installed beside it)
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    )
    out["cli_process_s"] = _best(
        lambda: subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL), args.repeat
    )
    # the app, as a user starts it: `gpuviz open DIR --screenshot` (load, first frames, PNG)
    import importlib.util

    if importlib.util.find_spec("PySide6") is None:  # a GPU host without the app's Qt
        out["app_screenshot_process_s"] = None
        print(json.dumps(out))
        return
    shot = folder / "shot.png"
    cmd = [sys.executable, "-m", "gpuviz", "open", str(folder), "--screenshot", str(shot)]
    env_qt = dict(env, QT_QPA_PLATFORM="offscreen")
    out["app_screenshot_process_s"] = _best(
        lambda: subprocess.run(cmd, check=True, env=env_qt, capture_output=True), 1
    )
    print(json.dumps(out))


CASES = {"synthetic": main_synthetic, "real": main_real, "ranks": main_ranks}


def main(argv: list[str] | None = None) -> int:
    """Run the case named first on the command line with the rest of it."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in CASES:
        print(__doc__, file=sys.stderr)
        return 2
    CASES[argv[0]](argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
