"""The Timeline widget (gpuviz.gui.timeline.qt_timeline) on real and synthetic traces.

Expected figures come from the raw JSON (plain ``json``), not from the code under test.
"""

from __future__ import annotations

import collections
import gzip
import json
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QColor, QWheelEvent
from PySide6.QtWidgets import QApplication

from gpuviz.gui.timeline.qt_timeline import AXIS_PX, GUTTER_PX, ROW_PX, SYNC_TRACE_MAX, ZOOM_STEP
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.lanes import RANK_SOURCE
from gpuviz.trace.lod import RowKind
from gpuviz.trace.model import Kind, TrackKind
from gpuviz.trace.synthetic import make_trace

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "memcpy", "memset"}


def _events(path: Path) -> list[dict]:
    files = sorted(path.glob("*.json.gz")) if path.is_dir() else [path]
    out = []
    for f in files:
        with gzip.open(f, "rt") as fh:
            data = json.load(fh)
        out.extend(data["traceEvents"] if isinstance(data, dict) else data)
    return out


def _gpu_lanes(events: list[dict]) -> dict[tuple[int, int], int]:
    lanes: collections.Counter = collections.Counter()
    for e in events:
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() in GPU_CATS:
            a = e.get("args", {})
            lanes[(int(a.get("device", a.get("inDevice"))), int(a["stream"]))] += 1
    return dict(lanes)


def _pump(ms: int = 60) -> None:
    app = QApplication.instance()
    import time

    end = time.monotonic() + ms / 1000
    while time.monotonic() < end:
        app.processEvents()
        time.sleep(0.005)


@pytest.mark.parametrize(
    "name",
    [
        "streams_overlap.json.gz",
        "dataparallel_seed_2gpu.json.gz",
        "worker_thread.json.gz",
        "hta__trace_filter__sampled_rank-0.json.gz",
    ],
)
def test_shared_traces_give_their_gpu_lanes_and_every_slice(make_timeline, data_dir, name):
    events = _events(data_dir / name)
    w = make_timeline(load_trace(str(data_dir / name)))
    tr, lay = w.trace, w.layout_rows
    # One lane per (device, stream) with GPU work, holding exactly that work.
    got = {}
    for r in range(len(lay)):
        t = int(lay.track[r])
        if lay.kind[r] == RowKind.TRACK and tr.tracks.kind[t] == TrackKind.GPU_STREAM:
            rows = w.lod.source(lay.sources[r], lay.groups).rows
            key = (int(tr.tracks.device[t]), int(tr.tracks.stream[t]))
            got[key] = got.get(key, 0) + int(tr.gpu_activity_mask()[rows].sum())
    assert got == _gpu_lanes(events)
    # GPU groups: one per device, in order, before the CPU groups.
    devices = sorted({d for d, _ in got})
    gpu_groups = [g.label for g in lay.groups if g.gpu]
    with gzip.open(data_dir / name, "rt") as fh:
        rank = (json.load(fh).get("distributedInfo") or {}).get("rank")
    prefix = "" if rank is None else f"rank {rank} · "
    assert gpu_groups == [f"{prefix}GPU {d}" for d in devices]
    assert all(g.gpu for g in lay.groups[: len(devices)])
    # Every complete event is drawn on exactly one row.
    n_x = sum(1 for e in events if e.get("ph") == "X")
    drawn = np.concatenate([w.lod.source(k, lay.groups).rows for k in lay.sources if k is not None])
    assert len(drawn) == n_x == len(np.unique(drawn))


def test_a_folder_of_ranks_shows_both_ranks(make_timeline, data_dir):
    w = make_timeline(load_trace(str(data_dir / "ddp_2rank")))
    labels = [g.label for g in w.layout_rows.groups]
    assert any(lb.startswith("rank 0 · GPU") for lb in labels)
    assert any(lb.startswith("rank 1 · GPU") for lb in labels)
    assert labels.index(next(lb for lb in labels if lb.startswith("rank 1"))) > max(
        i for i, lb in enumerate(labels) if lb.startswith("rank 0")
    )


@pytest.fixture
def synth_view(make_timeline):
    return make_timeline(make_trace(2_000, devices=2, streams=2, cpu_threads=2, seed=5))


def test_w_and_s_zoom_around_the_centre(qtbot, synth_view):
    w = synth_view
    w.set_view_range(100_000, 300_000)
    assert w.view_range() == (100_000, 300_000)
    qtbot.keyClick(w.canvas, Qt.Key.Key_W)
    t0, t1 = w.view_range()
    assert abs((t1 - t0) - 200_000 / ZOOM_STEP) <= 2
    assert abs((t0 + t1) / 2 - 200_000) <= 2
    qtbot.keyClick(w.canvas, Qt.Key.Key_S)
    t0, t1 = w.view_range()
    assert abs(t0 - 100_000) <= 2 and abs(t1 - 300_000) <= 2


def test_a_and_d_pan_by_a_fifth(qtbot, synth_view):
    w = synth_view
    w.set_view_range(100_000, 300_000)
    qtbot.keyClick(w.canvas, Qt.Key.Key_D)
    assert w.view_range() == (140_000, 340_000)
    qtbot.keyClick(w.canvas, Qt.Key.Key_A)
    qtbot.keyClick(w.canvas, Qt.Key.Key_A)
    assert w.view_range() == (60_000, 260_000)


def test_the_wheel_zooms_around_the_mouse(qtbot, synth_view):
    w = synth_view
    w.set_view_range(100_000, 300_000)
    x = GUTTER_PX + 100.0
    before = w.time_at_x(x)
    pos = QPointF(x, 200.0)
    ev = QWheelEvent(
        pos,
        w.canvas.mapToGlobal(pos),
        QPoint(0, 0),
        QPoint(0, 120),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(w.canvas, ev)
    t0, t1 = w.view_range()
    assert abs((t1 - t0) - 200_000 / ZOOM_STEP) <= 2
    assert abs(w.time_at_x(x) - before) <= 2  # the time under the mouse stays put


def test_dragging_pans(qtbot, synth_view):
    w = synth_view
    w.set_view_range(100_000, 300_000)
    ns_per_px = 200_000 / (w.canvas.width() - GUTTER_PX)
    y = AXIS_PX + 5 * ROW_PX
    qtbot.mousePress(w.canvas, Qt.MouseButton.LeftButton, pos=QPoint(600, y))
    qtbot.mouseMove(w.canvas, QPoint(650, y))
    qtbot.mouseMove(w.canvas, QPoint(700, y))
    qtbot.mouseRelease(w.canvas, Qt.MouseButton.LeftButton, pos=QPoint(700, y))
    t0, t1 = w.view_range()
    assert abs(t0 - (100_000 - 100 * ns_per_px)) <= 2
    assert t1 - t0 == 200_000
    assert w.selected_slice() == -1  # a drag is not a click


def test_view_range_signal_is_rate_limited(qtbot, synth_view):
    w = synth_view
    got = []
    w.viewRangeChanged.connect(lambda a, b: got.append((a, b)))
    with qtbot.waitSignal(w.viewRangeChanged, timeout=2000):
        for i in range(40):
            w.set_view_range(1000 * i, 1000 * i + 500_000)
    _pump(60)
    assert got == [(39_000, 539_000)]


def test_search_highlights_and_steps_through_matches(qtbot, make_timeline, data_dir):
    name = "streams_overlap.json.gz"
    events = _events(data_dir / name)
    want = sum(1 for e in events if e.get("ph") == "X" and "xmma" in e.get("name", "").lower())
    assert want > 0
    w = make_timeline(load_trace(str(data_dir / name)))
    assert w.search("XMMA") == want
    rows = w.match_rows()
    assert len(rows) == want
    assert all("xmma" in w.trace.name_of(int(r)).lower() for r in rows)
    starts = w.trace.slices.start_ns[rows]
    assert np.all(np.diff(starts) >= 0)  # time order
    w.set_view_range(-10, 10)  # before everything: the first step lands on the first match
    for i in range(want):
        assert w.next_match() == i
        assert w.selected_slice() == rows[i]
        t0, t1 = w.view_range()
        s = w.trace.slices
        assert t0 <= s.start_ns[rows[i]] and s.start_ns[rows[i]] + s.dur_ns[rows[i]] <= t1 + 1
    assert w.next_match() == 0  # wraps
    assert w.prev_match() == want - 1
    assert w.search("") == 0 and len(w.match_rows()) == 0
    assert w.search("no such kernel anywhere") == 0
    assert w.next_match() == -1


def test_clicking_a_kernel_links_its_launch(qtbot, make_timeline, data_dir):
    name = "streams_overlap.json.gz"
    events = _events(data_dir / name)
    kernel = next(e for e in events if e.get("cat") == "kernel" and e["args"]["stream"] == 14)
    corr = kernel["args"]["correlation"]
    launch = next(
        e
        for e in events
        if e.get("cat") == "cuda_runtime" and e.get("args", {}).get("correlation") == corr
    )
    w = make_timeline(load_trace(str(data_dir / name)))
    s = w.trace.slices
    lanes = [r for r in range(len(s)) if s.kind[r] == Kind.KERNEL and s.correlation[r] == corr]
    assert len(lanes) == 1
    row = lanes[0]
    w.set_view_range(
        int(s.start_ns[row]) - 2_000_000, int(s.start_ns[row] + s.dur_ns[row]) + 2_000_000
    )
    _pump(40)
    pos = w.slice_position(row)
    assert pos is not None
    with qtbot.waitSignal(w.sliceClicked, timeout=2000) as sig:
        qtbot.mouseClick(w.canvas, Qt.MouseButton.LeftButton, pos=pos.toPoint())
    assert sig.args == [row]
    assert w.selected_slice() == row
    assert w.trace.name_of(row) == kernel["name"]
    linked = w.linked_rows()
    assert len(linked) == 1
    lk = int(linked[0])
    assert w.trace.name_of(lk) == launch["name"]
    # The launch precedes the kernel by what the file says (µs -> ns).
    assert abs((s.start_ns[row] - s.start_ns[lk]) - (kernel["ts"] - launch["ts"]) * 1000) <= 2
    assert launch["name"] in w.info_text
    # And the other way: selecting the launch links the kernel.
    w.select_slice(lk)
    assert w.linked_rows().tolist() == [row]
    # Clicking empty space clears the selection.
    qtbot.mouseClick(
        w.canvas, Qt.MouseButton.LeftButton, pos=QPoint(GUTTER_PX + 5, w.canvas.height() - 5)
    )
    assert w.selected_slice() == -1


def test_shift_drag_selects_a_range_and_shows_its_figures(qtbot, make_timeline, data_dir):
    w = make_timeline(load_trace(str(data_dir / "streams_overlap.json.gz")))
    s = w.trace.slices
    kern = np.flatnonzero(s.kind == Kind.KERNEL)
    t0, t1 = int(s.start_ns[kern].min()), int(s.end_ns[kern].max())
    w.set_view_range(t0 - 1000, t1 + 1000)
    _pump(40)
    x0 = GUTTER_PX + 100
    x1 = w.canvas.width() - 300
    y = AXIS_PX + 3 * ROW_PX
    a, b = int(w.time_at_x(x0)), int(w.time_at_x(x1))
    with qtbot.waitSignal(w.rangeSelected, timeout=2000) as sig:
        qtbot.mousePress(
            w.canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, QPoint(x0, y)
        )
        qtbot.mouseMove(w.canvas, QPoint((x0 + x1) // 2, y))
        qtbot.mouseMove(w.canvas, QPoint(x1, y))
        qtbot.mouseRelease(
            w.canvas, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.ShiftModifier, QPoint(x1, y)
        )
    ra, rb = sig.args
    px = (t1 - t0 + 2000) / (w.canvas.width() - GUTTER_PX)
    assert abs(ra - a) <= px and abs(rb - b) <= px
    assert w.selected_range() == (ra, rb)
    # Kernels overlapping the range, counted here from the columns.
    n = int(((s.start_ns[kern] < rb) & (s.end_ns[kern] > ra)).sum())
    assert n > 1 and f"{n:,} kernels" in w.info_text
    assert "busy" in w.info_text and "overlap" in w.info_text
    assert w.view_range() == (t0 - 1000, t1 + 1000)  # selecting did not pan


def test_a_drag_on_the_time_axis_selects_too_and_select_range_emits(qtbot, synth_view):
    w = synth_view
    w.set_view_range(0, 1_000_000)
    with qtbot.waitSignal(w.rangeSelected, timeout=2000):
        qtbot.mousePress(w.canvas, Qt.MouseButton.LeftButton, pos=QPoint(GUTTER_PX + 50, 10))
        qtbot.mouseMove(w.canvas, QPoint(GUTTER_PX + 250, 10))
        qtbot.mouseRelease(w.canvas, Qt.MouseButton.LeftButton, pos=QPoint(GUTTER_PX + 250, 10))
    a, b = w.selected_range()
    assert b - a == pytest.approx(200 * 1_000_000 / (w.canvas.width() - GUTTER_PX), abs=2)
    with qtbot.waitSignal(w.rangeSelected, timeout=1000) as sig:
        w.select_range(5_000, 2_000)
    assert sig.args == [2_000, 5_000] and w.selected_range() == (2_000, 5_000)
    qtbot.keyClick(w.canvas, Qt.Key.Key_Escape)
    assert w.selected_range() is None


def test_clicking_a_group_label_folds_it(qtbot, synth_view):
    w = synth_view
    lay = w.layout_rows
    n = len(lay)
    gpu1 = next(r for r in range(n) if lay.kind[r] == RowKind.GROUP and lay.labels[r] == "GPU 1")
    qtbot.mouseClick(
        w.canvas, Qt.MouseButton.LeftButton, pos=QPoint(8, AXIS_PX + gpu1 * ROW_PX + ROW_PX // 2)
    )
    lay2 = w.layout_rows
    g = int(lay.group[gpu1])
    members = sum(int(lay.track_depths[t]) for t in lay.groups[g].tracks)
    assert len(lay2) == n - members
    assert g in lay2.folded_groups and lay2.sources[gpu1] == (2, g, -1)
    f = w.current_frame()
    assert not f.pending_rows and f.count > 0
    qtbot.mouseClick(
        w.canvas, Qt.MouseButton.LeftButton, pos=QPoint(8, AXIS_PX + gpu1 * ROW_PX + ROW_PX // 2)
    )
    assert len(w.layout_rows) == n


def test_highlighted_rows_are_outlined(qtbot, synth_view):
    w = synth_view
    s = w.trace.slices
    kern = np.flatnonzero(s.kind == Kind.KERNEL)
    row = int(kern[len(kern) // 2])
    w.set_view_range(int(s.start_ns[row]) - 20_000, int(s.end_ns[row]) + 20_000)
    w.highlight_rows(np.array([row]))
    assert w.highlighted_rows().tolist() == [row]
    _pump(40)
    img = w.canvas.grab().toImage()
    pos = w.slice_position(row)
    x0 = int(w.x_of_time(float(s.start_ns[row])))
    y = int(pos.y())
    # The outline's left edge (2 px orange) is at the slice's start.
    cols = [QColor(img.pixel(x, y)) for x in range(x0 - 2, x0 + 3)]
    assert any(c.red() > 230 and 100 < c.green() < 170 and c.blue() < 60 for c in cols), cols
    w.highlight_rows(np.empty(0, dtype=np.int64))
    assert len(w.highlighted_rows()) == 0


def test_hover_text_names_the_slice_its_lane_and_args(synth_view):
    w = synth_view
    s = w.trace.slices
    row = int(np.flatnonzero(s.kind == Kind.KERNEL)[0])
    text = w.describe_slice(row, rich=False)
    assert w.trace.name_of(row) in text
    t = int(s.track[row])
    assert f"GPU {int(w.trace.tracks.device[t])} · stream {int(w.trace.tracks.stream[t])}" in text
    assert "grid: [128, 1, 1]" in text
    assert "kernel" in text


def test_a_big_trace_builds_its_pyramids_in_a_worker(qtbot, make_timeline, _no_dangling_qthreads):
    tr = make_trace(30_000)
    assert len(tr.slices) > SYNC_TRACE_MAX
    w = make_timeline(tr, ready=False)
    assert any(t.isRunning() for t in _no_dangling_qthreads) or w.lod_ready
    assert w.wait_ready(60)
    assert not w.current_frame().pending_rows
    assert w.current_frame().count > 0


def _stopped_and_spied(w, monkeypatch) -> list[int]:
    """Stop ``w``'s pyramid worker, then count every later step of a worker (the list).

    Stopped first: a worker still in its start wait would otherwise take its first step
    through the spy (seen once in CI on a loaded 2-core machine).
    """
    from gpuviz.trace import lod as lod_module

    w.stop_worker(final=False)
    steps: list[int] = []
    build_iter = lod_module.TimelineLod.build_iter

    def spy(self, keys, groups):
        for item in build_iter(self, keys, groups):
            steps.append(1)
            yield item

    monkeypatch.setattr(lod_module.TimelineLod, "build_iter", spy)
    return steps


def test_the_pyramid_worker_waits_while_the_gui_thread_paints(
    qtbot, make_timeline, monkeypatch, _no_dangling_qthreads
):
    # The worker shares the GIL with the GUI thread: it must not take a step while a paint
    # (or the widget's first build and paint) is under way.
    w = make_timeline(make_trace(30_000), ready=False)
    steps = _stopped_and_spied(w, monkeypatch)
    # The worker gives up waiting after START_WAIT_S; a loaded machine may keep this thread
    # off a core for longer than the sleep below, so make that wait outlast any such delay.
    from gpuviz.gui.timeline import qt_lod_worker

    monkeypatch.setattr(qt_lod_worker, "START_WAIT_S", 60.0)
    w.lod._sources.clear()  # start over, with the spy in place
    w.gui_idle.clear()  # as during a paint
    w._start_worker()
    time.sleep(0.3)  # no events processed: no paint ends meanwhile
    assert not steps, "no step while the GUI thread paints"
    w.gui_idle.set()
    assert w.wait_ready(60)
    assert len(steps) > 10
    assert not w.current_frame().pending_rows


def test_a_worker_stopped_during_its_start_wait_takes_no_step(
    qtbot, make_timeline, monkeypatch, _no_dangling_qthreads
):
    # Closing a timeline while its worker waits for the first paint: the worker must not then
    # build a row (one step of a big row holds the GIL, and the close waits for it).
    import threading

    from gpuviz.gui.timeline.qt_lod_worker import QtLodWorker

    w = make_timeline(make_trace(30_000), ready=False)
    steps = _stopped_and_spied(w, monkeypatch)
    w.lod._sources.clear()
    keys = w.lod.unbuilt(w._layout)
    assert keys
    idle = threading.Event()  # a paint under way
    worker = QtLodWorker(w.lod, keys, w._layout.groups, idle)
    built: list[int] = []
    worker.built.connect(lambda: built.append(1))
    worker.start()
    time.sleep(0.1)  # in its start wait
    worker.requestInterruption()
    idle.set()  # the paint ends
    assert worker.wait(10_000)
    assert not steps and not built


def test_a_new_timeline_lets_the_gui_thread_paint_first(qapp, _no_dangling_qthreads):
    from gpuviz.gui.timeline.qt_timeline import QtTimeline

    w = QtTimeline(make_trace(30_000))
    try:
        assert not w.gui_idle.is_set(), "the worker waits while the widget is built"
        w.resize(800, 400)
        w.show()
        _pump(100)
        assert w.gui_idle.is_set(), "set once it was painted"
        assert w.wait_ready(60)
    finally:
        w.close()
    hidden = QtTimeline(make_trace(30_000))
    try:  # never shown: the worker starts all the same, a little later
        assert hidden.wait_ready(60)
    finally:
        hidden.close()


def test_closing_while_building_stops_the_worker(qtbot, make_timeline, _no_dangling_qthreads):
    w = make_timeline(make_trace(60_000), ready=False)
    w.close()
    assert not any(t.isRunning() for t in _no_dangling_qthreads)


def test_screenshot_shows_every_gpu_lane(qtbot, make_timeline, data_dir, tmp_path):
    w = make_timeline(load_trace(str(data_dir / "streams_overlap.json.gz")), 1400, 600)
    _pump(40)
    img = w.canvas.grab().toImage()
    w.grab().save(str(tmp_path / "timeline.png"))
    assert (tmp_path / "timeline.png").stat().st_size > 5000
    lay = w.layout_rows
    tr = w.trace
    for r in range(len(lay)):
        t = int(lay.track[r])
        if t < 0 or tr.tracks.kind[t] != TrackKind.GPU_STREAM:
            continue
        y = AXIS_PX + r * ROW_PX + ROW_PX // 2
        coloured = sum(
            1
            for x in range(GUTTER_PX + 1, img.width(), 2)
            if QColor(img.pixel(x, y)).saturation() > 60
        )
        assert coloured > 3, lay.labels[r]


SMALL_TRACES = [
    "streams_overlap.json.gz",
    "dataparallel_seed_2gpu.json.gz",
    "worker_thread.json.gz",
    "ddp_2rank",
    "hta__critical_path__alexnet__benchmark_result_2869224_1695835535_trace.json.gz",
    "hta__critical_path__cuda_event_sync_multi_stream__event_sync_trace.json.gz",
    "hta__cupti_profiler__benchmark_result_924719_1679055439_trace.json.gz",
    "hta__trace_filter__sampled_rank-0.json.gz",
    "tl__h100__Falconsai_nsfw_image_detection__1016002.json.gz",
    "tl__h100__gaunernst_bert-small-uncased__1016001.json.gz",
    "tl__inference__vllm_decode_full__graph_execution.json.gz",
    "tl__torch_compile_triton__trace.json.gz",
]
BIG_TRACES = [
    "hta__nccl_parser_config__nccl_data.json.gz",
    "hta__ns_resolution_trace__rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
    "kineto__tb_plugin__resnet50_num_workers_4__worker0.pt.trace.json.gz",
    "hta__df_index_resolver__df_index_resolver.json.gz",
]


@pytest.mark.parametrize(
    "name", SMALL_TRACES + [pytest.param(n, marks=pytest.mark.slow) for n in BIG_TRACES]
)
def test_every_shared_trace_opens_and_draws(make_timeline, data_dir, name):
    events = _events(data_dir / name)
    w = make_timeline(load_trace(str(data_dir / name)))
    lay = w.layout_rows
    n_x = sum(1 for e in events if e.get("ph") == "X")
    # Every slice once in the lanes; ranks' summary lanes show their GPU work a second time.
    lanes = [k for k in lay.sources if k is not None and k[0] != RANK_SOURCE]
    drawn = sum(w.lod.source(k, lay.groups).n for k in lanes)
    assert drawn == n_x
    gpu_x = sum(
        1 for e in events if e.get("ph") == "X" and str(e.get("cat", "")).lower() in GPU_CATS
    )
    summaries = [k for k in lay.sources if k is not None and k[0] == RANK_SOURCE]
    if summaries:
        assert sum(w.lod.source(k, lay.groups).n for k in summaries) == gpu_x
    w.canvas.grab()  # paints every visible row
    f = w.current_frame()
    assert not f.pending_rows
    assert (f.count > 0) == (n_x > 0)
    # Zoom into the middle and step through kernels, as a user would.
    t0, t1 = w.view_range()
    w.set_view_range(t0 + (t1 - t0) * 0.45, t0 + (t1 - t0) * 0.55)
    w.canvas.grab()
    if w.search("kernel") or w.search("gemm"):
        w.next_match()
        assert w.selected_slice() == w.match_rows()[w.current_match()]
        w.canvas.grab()


def test_an_empty_trace_opens(make_timeline):
    from gpuviz.trace.model import (
        ArgsStore,
        Flows,
        Instants,
        MemoryEvents,
        Slices,
        SymbolTable,
        Trace,
        Tracks,
    )

    tr = Trace(
        symbols=SymbolTable(),
        slices=Slices.empty(),
        tracks=Tracks.empty(),
        flows=Flows.empty(),
        memory=MemoryEvents.empty(),
        instants=Instants.empty(),
        args=ArgsStore(),
        ranks=[],
    )
    w = make_timeline(tr)
    w.canvas.grab()
    assert len(w.layout_rows) == 0
    assert w.search("x") == 0 and w.next_match() == -1
    w.select_range(0, 100)
    assert w.selected_range() == (0, 100) and "0 kernels" in w.info_text


def test_typing_in_the_search_box_searches_after_a_pause(qtbot, synth_view):
    w = synth_view
    box = w.findChild(type(w._search))
    want = int(
        np.isin(
            w.trace.slices.name,
            [i for i, n in enumerate(w.trace.symbols.strings) if "sgemm" in n.lower()],
        ).sum()
    )
    assert want > 0
    qtbot.keyClicks(box, "sgemm")
    assert len(w.match_rows()) == 0  # not yet: one search after typing stops
    qtbot.waitUntil(lambda: len(w.match_rows()) == want, timeout=2000)
    qtbot.keyClick(box, Qt.Key.Key_Return)
    assert w.current_match() == 0 and w.selected_slice() == w.match_rows()[0]


def test_highlighting_every_kernel_of_a_big_trace_stays_cheap(qtbot, make_timeline):
    tr = make_trace(40_000, devices=1, streams=2, cpu_threads=1)
    w = make_timeline(tr)
    kern = np.flatnonzero(tr.slices.kind == Kind.KERNEL)
    w.highlight_rows(kern)
    rects = w.painter.highlight_rects(w.highlight_set)
    # One mark per pixel column and row at most, and every lane with kernels has marks.
    assert 0 < len(rects) <= 2 * (w.canvas.width() + 1) + 100
    lay = w.layout_rows
    stream_rows = {int(r) for r in lay.rows_of(tr.slices.track[kern], tr.slices.depth[kern])}
    ys = {int((y - 1 - AXIS_PX) // ROW_PX) for y in rects[:, 1]}
    assert stream_rows <= ys
    w.canvas.grab()


def test_w_zooms_around_the_mouse_when_it_is_over_the_lanes(qtbot, synth_view):
    w = synth_view
    w.set_view_range(100_000, 300_000)
    x = GUTTER_PX + 300
    at = w.time_at_x(x)
    qtbot.mouseMove(w.canvas, QPoint(x, AXIS_PX + 3 * ROW_PX))
    qtbot.keyClick(w.canvas, Qt.Key.Key_W)
    t0, t1 = w.view_range()
    assert abs((t1 - t0) - 200_000 / ZOOM_STEP) <= 2
    assert abs(w.time_at_x(x) - at) <= 2
    assert abs((t0 + t1) / 2 - 200_000) > 1000  # not the centre


def test_a_burst_of_view_changes_is_painted_once(qtbot, synth_view):
    w = synth_view
    _pump(60)
    import time

    from gpuviz.gui.timeline.qt_timeline import REDRAW_MS

    before = w.paint_count
    app = QApplication.instance()
    t = time.perf_counter()
    for i in range(40):  # a wheel burst: each event handled, then the loop goes on
        w.set_view_range(1000 * i, 1000 * i + 400_000)
        app.processEvents()
    elapsed_ms = (time.perf_counter() - t) * 1000
    _pump(80)
    # At most one frame per redraw interval, however many events came in.
    assert 1 <= w.paint_count - before <= elapsed_ms / REDRAW_MS + 2


def test_a_timeline_stopped_for_good_starts_no_other_worker(qtbot, make_timeline) -> None:
    # A closing view stops its worker; a queued "finished" or a redraw must not start another
    # one that would outlive the widget.
    w = make_timeline(make_trace(30_000), ready=False)
    w.stop_worker()
    w.lod._sources.clear()
    w._start_worker()
    assert w._worker is None
    w.stop_worker(final=False)
    w._start_worker()
    assert w._worker is not None
    assert w.wait_ready(60)
