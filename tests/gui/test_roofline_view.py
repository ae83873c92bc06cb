"""The Roofline view (one point per op-shape with FLOPs, the device's roofs, hover text, click ->
its kernels outlined on the Timeline) and the MFU chart of the Insights view."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from gpuviz.analysis.advisor import advise
from gpuviz.analysis.hardware import hardware
from gpuviz.gui.qt_load_worker import analyze
from gpuviz.gui.views.insights.qt_insights import QtInsightsView
from gpuviz.gui.views.ops.qt_roofline import QtRooflineView
from gpuviz.gui.views.qt_trace_view import QtTraceView
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).parent.parent / "data"
sys.path.insert(0, str(Path(__file__).parent.parent / "analysis"))
from hardware_synth import write_run  # noqa: E402


@pytest.fixture(scope="module")
def recording():
    return analyze(load_trace(DATA / "roofline" / "roofline.json.gz"))


def test_points_and_roofs(qtbot, recording) -> None:
    hw = hardware(recording.trace)
    view = QtRooflineView(hw)
    qtbot.addWidget(view)
    with_flops = [s for s in hw.shapes if s.flops is not None]
    assert view.point_count() == len(with_flops) == len(view.scatter.data)
    xs = sorted(np.round(10 ** view.scatter.data["x"], 6).tolist())
    assert xs == sorted(round(s.intensity, 6) for s in with_flops)
    # Roofs of every precision the points use, each a slope meeting its flat peak.
    assert {r.precision for r in view.roofs} == {"bf16", "fp32", "tf32"}
    assert len(view.roof_items) == 3
    bf16 = next(r for r in view.roofs if r.precision == "bf16")
    assert bf16.y.max() == pytest.approx(989.4)
    assert bf16.ridge == pytest.approx(989.4 / 3.35)
    ys = view.roof_items[view.roofs.index(bf16)].getData()[1]
    assert 10 ** ys.max() == pytest.approx(989.4)


def test_hover_shows_the_numbers(qtbot, recording) -> None:
    view = QtRooflineView(hardware(recording.trace))
    qtbot.addWidget(view)
    spot = view.scatter.points()[0]
    view._on_hovered(view.scatter, [spot], None)
    text = view.detail.text()
    s = view.hardware.shapes[view.points.shapes[int(spot.data())]]
    assert s.name in text and f"{s.tflops:.1f} TFLOP/s" in text and "of its roof" in text
    assert str(s.input_dims[0]) in text


def test_click_outlines_the_kernels_on_the_timeline(qtbot, recording) -> None:
    view = QtTraceView(recording, "roofline")
    qtbot.addWidget(view)
    view.set_view("roofline")
    roof = view.roofline_view
    assert roof.point_count() > 0
    spot = roof.scatter.points()[0]
    roof._on_clicked(roof.scatter, [spot], None)
    shape = roof.hardware.shapes[roof.points.shapes[int(spot.data())]]
    got = np.sort(view.timeline.highlighted_rows())
    assert len(got) and np.array_equal(got, np.sort(shape.kernels))
    s = view.trace.slices
    t0, t1 = view.timeline.view_range()
    assert t0 <= s.start_ns[got].min() and (s.start_ns[got] + s.dur_ns[got]).max() <= t1
    assert view.current_view() == "roofline"  # a click stays; "Show on Timeline" goes
    roof.show_button.click()
    assert view.current_view() == "timeline"


def test_a_trace_without_shapes_says_so(qtbot) -> None:
    view = QtRooflineView(hardware(load_trace(DATA / "advisor" / "adv_clean.json.gz")))
    qtbot.addWidget(view)
    assert view.point_count() == 0 and "record shapes" in view.status.text()


def test_insights_shows_mfu_per_step(qtbot, tmp_path) -> None:
    advice = advise(load_trace(write_run(tmp_path / "run.json.gz", steps=4)))
    view = QtInsightsView(advice, "run")
    qtbot.addWidget(view)
    hw = advice.context.hardware
    assert view.mfu is not None
    assert np.allclose(view.mfu.percent, [100 * s.mfu for s in hw.steps])
    assert "MFU" in view.status.text() and "989.4" in view.status.text()
    bars = [i for i in view.mfu_plot.items if hasattr(i, "opts") and "height" in i.opts]
    assert len(bars) == 1 and np.allclose(bars[0].opts["height"], view.mfu.percent)


def test_insights_without_shapes_has_no_mfu_chart(qtbot) -> None:
    advice = advise(load_trace(DATA / "advisor" / "adv_clean.json.gz"))
    view = QtInsightsView(advice, "clean")
    qtbot.addWidget(view)
    assert view.mfu is None
    assert view.mfu_plot not in view.graphics.ci.items
    assert "MFU" not in view.status.text()
