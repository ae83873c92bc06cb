"""The Peaks dialog: the dense TFLOP/s and the memory bandwidth that the Roofline view, the
Insights MFU chart and the Operators' roofline columns use, where the device is unknown or the
user wants another figure (``--peak-tflops``/``--peak-bandwidth`` of the command line).

The choice is kept in QSettings (:data:`TFLOPS_KEY`, :data:`BANDWIDTH_KEY`) and applies to every
open trace and to those opened later. 0 stands for "the device's own" in both the dialog and
the settings.
"""

from __future__ import annotations

import math
from typing import Any

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QVBoxLayout,
    QWidget,
)

from gpuviz.analysis.peaks import DevicePeaks, PeakMatch, PeakOverride, apply_override
from gpuviz.gui.qt_text import plain_label, set_plain

TFLOPS_KEY = "peaks/tflops"
BANDWIDTH_KEY = "peaks/bandwidth_tb_s"
DEVICE_OWN = "the device's"
"""What a spin box at 0 shows (with the device's figure where it is known): no override, the
matched device's figure stays."""
SHOWN_PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8")
"""The precisions whose dense peaks the dialog lists (those MFU is measured against)."""


def peaks_text(peaks: DevicePeaks | None) -> str:
    """The figures of ``peaks`` in one line: each precision's dense TFLOP/s and the bandwidth;
    "unknown" for those it lacks (never 0)."""
    if peaks is None:
        return "unknown: no device matched and no figure given"
    known = [(k, peaks.tflops(k)) for k in SHOWN_PRECISIONS]
    flops = ", ".join(f"{k} {v:,.1f}" for k, v in known if v is not None)
    bw = "unknown" if peaks.bandwidth_tb_s is None else f"{peaks.bandwidth_tb_s:g} TB/s"
    return f"{flops or 'unknown'} TFLOP/s dense; memory {bw}"


def _positive(value: Any) -> float | None:
    """A settings value as a positive finite float (INI files hand back text), else None."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) and x > 0 else None


def saved_peaks(settings: QSettings) -> PeakOverride | None:
    """The peaks kept in ``settings``, or None where neither is set (or readable)."""
    tflops = _positive(settings.value(TFLOPS_KEY))
    bandwidth = _positive(settings.value(BANDWIDTH_KEY))
    if tflops is None and bandwidth is None:
        return None
    return PeakOverride(tflops, bandwidth)


def save_peaks(settings: QSettings, override: PeakOverride | None) -> None:
    """Keep ``override`` in ``settings`` (None: the device's own peaks)."""
    o = override or PeakOverride()
    for key, value in ((TFLOPS_KEY, o.peak_tflops), (BANDWIDTH_KEY, o.peak_bandwidth_tb_s)):
        if value is None:
            settings.remove(key)
        else:
            settings.setValue(key, float(value))
    settings.sync()


def _spin(maximum: float, suffix: str, own: str = DEVICE_OWN) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setRange(0.0, maximum)
    box.setDecimals(2)
    box.setSuffix(suffix)
    box.setSpecialValueText(own)  # shown at 0, with the device's figure where known
    box.setMinimumWidth(200)
    return box


class QtPeaksDialog(QDialog):
    """Two figures: dense TFLOP/s (for every precision) and TB/s; 0 keeps the device's.

    Parameters
    ----------
    override : PeakOverride or None
        The peaks in use (the dialog starts from them).
    device : str
        A line on the device's own peaks (or why there are none), shown above the figures.
    match : PeakMatch, optional
        The device's own peaks (:func:`gpuviz.analysis.peaks.device_peaks` without override):
        their figures are shown, and those in use as the boxes change.
    """

    def __init__(
        self,
        override: PeakOverride | None,
        device: str = "",
        parent: QWidget | None = None,
        match: PeakMatch | None = None,
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Peaks")
        self.match = match
        own = match.peaks if match is not None else None
        o = override or PeakOverride()
        own_bf16 = own.tflops("bf16") if own is not None else None
        self.tflops_box = _spin(
            1e6,
            " TFLOP/s",
            f"{DEVICE_OWN} ({own_bf16:,.1f} bf16…)" if own_bf16 is not None else DEVICE_OWN,
        )
        self.tflops_box.setToolTip(
            "dense peak for every precision: MFU and the compute roof (0: the device's)"
        )
        self.tflops_box.setValue(o.peak_tflops or 0.0)
        own_bw = own.bandwidth_tb_s if own is not None else None
        self.bandwidth_box = _spin(
            1e4, " TB/s", f"{DEVICE_OWN} ({own_bw:g} TB/s)" if own_bw is not None else DEVICE_OWN
        )
        self.bandwidth_box.setToolTip("memory bandwidth: the roofline's slope (0: the device's)")
        self.bandwidth_box.setValue(o.peak_bandwidth_tb_s or 0.0)
        self.device_label: QLabel = plain_label(device)
        self.device_label.setWordWrap(True)
        self.own_label: QLabel = plain_label(
            f"The device's: {peaks_text(own)}" if match is not None else ""
        )
        self.own_label.setWordWrap(True)
        self.own_label.setVisible(match is not None)
        self.in_use_label: QLabel = plain_label("")
        self.in_use_label.setWordWrap(True)
        self.in_use_label.setVisible(match is not None)
        self.tflops_box.valueChanged.connect(self._update_in_use)
        self.bandwidth_box.valueChanged.connect(self._update_in_use)
        form = QFormLayout()
        form.addRow("Peak compute", self.tflops_box)
        form.addRow("Memory bandwidth", self.bandwidth_box)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok
            | QDialogButtonBox.StandardButton.Cancel
            | QDialogButtonBox.StandardButton.RestoreDefaults
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        reset = buttons.button(QDialogButtonBox.StandardButton.RestoreDefaults)
        reset.setText("Use the device's")
        reset.clicked.connect(self.reset)
        layout = QVBoxLayout(self)
        layout.addWidget(self.device_label)
        layout.addWidget(self.own_label)
        layout.addLayout(form)
        layout.addWidget(self.in_use_label)
        layout.addWidget(
            plain_label("Applies to the Roofline, the Insights MFU and the Operators' columns.")
        )
        layout.addWidget(buttons)
        self._update_in_use()

    def in_use(self) -> DevicePeaks | None:
        """The peaks the figures in the boxes give (the device's, with the boxes' put in)."""
        if self.match is None:
            return None
        return apply_override(self.match, self.override()).peaks

    def _update_in_use(self, *_: Any) -> None:
        if self.match is not None:
            set_plain(self.in_use_label, f"In use: {peaks_text(self.in_use())}")

    def reset(self) -> None:
        """Back to the device's own peaks (both figures 0)."""
        self.tflops_box.setValue(0.0)
        self.bandwidth_box.setValue(0.0)

    def override(self) -> PeakOverride | None:
        """The figures chosen, or None where both are the device's."""
        tflops = self.tflops_box.value() or None
        bandwidth = self.bandwidth_box.value() or None
        if tflops is None and bandwidth is None:
            return None
        return PeakOverride(tflops, bandwidth)
