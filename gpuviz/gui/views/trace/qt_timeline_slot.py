"""Where the Timeline goes in a trace tab: the real ``QtTimeline``, or a stand-in.

The Timeline widget (``gpuviz.gui.timeline.qt_timeline.QtTimeline``) is built separately. The
other views talk to it only through the small API below, so a stand-in with the same API keeps
the app usable (and testable) where that module fails to import.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from gpuviz.display import echo_traceback
from gpuviz.gui.qt_text import plain_label
from gpuviz.trace.model import Trace


class QtTimelinePlaceholder(QWidget):
    """A stand-in with the Timeline's API: it keeps the state and shows a note.

    Parameters
    ----------
    trace : Trace
    reason : str
        Why the real Timeline is not shown.
    """

    # "qlonglong", as QtTimeline declares them: times are ns, which overflow Signal(int)'s
    # 32 bits past 2.1 s, and slice rows of big traces can pass 2**31 too.
    rangeSelected = Signal("qlonglong", "qlonglong")
    sliceClicked = Signal("qlonglong")
    viewRangeChanged = Signal("qlonglong", "qlonglong")

    def __init__(self, trace: Trace, reason: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trace = trace
        s = trace.slices
        end = int((s.start_ns + s.dur_ns).max()) if len(s) else 1
        self._range = (0, max(end, 1))
        self._highlighted = np.empty(0, dtype=np.int64)
        self._matches: list[int] = []
        self._match = -1
        self._selection: tuple[int, int] | None = None
        label = plain_label(f"The timeline is not available.\n{reason}".strip())
        label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        label.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.addWidget(label)

    def set_view_range(self, t0_ns: int, t1_ns: int) -> None:
        """Show ``[t0_ns, t1_ns)``."""
        self._range = (int(t0_ns), int(t1_ns))
        self.viewRangeChanged.emit(*self._range)

    def view_range(self) -> tuple[int, int]:
        """The visible time range, in ns."""
        return self._range

    def highlight_rows(self, rows: object) -> None:
        """Mark these slice rows."""
        self._highlighted = np.asarray(rows, dtype=np.int64)

    def highlighted_rows(self) -> np.ndarray:
        """The rows last passed to :meth:`highlight_rows`."""
        return self._highlighted

    def search(self, text: str) -> int:
        """Find slices whose name contains ``text``; returns the count."""
        s = self.trace.slices
        ids = [
            i
            for i, n in enumerate(self.trace.symbols.strings)
            if text and text.lower() in n.lower()
        ]
        self._matches = np.flatnonzero(np.isin(s.name, ids)).tolist() if ids else []
        self._match = -1
        return len(self._matches)

    def next_match(self) -> None:
        """Step to the next match."""
        if self._matches:
            self._match = (self._match + 1) % len(self._matches)

    def prev_match(self) -> None:
        """Step to the previous match."""
        if self._matches:
            self._match = (self._match - 1) % len(self._matches)

    def select_range(self, t0_ns: int, t1_ns: int) -> None:
        """Select ``[t0_ns, t1_ns)``."""
        self._selection = (int(t0_ns), int(t1_ns))
        self.rangeSelected.emit(*self._selection)


def make_timeline(trace: Trace, parent: QWidget | None = None) -> Any:
    """The real ``QtTimeline`` for ``trace``, or a :class:`QtTimelinePlaceholder` saying why not."""
    try:
        from gpuviz.gui.timeline.qt_timeline import QtTimeline
    except ImportError as exc:
        return QtTimelinePlaceholder(trace, f"(gpuviz.gui.timeline: {exc})", parent)
    try:
        return QtTimeline(trace, parent)
    except Exception as exc:  # a bug there must not take the other views down
        echo_traceback()
        return QtTimelinePlaceholder(trace, f"{type(exc).__name__}: {exc}", parent)
