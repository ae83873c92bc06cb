"""The Timeline with many ranks: summary lanes, expanding and collapsing, the rank filter, search.

On a generated 64-rank folder (a planted straggler, files that begin late) and on the real
``ddp_4rank_h200`` sample. Expected figures come from the raw JSON files or from the trace's
columns, not from the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, Qt
from rank_folders import LATE, STRAGGLER

from gpuviz.gui.timeline.viewport import AXIS_PX, GUTTER_PX, ROW_PX
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.lanes import RANK_SOURCE, RowKind

ROOT = Path(__file__).parent.parent.parent
SAMPLE_4 = ROOT / "assets" / "samples" / "ddp_4rank_h200"


@pytest.fixture(scope="module")
def trace64(folder64):
    return load_trace(str(folder64))


def _row_y(w, row: int) -> int:
    return int(AXIS_PX + row * ROW_PX - w.viewport.scroll_px + ROW_PX // 2)


def _nccl_per_rank(folder: Path) -> dict[int, int]:
    out = {}
    for f in sorted(folder.glob("rank-*.json")):
        data = json.loads(f.read_text())
        rank = data["distributedInfo"]["rank"]
        out[rank] = sum(
            1
            for e in data["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") == "kernel" and "nccl" in e["name"].lower()
        )
    return out


def test_64_ranks_open_as_one_summary_lane_each(make_timeline, trace64):
    w = make_timeline(trace64, 1400, 900)
    lay = w.layout_rows
    assert len(lay) == 64 and (lay.kind == RowKind.RANK).all()
    assert lay.labels == [f"rank {r}" for r in range(64)]
    assert w.expanded_ranks() == []
    assert not w._rank_filter.isHidden() and not w._expand_btn.isHidden()
    w.canvas.grab()
    f = w.current_frame()
    assert not f.pending_rows
    visible = list(w.viewport.visible_rows(len(lay)))
    assert f.density_rows.tolist() == visible
    assert f.density_busy.shape == (len(visible), w.viewport.area_width())
    assert f.count == 0  # nothing is drawn slice by slice


def test_the_straggler_stands_out_in_its_summary_lane(make_timeline, trace64):
    # Rank 5 computes 1.3x longer and never waits: more compute, less communication.
    w = make_timeline(trace64, 1400, 900)
    f = w.current_frame()
    rows = f.density_rows.tolist()
    compute = f.density_compute.mean(axis=1)
    comm = (f.density_busy - f.density_compute).mean(axis=1)
    i = rows.index(w.layout_rows.rank_row(STRAGGLER))
    others = [k for k in range(len(rows)) if k != i]
    assert compute[i] > 1.08 * np.median(compute[others])
    assert comm[i] < 0.5 * np.median(comm[others])
    # The lane's total busy time is the rank's GPU work merged, recomputed here in whole ns.
    s, tr = trace64.slices, trace64.tracks
    mine = np.flatnonzero(trace64.gpu_activity_mask() & (tr.rank[s.track] == STRAGGLER))
    cells = np.zeros(int(s.end_ns.max()) + 1, dtype=bool)
    for r in mine.tolist():
        cells[int(s.start_ns[r]) : int(s.start_ns[r] + s.dur_ns[r])] = True
    src = w.lod.source((RANK_SOURCE, STRAGGLER, -1), w.layout_rows.groups)
    assert src.busy.total_ns == int(cells.sum())


def test_a_click_expands_a_rank_and_its_label_collapses_it(make_timeline, qtbot, trace64):
    w = make_timeline(trace64, 1400, 900)
    r3 = w.layout_rows.rank_row(3)
    qtbot.mouseClick(
        w.canvas, Qt.MouseButton.LeftButton, pos=QPoint(GUTTER_PX + 300, _row_y(w, r3))
    )
    assert w.expanded_ranks() == [3]
    lay = w.layout_rows
    rows3 = np.flatnonzero(lay.row_rank == 3)
    assert len(rows3) > 1 and lay.kind[rows3[0]] == RowKind.RANK
    assert set(lay.kind[rows3[1:]].tolist()) <= {int(RowKind.GROUP), int(RowKind.TRACK)}
    # Rank 3's slices now have their own rows; the others' still map to their summary lane.
    s = trace64.slices
    disp = lay.rows_of(s.track, s.depth)
    rank = trace64.tracks.rank[s.track]
    assert (disp[rank == 3] > lay.rank_row(3)).all()
    assert (disp[rank == 4] == lay.rank_row(4)).all()
    w.canvas.grab()
    assert not w.current_frame().pending_rows
    # A click on the label of the expanded rank collapses it again.
    qtbot.mouseClick(
        w.canvas, Qt.MouseButton.LeftButton, pos=QPoint(40, _row_y(w, lay.rank_row(3)))
    )
    assert w.expanded_ranks() == []
    assert len(w.layout_rows) == 64
    w.expand_ranks()
    assert w.expanded_ranks() == list(range(64))
    w.collapse_ranks()
    assert w.expanded_ranks() == []


def test_rank_filter_shows_only_the_named_ranks(make_timeline, qtbot, trace64):
    w = make_timeline(trace64, 1400, 900)
    w._rank_filter.setText("0-7,12")
    lay = w.layout_rows
    assert lay.shown_ranks() == [0, 1, 2, 3, 4, 5, 6, 7, 12]
    assert lay.labels == [f"rank {r}" for r in (0, 1, 2, 3, 4, 5, 6, 7, 12)]
    assert w.rank_filter_text() == "0-7,12"
    # Bad text is outlined and leaves the last good filter in force.
    w._rank_filter.setText("0-7,x")
    assert "border" in w._rank_filter.styleSheet()
    assert w.layout_rows.shown_ranks() == [0, 1, 2, 3, 4, 5, 6, 7, 12]
    with pytest.raises(ValueError):
        w.set_rank_filter("9-3")
    w.set_rank_filter("")
    assert w._rank_filter.styleSheet() == ""
    assert w.layout_rows.shown_ranks() == list(range(64))
    # A slice of a filtered-out rank has no row.
    w.set_rank_filter("1")
    s = trace64.slices
    disp = w.layout_rows.rows_of(s.track, s.depth)
    assert (disp[trace64.tracks.rank[s.track] != 1] == -1).all()


def test_search_counts_matches_per_rank(make_timeline, trace64, folder64):
    w = make_timeline(trace64, 1400, 900)
    want = _nccl_per_rank(folder64)
    assert w.search("nccldevkernel") == sum(want.values())
    assert w.rank_matches() == {r: n for r, n in want.items() if n}
    # The late ranks' files hold fewer collectives.
    assert all(want[r] == want[0] - k for r, k in LATE.items())
    w.canvas.grab()
    # Matches in collapsed ranks are marked on their summary lanes.
    marks = w.painter.highlight_rects(w.match_set)
    assert len(marks) > 0
    ys = np.unique(marks[:, 1] - 1)
    rows = ((ys - AXIS_PX + w.viewport.scroll_px) // ROW_PX).astype(int)
    assert set(rows.tolist()) <= set(w.viewport.visible_rows(64))
    # With a rank filter, only the shown ranks' slices count.
    w.set_rank_filter("0-3")
    assert w.rank_matches() == {r: want[r] for r in range(4)}
    assert len(w.match_rows()) == sum(want[r] for r in range(4))


def test_show_rank_range_expands_and_scrolls_to_the_rank(make_timeline, trace64):
    w = make_timeline(trace64, 1400, 600)
    w.set_rank_filter("0-9")
    s = trace64.slices
    rank = trace64.tracks.rank[s.track]
    rows = np.flatnonzero((rank == 40) & (s.kind == 1))
    row = int(rows[len(rows) // 2])
    t0, t1 = int(s.start_ns[row]), int(s.start_ns[row] + s.dur_ns[row])
    w.show_rank_range(40, t0, t1, row)
    assert 40 in w.expanded_ranks()
    assert w.layout_rows.rank_filter is None  # the filter made way for the rank jumped to
    v0, v1 = w.view_range()
    assert v0 <= t0 and t1 <= v1 and (v1 - v0) < 2 * (t1 - t0) + 3000
    assert w.selected_range() == (t0, t1) and w.selected_slice() == row
    r40 = w.layout_rows.rank_row(40)
    assert r40 in w.viewport.visible_rows(len(w.layout_rows))
    assert w.slice_position(row) is not None  # the slice is on screen


def test_four_real_ranks_keep_the_expanded_lanes(make_timeline):
    trace = load_trace(str(SAMPLE_4))
    w = make_timeline(trace)
    lay = w.layout_rows
    assert w.expanded_ranks() == [0, 1, 2, 3]
    assert lay.rank_rows and (lay.kind == RowKind.RANK).sum() == 4
    # Every GPU group is there, as without rank rows.
    gpu_groups = [g.label for g in lay.groups if g.gpu]
    assert gpu_groups == [f"rank {r} · GPU {r}" for r in range(4)]
    shown = {int(lay.group[r]) for r in range(len(lay)) if lay.kind[r] == RowKind.GROUP}
    assert shown == set(range(len(lay.groups)))
    w.canvas.grab()
    f = w.current_frame()
    assert f.count > 0 and len(f.density_rows) >= 1


def test_a_lone_file_has_no_rank_controls(make_timeline, data_dir):
    w = make_timeline(load_trace(str(data_dir / "streams_overlap.json.gz")))
    assert not w.layout_rows.rank_rows
    assert w._rank_filter.isHidden() and w._collapse_btn.isHidden()
    assert w.expanded_ranks() == [-1]
