"""The peaks the user sets in the app (View ▸ Peaks…, the Roofline's "Peaks…" button): kept in
QSettings, applied to the open trace's Roofline, Insights MFU and Operators columns, and to the
traces opened later; and the Operators view's TFLOP/s, FLOP/B and Bound columns by shape."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings

from gpuviz.analysis.peaks import PeakOverride
from gpuviz.gui.qt_load_worker import analyze
from gpuviz.gui.qt_main_window import MainWindow
from gpuviz.gui.qt_peaks_dialog import (
    BANDWIDTH_KEY,
    TFLOPS_KEY,
    QtPeaksDialog,
    save_peaks,
    saved_peaks,
)
from gpuviz.gui.views.qt_trace_view import QtTraceView
from gpuviz.trace.kineto import load_trace

sys.path.insert(0, str(Path(__file__).parent.parent / "analysis"))
from hardware_synth import gemm_flops, write_run

ODD = {"id": 0, "name": "Imaginary GPU 9000", "numSms": 7, "computeMajor": 12}
LOAD_TIMEOUT_MS = 60_000


def _settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def test_settings_keep_the_peaks_and_ignore_junk(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    assert saved_peaks(settings) is None
    save_peaks(settings, PeakOverride(500.0, 2.5))
    again = _settings(tmp_path)  # read back from the file: INI gives text
    assert saved_peaks(again) == PeakOverride(500.0, 2.5)
    save_peaks(again, PeakOverride(None, 1.5))
    assert saved_peaks(_settings(tmp_path)) == PeakOverride(None, 1.5)
    save_peaks(again, None)
    assert saved_peaks(_settings(tmp_path)) is None
    for junk in ("abc", "-3", "inf", "0"):
        again.setValue(TFLOPS_KEY, junk)
        again.setValue(BANDWIDTH_KEY, junk)
        assert saved_peaks(again) is None, junk


def test_dialog_starts_from_the_peaks_and_gives_the_choice(qtbot) -> None:
    dialog = QtPeaksDialog(PeakOverride(400.0, None), "Imaginary GPU 9000: <b>unknown</b>")
    qtbot.addWidget(dialog)
    assert dialog.tflops_box.value() == 400.0 and dialog.bandwidth_box.value() == 0.0
    assert dialog.bandwidth_box.text() == "the device's"
    assert "<b>unknown</b>" in dialog.device_label.text()  # a name is data, not markup
    assert dialog.override() == PeakOverride(400.0, None)
    dialog.bandwidth_box.setValue(3.0)
    assert dialog.override() == PeakOverride(400.0, 3.0)
    dialog.reset()
    assert dialog.override() is None


@pytest.fixture(scope="module")
def odd_run(tmp_path_factory):
    """A run on a device the peak table does not know: 3 steps of 4 GEMMs at 750 TFLOP/s."""
    path = write_run(tmp_path_factory.mktemp("odd") / "run.json.gz", device=ODD)
    return analyze(load_trace(path))


def test_peaks_fill_the_roofline_mfu_and_operators_of_an_unknown_device(qtbot, odd_run) -> None:
    view = QtTraceView(odd_run, "odd")
    qtbot.addWidget(view)
    roofline, insights, operators = view.roofline_view, view.insights_view, view.operators_view
    assert view.wait_breakdowns()
    operators.shape_box.setChecked(True)
    assert roofline.roofs == [] and "no roofs" in roofline.status.text()
    assert "Peaks…" in roofline.status.text()
    assert insights.mfu is None or np.isnan(insights.mfu.percent).all()
    col = [c.title for c in operators.model.columns].index("TFLOP/s")
    row = next(i for i, r in enumerate(operators.model.rows) if r.key == "aten::mm")
    assert operators.model.value(row, operators.model.columns[col]) == pytest.approx(750, rel=1e-3)
    bound = operators.model.columns[[c.title for c in operators.model.columns].index("Bound")]
    assert operators.model.value(row, bound) is None  # no peaks, no ridge point

    view.set_peaks(PeakOverride(1500.0, 3.0))
    assert [r.peak_tflops for r in roofline.roofs] == [1500.0]
    assert roofline.roofs[0].bandwidth_tb_s == 3.0 and roofline.point_count() > 0
    hw = view.hardware_figures()[0]
    want = [100 * s.flops / (s.duration_ns * 1500e3) for s in hw.steps]
    assert hw.steps[0].flops == 4 * gemm_flops(8192, 8192, 8192) + 2 * (1 << 24)  # + 2 adds
    assert insights.mfu is not None and np.allclose(insights.mfu.percent, want)
    assert "1500" in insights.status.text()
    assert operators.model.value(row, bound) == "compute"
    assert operators.model.value(row, operators.model.columns[col]) == pytest.approx(750, rel=1e-3)

    view.set_peaks(None)  # back to the device's: none
    assert roofline.roofs == [] and operators.model.value(row, bound) is None


def test_the_window_keeps_the_peaks_and_gives_them_to_later_traces(qtbot, tmp_path) -> None:
    path = write_run(tmp_path / "run.json.gz", device=ODD)
    window = MainWindow(settings=_settings(tmp_path))
    qtbot.addWidget(window)
    assert window.peaks_action in window.view_menu.actions()
    with qtbot.waitSignal(window.traceOpened, timeout=LOAD_TIMEOUT_MS) as opened:
        window.open_trace(str(path))
    first = opened.args[0]
    assert first.roofline_view.roofs == []
    window.set_peaks(PeakOverride(800.0, 2.0))
    assert saved_peaks(_settings(tmp_path)) == PeakOverride(800.0, 2.0)
    assert [r.peak_tflops for r in first.roofline_view.roofs] == [800.0]
    with qtbot.waitSignal(window.traceOpened, timeout=LOAD_TIMEOUT_MS) as opened:
        window.open_trace(str(path))
    second = opened.args[0]
    assert second.peaks == PeakOverride(800.0, 2.0)
    assert [r.peak_tflops for r in second.roofline_view.roofs] == [800.0]
    if window.is_busy():
        with qtbot.waitSignal(window.idle, timeout=LOAD_TIMEOUT_MS):
            window.cancel_loading()
    window.close()


def test_dialog_shows_the_numbers_in_use(qtbot, data_dir) -> None:
    # issue 47, item 23: "the device's" without a figure. The H100 SXM datasheet's dense
    # figures: bf16 989.4 TFLOP/s, tf32 494.7, fp32 66.9 (67), fp8 1,978.9; 3.35 TB/s.
    from gpuviz.analysis.peaks import device_peaks

    trace = load_trace(str(data_dir / "attribution" / "tinylm_train.json.gz"))
    match = device_peaks(trace)
    dialog = QtPeaksDialog(None, "H100", match=match)
    qtbot.addWidget(dialog)
    own = dialog.own_label.text()
    for figure in ("bf16 989.4", "tf32 494.7", "fp32 66.9", "fp8 1,978.9", "3.35 TB/s"):
        assert figure in own, (figure, own)
    assert "989.4" in dialog.tflops_box.specialValueText()
    assert "3.35 TB/s" in dialog.bandwidth_box.specialValueText()
    assert "bf16 989.4" in dialog.in_use_label.text()
    dialog.tflops_box.setValue(500.0)  # the boxes' figures are what is in use, live
    assert "bf16 500.0" in dialog.in_use_label.text() and "fp32 500.0" in dialog.in_use_label.text()
    assert "3.35 TB/s" in dialog.in_use_label.text()
    dialog.reset()
    assert "bf16 989.4" in dialog.in_use_label.text()


def test_dialog_of_an_unknown_device_says_unknown(qtbot) -> None:
    from gpuviz.analysis.peaks import PeakMatch

    dialog = QtPeaksDialog(None, "", match=PeakMatch(None, "no device name"))
    qtbot.addWidget(dialog)
    assert "unknown" in dialog.own_label.text() and "0" not in dialog.own_label.text()
    dialog.bandwidth_box.setValue(2.0)
    assert "memory 2 TB/s" in dialog.in_use_label.text()
