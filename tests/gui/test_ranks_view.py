"""The Ranks view (gpuviz.gui.views.ranks.qt_ranks) and its jumps to the Timeline.

On a generated 64-rank folder (a planted straggler, ranks whose files begin late, so their
collectives are misaligned), on the real ``ddp_4rank_h200`` sample, on a gloo CPU recording
and on a lone file. The heatmap is checked against the analysis it draws; the arrivals of the
worst collectives against the raw JSON (NCCL kernel ``ts`` per rank file, matched by
collective number, read without gpuviz).
"""

from __future__ import annotations

import gzip
import json
import math
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt
from rank_folders import LATE, STRAGGLER

from gpuviz.analysis.ranks import MEASURES
from gpuviz.gui.qt_load_worker import analyze
from gpuviz.gui.views.qt_trace_view import QtTraceView
from gpuviz.gui.views.ranks.qt_ranks import QtRanksView
from gpuviz.gui.views.ranks.rank_figures import MEASURE_LABELS
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.model import Kind

ROOT = Path(__file__).parent.parent.parent
SAMPLE_4 = ROOT / "assets" / "samples" / "ddp_4rank_h200"


@pytest.fixture(scope="module")
def analyses64(folder64):
    return analyze(load_trace(str(folder64)))


def _tab(qtbot, analyses, title="t", size=(1500, 900)):
    view = QtTraceView(analyses, title)
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    view.set_view("ranks")
    return view


def _raw_nccl_arrivals_us(folder: Path) -> dict[int, list[float]]:
    """Rank -> its NCCL kernels' ``ts`` (µs, as written), in time order, from the raw files."""
    out = {}
    for f in sorted(folder.glob("rank-*.json*")):
        opener = gzip.open if f.name.endswith(".gz") else open
        with opener(f, "rt", encoding="utf-8") as fh:
            data = json.load(fh)
        ts = [
            float(e["ts"])
            for e in data["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") == "kernel" and "nccl" in e["name"].lower()
        ]
        out[data["distributedInfo"]["rank"]] = sorted(ts)
    return out


def test_the_straggler_is_named_and_outlined(qtbot, analyses64):
    tab = _tab(qtbot, analyses64)
    v = tab.ranks_view
    assert v.straggler_rank() == STRAGGLER
    assert f"rank {STRAGGLER}" in v.status.text() and v.status.text().startswith("Straggler")
    m = analyses64.ranks.matrix
    assert v.straggler_row() == int(np.flatnonzero(m.ranks == STRAGGLER)[0])
    # It opens on the measure that makes the straggler slower.
    assert v.measure() == analyses64.ranks.straggler.measure == "compute"
    assert v.measure_box.currentText() == MEASURE_LABELS["compute"]


def test_heatmap_values_are_the_analysis_in_ms_with_missing_cells(qtbot, analyses64):
    tab = _tab(qtbot, analyses64)
    v = tab.ranks_view
    m = analyses64.ranks.matrix
    assert m.ranks.tolist() == list(range(64)) and m.steps.tolist() == [0, 1, 2, 3]
    for name in MEASURES:
        v.set_measure(name)
        got = v.heatmap_values()
        want = m.measure(name).astype(float) / 1e6
        assert got.shape == (64, 4)
        # The late ranks lack their first steps (the generator skipped them), nobody else.
        missing = {(r, s) for r, k in LATE.items() for s in range(k)}
        assert {tuple(x) for x in np.argwhere(np.isnan(got)).tolist()} == missing
        ok = ~np.isnan(got)
        np.testing.assert_allclose(got[ok], want[ok], rtol=0, atol=1e-9)
        lo, hi = v.image_levels()
        assert (lo, hi) == pytest.approx((np.nanmin(got), np.nanmax(got)))
    v.set_measure("wait")
    wait = v.heatmap_values()
    # The straggler never waits; everybody else does, at every step they have.
    assert (wait[STRAGGLER][~np.isnan(wait[STRAGGLER])] == 0).all()
    others = np.delete(wait, STRAGGLER, axis=0)
    assert (others[~np.isnan(others)] > 0).all()
    with pytest.raises(ValueError):
        v.set_measure("speed")


def test_worst_collectives_show_each_ranks_arrival_from_the_raw_files(qtbot, analyses64, folder64):
    tab = _tab(qtbot, analyses64)
    w = tab.ranks_view.worst()
    table = analyses64.ranks.collectives
    assert w is not None and len(w) == len(table) == 4
    assert (np.diff(w.total_wait_ms) <= 0).all()  # worst first
    assert w.last_rank.tolist() == [STRAGGLER] * 4
    raw = _raw_nccl_arrivals_us(folder64)
    for k in range(len(w)):
        c = int(table.seq[w.rows[k]])  # collective number: the generator's plan index
        # A rank whose file begins K collectives late holds collective c as its (c - K)-th.
        arrivals = {r: ts[c - LATE.get(r, 0)] for r, ts in raw.items() if c - LATE.get(r, 0) >= 0}
        last = max(arrivals.values())
        for col, r in enumerate(w.ranks.tolist()):
            got = w.offset_ms[k, col]
            if r not in arrivals:
                assert math.isnan(got)
            else:
                assert got == pytest.approx((arrivals[r] - last) / 1e3, abs=2e-6)
        waited = [last - a for r, a in arrivals.items() if r != STRAGGLER]
        assert w.max_wait_ms[k] == pytest.approx(max(waited) / 1e3, abs=2e-6)
        assert w.total_wait_ms[k] == pytest.approx(sum(waited) / 1e3, abs=1e-4)
    assert tab.ranks_view.table.rowCount() == 4
    assert tab.ranks_view.table.item(0, 1).text() == f"rank {STRAGGLER}"


def test_a_cell_click_jumps_to_that_step_on_the_timeline(qtbot, analyses64):
    tab = _tab(qtbot, analyses64)
    v = tab.ranks_view
    m = analyses64.ranks.matrix
    qtbot.waitUntil(lambda: not v.build_pending(), timeout=5000)  # drawn, a step a turn
    # A real click on the cell of rank 30, step 2 (its first step with data).
    vb = v.heatmap.getPlotItem().getViewBox()
    scene = vb.mapViewToScene(QPointF(2.0, 30.0))
    pos = v.heatmap.mapFromScene(scene)
    assert v.cell_at(scene) == (30, 2)
    with qtbot.waitSignal(v.jumpRequested, timeout=2000) as sig:
        qtbot.mouseClick(v.heatmap.viewport(), Qt.MouseButton.LeftButton, pos=pos)
    target = sig.args[0]
    assert (target.rank, target.t0_ns) == (30, int(m.start_ns[30, 2]))
    assert target.t1_ns == int(m.start_ns[30, 2] + m.step_ns[30, 2])
    assert tab.current_view() == "timeline"
    tl = tab.timeline
    assert 30 in tl.expanded_ranks()
    assert tl.selected_range() == (target.t0_ns, target.t1_ns)
    v0, v1 = tl.view_range()
    assert v0 <= target.t0_ns and target.t1_ns <= v1
    # The step window starts at the rank's ProfilerStep#2 (read from the slices).
    s, trace = analyses64.trace.slices, analyses64.trace
    step2 = np.flatnonzero(
        (s.name == trace.symbols.find("ProfilerStep#2")) & (trace.tracks.rank[s.track] == 30)
    )
    assert len(step2) == 1 and int(s.start_ns[step2[0]]) == target.t0_ns
    # A missing cell does not jump.
    assert v.click_cell(30, 0) is None


def test_a_collective_click_selects_the_last_ranks_part(qtbot, analyses64):
    tab = _tab(qtbot, analyses64)
    v = tab.ranks_view
    table = analyses64.ranks.collectives
    with qtbot.waitSignal(v.jumpRequested, timeout=2000) as sig:
        v.table.cellClicked.emit(1, 0)
    target = sig.args[0]
    row = int(v.worst().rows[1])
    s = analyses64.trace.slices
    sel = tab.timeline.selected_slice()
    assert target.rank == STRAGGLER and sel == target.slice_row >= 0
    assert int(s.kind[sel]) == Kind.KERNEL and "nccl" in analyses64.trace.name_of(sel).lower()
    assert int(analyses64.trace.tracks.rank[s.track[sel]]) == STRAGGLER
    assert int(s.start_ns[sel]) == int(table.last_arrival_ns[row])
    present = table.present[row]
    assert target.t0_ns == int(table.arrival_ns[row][present].min())
    assert target.t1_ns == int(table.end_ns[row][present].max())
    assert tab.current_view() == "timeline"
    assert tab.timeline.slice_position(sel) is not None


def test_the_real_4_rank_sample(qtbot):
    a = analyze(load_trace(str(SAMPLE_4)))
    tab = _tab(qtbot, a, "ddp4")
    v = tab.ranks_view
    assert v.straggler_rank() is None and v.status.text().startswith("No straggler")
    assert v.measure() == "wait"
    m = a.ranks.matrix
    got = v.heatmap_values()
    np.testing.assert_allclose(got, m.wait_ns / 1e6, atol=1e-9)
    raw = _raw_nccl_arrivals_us(SAMPLE_4)
    assert {len(ts) for ts in raw.values()} == {2}
    w = v.worst()
    assert len(w) == 2
    for k in range(2):
        c = int(a.ranks.collectives.seq[w.rows[k]])
        last = max(ts[c] for ts in raw.values())
        want = [(raw[r][c] - last) / 1e3 for r in w.ranks.tolist()]
        np.testing.assert_allclose(w.offset_ms[k], want, atol=2e-6)
    assert v.click_collective(0) is not None
    assert tab.current_view() == "timeline"


def test_gloo_cpu_recording_names_rank_2(qtbot, data_dir):
    a = analyze(load_trace(str(data_dir / "gloo_4rank_cpu")))
    tab = _tab(qtbot, a, "gloo")
    v = tab.ranks_view
    assert v.straggler_rank() == 2
    assert "rank 2" in v.status.text()
    v.set_measure("compute")
    compute = v.heatmap_values()
    assert (compute[2] > 5 * np.delete(compute, 2, axis=0).max(axis=0)).all()


def test_a_lone_file_says_what_the_view_needs(qtbot, data_dir):
    a = analyze(load_trace(str(data_dir / "streams_overlap.json.gz")))
    assert a.ranks is None and "ranks" not in a.errors
    view = QtRanksView(a.ranks, len(a.trace.ranks))
    qtbot.addWidget(view)
    assert "one process" in view.status.text()
    assert view.splitter.isHidden()
    assert view.click_cell(0, 0) is None and view.worst() is None
    failed = QtRanksView(None, 4, "ValueError: boom")
    qtbot.addWidget(failed)
    assert "could not be compared: ValueError: boom" in failed.status.text()


def test_the_ranks_view_and_the_advisor_share_one_analysis(analyses64):
    # One rank analysis serves both: the Ranks view's straggler is the advisor's finding.
    assert analyses64.ranks is analyses64.advice.context.ranks
    found = [f for f in analyses64.advice.findings if f.kind == "straggler"]
    assert len(found) == 1 and f"Rank {STRAGGLER} " in found[0].title


def test_hostile_group_and_collective_names_show_as_text(qtbot, tmp_path):
    # The process group and collective names come from the kernels' args: plain data.
    from evil_names import markup_rendered, unsafe_chars
    from PySide6.QtGui import QTextDocument
    from rank_folders import gen_trace

    evil_pg, evil_coll = "<b>PG</b>\x1b[31m\u202e", "<u>OPX</u>\x1b]0;x\x07"
    gen = gen_trace()
    folder = tmp_path / "run"
    folder.mkdir()
    for r in range(2):
        with open(folder / f"rank-{r}.json", "w", encoding="utf-8") as f:
            gen.write_trace(f, 100, 1, 3, rank=r, world=2, collective_every=25, straggler=1)
        text = (folder / f"rank-{r}.json").read_text(encoding="utf-8")
        text = text.replace(
            '"Process Group Name": "0"', f'"Process Group Name": {json.dumps(evil_pg)}'
        )
        text = text.replace(
            '"Collective name": "allreduce"', f'"Collective name": {json.dumps(evil_coll)}'
        )
        (folder / f"rank-{r}.json").write_text(text, encoding="utf-8")
    a = analyze(load_trace(str(folder)))
    assert set(a.ranks.collectives.name) == {evil_coll}  # the analysis keeps the exact name
    view = QtRanksView(a.ranks, 2)
    qtbot.addWidget(view)
    w = view.worst()
    assert len(w) == 4

    def shown(text: str, rich: bool) -> str:
        if not rich:
            return text
        doc = QTextDocument()
        doc.setHtml(text)
        return doc.toPlainText()

    texts = [(view.table.item(k, 0).text(), False) for k in range(len(w))]
    ticks = view.chart.getPlotItem().getAxis("left")._tickLevels[0]
    texts += [(label, False) for _, label in ticks]
    texts += [(view._arrival_tip(-0.1, 0.0, (0, 0)), True), (view.status.text(), False)]
    for text, rich in texts:
        visible = shown(text, rich)
        assert not unsafe_chars(visible), visible
        assert not markup_rendered(visible), visible
    assert any("<u>OPX</u>" in shown(t, r) and "\\x1b" in shown(t, r) for t, r in texts)


def test_gloo_on_an_h100_names_rank_1_and_its_lane_computes_more(qtbot, data_dir):
    # Recorded on an H100 (tests/data/advisor/README.md): rank 1 runs 3x the matmuls per step.
    a = analyze(load_trace(str(data_dir / "gloo_2rank_h100")))
    tab = _tab(qtbot, a, "gloo-h100")
    v = tab.ranks_view
    assert v.straggler_rank() == 1 and v.measure() == "compute"
    compute = v.heatmap_values()
    assert (compute[1] > 2 * compute[0]).all()
    tab.set_view("timeline")
    tl = tab.timeline
    assert tl.wait_ready(60)
    assert tl.expanded_ranks() == [0, 1]  # two ranks: expanded, with their summary lanes
    tl.canvas.grab()
    f = tl.current_frame()
    lay = tl.layout_rows
    rows = f.density_rows.tolist()
    assert lay.rank_row(0) in rows and lay.rank_row(1) in rows
    c0 = f.density_compute[rows.index(lay.rank_row(0))].sum()
    c1 = f.density_compute[rows.index(lay.rank_row(1))].sum()
    assert c1 > 2 * c0
