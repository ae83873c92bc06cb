"""The critical path's time by category, as one bar in the Insights view (issue 52).

"Critical path" replays the median step's dependency graph
(:func:`gpuviz.analysis.dep_graph.step_graph`, :mod:`gpuviz.analysis.critical_path`) and draws
the path's time split into compute, communication, copies, CPU and waits, the figures of
``gpuviz critical-path``; "Outline" outlines the path's slices on the Timeline. It runs on a
click, on the GUI thread (one step's graph: tens of
milliseconds for a few thousand nodes), not when the view opens.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPainter
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from gpuviz.gui.qt_text import set_plain

COLORS = {
    "compute": "#4e79a7",
    "communication": "#e15759",
    "copies": "#59a14f",
    "cpu": "#f28e2b",
    "waits": "#bab0ac",
}


class _Bar(QWidget):
    """One horizontal bar of the parts, each as wide as its share."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.parts: list[tuple[str, float]] = []
        self.setMinimumHeight(16)

    def paintEvent(self, _event: Any) -> None:
        total = sum(v for _, v in self.parts)
        if total <= 0:
            return
        p = QPainter(self)
        x, w, h = 0.0, float(self.width()), float(self.height())
        for name, v in self.parts:
            width = w * v / total
            p.fillRect(QRectF(x, 0, width, h), QColor(COLORS.get(name, "#999999")))
            x += width
        p.end()


class QtPathBar(QWidget):
    """A "Critical path" button, the bar of its categories, their figures, and "Outline".

    Signals
    -------
    showRows(object)
        The slice rows (int64 array) of the path's work, to outline on the Timeline.
    """

    showRows = Signal(object)

    def __init__(self, trace: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trace = trace
        self.rows = np.empty(0, dtype=np.int64)
        self.outline = QPushButton("Outline")
        self.outline.setToolTip("outline the critical path's slices on the Timeline")
        self.outline.setEnabled(False)
        self.outline.clicked.connect(lambda: self.showRows.emit(self.rows))
        self.button = QPushButton("Critical path")
        self.button.setToolTip("replay the median step's dependency graph: what its end waited for")
        self.button.setEnabled(trace is not None)
        self.button.clicked.connect(self.run)
        self.bar = _Bar()
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.button)
        layout.addWidget(self.bar, 1)
        layout.addWidget(self.label, 2)
        layout.addWidget(self.outline)

    def parts(self) -> list[tuple[str, float]]:
        """``(category, µs)`` of the path drawn (empty before a click)."""
        return list(self.bar.parts)

    def run(self) -> None:
        """Find the median step's critical path and draw its categories."""
        from gpuviz.analysis.critical_path import critical_path, path_json, replay
        from gpuviz.analysis.dep_graph import step_graph

        try:
            g = step_graph(self.trace)
        except ValueError as exc:
            set_plain(self.label, f"No critical path: {exc}")
            return
        from gpuviz.analysis.whatif import path_rows

        rp = replay(g)
        path = critical_path(g, rp)
        j = path_json(self.trace, g, rp, path, top=1)
        self.rows = path_rows(g, path)
        self.outline.setEnabled(len(self.rows) > 0)
        self.bar.parts = [(c, float(v["us"])) for c, v in j["by_category"].items()]
        self.bar.update()
        shown = ", ".join(
            f"{c} {v['us'] / 1000:.2f} ms" for c, v in j["by_category"].items() if v["us"] > 0
        )
        set_plain(
            self.label, f"Step {j['step']}: {j['span_us'] / 1000:.2f} ms on the path: {shown}"
        )
