"""GUI thread stalls and Timeline frame time when the app opens a rank folder (issue 25).

Usage::

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_gui_ranks.py [--world 64] \\
        [--kernels 10000] [--folder DIR] [--repeat 30] [--width 1600] [--height 900]

It makes (or reuses, in ``--data``) a folder of ``--world`` rank files of ``--kernels``
kernels each (``gen_trace.py --all-ranks``: NCCL collectives aligned across ranks), or takes
``--folder``, and opens it as a user does: ``MainWindow.open_traces([folder])`` in an
offscreen window of ``--width``×``--height``, the trace cache off (the import is timed, not a
cache hit). Phases, in order:

- ``load``: from the open until the tab is added (the loader thread imports and analyses the
  folder; the GUI thread only shows progress), and the tab's first view (Insights) built;
- ``timeline``: the Timeline shown (as a user clicks its tab: every rank collapsed to its
  summary lane, as the app opens them) until its pyramids are built (``wait_ready``) and a
  frame is painted;
- ``ranks``: the Ranks view shown and painted.

Meanwhile a 5 ms ``QTimer`` on the GUI thread records the gaps between its ticks (a gap less
the 5 ms interval is a stall: the GUI thread did not return to its event loop), and a
watchdog thread samples the GUI thread's Python stack (``faulthandler.dump_traceback``) whenever no
tick came for 30 ms, so each stall over 50 ms is printed with the code that ran during it
(the innermost gpuviz frames of its most frequent sample). Garbage collections are timed too.

Then the warm frame time of the full view: ``QWidget.render`` of the Timeline's canvas into an
image, the same view painted again ``--repeat`` times (median, 90th percentile, worst,
wall-clock and the process's CPU time), and the cold full-view frame (the view panned a few
pixels each time, so each is a new LOD query) for comparison.

Targets (issue 25): the GUI thread never blocks more than 50 ms; a warm frame of the full
view <= 16 ms. Timings are noisy on a shared machine: the load average is printed before and
after, and several runs (``--runs``) are printed one after another.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import faulthandler
import gc
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("GPUVIZ_NO_CACHE", "1")  # time the import, not a cache hit
# The folder read whole, its Timeline too: from 64 ranks the app would open it from per-rank
# reductions, on its Ranks view alone (benchmarks/bench_ranks_app.py times that).
os.environ.setdefault("GPUVIZ_RANKS_REDUCED", "0")

REPO = Path(__file__).resolve().parents[1]
HEARTBEAT_MS = 5
STALL_MS = 50.0
SAMPLE_AFTER_S = 0.030  # the watchdog samples the GUI thread once no tick came for this long


def make_folder(world: int, kernels: int, data: Path) -> Path:
    """The rank folder of ``world`` × ``kernels`` (made once, then reused)."""
    folder = data / f"w{world}-k{kernels}"
    if not (folder / f"rank-{world - 1}.json").exists():
        folder.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, str(REPO / "benchmarks" / "gen_trace.py")]
        cmd += ["--kernels", str(kernels), "--world", str(world), "--all-ranks"]
        cmd += ["--out", str(folder)]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return folder


def _where(dump: str, thread: int) -> str:
    """The innermost gpuviz frames of ``thread`` in a faulthandler dump, as one line."""
    head = f"hread 0x{thread:016x}"
    frames: list[tuple[str, str, str]] = []
    inside = False
    for line in dump.splitlines():
        if line.startswith(("Thread 0x", "Current thread 0x")):
            inside = head in line
            continue
        m = re.match(r'\s+File "(.*)", line (\d+) in (\S+)', line)
        if inside and m:
            frames.append(m.groups())  # innermost first
    ours = [f for f in frames if "/gpuviz/" in f[0]]
    pick = (ours or frames)[:3]
    return " < ".join(f"{os.path.basename(f)}:{n} {fn}" for f, n, fn in pick) or "(none)"


class Watch:
    """The heartbeat on the GUI thread and the watchdog that samples it while it is stalled."""

    def __init__(self, sample: bool = True) -> None:
        from PySide6.QtCore import QTimer

        self.sample = sample
        self.phase = "load"
        self.gaps: list[tuple[float, float, str]] = []  # (stall ms, end time, phase)
        self.samples: dict[float, collections.Counter[str]] = {}  # tick time -> stacks seen
        self.gc_pauses: list[tuple[float, int, str]] = []
        self._gc_start = 0.0
        self._last = time.perf_counter()
        self._gui = threading.get_ident()
        self._stop = threading.Event()
        self._timer = QTimer()
        self._timer.setInterval(HEARTBEAT_MS)
        self._timer.timeout.connect(self._beat)
        self._dog = threading.Thread(target=self._watch, daemon=True)

    def start(self) -> None:
        self._last = time.perf_counter()
        gc.callbacks.append(self._on_gc)
        self._timer.start()
        if self.sample:
            self._dog.start()

    def stop(self) -> None:
        self._timer.stop()
        self._stop.set()
        if self.sample:
            self._dog.join()
        gc.callbacks.remove(self._on_gc)

    def _beat(self) -> None:
        now = time.perf_counter()
        self.gaps.append(((now - self._last) * 1e3 - HEARTBEAT_MS, self._last, self.phase))
        self._last = now

    def _on_gc(self, stage: str, info: dict[str, Any]) -> None:
        if stage == "start":
            self._gc_start = time.perf_counter()
        else:
            ms = (time.perf_counter() - self._gc_start) * 1e3
            self.gc_pauses.append((ms, info["generation"], self.phase))

    def _watch(self) -> None:
        # The GIL switch interval (5 ms) bounds how late this thread samples; a sample that
        # lands in the loader thread's turn still shows where the GUI thread was.
        while not self._stop.wait(0.01):
            last = self._last
            if time.perf_counter() - last < SAMPLE_AFTER_S:
                continue
            # faulthandler reads the stacks without making frame objects of another thread's
            # frames (sys._current_frames did, and crashed the process here under Qt).
            with tempfile.TemporaryFile("w+") as f:
                faulthandler.dump_traceback(f, all_threads=True)
                f.seek(0)
                where = _where(f.read(), self._gui)
            self.samples.setdefault(last, collections.Counter())[where] += 1

    def stalls(self, phase: str | None = None) -> list[tuple[float, float, str]]:
        return [g for g in self.gaps if phase is None or g[2] == phase]

    def what_ran(self, began: float) -> str:
        seen = self.samples.get(began)
        if not seen:
            return "(no sample)"
        total = sum(seen.values())
        return "; or ".join(f"{top} [{n}/{total} samples]" for top, n in seen.most_common(2))


def _pump(app: Any, until: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not until():
        if time.monotonic() > deadline:
            return False
        app.processEvents()
        time.sleep(0.001)
    app.processEvents()
    return True


def _frames(tl: Any, repeat: int) -> dict[str, Any]:
    """Warm and cold frames of the full view of ``tl`` (wall-clock and CPU ms)."""
    from PySide6.QtGui import QImage

    canvas = tl.canvas
    img = QImage(canvas.size(), QImage.Format.Format_ARGB32_Premultiplied)
    end = int(tl.trace.slices.end_ns.max())
    tl.set_view_range(0, end)
    canvas.render(img)

    def render() -> tuple[float, float]:
        c, t = time.process_time(), time.perf_counter()
        canvas.render(img)
        return (time.perf_counter() - t) * 1e3, (time.process_time() - c) * 1e3

    warm = [render() for _ in range(repeat)]
    f = tl.current_frame()
    px = end / max(canvas.width() - 210, 1)
    cold = []
    for i in range(repeat):
        d = int(px * 3 * (i + 1))
        tl.set_view_range(d, end + d)
        cold.append(render())
    tl.set_view_range(0, end)

    def stats(xs: list[tuple[float, float]]) -> dict[str, float]:
        wall = sorted(x[0] for x in xs)
        return {
            "median": statistics.median(wall),
            "p90": wall[int(0.9 * (len(wall) - 1))],
            "worst": wall[-1],
            "cpu_median": statistics.median(x[1] for x in xs),
        }

    return {
        "warm": stats(warm),
        "cold": stats(cold),
        "rects": f.count,
        "lanes": len(tl.viewport.visible_rows(len(tl.layout_rows))),
        "density_lanes": len(f.density_rows),
        "collapsed_ranks": len(tl.layout_rows.collapsed_ranks),
    }


def run_once(
    folder: Path, width: int, height: int, repeat: int, sample: bool = True
) -> dict[str, Any]:
    """Open ``folder`` in a fresh MainWindow; the stalls by phase and the frame figures."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from gpuviz.gui.qt_main_window import MainWindow

    app = QApplication.instance() or QApplication(sys.argv[:1])
    settings = QSettings(
        str(Path("/tmp") / f"gpuviz-bench-gui-{os.getpid()}.ini"), QSettings.Format.IniFormat
    )
    win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
    win.resize(width, height)
    win.show()
    app.processEvents()
    opened: list[Any] = []
    win.traceOpened.connect(opened.append)
    watch = Watch(sample)
    times: dict[str, float] = {}
    # Garbage collection as the app runs it (run_app): only on the GUI thread, on a timer.
    from gpuviz.gui.app import collect_on_gui_thread

    collecting = contextlib.ExitStack()
    collecting.enter_context(collect_on_gui_thread())
    t0 = time.perf_counter()
    watch.start()
    win.open_traces([str(folder)])
    ok = _pump(app, lambda: bool(opened) or bool(win.errors), 1800)
    if win.errors or not ok:
        watch.stop()
        collecting.close()
        raise RuntimeError(f"open failed: {win.errors or 'timed out'}")
    _pump(app, lambda: not win.is_busy(), 60)
    # Let the first view paint and any deferred work it queued run.
    t_end = time.perf_counter() + 0.5
    _pump(app, lambda: time.perf_counter() > t_end, 5)
    times["load"] = time.perf_counter() - t0
    view = opened[0]

    watch.phase = "timeline"
    t1 = time.perf_counter()
    view.set_view("timeline")
    tl = view.timeline
    app.processEvents()
    tl.wait_ready(600)
    tl.canvas.repaint()
    app.processEvents()
    times["timeline"] = time.perf_counter() - t1

    watch.phase = "ranks"
    t2 = time.perf_counter()
    view.set_view("ranks")
    app.processEvents()
    t_end = time.perf_counter() + 0.5
    _pump(app, lambda: time.perf_counter() > t_end, 5)
    times["ranks"] = time.perf_counter() - t2
    watch.phase = "done"
    watch.stop()
    collecting.close()

    view.set_view("timeline")
    app.processEvents()
    frames = _frames(tl, repeat)
    trace = view.trace
    out = {
        "times_s": times,
        "slices": len(trace.slices),
        "watch": watch,
        "frames": frames,
    }
    win.close()
    win.deleteLater()
    app.processEvents()
    return out


def report(r: dict[str, Any]) -> None:
    w: Watch = r["watch"]
    times = r["times_s"]
    print(f"  {r['slices']:,} slices")
    for phase in ("load", "timeline", "ranks"):
        gs = w.stalls(phase)
        worst = max(gs, default=(0.0, 0.0, phase))
        over = sorted((g for g in gs if g[0] > STALL_MS), reverse=True)
        print(
            f"  {phase:8s}: {times[phase]:6.2f} s, {len(gs)} ticks, longest stall "
            f"{worst[0]:5.0f} ms, {len(over)} over {STALL_MS:.0f} ms"
        )
        for ms, began, _ in over[:8]:
            print(f"      {ms:5.0f} ms: {w.what_ran(began)}")
    if w.gc_pauses:
        g = max(w.gc_pauses)
        print(
            f"  garbage collections: {len(w.gc_pauses)}, longest {g[0]:.0f} ms (gen {g[1]}, "
            f"{g[2]}); {sum(1 for x in w.gc_pauses if x[0] > STALL_MS)} over {STALL_MS:.0f} ms"
        )
    f = r["frames"]
    for k in ("warm", "cold"):
        s = f[k]
        print(
            f"  frame, full view, {k}: median {s['median']:5.1f} ms, p90 {s['p90']:5.1f}, "
            f"worst {s['worst']:5.1f} (CPU median {s['cpu_median']:4.1f})"
        )
    print(
        f"    {f['rects']:,} rects, {f['lanes']} lanes ({f['density_lanes']} density strips), "
        f"{f['collapsed_ranks']} ranks collapsed"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--world", type=int, default=64)
    ap.add_argument("--kernels", type=int, default=10_000, help="kernels per rank")
    ap.add_argument("--folder", help="open this rank folder instead of a generated one")
    ap.add_argument("--data", default="/tmp/gpuviz-bench/gui", help="where generated folders go")
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--height", type=int, default=900)
    ap.add_argument("--repeat", type=int, default=30, help="frames per figure")
    ap.add_argument("--runs", type=int, default=1, help="opens, one after another")
    ap.add_argument(
        "--no-sample", action="store_true", help="no watchdog (stalls timed, not explained)"
    )
    a = ap.parse_args(argv)
    folder = Path(a.folder) if a.folder else make_folder(a.world, a.kernels, Path(a.data))
    import gpuviz

    files = sorted(folder.glob("*.json*"))
    mb = sum(p.stat().st_size for p in files) / 1e6
    print(
        f"bench_gui_ranks: {os.cpu_count()} CPUs, python {sys.version.split()[0]}, gpuviz from "
        f"{os.path.dirname(gpuviz.__file__)}, {a.width}×{a.height} offscreen; {folder}: "
        f"{len(files)} files, {mb:.0f} MB; load average {os.getloadavg()[0]:.1f}"
    )
    for i in range(a.runs):
        print(f"run {i + 1}:")
        report(run_once(folder, a.width, a.height, a.repeat, not a.no_sample))
        print(f"  load average {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
