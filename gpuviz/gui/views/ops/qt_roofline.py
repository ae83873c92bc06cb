"""The Roofline view: every op and shape with counted FLOPs as a point, against the GPU's roofs.

x is arithmetic intensity (FLOP per byte), y the achieved TFLOP/s, both on log scales; a
point's size grows with its device time and its colour says its precision. The roofs of the
device (:mod:`gpuviz.analysis.peaks`) are drawn per precision used: the bandwidth slope up to
the ridge point, then the flat dense peak. Hovering a point shows its numbers; clicking it
outlines its kernels on the Timeline and zooms there (double-click also switches to it).

A serving trace's phases stand beside the op-shapes (:func:`~gpuviz.gui.views.ops.roofline_model.phase_marks`):
a line each under the title (prefill: its MFU and TFLOP/s; decode: its MBU and the bandwidth
it reads at) and, where both its FLOPs and its bytes are known, a large outlined marker at its
intensity and TFLOP/s (a star for prefill, a diamond for decode, a triangle for mixed).

Signals
-------
rowsActivated(object, bool)
    The slice rows of the clicked op-shape's kernels, and whether to show the Timeline now.
peaksRequested()
    The "Peaks…" button: the user wants to set the peaks (View ▸ Peaks… does the same).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from gpuviz.display import terminal_safe
from gpuviz.gui.qt_text import set_plain, set_tooltip
from gpuviz.gui.views.ops.roofline_model import (
    PhaseMark,
    Roof,
    RooflinePoints,
    log_ticks,
    phase_line,
    phase_marks,
    point_text,
    roof_lines,
    roofline_points,
)
from gpuviz.gui.views.qt_plot_style import PALETTE, make_plot_widget

PRECISION_COLORS = {
    "bf16": PALETTE[0],
    "fp16": PALETTE[2],
    "tf32": PALETTE[1],
    "fp32": PALETTE[3],
    "fp8": PALETTE[6],
}
MIN_SIZE, MAX_SIZE = 8.0, 40.0
PHASE_SYMBOLS = {"prefill": "star", "decode": "d", "mixed": "t"}
PHASE_SIZE = 22.0


def _color(precision: str) -> str:
    return PRECISION_COLORS.get(precision, PALETTE[9])


class QtRooflineView(QWidget):
    """The roofline of one trace.

    Parameters
    ----------
    hardware : Hardware or None
        From :func:`gpuviz.analysis.hardware.hardware`; None when it could not be computed.
    error : str
        Shown when ``hardware`` is None.
    serving : ServingReport or None
        A serving trace's phases under the same peaks
        (:func:`gpuviz.analysis.serving_phases.serving_report`), drawn beside the roofline.
    serving_error : str
        Why the phases could not be computed (shown in their place).
    """

    rowsActivated = Signal(object, bool)
    peaksRequested = Signal()

    def __init__(
        self,
        hardware: Any,
        error: str = "",
        parent: QWidget | None = None,
        serving: Any = None,
        serving_error: str = "",
    ) -> None:
        super().__init__(parent)
        self.hardware = hardware
        self.serving = serving
        self.phase_marks: list[PhaseMark] = []
        self.phase_items: list[Any] = []  # one scatter a placed phase, as phase_marks
        self.phases = QLabel()  # the serving phases' lines; hidden for a training trace
        self.phases.setTextFormat(Qt.TextFormat.PlainText)
        self.phases.setWordWrap(True)
        self.phases.setVisible(False)
        self.points = RooflinePoints([], np.zeros(0), np.zeros(0), np.zeros(0), [])
        self.roofs: list[Roof] = []
        self.roof_items: list[Any] = []
        self.selected: int | None = None  # index into self.points
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.detail = QLabel()
        self.detail.setTextFormat(Qt.TextFormat.PlainText)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.detail.setMinimumWidth(360)
        self.detail.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.detail.setWordWrap(True)
        self.show_button = QPushButton("Show on Timeline")
        self.show_button.setEnabled(False)
        self.show_button.clicked.connect(self._on_show_clicked)
        self.peaks_button = QPushButton("Peaks…")
        self.peaks_button.setToolTip("set the peak TFLOP/s and TB/s (kept for later traces)")
        self.peaks_button.clicked.connect(self.peaksRequested)
        self.plot_widget = make_plot_widget(
            "Roofline: achieved TFLOP/s against arithmetic intensity"
        )
        self.plot = self.plot_widget.getPlotItem()
        # Items get log10 coordinates; the axes then label them as powers of ten.
        self.plot.setLogMode(x=True, y=True)
        self.plot.setLabel("bottom", "arithmetic intensity (FLOP/byte)")
        self.plot.setLabel("left", "achieved TFLOP/s")
        self.plot.addLegend(offset=(10, 10), labelTextColor="#222")
        self.scatter = pg.ScatterPlotItem(hoverable=True, tip=None)
        self.scatter.sigHovered.connect(self._on_hovered)
        self.scatter.sigClicked.connect(self._on_clicked)

        side = QWidget()
        sl = QVBoxLayout(side)
        sl.setContentsMargins(0, 0, 0, 0)
        sl.addWidget(QLabel("Hover a point for its numbers; click it to outline its kernels."))
        sl.addWidget(self.detail, 1)
        sl.addWidget(self.show_button)
        body = QHBoxLayout()
        body.addWidget(self.plot_widget, 3)
        body.addWidget(side, 1)
        top = QHBoxLayout()
        top.addWidget(self.status, 1)
        top.addWidget(self.peaks_button, 0, Qt.AlignmentFlag.AlignTop)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.phases)
        layout.addLayout(body, 1)
        self.set_hardware(hardware, error, serving, serving_error)

    def set_hardware(
        self, hardware: Any, error: str = "", serving: Any = None, serving_error: str = ""
    ) -> None:
        """Plot these figures (new peaks: the roofs and the roof shares change), or say why
        there are none; ``serving``: the phases under the same peaks (``serving_error``: why
        they are missing)."""
        self.hardware = hardware
        self.serving = serving
        self.phase_marks = []
        self.phase_items = []
        set_plain(self.phases, "")
        self.phases.setVisible(False)
        if serving_error:
            line = f"serving phases unknown ({serving_error})"
            set_plain(self.phases, terminal_safe(line, one_line=True))
            self.phases.setVisible(True)
        self.selected = None
        self.plot.clear()
        if self.plot.legend is not None:
            self.plot.legend.clear()
        self.roof_items = []
        self.scatter.clear()
        self.points = RooflinePoints([], np.zeros(0), np.zeros(0), np.zeros(0), [])
        self.roofs = []
        set_plain(self.detail, "")
        self.show_button.setEnabled(False)
        if hardware is None:
            set_plain(self.status, f"No roofline: {error or 'it could not be computed'}")
            return
        self._update_plot()

    # -- public API ------------------------------------------------------------------------------
    def point_count(self) -> int:
        """How many op-shapes are plotted."""
        return len(self.points)

    def select_point(self, i: int, show_timeline: bool = False) -> None:
        """Select point ``i`` (largest device time first), as a click does."""
        if not 0 <= i < len(self.points):
            return
        self.selected = i
        j = self.points.shapes[i]
        set_plain(self.detail, terminal_safe(point_text(self.hardware, j)))
        self._update_outline()
        self.show_button.setEnabled(True)
        kernels = self.hardware.shapes[j].kernels
        if len(kernels):
            self.rowsActivated.emit(np.asarray(kernels, dtype=np.int64), show_timeline)

    # -- refreshers --------------------------------------------------------------------------------
    def _update_plot(self) -> None:
        hw = self.hardware
        self.points = pts = roofline_points(hw)
        marks = phase_marks(self.serving) if self.serving is not None else []
        self.phase_marks = marks
        placed = [m for m in marks if m.intensity is not None and m.tflops]
        self.roofs = roof_lines(hw, pts, [m.intensity for m in placed if m.intensity])
        p = hw.peaks.peaks
        counted = sum(1 for s in hw.shapes if s.flops is not None)
        if p is None:
            peak = f"no roofs: {hw.peaks.reason} (set them with Peaks…)"
        else:
            peak = f"roofs of {p.label}: {p.bandwidth_tb_s:g} TB/s; " + ", ".join(
                f"{r.precision} {r.peak_tflops:g} TFLOP/s" for r in self.roofs
            )
        text = (
            f"{len(pts)} op-shapes with counted FLOPs ({counted} counted); point size: device "
            f"time. {terminal_safe(peak, one_line=True)}."
        )
        if not len(pts):
            text = (
                "No op with counted FLOPs: record shapes (torch.profiler record_shapes=True, "
                "gpuviz profile --record-shapes). " + terminal_safe(peak, one_line=True)
            )
        set_plain(self.status, text)
        for roof in self.roofs:
            pen = pg.mkPen(_color(roof.precision), width=2, style=Qt.PenStyle.DashLine)
            curve = pg.PlotCurveItem(np.log10(roof.x), np.log10(roof.y), pen=pen)
            self.plot.addItem(curve)
            label = pg.TextItem(
                f"{roof.precision} {roof.peak_tflops:g} TFLOP/s", color=_color(roof.precision),
                anchor=(1, 1),
            )  # fmt: skip
            label.setPos(np.log10(roof.x[-1]), np.log10(roof.peak_tflops))
            self.plot.addItem(label)
            self.roof_items.append(curve)
        if self.roofs:
            r = self.roofs[0]
            slope = pg.TextItem(f"{r.bandwidth_tb_s:g} TB/s", color="#555", anchor=(0, 1))
            x0 = r.x[0] * 2
            slope.setPos(np.log10(x0), np.log10(x0 * r.bandwidth_tb_s))
            self.plot.addItem(slope)
        if len(pts):
            top = float(pts.device_ms.max()) or 1.0
            sizes = MIN_SIZE + (MAX_SIZE - MIN_SIZE) * np.sqrt(pts.device_ms / top)
            self.scatter.setData(
                x=np.log10(pts.intensity),
                y=np.log10(pts.tflops),
                size=sizes,
                brush=[pg.mkBrush(QColor(_color(k)).lighter(110)) for k in pts.precision],
                pen=[pg.mkPen("#333", width=1) for _ in pts.precision],
                data=list(range(len(pts))),
            )
            self.plot.addItem(self.scatter)
            # Until the mouse says otherwise, the numbers of the op that took the most time.
            first = terminal_safe(point_text(hw, pts.shapes[0]))
            set_plain(self.detail, "Most device time:\n" + first)
            for k in sorted(set(pts.precision)):
                sample = pg.ScatterPlotItem(brush=pg.mkBrush(_color(k)), size=10)
                self.plot.legend.addItem(sample, k)
        self._update_phases(placed)
        xs = [
            *np.log10(pts.intensity).tolist(),
            *[float(np.log10(v)) for r in self.roofs for v in r.x],
            *[float(np.log10(m.intensity)) for m in placed if m.intensity],
        ]
        ys = [
            *np.log10(pts.tflops).tolist(),
            *[float(np.log10(v)) for r in self.roofs for v in r.y],
            *[float(np.log10(m.tflops)) for m in placed if m.tflops],
        ]
        if xs and ys:
            self.plot.getAxis("bottom").setTicks(log_ticks(min(xs), max(xs)))
            self.plot.getAxis("left").setTicks(log_ticks(min(ys), max(ys)))

    def _update_phases(self, placed: list[PhaseMark]) -> None:
        """The serving phases' lines, and a marker for each phase whose point is known."""
        if not self.phase_marks:
            return
        p = self.hardware.peaks.peaks
        bandwidth = None if p is None else p.bandwidth_tb_s
        lines = [phase_line(m, bandwidth) for m in self.phase_marks]
        if len(placed) < len(self.phase_marks):
            lines.append("(a phase without a marker lacks its FLOPs or its bytes: see its line)")
        set_plain(self.phases, terminal_safe("\n".join(lines)))
        self.phases.setVisible(True)
        for m in placed:
            assert m.intensity is not None and m.tflops is not None  # placed ones have both
            item = pg.ScatterPlotItem(
                x=[float(np.log10(m.intensity))],
                y=[float(np.log10(m.tflops))],
                symbol=PHASE_SYMBOLS[m.phase],
                size=PHASE_SIZE,
                brush=pg.mkBrush(255, 255, 255, 160),
                pen=pg.mkPen("#111", width=2.5),
            )
            self.plot.addItem(item)
            label = pg.TextItem(m.phase, color="#111", anchor=(-0.15, 1.1))
            label.setPos(float(np.log10(m.intensity)), float(np.log10(m.tflops)))
            self.plot.addItem(label)
            self.plot.legend.addItem(item, f"{m.phase} (phase)")
            self.phase_items.append(item)

    def _update_outline(self) -> None:
        pens = [pg.mkPen("#333", width=1) for _ in range(len(self.points))]
        if self.selected is not None:
            pens[self.selected] = pg.mkPen("#d62728", width=3)
        self.scatter.setPen(pens)

    # -- handlers ----------------------------------------------------------------------------------
    def _on_hovered(self, _item: Any, points: Any, _ev: Any) -> None:
        if len(points) == 0:
            return
        i = int(points[0].data())
        text = terminal_safe(point_text(self.hardware, self.points.shapes[i]))
        set_plain(self.detail, text)
        set_tooltip(self.scatter, text)

    def _on_clicked(self, _item: Any, points: Any, ev: Any) -> None:
        if len(points) == 0:
            return
        double = bool(getattr(ev, "double", lambda: False)())
        self.select_point(int(points[0].data()), show_timeline=double)

    def _on_show_clicked(self) -> None:
        if self.selected is not None:
            self.select_point(self.selected, show_timeline=True)
