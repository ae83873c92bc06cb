"""The Insights view: first after an open, its step chart, its findings, evidence on the Timeline,
the Markdown export; and the Compare window's steps, findings and kernel/op diff."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings

from gpuviz.analysis.advisor import advise
from gpuviz.analysis.advisor.locate import evidence_rows, evidence_span
from gpuviz.gui.qt_main_window import MainWindow
from gpuviz.gui.views.insights.insights_model import gpu_choices, step_bars
from gpuviz.gui.views.insights.qt_insights import QtInsightsView
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parent.parent / "data"
LOAD_TIMEOUT_MS = 60_000


@pytest.fixture
def main_window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    window.resize(1300, 850)
    window.show()
    yield window
    if window.is_busy():
        with qtbot.waitSignal(window.idle, timeout=LOAD_TIMEOUT_MS):
            window.cancel_loading()
    window.close()


def _open(qtbot, window, path):
    with qtbot.waitSignal(window.traceOpened, timeout=LOAD_TIMEOUT_MS) as opened:
        window.open_trace(str(path))
    return opened.args[0]


def test_insights_come_first_with_the_findings(qtbot, main_window) -> None:
    view = _open(qtbot, main_window, DATA / "advisor" / "adv_pageable_copy.json.gz")
    assert view.current_view() == "insights"
    ins = view.insights_view
    expected = advise(load_trace(DATA / "advisor" / "adv_pageable_copy.json.gz"))
    assert [f.kind for f in ins.findings()] == [f.kind for f in expected.findings]
    assert ins.tree.topLevelItemCount() == len(expected.findings)
    assert ins.tree.topLevelItem(0).text(1).startswith("pageable_copy:")
    # The first finding is selected and described; its evidence is listed.
    assert "pageable" in ins.details.toPlainText().lower()
    assert ins.evidence.count() == len(expected.findings[0].evidence)


def test_clicking_a_finding_outlines_its_evidence_on_the_timeline(qtbot, main_window) -> None:
    view = _open(qtbot, main_window, DATA / "advisor" / "adv_gpu_starved.json.gz")
    ins = view.insights_view
    ins.select_finding(0)
    f = ins.current_finding()
    assert f.kind == "gpu_starved"
    want = evidence_rows(view.trace, f.evidence)
    assert len(want) > 0
    assert np.array_equal(np.sort(view.timeline.highlighted_rows()), want)
    t0, t1 = view.timeline.view_range()
    s0, s1 = evidence_span(f.evidence)
    assert t0 <= s0 and s1 <= t1 and (t1 - t0) < 2 * (s1 - s0)  # zoomed there
    assert view.timeline.selected_range() == (s0, s1)
    assert view.current_view() == "insights"  # a click stays; a double-click goes
    ins._on_finding_double_clicked(ins.tree.topLevelItem(0), 0)
    assert view.current_view() == "timeline"


def test_evidence_line_zooms_to_that_range(qtbot, main_window) -> None:
    view = _open(qtbot, main_window, DATA / "gloo_2rank_h100")
    ins = view.insights_view
    straggler = next(i for i, f in enumerate(ins.findings()) if f.kind == "straggler")
    ins.tree.setCurrentItem(ins.tree.topLevelItem(straggler))
    item = ins.evidence.item(1)
    ins._on_evidence_clicked(item)
    e = ins.findings()[straggler].evidence[1]
    assert view.timeline.selected_range() == (e.start_ns, e.end_ns)
    rows = view.timeline.highlighted_rows()
    assert len(rows) and (view.trace.tracks.rank[view.trace.slices.track[rows]] == 1).all()


def test_step_chart_matches_the_breakdown(qtbot) -> None:
    advice = advise(load_trace(DATA / "ddp_2rank"))
    view = QtInsightsView(advice, "ddp_2rank")
    qtbot.addWidget(view)
    labels = [label for label, _ in gpu_choices(advice)]
    assert labels == ["mean of all GPUs", "rank 0, GPU 0", "rank 1, GPU 1"]
    assert len(view.bars) == 6
    view.gpu_box.setCurrentIndex(2)
    bars = view.bars
    assert bars.labels == ["r1 ProfilerStep#2", "r1 ProfilerStep#3", "r1 ProfilerStep#4"]
    d = advice.breakdown.devices
    mine = d.rank == 1
    assert np.allclose(bars.gpu["idle"], d.idle_ns[mine] / 1e6)
    assert np.allclose(bars.gpu["compute"], d.compute_ns[mine] / 1e6)
    total = sum(bars.gpu.values())
    assert np.allclose(
        total, advice.breakdown.steps.duration_ns[advice.breakdown.steps.rank == 1] / 1e6
    )
    mean = step_bars(advice, None)
    assert np.allclose(mean.gpu["compute"][:3], d.compute_ns[d.rank == 0] / 1e6)


def test_markdown_export(qtbot, tmp_path) -> None:
    advice = advise(load_trace(DATA / "advisor" / "adv_host_sync.json.gz"))
    view = QtInsightsView(advice, "adv_host_sync")
    qtbot.addWidget(view)
    out = tmp_path / "report.md"
    view.export_markdown(str(out))
    text = out.read_text()
    assert text.startswith("# gpuviz advice: adv_host_sync")
    for f in advice.findings:
        assert f"(`{f.kind}`)" in text
    assert "aten::item > cudaStreamSynchronize" in text


def test_no_advice_shows_why(qtbot) -> None:
    view = QtInsightsView(None, "x", error="ValueError: broken")
    qtbot.addWidget(view)
    assert "broken" in view.status.text()
    assert not view.export_button.isEnabled()


def test_clean_trace_says_no_findings(qtbot) -> None:
    advice = advise(load_trace(DATA / "advisor" / "adv_clean.json.gz"))
    view = QtInsightsView(advice, "clean")
    qtbot.addWidget(view)
    assert view.tree.topLevelItemCount() == 0
    assert "No findings" in view.status.text()


def test_compare_shows_steps_findings_and_the_kernel_diff(qtbot, main_window) -> None:
    from gpuviz.analysis.diff import trace_diff
    from gpuviz.gui.run.qt_compare import QtRunComparison

    va = _open(qtbot, main_window, DATA / "advisor" / "adv_fp32_matmul.json.gz")
    vb = _open(qtbot, main_window, DATA / "advisor" / "adv_clean.json.gz")
    cmp = QtRunComparison(va, vb)
    qtbot.addWidget(cmp)
    tabs = [cmp.details.tabText(i) for i in range(cmp.details.count())]
    assert tabs == ["Figures", "Steps and findings", "Kernels and ops"]
    # Steps: the mean step length of each, from the advisor's breakdowns.
    step = cmp.step_rows[0]
    assert step.name == "step length"
    assert step.a == pytest.approx(va.analyses.advice.mean_step_parts()["step"] / 1000)
    assert step.b == pytest.approx(vb.analyses.advice.mean_step_parts()["step"] / 1000)
    # Findings side by side: A's fp32_matmul, nothing in B.
    assert [(p.kind, p.a is not None, p.b is not None) for p in cmp.finding_rows] == [
        ("fp32_matmul", True, False)
    ]
    assert cmp.findings_table.item(0, 2).text() == "–"
    # The diff: the same rows as trace_diff, in order; the fp32 GEMM is gone in B.
    want = trace_diff(va.trace, vb.trace)
    assert cmp.diff_table.rowCount() == len(want)
    assert [cmp.diff_table.item(i, 7).text() for i in range(5)] == [d.name for d in want[:5]]
    gone = [i for i in range(len(want)) if "f32f32_f32f32" in want[i].name]
    assert gone and all(cmp.diff_table.item(i, 1).text() == "gone" for i in gone)
    cmp.close()


def test_a_single_steps_chart_has_no_scale_on_its_axes(qtbot, main_window) -> None:
    # One step: the step axis spans -0.6 to 0.6, which pyqtgraph would label "(x0.001)".
    view = _open(qtbot, main_window, DATA / "streams_overlap.json.gz")
    ins = view.insights_view
    assert len(ins.advice.breakdown.steps) == 1
    for plot in (ins.gpu_plot, ins.cpu_plot):
        for side in ("bottom", "left"):
            assert "(x" not in plot.getAxis(side).labelString(), side


def test_an_import_warning_shows_in_the_status_and_the_markdown(qtbot, tmp_path) -> None:
    # A file that declares no rank beside one that does: the app's advice says so, as gpuviz
    # advise does. (Two files that claim one rank are not one job: not merged at all.)
    import gzip
    import json

    for i in (0, 1):
        d = json.loads(gzip.decompress((DATA / "ddp_2rank" / f"rank-{i}.json.gz").read_bytes()))
        if i == 1:
            del d["distributedInfo"]
        (tmp_path / f"rank-{i}.json").write_text(json.dumps(d))
    advice = advise(load_trace(tmp_path, cache=False))
    view = QtInsightsView(advice, "no rank")
    qtbot.addWidget(view)
    note = "Import warning: distributedInfo.rank ignored, ranks taken from file order: "
    assert note in view.status.text()
    assert "rank-1.json declares no rank" in view.markdown()
    clean = QtInsightsView(advise(load_trace(DATA / "ddp_2rank")), "clean")
    qtbot.addWidget(clean)
    assert "Import warning" not in clean.status.text()
    assert "Import warning" not in clean.markdown()


@pytest.mark.parametrize(
    ("name", "size"),
    [
        ("ddp_2rank", (960, 560)),
        ("dataparallel_4gpu.json.gz", (700, 420)),
        ("dataparallel_4gpu.json.gz", (520, 460)),
    ],
)
def test_legends_sit_outside_the_bars_and_show_every_entry(qtbot, name, size) -> None:
    import pyqtgraph as pg

    from gpuviz.analysis.steps import PARTS

    view = QtInsightsView(advise(load_trace(DATA / name)), name)
    qtbot.addWidget(view)
    view.resize(*size)  # about the chart's room in a 1280×800 window, and less
    view.show()
    qtbot.waitUntil(lambda: not view.build_pending(), timeout=5000)  # a chart a turn
    qtbot.wait(50)  # then its layout, as a user sees it
    graphics = view.graphics
    visible = graphics.mapToScene(graphics.viewport().rect()).boundingRect()
    for plot, labels in (
        (view.gpu_plot, list(PARTS)),
        (view.cpu_plot, ["in PyTorch ops", "outside ops"]),
    ):
        legend = plot.legend
        assert [label.text for _, label in legend.items] == labels
        legend_rect = legend.sceneBoundingRect()
        assert not legend_rect.intersects(plot.getViewBox().sceneBoundingRect())
        for sample, label in legend.items:  # no entry cut at the chart's edge ("set" was)
            for part in (sample, label):
                r = part.sceneBoundingRect()
                assert r.width() > 0 and visible.contains(r), (label.text, r, visible)
        bars = [i for i in plot.items if isinstance(i, pg.BarGraphItem)]
        assert len(bars) == len(labels)
        y_top = plot.getViewBox().viewRange()[1][1]
        tops = sum(np.asarray(b.opts["height"], dtype=float) for b in bars)
        assert float(tops.max()) <= y_top  # the tallest bar whole, the last step's too
        for b in bars:
            assert not b.mapRectToScene(b.boundingRect()).intersects(legend_rect)
    if size[0] < 600:  # too narrow for one line: the legend takes two
        assert view.gpu_plot.legend.columnCount < len(PARTS)


def _summary_mfu_line(path: Path) -> str:
    import subprocess
    import sys

    from subproc import gpuviz_env

    out = subprocess.run(
        [sys.executable, "-m", "gpuviz", "summary", str(path)],
        capture_output=True,
        text=True,
        env=gpuviz_env(),
        check=True,
    ).stdout
    return next(x.strip() for x in out.splitlines() if x.strip().startswith("MFU:"))


@pytest.mark.parametrize(
    ("name", "expect"),
    [
        # 28% of its GPU time in ops with known FLOPs: no figure, and why (issue 47, item 3)
        ("attribution/tinylm_train.json.gz", "MFU: unknown (FLOPs known for only 28% of GPU time"),
        # 71% known: a floor, said with >=, and the coverage beside it
        ("roofline/roofline.json.gz", "MFU: mean >= 47.2% of the peak (FLOPs known for 71%"),
    ],
)
def test_the_status_says_the_mfu_as_summary_does(qtbot, name, expect) -> None:
    path = DATA / name
    view = QtInsightsView(advise(load_trace(path)), name)
    qtbot.addWidget(view)
    line = next(x for x in view.status.text().splitlines() if x.startswith("MFU:"))
    assert line.startswith(expect)
    cli = _summary_mfu_line(path)
    if "unknown" in expect:
        assert cli.startswith(expect) and "mean" not in line
    else:  # the same floor and coverage as the CLI's
        assert cli.startswith("MFU: mean >= 47.2% over") and "FLOPs known for 71%" in cli


def test_the_critical_path_is_outlined_on_the_timeline(qtbot, main_window) -> None:
    # Issue 52: "Critical path" then "Outline": the path's slices outlined on the Timeline.
    view = _open(qtbot, main_window, DATA / "gloo_2rank_h100")
    bar = view.insights_view.path_bar
    assert not bar.outline.isEnabled()
    bar.button.click()
    assert bar.outline.isEnabled() and len(bar.rows) > 0
    bar.outline.click()
    assert view.current_view() == "timeline"
    assert np.array_equal(np.sort(view.timeline.highlighted_rows()), np.sort(bar.rows))
    # The rows are the path's: kernels on it (rank 1's matmuls in its median step) among them.
    names = {view.trace.name_of(int(r)) for r in bar.rows}
    assert any("sgemm" in n for n in names) and "gloo:all_reduce" in names
