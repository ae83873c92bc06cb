"""Timeline speed: ms per frame at 1600×900 offscreen, and how long opening blocks the GUI.

Usage::

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_timeline.py [--sizes 100000 1000000]
        [--file TRACE.json.gz] [--width 1600] [--height 900] [--repeat 15]

For each size it builds a synthetic trace (``gpuviz.trace.synthetic.make_trace``) and prints:

- ``lod``: the pure-numpy part alone: pyramid build time, and ``TimelineLod.frame`` per frame.
- ``open``: the trace made (or, with ``--file``, ``load_trace`` run) in a worker ``QThread``,
  then the ``QtTimeline`` built and shown, its pyramids built by its worker, and the first
  complete frame painted, while a 5 ms heartbeat ``QTimer`` on the GUI thread records the
  longest gap between its ticks: the longest time the GUI thread was blocked.
- ``frame``: renders (``QWidget.render`` into an image) of the timeline's canvas (time axis,
  lane labels, slices, grid; the widget is 1600×900, the canvas that less the search bar, the
  info line and the scroll bar) for the full view and a 1% zoom. *cold*: the view just changed
  (a new LOD query: level, window, merge, colour grouping, drawing); *warm*: the same view
  painted again. Medians over ``--repeat`` frames (cold frames pan by a few pixels each time
  so every one is a new query), the best and the worst, wall-clock; and the median CPU time
  the process used (``time.process_time``), which other processes sharing the CPUs inflate
  less than wall-clock. A pan within three view widths at one level reuses the rows' LOD
  windows (as Perfetto does); *zoom* frames alternate between levels so every one is a new
  query from the pyramid: the worst case of a cold frame.

Targets (issue 5), 1M kernels on the 2-core CI machine: warm ≤ 16 ms, cold ≤ 50 ms, the GUI
thread never blocked more than 100 ms while opening.

Many ranks (issue 14): ``--ranks 64 --per-rank 8000`` (the default rank case) builds a 64-rank
synthetic trace (``make_trace(ranks=64)``, 8000 kernels a rank) and measures it twice: as it
opens, every rank collapsed to its summary lane (a GPU busy density per pixel), and with every
rank expanded (``expand_ranks``: thousands of lanes, the view showing the first few dozen).
``--file FOLDER`` measures a real folder of rank files the same way.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("GPUVIZ_NO_CACHE", "1")  # --file times the import, not a cache hit


def _lod_only(n: int, ranks: int = 1) -> None:
    from gpuviz.trace import lod
    from gpuviz.trace.lanes import default_collapsed_ranks, trace_ranks
    from gpuviz.trace.synthetic import make_trace

    t = time.perf_counter()
    tr = make_trace(n, ranks=ranks)
    made = time.perf_counter() - t
    tl = lod.TimelineLod(tr, sync_build_max=0)
    collapsed = default_collapsed_ranks(trace_ranks(tr))
    layout = lod.build_layout(tr, depths=tl.depths, collapsed_ranks=collapsed)
    keys = tl.unbuilt(layout)
    t = time.perf_counter()
    worst = 0.0
    last = t
    for _ in tl.build_iter(keys, layout.groups):
        now = time.perf_counter()
        worst = max(worst, now - last)
        last = now
    build = time.perf_counter() - t
    end = int(tr.slices.end_ns.max())
    out = []
    for label, (a, b) in (("full", (0, end)), ("1%", (end // 2, end // 2 + end // 100))):
        times = []
        for i in range(10):
            shift = (b - a) // 1600 * i
            t = time.perf_counter()
            f = tl.frame(layout, range(len(layout)), a + shift, b + shift, 1390)
            times.append((time.perf_counter() - t) * 1e3)
        out.append(f"{label} {statistics.median(times):.1f} ms ({f.count:,} rects)")
    what = f", {len(layout)} lanes ({len(collapsed)} ranks collapsed)" if collapsed else ""
    print(
        f"  lod: {len(tr.slices):,} slices (made in {made:.2f} s{what}); pyramid build "
        f"{build * 1e3:.0f} ms in steps of at most {worst * 1e3:.1f} ms; frame (numpy only): "
        + ", ".join(out)
    )


def _open_and_frames(
    n: int, path: str | None, width: int, height: int, repeat: int, ranks: int = 1
) -> None:
    from PySide6.QtCore import QThread, QTimer
    from PySide6.QtWidgets import QApplication

    from gpuviz.gui.timeline.qt_timeline import QtTimeline

    app = QApplication.instance() or QApplication(sys.argv[:1])

    class Loader(QThread):
        def __init__(self) -> None:
            super().__init__()
            self.trace = None
            self.error: BaseException | None = None

        def run(self) -> None:
            try:
                if path:
                    from gpuviz.trace.kineto import load_trace

                    self.trace = load_trace(path)
                else:
                    from gpuviz.trace.synthetic import make_trace

                    self.trace = make_trace(n, ranks=ranks)
            except BaseException as exc:  # reported below
                self.error = exc

    gaps: list[tuple[float, str]] = []
    # Garbage collections stop every thread: time them, to tell them from other blocks.
    import gc

    gc_pauses: list[tuple[float, int, str]] = []
    gc_start = [0.0]

    def on_gc(stage: str, info: dict) -> None:
        if stage == "start":
            gc_start[0] = time.perf_counter()
        else:
            gc_pauses.append(
                ((time.perf_counter() - gc_start[0]) * 1e3, info["generation"], phase[0])
            )

    gc.callbacks.append(on_gc)
    phase = ["load"]
    last = [time.perf_counter()]

    began = ["load"]  # the phase at the previous heartbeat: where a long gap began

    def beat() -> None:
        now = time.perf_counter()
        where = phase[0] if began[0] == phase[0] else f"{began[0]} to {phase[0]}"
        gaps.append(((now - last[0]) * 1e3, where))
        last[0] = now
        began[0] = phase[0]

    hb = QTimer()
    hb.setInterval(5)
    hb.timeout.connect(beat)
    t_open = time.perf_counter()
    last[0] = t_open
    hb.start()
    loader = Loader()
    loader.start()
    while loader.isRunning():
        app.processEvents()
        time.sleep(0.001)
    loader.wait()
    if loader.error is not None:
        raise loader.error
    trace = loader.trace
    t_loaded = time.perf_counter()
    phase[0] = "build widget"
    w = QtTimeline(trace)
    w.resize(width, height)
    w.show()
    phase[0] = "lod pyramids + first frames"
    app.processEvents()
    while not w.lod_ready or (w._worker is not None and w._worker.isRunning()):
        app.processEvents()
        time.sleep(0.001)
    app.processEvents()
    w.canvas.repaint()
    t_ready = time.perf_counter()
    app.processEvents()
    hb.stop()
    gc.callbacks.remove(on_gc)
    worst = max(gaps) if gaps else (0.0, "")
    over = sum(1 for g, _ in gaps if g > 100)
    p99 = sorted(g for g, _ in gaps)[int(len(gaps) * 0.99)] if gaps else 0.0
    source = f"load_trace({os.path.basename(path)})" if path else "make_trace (synthetic, no file)"
    print(
        f"  open: {source} {t_loaded - t_open:.2f} s, then widget + pyramids + first frame "
        f"{t_ready - t_loaded:.2f} s; GUI thread longest block {worst[0]:.0f} ms (during {worst[1]}), "
        f"99th percentile {p99:.0f} ms, {over} over 100 ms; {len(gaps)} heartbeats"
    )
    if over:
        blocks = ", ".join(
            f"{g:.0f} ms ({ph})" for g, ph in sorted(gaps, reverse=True)[:6] if g > 100
        )
        print(f"        blocks over 100 ms: {blocks}")
    if gc_pauses:
        g = max(gc_pauses)
        print(
            f"        garbage collections: {len(gc_pauses)}, longest {g[0]:.0f} ms "
            f"(generation {g[1]}, during {g[2]}); {sum(1 for x in gc_pauses if x[0] > 100)} over 100 ms"
        )

    _frames(w, trace, repeat, "collapsed ranks" if w.layout_rows.collapsed_ranks else "")
    if w.layout_rows.rank_rows:
        t = time.perf_counter()
        w.expand_ranks()
        w.wait_ready(600)
        w.canvas.repaint()
        print(
            f"  expand every rank: {len(w.layout_rows):,} lanes, ready and painted in "
            f"{time.perf_counter() - t:.2f} s"
        )
        _frames(w, trace, repeat, "expanded ranks")
    w.close()
    w.deleteLater()
    app.processEvents()


def _frames(w: Any, trace: Any, repeat: int, what: str) -> None:
    """Cold, warm and zoom frames of the full view and a 1% zoom (see the module docstring)."""
    from PySide6.QtGui import QImage

    canvas = w.canvas
    img = QImage(canvas.size(), QImage.Format.Format_ARGB32_Premultiplied)
    s = trace.slices
    end = int(s.end_ns.max())

    cpu: list[float] = []

    def render() -> float:
        c = time.process_time()
        t = time.perf_counter()
        canvas.render(img)
        cpu.append((time.process_time() - c) * 1e3)
        return (time.perf_counter() - t) * 1e3

    for label, (a, b) in (("full view", (0, end)), ("1% zoom", (end // 2, end // 2 + end // 100))):
        px = (b - a) / max(canvas.width() - 210, 1)
        w.set_view_range(a, b)
        render()
        cold = []
        cpu.clear()
        for i in range(repeat):
            d = int(px * 3 * (i + 1))
            w.set_view_range(a + d, b + d)
            cold.append(render())
        cold_cpu = list(cpu)
        cpu.clear()
        warm = [render() for _ in range(repeat)]
        warm_cpu = list(cpu)
        f = w.current_frame()
        # Zoom: every frame at another level than the one before (spans alternate by 2.2×, and
        # creep so no two are alike), so nothing of the last query can be reused.
        zoom = []
        cpu.clear()
        c = (a + b) / 2
        for i in range(repeat):
            half = (b - a) / 2 * (1.0 if i % 2 == 0 else 0.45) * (1 + 0.01 * i)
            w.set_view_range(int(c - half), int(c + half))
            zoom.append(render())
        zoom_cpu = list(cpu)
        w.set_view_range(a, b)
        med = statistics.median
        if what:
            label = f"{label}, {what}"
        print(
            f"  frame {label:9s}: cold {med(cold):5.1f} ms (best {min(cold):4.1f}, worst {max(cold):5.1f}; "
            f"CPU {med(cold_cpu):4.1f}), warm {med(warm):5.1f} ms (best {min(warm):4.1f}, "
            f"worst {max(warm):5.1f}; CPU {med(warm_cpu):4.1f}), zoom {med(zoom):5.1f} ms "
            f"(worst {max(zoom):5.1f}; CPU {med(zoom_cpu):4.1f}); "
            f"{f.count:,} rects in {len(f.rects)} colours, level 2^{f.shift} ns, "
            f"{len(w.viewport.visible_rows(len(w.layout_rows)))} lanes"
            + (f" ({len(f.density_rows)} of them density strips)" if len(f.density_rows) else "")
        )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", type=int, nargs="*", default=[100_000, 1_000_000])
    ap.add_argument("--file", help="also open this trace file with load_trace (in a worker thread)")
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--height", type=int, default=900)
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument(
        "--no-synthetic", action="store_true", help="only the --file figures (no synthetic sizes)"
    )
    ap.add_argument(
        "--ranks",
        type=int,
        nargs="*",
        default=[64],
        help="rank counts of the many-rank cases (default 64; none: skip them)",
    )
    ap.add_argument("--per-rank", type=int, default=8000, help="kernels per rank (default 8000)")
    args = ap.parse_args()
    import gpuviz

    print(
        f"bench_timeline: {args.width}×{args.height} offscreen, {os.cpu_count()} CPUs, "
        f"python {sys.version.split()[0]}, gpuviz from {os.path.dirname(gpuviz.__file__)}, "
        f"load average {os.getloadavg()[0]:.1f} "
        "(other processes share these CPUs; the figures grow with it)"
    )
    for n in [] if args.no_synthetic else args.sizes:
        print(f"{n:,} kernels (synthetic):")
        _lod_only(n)
        _open_and_frames(n, None, args.width, args.height, args.repeat)
    for r in [] if args.no_synthetic else args.ranks:
        n = r * args.per_rank
        print(f"{r} ranks × {args.per_rank:,} kernels (synthetic):")
        _lod_only(n, r)
        _open_and_frames(n, None, args.width, args.height, args.repeat, ranks=r)
    if args.file:
        print(f"file {args.file}:")
        _open_and_frames(0, args.file, args.width, args.height, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
