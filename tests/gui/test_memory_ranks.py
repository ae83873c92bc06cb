"""The Memory view of a folder of rank snapshots: one lane per rank on one time axis, the table,
the highest-peak rank marked; a trace folder still opens its trace with its snapshots."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings

from gpuviz.analysis.allocator_ranks import rank_table
from gpuviz.display import format_bytes
from gpuviz.errors import BadInputError
from gpuviz.gui.qt_load_worker import load_and_analyze
from gpuviz.gui.qt_main_window import MainWindow

LOAD_TIMEOUT_MS = 60_000


def _window(qtbot, tmp_path: Path) -> MainWindow:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
    qtbot.addWidget(win)
    win.resize(1280, 800)
    win.show()
    return win


def _open(qtbot, win: MainWindow, path: Path):
    with qtbot.waitSignal(win.idle, timeout=LOAD_TIMEOUT_MS):
        win.open_trace(path)
    assert not win.errors, win.errors
    view = win.current_trace_view()
    assert view is not None
    return view


def test_one_lane_per_rank_linked_time_axes_and_the_table(
    qtbot, tmp_path: Path, rank_snapshots: Path
) -> None:
    win = _window(qtbot, tmp_path)
    view = _open(qtbot, win, rank_snapshots)
    assert view.current_view() == "memory"  # snapshots alone open on the Memory view
    memory = view.memory_view
    ranks = memory.ranks_view
    assert ranks is not None and ranks.isVisible()
    assert ranks.ranks == [0, 1, 2] and len(ranks.build_all()) == 3
    assert [lane.tl.label for lane in ranks.lanes] == [f"rank {r} cuda:0" for r in range(3)]
    ranks.render_now()
    assert all(lane.frames_drawn >= 1 and lane.raster._pixels.any() for lane in ranks.lanes)

    # the table: the same figures as gpuviz memory DIR, a row per rank
    expected = rank_table(rank_snapshots)
    t = ranks.table
    assert t.rowCount() == 3
    for i, r in enumerate(expected.ranks):
        d = r.figures.devices[0]
        assert t.item(i, 0).text() == str(r.rank)
        assert t.item(i, 2).text() == format_bytes(d.peak_allocated_bytes)
        assert t.item(i, 3).text() == format_bytes(d.reserved_bytes)
        assert t.item(i, 5).text() == format_bytes(d.largest_free_block_bytes)
        assert t.item(i, 6).text().startswith("asked") == (d.oom is not None)
    best = expected.highest_peak_rank
    assert ranks.highest_peak_rank == best
    assert ranks.highest_rows == [best] and t.item(best, 0).font().bold()
    assert not any(t.item(i, 0).font().bold() for i in range(3) if i != best)
    assert f"rank {best} " in ranks.summary.text()
    assert "highest peak" in ranks.lane_titles[best].text()
    assert sum("highest peak" in x.text() for x in ranks.lane_titles) == 1

    # a site (file, line, function) is one colour in every lane
    shared = 0
    for a in ranks.lanes:
        for b in ranks.lanes:
            sites_b = {
                (s.filename, s.line, s.function): s.frame for s in b.tl.figures.top_sites_at_peak
            }
            for s in a.tl.figures.top_sites_at_peak:
                frame_b = sites_b.get((s.filename, s.line, s.function))
                if s.frame >= 0 and frame_b is not None and a is not b:
                    shared += 1
                    assert a.colours[s.frame].rgb() == b.colours[frame_b].rgb()
    assert shared > 0

    # one byte scale: every lane as tall as the highest rank's reserved memory
    tops = ranks.y_tops_bytes()
    assert all(t == pytest.approx(tops[0]) for t in tops)
    assert tops[0] >= max(d.reserved_bytes for r in expected.ranks for d in r.figures.devices)

    # one time axis: a zoom in one lane moves them all
    first = ranks.lanes[0].plot
    lo, hi = ranks.x_ranges()[0]
    first.setXRange(lo + (hi - lo) * 0.25, lo + (hi - lo) * 0.5, padding=0)
    qtbot.wait(10)
    got = ranks.x_ranges()
    assert all(r == pytest.approx(got[0]) for r in got[1:])
    assert got[0][0] == pytest.approx(lo + (hi - lo) * 0.25)
    ranks.lanes[2].plot.setXRange(lo, hi, padding=0)
    qtbot.wait(10)
    assert all(r == pytest.approx((lo, hi)) for r in ranks.x_ranges())

    # a double-click on a row shows that rank's own panels (segments, sites)
    ranks.table.cellDoubleClicked.emit(1, 0)
    assert memory.rank_pages.currentWidget() is memory.snapshot_view
    assert memory.snapshot_view.panel.tl.label == "rank 1 cuda:0"


def test_ranks_share_one_origin_when_their_clocks_agree(tmp_path: Path) -> None:
    from gpuviz.trace.synthetic_snapshot import make_snapshot, write_snapshot

    folder = tmp_path / "job"
    folder.mkdir()
    for r in range(2):
        # same start time, different lengths: the later rank's first entry is not the origin
        snap, _ = make_snapshot(2000 + 500 * r, seed=r)
        if r:
            for trace in snap["device_traces"]:
                for e in trace:
                    e["time_us"] += 5_000
        write_snapshot(folder / f"rank-{r}.memory.pickle", snap)
    a = load_and_analyze(str(folder))
    t0, t1 = a.snapshots
    assert t0.origin_ns == t1.origin_ns
    assert int(t1.t_ns[0]) - int(t0.t_ns[0]) == pytest.approx(5_000_000, abs=1_000_000)


def test_a_bad_rank_file_fails_the_folder_naming_it(rank_snapshots: Path) -> None:
    bad = rank_snapshots / "rank-7.memory.pickle"
    bad.write_bytes(b"garbage")
    with pytest.raises(BadInputError, match=r"rank-7\.memory\.pickle"):
        load_and_analyze(str(rank_snapshots))


def test_a_trace_folder_keeps_its_trace_and_its_snapshots(
    qtbot, tmp_path: Path, data_dir: Path, rank_snapshots: Path
) -> None:
    # torchrun's --out DIR: rank-N.json.gz and rank-N.memory.pickle side by side. The folder
    # opens as a trace, as a single trace with NAME.memory.pickle does, with the snapshots.
    folder = tmp_path / "run"
    shutil.copytree(data_dir / "gloo_4rank_cpu", folder)
    for f in rank_snapshots.iterdir():
        shutil.copy(f, folder / f.name)
    a = load_and_analyze(str(folder))
    assert not a.snapshot_only and len(a.trace.ranks) == 4
    assert a.snapshot_ranks == [0, 1, 2] and "snapshot" not in a.errors
    assert a.snapshot_table.highest_peak_rank == rank_table(rank_snapshots).highest_peak_rank
    win = _window(qtbot, tmp_path)
    view = _open(qtbot, win, folder)
    assert view.current_view() != "memory"  # a trace opens on the default view
    win.set_view("memory")
    memory = view.memory_view
    assert memory.ranks_view is not None and len(memory.ranks_view.build_all()) == 3
    assert memory.snapshot_view.picker.count() == 3


def test_lanes_are_built_as_they_scroll_into_view(qtbot, tmp_path: Path, rank_snapshots: Path):
    from gpuviz.gui.views.memory.qt_memory_ranks import QtMemoryRanksView

    folder = tmp_path / "eight"
    folder.mkdir()
    sources = sorted(rank_snapshots.iterdir())
    for r in range(8):
        shutil.copy(sources[r % 3], folder / f"rank-{r}.memory.pickle")
    a = load_and_analyze(str(folder))
    view = QtMemoryRanksView(a.snapshots, a.snapshot_ranks, a.snapshot_table)
    qtbot.addWidget(view)
    view.resize(1200, 700)
    view.show()
    qtbot.waitExposed(view)
    qtbot.waitUntil(lambda: view.lanes[1] is not None)
    built = [lane is not None for lane in view.lanes]
    assert built[0] and not built[-1], built  # what is out of sight waits
    bar = view.scroll.verticalScrollBar()
    bar.setValue(bar.maximum())
    qtbot.waitUntil(lambda: view.lanes[-1] is not None)
    # a lane built late is on the same time axis and byte scale as the first, once laid out
    # (pyqtgraph lines linked views up by their pixels: before the layout gives the new lane
    # its width, a loaded machine can see it mid-way)
    first, last = view.lanes[0], view.lanes[-1]
    qtbot.waitUntil(
        lambda: (
            last.plot.getViewBox().screenGeometry().width()
            == first.plot.getViewBox().screenGeometry().width()
        )
    )
    qtbot.wait(10)
    assert last.plot.getViewBox().viewRange()[0] == pytest.approx(
        first.plot.getViewBox().viewRange()[0]
    )
    tops = view.y_tops_bytes()
    assert all(t == pytest.approx(tops[0]) for t in tops)
    first.plot.setXRange(1.0, 2.0, padding=0)
    qtbot.wait(10)
    assert last.plot.getViewBox().viewRange()[0] == pytest.approx([1.0, 2.0])
