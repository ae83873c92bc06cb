"""Live plots fed by buffers and a ~30 Hz timer; the comparison chart and the two-run comparison.

No workload runs here: events are made by hand (the engine's event classes are torch-free).
"""

from __future__ import annotations

import gzip
import itertools
import json
import shutil
from pathlib import Path

import pytest

from gpuviz.engine.events import (
    MemorySample,
    Progress,
    SplitRecorded,
    Started,
    StepTimed,
)
from gpuviz.gui.run.compare_figures import figure_rows, strategy_rows
from gpuviz.gui.run.live_buffers import LiveRun
from gpuviz.gui.run.qt_live_plots import REDRAW_INTERVAL_MS, QtLivePlots

DATA = Path(__file__).resolve().parents[1] / "data"


def _gpu_events(steps: int = 6, samples: int = 40) -> list[object]:
    ev: list[object] = [
        Started("dataparallel", {"batch": 30}, "cuda:0", ["cuda:0", "cuda:1"], "2.x"),
        Progress(0, steps),
    ]
    for i in range(samples):
        for d in ("cuda:0", "cuda:1"):
            ev.append(
                MemorySample(
                    i * 0.05,
                    d,
                    rss_bytes=10**9,
                    allocated_bytes=2**20 * (i + 1),
                    reserved_bytes=2**21 * (i + 1),
                    nvml_used_bytes=2**22 + 2**21 * (i + 1),
                )
            )
    for s in range(steps):
        ev.append(StepTimed(s, "dp", 2.0 + s, 1.5 + s, s == 0))
        ev.append(SplitRecorded(s, 0, "cuda:0", 15 if s < steps - 1 else 5))
        ev.append(SplitRecorded(s, 1, "cuda:1", 15 if s < steps - 1 else 5, 0.7))
        ev.append(Progress(s + 1, steps))
    return ev


def test_buffers_count_every_event() -> None:
    live = LiveRun()
    events = _gpu_events()
    for e in events:
        live.apply(e)
    steps = [e for e in events if isinstance(e, StepTimed)]
    assert live.steps_timed == len(steps)
    assert list(live.gpu_ms.view()) == [e.gpu_ms for e in steps]
    assert set(live.memory) == {"cuda:0", "cuda:1"}
    n0 = sum(1 for e in events if isinstance(e, MemorySample) and e.device == "cuda:0")
    assert len(live.memory["cuda:0"]) == n0
    assert live.latest_split_step() == 5
    assert [b.rows for b in live.splits[5]] == [5, 5]
    assert (live.step, live.total) == (6, 6)


def test_late_engine_sample_replaces_app_readings() -> None:
    live = LiveRun()
    live.add_memory("cpu", 1.0, 100)
    live.add_memory("cpu", 1.2, 120, from_app=True)
    live.add_memory("cpu", 1.3, 130, from_app=True)
    live.add_memory("cpu", 1.25, 125)  # delayed engine sample: 1.3 from the app goes
    t = list(live.memory["cpu"].t_s.view())
    assert t == [1.0, 1.2, 1.25]
    assert all(b >= a for a, b in itertools.pairwise(t))


def test_plots_redraw_from_timer_not_per_event(qtbot) -> None:
    plots = QtLivePlots()
    qtbot.addWidget(plots)
    plots.resize(1200, 300)
    plots.show()
    live = LiveRun()
    plots.set_run(live)
    before = dict(plots.redraws)
    events = _gpu_events(steps=50, samples=400)
    for e in events:  # a burst of ~1000 events between two timer ticks
        live.apply(e)
    assert plots.redraws == before, "an event must never redraw by itself"
    qtbot.waitUntil(lambda: plots.redraws["memory"] > before["memory"], timeout=2000)
    qtbot.wait(REDRAW_INTERVAL_MS * 3)
    # One burst: a redraw or two, not hundreds.
    assert plots.redraws["memory"] - before["memory"] <= 2
    assert plots.redraws["steps"] - before["steps"] <= 2
    steps = [e for e in events if isinstance(e, StepTimed)]
    assert plots.step_points() == len(steps)
    assert plots.gpu_points() == len(steps)
    curves = plots.memory_curves()
    per_dev = sum(1 for e in events if isinstance(e, MemorySample) and e.device == "cuda:1")
    for d in ("cuda:0", "cuda:1"):
        assert curves[(d, "allocated")] == per_dev
        assert curves[(d, "reserved")] == per_dev
        assert curves[(d, "NVML used")] == per_dev
    assert ("cuda:0", "RSS") not in curves  # host RSS is not drawn as if it were a GPU's
    assert plots.splits_shown()
    assert plots.split_rows() == {"cuda:0": 5, "cuda:1": 5}
    plots.stop()
    assert not plots.timer.isActive()


def test_cpu_memory_is_rss(qtbot) -> None:
    plots = QtLivePlots()
    qtbot.addWidget(plots)
    live = LiveRun()
    plots.set_run(live)
    live.apply(Started("loops", {}, "cpu", ["cpu"], "2.x"))
    for i in range(12):
        live.apply(MemorySample(i * 0.05, "cpu", 2**28 + i))
    plots.stop()
    assert plots.memory_curves() == {("cpu", "RSS"): 12}
    assert not plots.splits_shown()


RESULT = {
    "workload": "loops",
    "device": "cuda:0",
    "baseline": "for_loop",
    "strategies": [
        {"name": "for_loop", "status": "ok", "median_wall_ms": 800.0, "median_gpu_ms": 790.0,
         "speedup": 1.0, "speedup_gpu": 1.0, "launches": 10000},
        {"name": "vectorized", "status": "ok", "median_wall_ms": 0.2, "median_gpu_ms": 0.01,
         "speedup": 4000.0, "speedup_gpu": 79000.0, "launches": 1},
        {"name": "cuda_graph", "status": "skipped", "reason": "needs CUDA"},
        {"name": "dataparallel_function", "status": "failed", "error": "TypeError: x",
         "reason": "not a Module"},
    ],
}  # fmt: skip


def test_strategy_rows_use_gpu_time_where_measured() -> None:
    rows = strategy_rows(RESULT)
    assert [r.name for r in rows] == [s["name"] for s in RESULT["strategies"]]
    assert rows[1].time_ms == 0.01 and rows[1].time_kind == "GPU"
    assert rows[1].speedup == 79000.0
    assert rows[2].time_ms is None and rows[2].note == "needs CUDA"
    assert "TypeError" in rows[3].note


def test_strategy_comparison_lists_every_strategy(qtbot) -> None:
    from gpuviz.gui.run.qt_compare import QtStrategyComparison

    w = QtStrategyComparison()
    qtbot.addWidget(w)
    w.set_result(RESULT)
    assert w.strategy_names() == [s["name"] for s in RESULT["strategies"]]
    assert w.table.item(1, 3).text() == "79,000×"
    assert not w.table.isColumnHidden(4)  # launches are known here


def test_figure_rows_deltas() -> None:
    a = {
        "span_us": 100.0,
        "events": 10,
        "streams": [{"kernels": 3, "kernel_us": 5.0}],
        "devices": [],
        "memory": [],
        "overlap": {"compute_copy_us": 0.0},
    }
    b = {"span_us": 150.0, "events": 12, "streams": [{"kernels": 2, "kernel_us": 4.0},
         {"kernels": 4, "kernel_us": 1.0}], "devices": [], "memory": [],
         "overlap": {"compute_copy_us": 2.0}}  # fmt: skip
    rows = {r.name: r for r in figure_rows(a, b, RESULT, None)}
    assert rows["span"].delta == 50.0 and rows["span"].ratio == 1.5
    assert (rows["kernels"].a, rows["kernels"].b) == (3.0, 6.0)
    assert rows["kernel time"].b == 5.0
    assert "peak allocated" not in rows  # neither has it
    assert rows["vectorized median GPU"].a == 0.01 and rows["vectorized median GPU"].b is None


def _small_traces(tmp_path: Path) -> tuple[Path, Path]:
    a = tmp_path / "a.json.gz"
    b = tmp_path / "b.json.gz"
    shutil.copy(DATA / "streams_overlap.json.gz", a)
    shutil.copy(DATA / "dataparallel_seed_2gpu.json.gz", b)
    return a, b


def _span_us(path: Path) -> float:
    with gzip.open(path, "rt") as f:
        obj = json.load(f)
    evs = obj["traceEvents"] if isinstance(obj, dict) else obj
    spans = [(e["ts"], e["ts"] + e["dur"]) for e in evs if e.get("ph") == "X" and "dur" in e]
    return max(t1 for _, t1 in spans) - min(t0 for t0, _ in spans)


def test_two_runs_side_by_side(qtbot, tmp_path: Path) -> None:
    from PySide6.QtCore import QSettings

    from gpuviz.gui.qt_main_window import MainWindow
    from gpuviz.gui.run.qt_run_controller import install_run_panel

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
    qtbot.addWidget(win)
    ctl = install_run_panel(win, runs_dir=tmp_path, gpus=[], restore=False)
    a, b = _small_traces(tmp_path)
    with qtbot.waitSignals([win.traceOpened, win.traceOpened], timeout=60_000):
        win.open_traces([str(a), str(b)])
    qtbot.waitUntil(lambda: not win.is_busy(), timeout=60_000)
    va, vb = win.trace_views()
    cmp = ctl.compare(va, vb)
    assert cmp is not None
    qtbot.addWidget(cmp)
    ta, tb = cmp.timelines
    qtbot.wait(300)  # the timelines announce their ranges on their next redraw; let them
    # Aligned on their start: each starts at its first event, on the longer one's scale where
    # the shorter one reaches (a timeline shows at most ~1.25x its own length).
    spans = {id(ta): _span_us(a) * 1000, id(tb): _span_us(b) * 1000}
    longest = max(spans.values())
    for tl in (ta, tb):
        t0, t1 = tl.view_range()
        assert t0 == 0
        assert t1 == pytest.approx(min(longest, 1.2 * spans[id(tl)]), rel=0.02)
    ta.set_view_range(1000, 5000)  # one moves, the other follows (on its next redraw)
    qtbot.waitUntil(lambda: tuple(tb.view_range()) == (1000, 5000), timeout=5000)
    names = cmp.figure_names()
    assert "span" in names and "kernels" in names
    span = next(r for r in cmp.rows if r.name == "span")
    assert span.a == pytest.approx(_span_us(a), rel=1e-6)
    assert span.b == pytest.approx(_span_us(b), rel=1e-6)
    cmp.close()
    win.close()


def test_app_reads_nvml_and_rss_while_the_child_is_silent(qtbot, tmp_path: Path) -> None:
    """A child whose GIL the profiler holds sends no samples; the app reads what it can."""
    import os
    import time

    from PySide6.QtCore import QSettings

    from gpuviz.gui.qt_main_window import MainWindow
    from gpuviz.gui.run.qt_device_picker import GpuInfo
    from gpuviz.gui.run.qt_run_controller import install_run_panel

    settings = QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
    qtbot.addWidget(win)
    ctl = install_run_panel(win, runs_dir=tmp_path, gpus=[], restore=False)

    class FakeWorker:  # a child-process run whose child is this test's process
        def child_pid(self) -> int:
            return os.getpid()

    live = LiveRun()
    live.apply(Started("x", {}, "cuda:0", ["cuda:0", "cuda:1"], "2.x"))
    live.apply(MemorySample(0.0, "cuda:0", 10**9, allocated_bytes=2**20, nvml_used_bytes=2**30))
    ctl.live, ctl.worker = live, FakeWorker()  # type: ignore[assignment]
    ctl.read_gpus = lambda: [GpuInfo(0, "G", 2**34, 5 * 2**30), GpuInfo(1, "G", 2**34, 7 * 2**30)]
    ctl._started_at = time.monotonic() - 1.0  # a second without an engine sample
    try:
        ctl._on_probe()
    finally:
        ctl.worker = None
    cols = live.memory["cuda:1"]
    assert list(cols.nvml_used_bytes.view()) == [7 * 2**30]
    assert not cols.has("allocated_bytes")  # the allocator cannot be read from outside
    assert list(live.memory["cuda:0"].nvml_used_bytes.view()) == [2**30, 5 * 2**30]
    assert live.memory["cuda:0"].rss_bytes.view()[-1] > 0  # this process's RSS
    plots = ctl.live_plots
    plots.set_run(live)
    plots.stop()
    curves = plots.memory_curves()
    assert curves[("cuda:0", "allocated")] == 1  # its one reading; no NaN hole drawn
    assert curves[("cuda:0", "NVML used")] == 2
    win.close()
