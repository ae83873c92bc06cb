"""The Memory view's snapshot mode: timeline raster, hover, click-to-choose, segments, sites,
opening a snapshot alone or beside its trace (on the trace's clock)."""

from __future__ import annotations

import gzip
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings

from gpuviz.analysis.allocator_timeline import build_timelines
from gpuviz.gui.qt_load_worker import load_and_analyze
from gpuviz.gui.qt_main_window import MainWindow
from gpuviz.gui.views.memory.qt_memory import QtMemoryView
from gpuviz.gui.views.memory.qt_memory_snapshot import QtMemorySnapshotView
from gpuviz.gui.views.memory.qt_memory_timeline import NS_PER_MS
from gpuviz.trace.allocator_snapshot import load_snapshot, snapshot_from_data
from gpuviz.trace.synthetic_snapshot import make_snapshot

DATA = Path(__file__).parents[1] / "data"
SNAPS = DATA / "snapshots"


@pytest.fixture(scope="module")
def train():
    return build_timelines(load_snapshot(SNAPS / "snap_train.pickle.gz"))


def _view(qtbot, timelines, series=None) -> QtMemorySnapshotView:
    view = QtMemorySnapshotView(timelines, series)
    qtbot.addWidget(view)
    view.resize(1400, 900)
    view.show()
    qtbot.waitExposed(view)
    view.panel.timeline.render_now()
    return view


def test_raster_shows_bands_as_tall_as_live_memory(qtbot, train) -> None:
    view = _view(qtbot, train)
    tl = view.panel.timeline
    assert tl.frames_drawn >= 1
    pixels = tl.raster._pixels
    assert pixels is not None and pixels.any()
    # the column at the peak is the tallest, and as tall as the peak, within a pixel
    vb = tl.plot.getViewBox()
    (_, _), (_, y1) = vb.viewRange()
    heights = (pixels != 0).sum(axis=0)  # an image: a row of pixels per height, top first
    h = pixels.shape[0]
    # a column per pixel at most: drawn narrower, nearest-pixel scaling would drop some
    assert vb.width() / 2 <= pixels.shape[1] <= vb.width() + 2
    peak = train[0].figures.peak_allocated_bytes
    assert abs(heights.max() - peak / (y1 * tl.unit_bytes) * h) <= 1.5


def test_zoom_redraws_at_the_new_range(qtbot, train) -> None:
    view = _view(qtbot, train)
    tl = view.panel.timeline
    before = tl.frames_drawn
    t = train[0].t_ns
    a, b = float(t[len(t) // 2]) / NS_PER_MS, float(t[len(t) // 2 + 40]) / NS_PER_MS
    tl.plot.setXRange(a, b, padding=0)
    qtbot.waitUntil(lambda: tl.frames_drawn > before, timeout=3000)
    rect = tl.raster.boundingRect()
    assert rect.left() <= a and rect.right() >= b
    assert rect.width() < 4 * (b - a)  # the raster covers the view, not the whole window


def test_hover_names_the_allocation_and_its_stack(qtbot, train) -> None:
    view = _view(qtbot, train)
    tl, model = view.panel.timeline, train[0]
    k = model.figures.peak_entry
    al = model.allocations
    rows = al.live_at(k)
    # the largest allocation live at the peak, hit in the middle of its band
    big = rows[int(np.argmax(al.block_bytes[rows]))]
    below = int(al.block_bytes[rows[rows < big]].sum())
    level = below + al.block_bytes[big] / 2
    assert tl.allocation_at(model.time_of(k), level) == big
    html = tl.tooltip_html(int(big))
    assert "block" in html and "stream" in html and "record_round2.py" in html
    assert tl.allocation_at(model.time_of(k), model.live[k] * 1.01) == -1


def test_click_chooses_a_time_for_sites_and_segments(qtbot, train) -> None:
    view = _view(qtbot, train)
    panel = view.panel
    k = len(train[0].t_ns) // 3
    with qtbot.waitSignal(panel.timeline.entryChosen) as sig:
        panel.timeline.choose_entry(k)
    assert sig.args == [k]
    rows = panel.sites.model.rows
    al = train[0].allocations
    live = al.live_at(k)
    assert sum(r.bytes for r in rows) == int(al.block_bytes[live].sum())
    lay = panel.segments.layout_
    assert lay is not None and lay.entry == k and not lay.exact
    assert len(lay.block_seg) == len(live)
    assert "rebuilt from the history" in panel.segments.title.text()


def test_sites_table_and_stack(qtbot, train) -> None:
    view = _view(qtbot, train)
    sites = view.panel.sites
    assert sites.model.rows[0].bytes == max(r.bytes for r in sites.model.rows)
    sites.table.selectRow(0)
    assert "record_round2.py" in sites.stack.toPlainText()


def test_annotations_and_markers(qtbot, train) -> None:
    view = _view(qtbot, train)
    tl = view.panel.timeline
    names = {r.name for r in tl.ann_ranges}
    assert any(n.startswith("ProfilerStep#") for n in names)
    assert any(n.startswith("Optimizer.step") for n in names)


def test_oom_snapshot_is_marked(qtbot) -> None:
    tls = build_timelines(load_snapshot(SNAPS / "snap_oom.pickle"))
    view = _view(qtbot, tls)
    assert "OUT OF MEMORY" in view.panel.header.text()
    assert "352.00 MiB" in view.panel.header.text()
    # the segments at the snapshot are the OOM's: as full as torch said
    lay = view.panel.segments.layout_
    assert lay is not None and lay.exact


def test_names_from_the_file_are_plain_text(qtbot) -> None:
    raw, _ = make_snapshot(600, user_file="/home/<b>bold</b>/train.py")
    tls = build_timelines(snapshot_from_data(raw, "x"))
    view = _view(qtbot, tls)
    view.panel.sites.table.selectRow(0)
    al = tls[0].allocations
    row = int(np.flatnonzero(al.stack >= 0)[0])
    html = view.panel.timeline.tooltip_html(row)
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html


def test_memory_view_has_both_modes(qtbot, train) -> None:
    view = QtMemoryView(None, 1000, "", snapshots=train)
    qtbot.addWidget(view)
    assert view.modes.count() == 2 and view.modes.tabText(0) == "Allocator snapshot"
    assert view.pages.currentWidget() is view.snapshot_view
    view.set_mode("counters")
    assert view.pages.currentWidget() is not view.snapshot_view


def test_snapshot_beside_its_trace_shares_the_clock(tmp_path: Path) -> None:
    shutil.copy(DATA / "snap_train_profile.json.gz", tmp_path / "run.json.gz")
    (tmp_path / "run.memory.pickle").write_bytes(
        gzip.decompress((SNAPS / "snap_train.pickle.gz").read_bytes())
    )
    a = load_and_analyze(str(tmp_path / "run.json.gz"))
    assert len(a.snapshots) == 1 and not a.snapshot_only
    tl = a.snapshots[0]
    assert tl.on_trace_axis and tl.origin_ns == a.trace.zero_ns
    # the profiler's Total Allocated and the snapshot's live bytes agree where both exist
    series = next(s for s in a.memory if s.device_type == 1)
    k = np.searchsorted(tl.t_ns, series.ts_ns, side="right") - 1
    ok = k >= 0
    diff = np.abs(tl.live[k[ok]] - series.allocated_bytes[ok])
    assert np.median(diff) == 0


def test_bad_snapshot_beside_a_trace_is_reported_not_fatal(tmp_path: Path) -> None:
    shutil.copy(DATA / "snap_train_profile.json.gz", tmp_path / "run.json.gz")
    (tmp_path / "run.memory.pickle").write_bytes(b"not a pickle")
    a = load_and_analyze(str(tmp_path / "run.json.gz"))
    assert a.snapshots == [] and "not a pickle" in a.errors["snapshot"]
    assert a.summary is not None


def test_open_a_snapshot_in_the_app(qtbot, tmp_path: Path) -> None:
    win = MainWindow(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), modal_errors=False
    )
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.traceOpened, timeout=30000) as sig:
        win.open_trace(SNAPS / "snap_wrapped.pickle.gz")
    view = sig.args[0]
    assert view.current_view() == "memory"
    snap_view = view.memory_view.snapshot_view
    assert snap_view is not None
    assert "already live when the history began" in snap_view.panel.header.text()


def test_open_a_planted_pickle_fails_cleanly(qtbot, tmp_path: Path) -> None:
    import pickle

    class Planted:
        def __reduce__(self):
            return (os.system, (f"touch {tmp_path / 'ran'}",))

    path = tmp_path / "evil.pickle"
    path.write_bytes(pickle.dumps({"segments": [Planted()], "device_traces": []}))
    win = MainWindow(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), modal_errors=False
    )
    qtbot.addWidget(win)
    with qtbot.waitSignal(win.loadFailed, timeout=30000) as sig:
        win.open_trace(path)
    assert "refused" in sig.args[1]
    assert not (tmp_path / "ran").exists()


def test_run_panel_check_box(qtbot, tmp_path: Path) -> None:
    from gpuviz.gui.run.qt_run_controller import _failure_snapshot, install_run_panel

    win = MainWindow(
        QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat),
        modal_errors=False,
        remember_recent=False,
    )
    qtbot.addWidget(win)
    ctl = install_run_panel(win, runs_dir=tmp_path / "runs", gpus=[], restore=False)
    panel = ctl.panel
    panel.select("loops")
    assert panel.request()["memory_snapshot"] is False
    panel.memory_snapshot.setChecked(True)
    assert panel.request()["memory_snapshot"] is True
    panel.profile.setChecked(False)  # no trace, so no snapshot beside it
    assert not panel.memory_snapshot.isEnabled()
    assert panel.request()["memory_snapshot"] is False
    # a failed run's snapshot is found beside the trace it would have written
    out = tmp_path / "runs" / "loops-1.json.gz"
    req = {"memory_snapshot": True, "out": str(out)}
    assert _failure_snapshot(req) is None
    out.parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / "runs" / "loops-1.memory.pickle").write_bytes(b"x")
    assert _failure_snapshot(req) == str(tmp_path / "runs" / "loops-1.memory.pickle")
    assert _failure_snapshot({"out": str(out)}) is None


def test_byte_axis_keeps_its_unit_when_zoomed_below_one(qtbot, train) -> None:
    # the byte axes have no SI-prefix scaling (it rebuilt their labels at every range change):
    # zoomed below 1 unit, the label stays "memory (UNIT)" with no "(x0.001)" scale, while the
    # time axis still scales
    view = _view(qtbot, train)
    tl = view.panel.timeline
    tl.plot.setYRange(0, 0.5, padding=0)
    tl.plot.setXRange(0, 0.5, padding=0)
    left, bottom = tl.plot.getAxis("left"), tl.plot.getAxis("bottom")
    assert "(x" not in left.labelString() and tl.unit in left.labelString()
    assert left.autoSIPrefixScale == 1.0
    assert bottom.autoSIPrefixScale != 1.0


def test_annotation_row_lines_up_with_the_plot(qtbot, train) -> None:
    # the annotation row is a bare ViewBox beside an axis (not a second PlotItem): its view
    # must span the same pixels and the same times as the plot's
    view = _view(qtbot, train)
    tl = view.panel.timeline
    assert tl.ann_row.isVisible()
    ann, plot = tl.ann_view.sceneBoundingRect(), tl.plot.getViewBox().sceneBoundingRect()
    assert abs(ann.left() - plot.left()) < 0.5 and abs(ann.right() - plot.right()) < 0.5
    tl.plot.setXRange(10.0, 20.0, padding=0)
    assert tl.ann_view.viewRange()[0] == pytest.approx([10.0, 20.0])


def test_no_annotation_row_without_annotations(qtbot) -> None:
    raw, _ = make_snapshot(2000, seed=3)
    raw.pop("external_annotations", None)
    view = _view(qtbot, build_timelines(snapshot_from_data(raw, "s")))
    tl = view.panel.timeline
    assert not tl.ann_row.isVisible()
    assert tl.ann_view.sceneBoundingRect().height() < 1 or not tl.ann_view.isVisible()
