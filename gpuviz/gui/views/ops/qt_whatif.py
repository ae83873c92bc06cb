""" "What if 2x faster?": a row of the Operators or Modules view replayed faster.

The widget holds a button and a line of text. For the row's name (an op, a ``record_function``
range, a module) it replays the median step's dependency graph with that work twice as fast
(:func:`gpuviz.analysis.whatif.what_if_faster`) and says the step time recorded and predicted;
"Outline path" asks for the new critical path's slices on the Timeline. The replay runs on the
GUI thread: one step's graph (a few thousand nodes, tens of milliseconds; 108 814 nodes took
2.2 s on the 2-core VM).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from gpuviz.gui.qt_text import set_plain

FACTOR = 2.0


class QtWhatIf(QWidget):
    """The "What if 2x faster?" button, its answer, and "Outline path".

    Signals
    -------
    showRows(object)
        The slice rows (int64 array) of the predicted critical path.
    """

    showRows = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trace: Any = None
        self.name: str | None = None
        self.rows: Any = None
        self._rows = np.empty(0, dtype=np.int64)
        self.button = QPushButton("What if 2× faster?")
        self.button.setToolTip(
            "replay the median step's dependency graph with this row's work twice as fast"
        )
        self.button.setEnabled(False)
        self.button.clicked.connect(self.run)
        self.answer = QLabel()
        self.answer.setWordWrap(True)
        self.outline = QPushButton("Outline path")
        self.outline.setToolTip("outline the predicted critical path on the Timeline")
        self.outline.setEnabled(False)
        self.outline.clicked.connect(lambda: self.showRows.emit(self._rows))
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.button)
        layout.addWidget(self.answer, 1)
        layout.addWidget(self.outline)

    def set_target(self, trace: Any, name: str | None, rows: Any = None) -> None:
        """The trace, and the name the button will make faster (None: nothing selected);
        ``rows``: GPU slice rows that are the name's too (a module's backward kernels)."""
        self.trace, self.name, self.rows = trace, name, rows
        self.button.setEnabled(trace is not None and bool(name))
        self.outline.setEnabled(False)
        set_plain(self.answer, "")

    def text(self) -> str:
        """The answer shown."""
        return self.answer.text()

    def run(self) -> None:
        """Replay the step with the target faster and show the prediction."""
        from gpuviz.analysis.whatif import path_rows, what_if_faster

        if self.trace is None or not self.name:
            return
        try:
            g, p = what_if_faster(self.trace, self.name, FACTOR, rows=self.rows)
        except ValueError as exc:
            set_plain(self.answer, f"No prediction: {exc}")
            return
        if p.unmatched:
            set_plain(self.answer, f"{self.name} has no work in step {g.number}")
            return
        before, after = float(p.measured_ns.max()), float(p.predicted_ns.max())
        saved = (before - after) / before if before > 0 else 0.0
        set_plain(
            self.answer,
            f"Step {g.number}: {before / 1e6:.3f} ms recorded, {after / 1e6:.3f} ms predicted "
            f"by replay with {self.name} {FACTOR:g}× faster (saves {100 * saved:.1f}%).",
        )
        self._rows = path_rows(g, p.path)
        self.outline.setEnabled(len(self._rows) > 0)
