"""Insights of a serving trace: its steps by phase in the status line (docs/serving.md)."""

from __future__ import annotations

from pathlib import Path

from gpuviz.analysis.advisor import advise
from gpuviz.gui.views.insights.insights_model import serving_status
from gpuviz.gui.views.insights.qt_insights import QtInsightsView
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parent.parent / "data"


def test_serving_status_groups_by_phase(qtbot) -> None:
    advice = advise(load_trace(DATA / "serving" / "sglang_extend_qwen3_8b.json.gz"))
    line = serving_status(advice)
    # one step[EXTEND bs=15 toks=15360] of 987.367 ms: 15360 / 0.987367 s tokens a second
    assert line is not None and line.startswith("prefill: 1 step, 987.4 ms a step")
    assert f"{15360 / 0.987367474:.0f} tokens/s" in line
    assert "TTFT 987.4 ms, TPOT unknown" in line
    view = QtInsightsView(advice, "sglang")
    qtbot.addWidget(view)
    assert "prefill: 1 step" in view.status.text()


def test_training_trace_has_no_phase_line(qtbot) -> None:
    advice = advise(load_trace(DATA / "streams_overlap.json.gz"))
    assert serving_status(advice) is None
    view = QtInsightsView(advice, "t")
    qtbot.addWidget(view)
    assert "TTFT" not in view.status.text()
