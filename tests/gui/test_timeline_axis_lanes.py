"""The Timeline's axis labels keep clear of the range badge and of the right edge, and quiet
GPU lanes are hidden until asked for (issue 47, item 23)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import itertools

from gpuviz.gui.timeline.timefmt import place_tick_labels
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import TrackKind


def test_tick_labels_avoid_the_badge_and_the_right_edge():
    xs = [100.0, 300.0, 500.0, 700.0, 790.0]
    widths = [40.0] * 5
    starts = place_tick_labels(xs, widths, right=800.0, left=50.0, keep_out=(280.0, 380.0))
    assert starts[0] == 103.0
    assert starts[1] is None  # under the badge
    assert starts[2] == 503.0
    assert starts[4] == 790.0 - 3.0 - 40.0  # left of its tick: inside the canvas
    # No two labels overlap, none runs past the right edge or into the badge.
    drawn = sorted((s, s + 40.0) for s in starts if s is not None)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(drawn))
    assert all(b <= 800.0 and (b <= 280.0 or a >= 380.0) for a, b in drawn)


def test_the_painted_axis_has_no_label_under_the_badge_or_past_the_edge(
    qtbot, make_timeline, data_dir
):
    w = make_timeline(load_trace(str(data_dir / "streams_overlap.json.gz")), width=900)
    t0, t1 = w.view_range()
    w.select_range(t0 + (t1 - t0) // 3, t0 + (t1 - t0) // 2)
    w.canvas.grab()  # paint now
    drawn = w._painter.tick_labels_drawn
    assert len(drawn) >= 3
    a, b = w.selected_range()
    xm = (w.x_of_time(a) + w.x_of_time(b)) / 2
    for x0, x1 in drawn:
        assert 0 <= x0 and x1 <= w.canvas.width(), (x0, x1)  # the last one is not cut off
        assert x1 <= xm - 50 or x0 >= xm + 50, (x0, x1, xm)  # none under the range badge


def _quiet_trace(tmp_path: Path) -> Path:
    """Stream 7 busy for 100 ms; stream 20 ran one 2 µs memset, with one annotation."""
    ev = [
        {"ph": "X", "cat": "kernel", "name": f"k{i}", "pid": 0, "tid": 7, "ts": i * 1000,
         "dur": 900, "args": {"device": 0, "stream": 7, "correlation": i + 1}}
        for i in range(100)
    ]  # fmt: skip
    ev += [
        {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 20,
         "ts": 50_000, "dur": 2, "args": {"device": 0, "stream": 20, "correlation": 999}},
        {"ph": "X", "cat": "gpu_user_annotation", "name": "init", "pid": 0, "tid": 20,
         "ts": 50_000, "dur": 2, "args": {"device": 0, "stream": 20}},
    ]  # fmt: skip
    out = tmp_path / "quiet.json"
    out.write_text(json.dumps({"traceEvents": ev}))
    return out


def test_quiet_lanes_are_hidden_until_shown(qtbot, make_timeline, tmp_path):
    trace = load_trace(str(_quiet_trace(tmp_path)))
    w = make_timeline(trace)
    tr = trace.tracks
    quiet = {t for t in range(len(tr)) if int(tr.stream[t]) == 20}
    assert {int(tr.kind[t]) for t in quiet} == {TrackKind.GPU_STREAM, TrackKind.GPU_ANNOTATION}
    shown = set(w.layout_rows.track[w.layout_rows.track >= 0].tolist())
    assert not (shown & quiet) and any(int(tr.stream[t]) == 7 for t in shown)
    assert w._quiet_btn.isVisible() and "2" in w._quiet_btn.text()
    w.show_quiet_lanes(True)
    shown = set(w.layout_rows.track[w.layout_rows.track >= 0].tolist())
    assert quiet <= shown
    w.show_quiet_lanes(False)
    # Selecting the memset (a search hit, a jump) shows the quiet lanes again.
    memset = int(np.flatnonzero(trace.slices.dur_ns == 2000)[0])
    w.select_slice(memset)
    assert w._quiet_btn.isChecked()
    assert int(trace.slices.track[memset]) in set(w.layout_rows.track.tolist())


def test_busy_streams_are_never_quiet(make_timeline, data_dir):
    w = make_timeline(load_trace(str(data_dir / "streams_overlap.json.gz")))
    assert not w._quiet and not w._quiet_btn.isVisible()
