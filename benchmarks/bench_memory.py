"""Allocator snapshot benchmark: gpuviz open + figures vs ``pickle.load``, and the view's first frame.

    python benchmarks/bench_memory.py [--entries 100000 1000000] [--dir /tmp/gpuviz-bench-mem]
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

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

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
    from gpuviz.gui.views.qt_memory_timeline import QtMemoryTimeline
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


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--entries", type=int, nargs="+", default=[100_000, 1_000_000])
    p.add_argument("--dir", type=Path, default=Path("/tmp/gpuviz-bench-mem"))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--no-view", action="store_true", help="skip the Qt first-frame measurement")
    args = p.parse_args()
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


if __name__ == "__main__":
    main()
