"""The Timeline view: one trace's lanes (rank → device → stream, then CPU threads), fluid at
millions of slices.

Interface (other views and the main window rely on it; keep it stable)
-----------------------------------------------------------------------
``QtTimeline(trace, parent=None)``
    Shows one :class:`~gpuviz.trace.model.Trace`.
``set_view_range(t0_ns, t1_ns)`` / ``view_range() -> (t0_ns, t1_ns)``
    The visible time range, in ns relative to the trace zero.
``highlight_rows(rows)`` / ``highlighted_rows()``
    Outline these slice rows (e.g. the Kernels table's selection).
``search(text) -> int``, ``next_match() -> int``, ``prev_match() -> int``, ``match_rows()``
    Find slices whose name contains ``text`` (case-insensitive): highlight them and return the
    count; step through them in time order (the view moves to, and selects, each one; the
    methods return the current match's index, -1 when there is none).
``select_range(t0_ns, t1_ns)`` / ``selected_range()``
    Select a time range; its duration, kernels, busy time and overlap show in the info line.
``select_slice(row)`` / ``selected_slice()`` / ``linked_rows()``
    Select a slice; for a kernel, copy or set its launch (the runtime call with the same
    correlation) is highlighted and linked by an arrow, and for a launch its GPU work.
``fold_group(index, folded)``, ``fold_track(track, folded)``, ``layout``
    Lane folding; ``layout`` is the current :class:`gpuviz.trace.lod.Layout`.
``wait_ready()`` (tests, benchmarks), ``lod_ready`` (bool), ``stop_worker()``
    Whether every level-of-detail pyramid has been built; stop the builder thread (``close()``
    does it, and so does the widget's destruction).
``describe_slice(row)``, ``info_text``, ``canvas``, ``slice_position(row)``, ``x_of_time(t)``,
``time_at_x(x)``, ``current_match()``, ``current_frame()``
    Hover text, the info line, the painted child widget and its coordinates (for tests and
    screenshots).
Signals (ints are ns relative to the trace zero; declared ``qlonglong`` because ns overflow
32 bits): ``rangeSelected(int, int)``, ``sliceClicked(int)`` (slice row),
``viewRangeChanged(int, int)`` (rate-limited to the redraw timer), ``lodProgress(int, int)``.

User input: wheel zooms around the mouse (shift+wheel pans, wheel over the lane labels or
ctrl+wheel scrolls rows); drag pans; shift+drag, or a drag on the time axis, selects a range;
W/S zoom in/out around the mouse, A/D pan (Perfetto); Esc clears the selection; click a lane
label's triangle to fold it; hover shows a slice's details.

Drawing: :class:`gpuviz.trace.lod.TimelineLod` gives per-colour rectangle arrays for the visible
rows at pixel resolution; :func:`gpuviz.trace.lod.raster_rows` paints them into one row of
pixels per lane, copied down the lane's height into one image that is drawn with one
``drawImage`` (:mod:`gpuviz.gui.qt_draw`): a frame costs pixels × lanes, however many
rectangles it has (one ``drawRects`` entry per rectangle cost a fill per scan line: 10+ ms for
the ~20k rectangles of a real 1M-kernel trace). Frames and their image are cached per view, so
a repaint of an unchanged view only blits; a pan within three view widths reuses each row's
LOD window (:class:`~gpuviz.trace.lod.TimelineLod`).
Redraws go through one timer (at most about 60 per second), never once per input event.
Level-of-detail pyramids of big rows are built by a worker ``QThread``
(:class:`~gpuviz.gui.timeline.qt_lod_worker.QtLodWorker`); rows not built yet show a
"building" band until it is done.
"""

from __future__ import annotations

import html
import math
import time
from typing import Any

import numpy as np
import numpy.typing as npt
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontMetrics,
    QImage,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPolygonF,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollBar,
    QSizePolicy,
    QToolButton,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from gpuviz.gui.qt_draw import argb_image, draw_rects, premultiplied_argb
from gpuviz.gui.timeline.palette import colour_table
from gpuviz.gui.timeline.qt_lod_worker import QtLodWorker
from gpuviz.gui.timeline.timefmt import format_at, format_ns, ticks
from gpuviz.trace.lod import (
    ROW_HEIGHT,
    Frame,
    Layout,
    RowKind,
    TimelineLod,
    build_layout,
    id_text,
    raster_rows,
)
from gpuviz.trace.model import GPU_ACTIVITY_KINDS, KIND_CATEGORIES, Kind, Trace, TrackKind

GUTTER_PX = 210
AXIS_PX = 26
ROW_PX = 18
REDRAW_MS = 16
SYNC_TRACE_MAX = (
    60_000  # traces up to this many slices build their pyramids on the GUI thread (~30 ms)
)
MIN_SPAN_NS = 50.0
ZOOM_STEP = 1.25
PAN_STEP = 0.2
HIGHLIGHT_MAX = 20_000  # beyond this, highlights are merged to one mark per pixel and row

# Qt enum lookups cost microseconds each through shiboken: look them up once.
_NO_PEN = Qt.PenStyle.NoPen
_NO_BRUSH = Qt.BrushStyle.NoBrush
_ELIDE_RIGHT = Qt.TextElideMode.ElideRight
_VCENTER = Qt.AlignmentFlag.AlignVCenter

_MAIN_ARGS = (
    "grid",
    "block",
    "registers per thread",
    "shared memory",
    "blocks per SM",
    "est. achieved occupancy %",
    "bytes",
    "memory bandwidth (GB/s)",
    "correlation",
    "External id",
    "Input Dims",
    "Input type",
    "device",
    "stream",
    "cbid",
)


def _unique(a: np.ndarray) -> np.ndarray:
    # np.unique imports numpy.ma on first use (about 90 ms): too slow for the GUI thread.
    a = np.sort(a)
    if len(a) > 1:
        a = a[np.concatenate(([True], a[1:] != a[:-1]))]
    return a


def _rows_sorted_by_start(trace: Trace, rows: npt.ArrayLike) -> tuple[Any, ...]:
    rows = _unique(np.asarray(rows, dtype=np.int64).ravel())
    rows = rows[(rows >= 0) & (rows < len(trace.slices))]
    s = trace.slices.start_ns[rows]
    order = np.argsort(s, kind="stable")
    rows, s = rows[order], s[order]
    e = s + trace.slices.dur_ns[rows]
    reach = np.maximum.accumulate(e) if len(e) else e
    return rows, s, e, reach


class _Canvas(QWidget):
    """Paints the axis, lane labels and slices, and turns input into view changes."""

    def __init__(self, owner: QtTimeline) -> None:
        super().__init__(owner)
        self._o = owner
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(300, 120)
        self._press: QPointF | None = None
        self._press_mode = ""
        self._press_view: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self._moved = False

    # Qt overrides ------------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        p = QPainter(self)
        try:
            self._o._paint(p, self.width(), self.height())
        finally:
            p.end()

    def resizeEvent(self, event: QResizeEvent) -> None:
        self._o._on_resized()

    def wheelEvent(self, event: QWheelEvent) -> None:
        o = self._o
        pos = event.position()
        dy = event.angleDelta().y()
        dx = event.angleDelta().x()
        mods = event.modifiers()
        if pos.x() < GUTTER_PX or mods & Qt.KeyboardModifier.ControlModifier:
            o._scroll_by(-dy / 120 * 3 * ROW_PX)
        elif mods & Qt.KeyboardModifier.ShiftModifier or (dx and not dy):
            o._pan_by_fraction(-(dy or dx) / 120 * 0.1)
        elif dy:
            o._zoom_at(ZOOM_STEP ** (dy / 120), o._time_at_x(pos.x()))
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        self.setFocus()
        if event.button() != Qt.MouseButton.LeftButton:
            return
        o = self._o
        self._press = pos
        self._moved = False
        self._press_view = (o._t0, o._t1, o._scroll_px)
        if pos.x() < GUTTER_PX:
            self._press_mode = "gutter"
        elif pos.y() < AXIS_PX or event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self._press_mode = "range"
            t = o._time_at_x(pos.x())
            o._set_range_live(t, t)
        else:
            self._press_mode = "pan"
            self.setCursor(Qt.CursorShape.ClosedHandCursor)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        o = self._o
        o._mouse = pos
        if self._press is None:
            o._on_hover(pos, event.globalPosition().toPoint())
            return
        if (pos - self._press).manhattanLength() > 3:
            self._moved = True
        if self._press_mode == "pan" and self._moved:
            t0, t1, scroll = self._press_view
            dt = (pos.x() - self._press.x()) * (t1 - t0) / max(o._area_width(), 1)
            o._set_view(t0 - dt, t1 - dt)
            o._set_scroll(scroll - (pos.y() - self._press.y()))
        elif self._press_mode == "range":
            o._set_range_live(o._time_at_x(self._press.x()), o._time_at_x(pos.x()))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._press is None:
            return
        pos = event.position()
        o = self._o
        mode, moved, press = self._press_mode, self._moved, self._press
        self._press = None
        self.unsetCursor()
        if mode == "gutter" and not moved:
            o._on_gutter_click(pos)
        elif mode == "range":
            t0, t1 = sorted((o._time_at_x(press.x()), o._time_at_x(pos.x())))
            if moved and t1 > t0:
                o.select_range(int(t0), int(t1))
            else:
                o.clear_range()
        elif mode == "pan" and not moved:
            o._on_click(pos)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        o = self._o
        key = event.key()
        mouse = o._mouse
        at = o._time_at_x(mouse.x()) if mouse is not None and mouse.x() >= GUTTER_PX else None
        if key == Qt.Key.Key_W:
            o._zoom_at(ZOOM_STEP, at)
        elif key == Qt.Key.Key_S:
            o._zoom_at(1 / ZOOM_STEP, at)
        elif key == Qt.Key.Key_A:
            o._pan_by_fraction(-PAN_STEP)
        elif key == Qt.Key.Key_D:
            o._pan_by_fraction(PAN_STEP)
        elif key == Qt.Key.Key_Escape:
            o.clear_range()
            o.select_slice(-1)
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def leaveEvent(self, event: Any) -> None:
        self._o._mouse = None


class QtTimeline(QWidget):
    """The timeline of one trace (see the module docstring for the interface).

    Parameters
    ----------
    trace : Trace
        The trace to show; only read.
    parent : QWidget, optional
    """

    rangeSelected = Signal("qlonglong", "qlonglong")
    sliceClicked = Signal("qlonglong")
    viewRangeChanged = Signal("qlonglong", "qlonglong")
    lodProgress = Signal("qlonglong", "qlonglong")

    def __init__(self, trace: Trace, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.trace = trace
        s = trace.slices
        self._end_ns = float(_max_end(s.start_ns, s.dur_ns)) if len(s) else 1000.0
        self._end_ns = max(self._end_ns, 1000.0)
        n = len(s)
        self._lod = TimelineLod(trace, sync_build_max=(n if n <= SYNC_TRACE_MAX else 2_000))
        self._layout = build_layout(trace, depths=self._lod.depths)
        self._layout_version = 0
        self._lod_version = 0
        self._colours = colour_table()
        self._argb = premultiplied_argb(self._colours)
        margin = self._end_ns * 0.01
        self._t0, self._t1 = -margin, self._end_ns + margin
        self._scroll_px = 0.0
        self._mouse: QPointF | None = None
        self._frame: Frame | None = None
        self._frame_key: tuple[Any, ...] | None = None
        self._px_cache: tuple[tuple[Any, ...], QImage, float, np.ndarray] | None = None
        self._highlight = _rows_sorted_by_start(trace, [])
        self._highlight_rows = np.empty(0, dtype=np.int64)
        self._matches = _rows_sorted_by_start(trace, [])
        self._match_index = -1
        self._selected = -1
        self._linked = np.empty(0, dtype=np.int64)
        self._range: tuple[int, int] | None = None
        self._range_text = ""
        self._worker: QtLodWorker | None = None
        self._progress = (0, 0)
        self._last_emitted: tuple[int, int] | None = None
        self._gpu_corr_index: dict[str, np.ndarray] | None = None
        self.last_paint_ms = 0.0
        self.paint_count = 0  # frames painted (tests check that redraws are coalesced)
        self._static: tuple[tuple[Any, ...], QImage] | None = None
        self._ready_rows = -1
        self._elided: dict[tuple[int, int], str] = {}
        self._hl_cache: dict[int, tuple[tuple[Any, ...], np.ndarray]] = {}

        self._font = QFont(self.font())
        self._font.setPointSizeF(max(self._font.pointSizeF() - 1, 7.5))
        self._bold = QFont(self._font)
        self._bold.setBold(True)
        fm = QFontMetrics(self._font)
        self._baseline = (ROW_PX + fm.ascent() - fm.descent()) / 2

        self._canvas = _Canvas(self)
        self._vbar = QScrollBar(Qt.Orientation.Vertical, self)
        self._vbar.valueChanged.connect(self._on_vbar)
        self._search = QLineEdit(self)
        self._search.setPlaceholderText("Search slices by name…")
        self._search.setClearButtonEnabled(True)
        self._search.returnPressed.connect(self._on_search_enter)
        # Typing searches after a pause, not on each key: a search scans every slice's name.
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(250)
        self._search_timer.timeout.connect(lambda: self.search(self._search.text()))
        self._search.textChanged.connect(self._on_search_text)
        self._prev_btn = QToolButton(self)
        self._prev_btn.setText("◀")
        self._prev_btn.setToolTip("Previous match")
        self._prev_btn.clicked.connect(self.prev_match)
        self._next_btn = QToolButton(self)
        self._next_btn.setText("▶")
        self._next_btn.setToolTip("Next match (Enter)")
        self._next_btn.clicked.connect(self.next_match)
        self._match_label = QLabel("", self)
        self._hint = QLabel(
            "wheel/W/S zoom · drag/A/D pan · shift+drag selects a range · click a kernel to see its launch",
            self,
        )
        self._hint.setStyleSheet("color: #777;")
        self._info = QLabel("", self)
        self._info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._info.setWordWrap(True)

        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 4, 2)
        top.addWidget(self._search, 2)
        top.addWidget(self._prev_btn)
        top.addWidget(self._next_btn)
        top.addWidget(self._match_label)
        top.addStretch(1)
        top.addWidget(self._hint)
        mid = QHBoxLayout()
        mid.setContentsMargins(0, 0, 0, 0)
        mid.setSpacing(0)
        mid.addWidget(self._canvas, 1)
        mid.addWidget(self._vbar)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(0)
        lay.addLayout(top)
        lay.addLayout(mid, 1)
        lay.addWidget(self._info)
        self._info.setContentsMargins(6, 2, 6, 3)

        # One timer coalesces every redraw request (wheel bursts, drags, worker progress).
        self._redraw = QTimer(self)
        self._redraw.setSingleShot(True)
        self._redraw.setInterval(REDRAW_MS)
        self._redraw.timeout.connect(self._on_redraw_tick)
        self._update_info()
        self.destroyed.connect(_stopper(self))
        if n > SYNC_TRACE_MAX:
            self._start_worker()

    # -- public API ------------------------------------------------------------------------------

    @property
    def layout_rows(self) -> Layout:
        """The current lane layout (:class:`gpuviz.trace.lod.Layout`)."""
        return self._layout

    @property
    def canvas(self) -> QWidget:
        """The painted area (axis, lane labels, slices): send it input events, grab it."""
        return self._canvas

    def slice_position(self, row: int) -> QPointF | None:
        """The centre of slice ``row``'s visible part in :attr:`canvas` coordinates, or None
        when it is off screen."""
        s = self.trace.slices
        r = self._layout.row_of(int(s.track[row]), max(int(s.depth[row]), 0))
        if r < 0:
            return None
        a = max(float(s.start_ns[row]), self._t0)
        b = min(float(s.start_ns[row] + s.dur_ns[row]), self._t1)
        y = AXIS_PX + r * ROW_PX - self._scroll_px + ROW_PX / 2
        if b < a or y < AXIS_PX or y > self._canvas.height():
            return None
        return QPointF(float(self._x_of((a + b) / 2)), y)

    def x_of_time(self, t_ns: float) -> float:
        """The canvas x of a time (ns from the trace zero) in the current view."""
        return float(self._x_of(t_ns))

    def time_at_x(self, x: float) -> float:
        """The time (ns from the trace zero) at canvas x in the current view."""
        return self._time_at_x(x)

    @property
    def info_text(self) -> str:
        """The info line under the lanes (selection and range figures), as shown."""
        return self._info.text()

    @property
    def lod(self) -> TimelineLod:
        """The level-of-detail engine (pure numpy)."""
        return self._lod

    @property
    def lod_ready(self) -> bool:
        """Whether every row's pyramid is built (or small enough to build on demand)."""
        return not any(
            not self._lod.is_ready(k, self._layout.groups) for k in self._lod.unbuilt(self._layout)
        )

    def wait_ready(self, timeout_s: float = 60.0) -> bool:
        """Block (processing events) until :attr:`lod_ready`; for tests and benchmarks."""
        from PySide6.QtWidgets import QApplication

        deadline = time.monotonic() + timeout_s
        while not self.lod_ready or (self._worker is not None and self._worker.isRunning()):
            if time.monotonic() > deadline:
                return False
            if self._worker is None and not self.lod_ready:
                self._start_worker()
            QApplication.processEvents()
            time.sleep(0.002)
        QApplication.processEvents()
        return True

    def set_view_range(self, t0_ns: float, t1_ns: float) -> None:
        """Show ``[t0_ns, t1_ns)`` (ns from the trace zero); clamped to the trace and zoom limits."""
        self._set_view(float(t0_ns), float(t1_ns))

    def view_range(self) -> tuple[int, int]:
        """The visible range ``(t0_ns, t1_ns)``, ns from the trace zero."""
        return round(self._t0), round(self._t1)

    def highlight_rows(self, rows: npt.ArrayLike) -> None:
        """Outline these slice rows (an empty array clears)."""
        self._highlight_rows = np.asarray(rows, dtype=np.int64).ravel().copy()
        self._highlight = _rows_sorted_by_start(self.trace, self._highlight_rows)
        self._request_redraw()

    def highlighted_rows(self) -> npt.NDArray[np.int64]:
        """The rows last passed to :meth:`highlight_rows`."""
        return self._highlight_rows

    def search(self, text: str) -> int:
        """Highlight slices whose name contains ``text`` (case-insensitive); return the count."""
        text = (text or "").strip().lower()
        if text:
            ids = [i for i, nm in enumerate(self.trace.symbols.strings) if text in nm.lower()]
            rows = (
                np.flatnonzero(np.isin(self.trace.slices.name, np.asarray(ids, dtype=np.int32)))
                if ids
                else np.empty(0, dtype=np.int64)
            )
        else:
            rows = np.empty(0, dtype=np.int64)
        self._matches = _rows_sorted_by_start(self.trace, rows)
        self._match_index = -1
        if self._search.text().strip().lower() != text:
            self._search.blockSignals(True)
            self._search.setText(text)
            self._search.blockSignals(False)
        self._update_match_label()
        self._request_redraw()
        return len(self._matches[0])

    def match_rows(self) -> npt.NDArray[np.int64]:
        """The rows matching the last search, in time order."""
        return self._matches[0]

    def current_match(self) -> int:
        """Index of the current match in :meth:`match_rows`, or -1."""
        return self._match_index

    def next_match(self) -> int:
        """Move to (and select) the next match in time order; returns its index or -1."""
        return self._step_match(+1)

    def prev_match(self) -> int:
        """Move to (and select) the previous match; returns its index or -1."""
        return self._step_match(-1)

    def select_range(self, t0_ns: int, t1_ns: int) -> None:
        """Select ``[t0_ns, t1_ns)`` and show its figures; emits ``rangeSelected``."""
        t0, t1 = sorted((int(t0_ns), int(t1_ns)))
        self._range = (t0, t1)
        self._range_text = self._range_summary(t0, t1)
        self._update_info()
        self._request_redraw()
        self.rangeSelected.emit(t0, t1)

    def selected_range(self) -> tuple[int, int] | None:
        """The selected range, or None."""
        return self._range

    def clear_range(self) -> None:
        """Drop the range selection."""
        self._range = None
        self._range_text = ""
        self._update_info()
        self._request_redraw()

    def select_slice(self, row: int) -> None:
        """Select slice ``row`` (-1 clears) and link it to its launch or GPU work."""
        row = int(row)
        self._selected = row if 0 <= row < len(self.trace.slices) else -1
        self._linked = (
            self._links_of(self._selected) if self._selected >= 0 else np.empty(0, dtype=np.int64)
        )
        self._update_info()
        self._request_redraw()

    def selected_slice(self) -> int:
        """The selected slice row, or -1."""
        return self._selected

    def linked_rows(self) -> npt.NDArray[np.int64]:
        """The slices linked to the selection by correlation (launch ↔ GPU work)."""
        return self._linked

    def fold_group(self, index: int, folded: bool = True) -> None:
        """Fold (one row) or unfold group ``index`` of ``layout_rows.groups``."""
        fg = set(self._layout.folded_groups)
        (fg.add if folded else fg.discard)(int(index))
        self._relayout(fg, self._layout.folded_tracks)

    def fold_track(self, track: int, folded: bool = True) -> None:
        """Fold (one row) or unfold a track with several depth rows."""
        ft = set(self._layout.folded_tracks)
        (ft.add if folded else ft.discard)(int(track))
        self._relayout(self._layout.folded_groups, ft)

    def closeEvent(self, event: Any) -> None:
        self.stop_worker()
        super().closeEvent(event)

    def stop_worker(self) -> None:
        """Stop the pyramid worker thread, if any, and wait for it."""
        w = self._worker
        self._worker = None
        if w is not None:
            w.requestInterruption()
            w.wait()

    # -- view state -------------------------------------------------------------------------------

    def _area_width(self) -> int:
        return max(self._canvas.width() - GUTTER_PX, 1)

    def _area_height(self) -> int:
        return max(self._canvas.height() - AXIS_PX, 1)

    def _time_at_x(self, x: float) -> float:
        return self._t0 + (x - GUTTER_PX) * (self._t1 - self._t0) / self._area_width()

    def _x_of(self, t: float | np.ndarray) -> Any:
        return GUTTER_PX + (t - self._t0) * self._area_width() / (self._t1 - self._t0)

    def _set_view(self, t0: float, t1: float) -> None:
        if not (math.isfinite(t0) and math.isfinite(t1)):
            return
        if t1 < t0:
            t0, t1 = t1, t0
        span = max(t1 - t0, MIN_SPAN_NS)
        max_span = self._end_ns * 1.5 + 1000
        if span > max_span:
            c = (t0 + t1) / 2
            span = max_span
            t0 = c - span / 2
        lo, hi = -self._end_ns * 0.25 - 1000, self._end_ns * 1.25 + 1000
        t0 = min(max(t0, lo), hi - span)
        t1 = t0 + span
        if (t0, t1) != (self._t0, self._t1):
            self._t0, self._t1 = t0, t1
            self._request_redraw()

    def _zoom_at(self, factor: float, at: float | None = None) -> None:
        if at is None:
            at = (self._t0 + self._t1) / 2
        self._set_view(at - (at - self._t0) / factor, at + (self._t1 - at) / factor)

    def _pan_by_fraction(self, f: float) -> None:
        d = (self._t1 - self._t0) * f
        self._set_view(self._t0 + d, self._t1 + d)

    def _content_height(self) -> int:
        return len(self._layout) * ROW_PX + ROW_PX

    def _set_scroll(self, y: float) -> None:
        y = min(max(y, 0.0), max(self._content_height() - self._area_height(), 0))
        if y != self._scroll_px:
            self._scroll_px = y
            self._vbar.blockSignals(True)
            self._vbar.setValue(int(y))
            self._vbar.blockSignals(False)
            self._request_redraw()

    def _scroll_by(self, dy: float) -> None:
        self._set_scroll(self._scroll_px + dy)

    def _on_vbar(self, v: int) -> None:
        self._scroll_px = float(v)
        self._request_redraw()

    def _on_resized(self) -> None:
        self._vbar.setRange(0, max(self._content_height() - self._area_height(), 0))
        self._vbar.setPageStep(self._area_height())
        self._vbar.setSingleStep(ROW_PX)
        self._set_scroll(self._scroll_px)
        self._request_redraw()

    def _relayout(self, folded_groups: Any, folded_tracks: Any) -> None:
        self._layout = build_layout(
            self.trace, folded_groups, folded_tracks, depths=self._lod.depths
        )
        self._layout_version += 1
        self._on_resized()
        if not self.lod_ready and self._worker is None:
            self._start_worker()

    def _request_redraw(self) -> None:
        if not self._redraw.isActive():
            self._redraw.start()

    def _on_redraw_tick(self) -> None:
        self._canvas.update()
        vr = self.view_range()
        if vr != self._last_emitted:
            self._last_emitted = vr
            self.viewRangeChanged.emit(*vr)

    # -- level of detail worker ----------------------------------------------------------------

    def _visible_rows(self) -> range:
        first = max(int(self._scroll_px // ROW_PX), 0)
        last = min(int((self._scroll_px + self._area_height()) // ROW_PX) + 1, len(self._layout))
        return range(first, max(last, first))

    def _start_worker(self) -> None:
        if self._worker is not None and self._worker.isRunning():
            return
        vis = list(self._visible_rows())
        keys = self._lod.unbuilt(self._layout, vis)
        rest = [k for k in self._lod.unbuilt(self._layout) if k not in keys]
        keys = [k for k in keys + rest if not self._lod.is_ready(k, self._layout.groups)]
        if not keys:
            return
        w = QtLodWorker(self._lod, keys, self._layout.groups)
        w.progress.connect(self._on_lod_progress)
        w.finished.connect(self._on_worker_finished)
        self._worker = w
        w.start()

    def _on_lod_progress(self, done: int, total: int) -> None:
        self._progress = (done, total)
        self.lodProgress.emit(done, total)
        # Recompute the frame only when a visible row became drawable: while a big row builds,
        # a repaint just redraws the cached frame and the progress note (the GUI thread shares
        # the GIL and the CPUs with the worker, so every frame skipped keeps it responsive).
        groups = self._layout.groups
        ready = sum(
            1
            for r in self._visible_rows()
            if (k := self._layout.sources[r]) is not None and self._lod.is_ready(k, groups)
        )
        if ready != self._ready_rows:
            self._ready_rows = ready
            self._lod_version += 1
        self._request_redraw()

    def _on_worker_finished(self) -> None:
        w = self._worker
        if w is not None and not w.isRunning():
            self._worker = None
        self._lod_version += 1
        self._progress = (0, 0)
        self._request_redraw()
        if not self.lod_ready:
            self._start_worker()

    # -- selection, links, search ---------------------------------------------------------------

    def _links_of(self, row: int) -> npt.NDArray[np.int64]:
        s = self.trace.slices
        kind = int(s.kind[row])
        if kind in GPU_ACTIVITY_KINDS:
            got = self.trace.launches_of([row])
            return got[got >= 0]
        if kind == Kind.RUNTIME and int(s.correlation[row]) >= 0:
            idx = self._gpu_corr()
            rank = int(self.trace.tracks.rank[s.track[row]])
            key = (rank + 1) << 44 | (int(s.correlation[row]) & ((1 << 44) - 1))
            a = int(np.searchsorted(idx["keys"], key, side="left"))
            b = int(np.searchsorted(idx["keys"], key, side="right"))
            return idx["rows"][a:b].copy()
        return np.empty(0, dtype=np.int64)

    def _gpu_corr(self) -> dict[str, np.ndarray]:
        if self._gpu_corr_index is None:
            s = self.trace.slices
            rows = np.flatnonzero(self.trace.gpu_activity_mask() & (s.correlation >= 0))
            rank = self.trace.tracks.rank[s.track[rows]].astype(np.int64)
            key = (rank + 1) << 44 | (s.correlation[rows] & ((1 << 44) - 1))
            order = np.argsort(key, kind="stable")
            self._gpu_corr_index = {"keys": key[order], "rows": rows[order]}
        return self._gpu_corr_index

    def _step_match(self, step: int) -> int:
        rows = self._matches[0]
        if len(rows) == 0:
            self._match_index = -1
            self._update_match_label()
            return -1
        if self._match_index < 0:
            # Start from the view: the first match at or after its left edge (or before it).
            starts = self._matches[1]
            i = int(np.searchsorted(starts, self._t0, side="left"))
            self._match_index = (i if step > 0 else i - 1) % len(rows)
        else:
            self._match_index = (self._match_index + step) % len(rows)
        row = int(rows[self._match_index])
        self._focus_slice(row)
        self.select_slice(row)
        self._update_match_label()
        return self._match_index

    def _focus_slice(self, row: int) -> None:
        s = self.trace.slices
        start = float(s.start_ns[row])
        dur = float(s.dur_ns[row])
        span = self._t1 - self._t0
        if dur > 0.8 * span:
            span = dur / 0.6
        elif dur * self._area_width() / span < 2:
            # Too small to see at this zoom: zoom in so it is about 1/20 of the view.
            span = max(dur * 20, MIN_SPAN_NS)
        c = start + dur / 2
        self._set_view(c - span / 2, c + span / 2)
        d = max(int(s.depth[row]), 0)
        r = self._layout.row_of(int(s.track[row]), d)
        if r >= 0:
            y = r * ROW_PX
            if y < self._scroll_px or y + ROW_PX > self._scroll_px + self._area_height():
                self._set_scroll(y - self._area_height() / 3)

    def _update_match_label(self) -> None:
        n = len(self._matches[0])
        if not self._search.text().strip():
            self._match_label.setText("")
        elif self._match_index >= 0:
            self._match_label.setText(f"{self._match_index + 1} of {n:,}")
        else:
            self._match_label.setText(f"{n:,} matches" if n != 1 else "1 match")

    def _on_search_text(self, text: str) -> None:
        self._search_timer.start()

    def _on_search_enter(self) -> None:
        if self._search_timer.isActive():
            self._search_timer.stop()
            self.search(self._search.text())
        self.next_match()

    # -- info line, tooltips ---------------------------------------------------------------------

    def _range_summary(self, t0: int, t1: int) -> str:
        try:
            from gpuviz.analysis.ranges import range_stats

            st = range_stats(self.trace, t0, t1)
        except Exception as exc:  # an analysis bug must not break the selection
            return f"Range {format_ns(t1 - t0)} (figures unavailable: {exc})"
        parts = [
            f"<b>Range {html.escape(format_ns(st.duration_ns))}</b> "
            f"({html.escape(format_at(t0, (t1 - t0) / 100))} → "
            f"{html.escape(format_at(t1, (t1 - t0) / 100))})",
            f"{st.kernels:,} kernel{'' if st.kernels == 1 else 's'} "
            f"({html.escape(format_ns(st.kernel_ns))})",
        ]
        if st.memcpy or st.memset:
            parts.append(f"{st.memcpy:,} copies, {st.memset:,} sets")
        busy = ", ".join(
            f"GPU {d.device}{'' if d.rank is None else f' r{d.rank}'}: "
            f"{html.escape(format_ns(d.busy_ns))} ({d.utilization:.0%})"
            for d in st.devices[:6]
        )
        parts.append(f"busy {html.escape(format_ns(st.busy_ns))}" + (f" [{busy}]" if busy else ""))
        parts.append(
            f"overlap: compute+copy {html.escape(format_ns(st.compute_copy_ns))}, "
            f"multi-stream {html.escape(format_ns(st.multi_stream_ns))}"
        )
        return " · ".join(parts)

    def _slice_where(self, row: int) -> str:
        tr = self.trace.tracks
        t = int(self.trace.slices.track[row])
        kind = int(tr.kind[t])
        rank = int(tr.rank[t])
        rk = f"rank {rank} · " if rank >= 0 else ""
        if kind in (TrackKind.GPU_STREAM, TrackKind.GPU_ANNOTATION):
            return f"{rk}GPU {int(tr.device[t])} · stream {int(tr.stream[t])}"
        label = self.trace.track_label(t) or f"thread {id_text(self.trace, int(tr.tid[t]))}"
        return f"{rk}pid {id_text(self.trace, int(tr.pid[t]))} · {label}"

    def describe_slice(self, row: int, rich: bool = True) -> str:
        """The hover text of slice ``row``: name, category, duration, start, lane, main args."""
        s = self.trace.slices
        name = self.trace.name_of(row)
        kind = Kind(int(s.kind[row]))
        cat = KIND_CATEGORIES.get(kind, self.trace.symbols[int(s.cat[row])])
        esc = html.escape if rich else str
        lines = [
            f"<b>{esc(_short(name, 200))}</b>" if rich else name,
            f"{esc(cat)} · {esc(format_ns(float(s.dur_ns[row])))} · starts at "
            f"{esc(format_at(float(s.start_ns[row]), max(float(s.dur_ns[row]) / 10, 1.0)))}",
            esc(self._slice_where(row)),
        ]
        try:
            args = self.trace.args.get(int(s.args[row]))
        except Exception:
            args = {}
        shown = [(k, args[k]) for k in _MAIN_ARGS if k in args]
        if not shown:
            shown = list(args.items())[:6]
        for k, v in shown[:8]:
            text = str(v)
            if len(text) > 80:
                text = text[:77] + "…"
            lines.append(f"{esc(k)}: {esc(text)}")
        return "<br>".join(lines) if rich else "\n".join(lines)

    def _update_info(self) -> None:
        parts = []
        if self._selected >= 0:
            s = self.trace.slices
            r = self._selected
            txt = (
                f"<b>{html.escape(_short(self.trace.name_of(r)))}</b> · "
                f"{html.escape(format_ns(float(s.dur_ns[r])))} · {html.escape(self._slice_where(r))}"
            )
            if len(self._linked):
                lk = int(self._linked[0])
                kind = "launch" if int(s.kind[r]) in GPU_ACTIVITY_KINDS else "GPU work"
                txt += (
                    f" — {kind}: {html.escape(_short(self.trace.name_of(lk)))} "
                    f"({html.escape(self._slice_where(lk))})"
                )
                if int(s.kind[r]) in GPU_ACTIVITY_KINDS:
                    lat = float(s.start_ns[r]) - float(s.start_ns[lk])
                    txt += f", launch → start {html.escape(format_ns(lat))}"
            parts.append(txt)
        if self._range_text:
            parts.append(self._range_text)
        self._info.setText(
            "<br>".join(parts)
            if parts
            else "<span style='color:#777'>Click a slice for details; "
            "shift+drag to measure a range.</span>"
        )

    def _on_hover(self, pos: QPointF, global_pos: QPoint) -> None:
        row, count = self._hit(pos)
        if row < 0:
            QToolTip.hideText()
            return
        text = self.describe_slice(row)
        if count > 1:
            text += (
                f"<br><i>{count - 1:,} more slice{'s' if count > 2 else ''} under the cursor</i>"
            )
        QToolTip.showText(global_pos, text, self._canvas)

    def _hit(self, pos: QPointF) -> tuple[int, int]:
        if pos.x() < GUTTER_PX or pos.y() < AXIS_PX:
            return -1, 0
        r = int((pos.y() - AXIS_PX + self._scroll_px) // ROW_PX)
        if not 0 <= r < len(self._layout):
            return -1, 0
        px_ns = (self._t1 - self._t0) / self._area_width()
        return self._lod.slices_near(self._layout, r, self._time_at_x(pos.x()), 2 * px_ns)

    def _on_click(self, pos: QPointF) -> None:
        row, _ = self._hit(pos)
        self.select_slice(row)
        if row >= 0:
            self.sliceClicked.emit(row)

    def _on_gutter_click(self, pos: QPointF) -> None:
        if pos.y() < AXIS_PX:
            return
        r = int((pos.y() - AXIS_PX + self._scroll_px) // ROW_PX)
        if not 0 <= r < len(self._layout):
            return
        lay = self._layout
        if lay.kind[r] == RowKind.GROUP:
            g = int(lay.group[r])
            self.fold_group(g, g not in lay.folded_groups)
        else:
            t = int(lay.track[r])
            if lay.foldable_track(t) and lay.labels[r]:
                self.fold_track(t, t not in lay.folded_tracks)

    def _set_range_live(self, t0: float, t1: float) -> None:
        a, b = sorted((t0, t1))
        self._range = (int(a), int(b))
        self._range_text = f"<b>Range {html.escape(format_ns(b - a))}</b> (release to measure)"
        self._update_info()
        self._request_redraw()

    # -- painting -------------------------------------------------------------------------------

    def current_frame(self) -> Frame:
        """The frame for the current view (computed when the view or layout changed)."""
        rows = self._visible_rows()
        key = (
            self._t0,
            self._t1,
            self._area_width(),
            rows.start,
            rows.stop,
            self._layout_version,
            self._lod_version,
        )
        if self._frame is None or self._frame_key != key:
            self._frame = self._lod.frame(
                self._layout, rows, math.floor(self._t0), math.ceil(self._t1), self._area_width()
            )
            self._frame_key = key
            if self._frame.pending_rows and self._worker is None:
                self._start_worker()
        return self._frame

    def _slice_layer(self, frame: Frame) -> tuple[QImage, float]:
        # The slices of the visible rows as one image, and the y where it goes. Painting a
        # frame's rectangles one by one costs a fill call per scan line in Qt's raster engine
        # (10+ ms for the ~20k rectangles of a real 1M-kernel trace's full view); one row of
        # pixels per lane painted in numpy, copied down the lane's height, costs about
        # pixels × lanes however many rectangles there are. Cached per view, like the frame.
        key = (self._frame_key, self._scroll_px, self._canvas.height())
        if self._px_cache is not None and self._px_cache[0] == key:
            return self._px_cache[1], self._px_cache[2]
        rows = self._visible_rows()
        n_rows = max(len(rows), 1)
        width = self._area_width()
        parts = [(k, arr) for k, arr in frame.rects.items() if len(arr)]
        if parts:
            buf = np.concatenate([arr for _, arr in parts])
            lut = self._argb
            keys = np.concatenate(
                [
                    np.full(len(arr), k if 0 <= k < len(lut) else 0, dtype=np.int64)
                    for k, arr in parts
                ]
            )
            sx = width / ((self._t1 - self._t0) * 1e-3)
            x0 = (buf[:, 0] - self._t0 * 1e-3) * sx
            lines = raster_rows(
                x0,
                x0 + buf[:, 2] * sx,
                np.floor(buf[:, 1]).astype(np.int64) - rows.start,
                lut[keys],
                n_rows,
                width,
            )
        else:
            lines = np.zeros((n_rows, width), dtype=np.uint32)
        # Each lane: transparent gap, its row of pixels repeated over the bar's height, gap.
        top = round((1.0 - ROW_HEIGHT) / 2 * ROW_PX)
        bottom = round((1.0 + ROW_HEIGHT) / 2 * ROW_PX)
        pix = np.zeros((n_rows, ROW_PX, width), dtype=np.uint32)
        pix[:, top:bottom, :] = lines[:, None, :]
        pix = pix.reshape(n_rows * ROW_PX, width)
        img = argb_image(pix)
        y = AXIS_PX + rows.start * ROW_PX - self._scroll_px
        self._px_cache = (key, img, y, pix)  # pix: the image's pixels, kept alive with it
        return img, y

    def _static_layer(self, w: int, h: int) -> QImage:
        # Background, row bands and lane labels change only on scroll, resize or fold: draw
        # them once into an image and blit it, instead of re-laying out text every frame.
        key = (w, h, self._scroll_px, self._layout_version, self.devicePixelRatioF())
        if self._static is not None and self._static[0] == key:
            return self._static[1]
        dpr = self.devicePixelRatioF()
        img = QImage(round(w * dpr), round(h * dpr), QImage.Format.Format_ARGB32_Premultiplied)
        img.setDevicePixelRatio(dpr)
        img.fill(QColor("#ffffff"))
        p = QPainter(img)
        try:
            rows = self._visible_rows()
            lay = self._layout
            p.setPen(_NO_PEN)
            bands_hdr, bands_alt = [], []
            for r in rows:
                y = AXIS_PX + r * ROW_PX - self._scroll_px
                if lay.kind[r] == RowKind.GROUP:
                    bands_hdr.append((0.0, y, float(w), float(ROW_PX)))
                elif int(lay.track[r]) % 2 == 1:
                    bands_alt.append((GUTTER_PX, y, float(w - GUTTER_PX), float(ROW_PX)))
            if bands_alt:
                p.setBrush(QColor("#f6f8fa"))
                draw_rects(p, np.array(bands_alt, dtype=np.float64))
            if bands_hdr:
                p.setBrush(QColor("#e9edf2"))
                draw_rects(p, np.array(bands_hdr, dtype=np.float64))
            self._paint_gutter(p, rows, h)
        finally:
            p.end()
        self._static = (key, img)
        return img

    def _paint(self, p: QPainter, w: int, h: int) -> None:
        t_start = time.perf_counter()
        self.paint_count += 1
        p.drawImage(0, 0, self._static_layer(w, h))
        area = QRectF(GUTTER_PX, AXIS_PX, w - GUTTER_PX, h - AXIS_PX)
        # Own light grid (pyqtgraph's showGrid is too slow on every pan frame).
        tick_pos, tick_labels = ticks(self._t0, self._t1, self._area_width())
        xs = self._x_of(tick_pos)
        p.setPen(QPen(QColor("#e2e5e9"), 1))
        for x in xs.tolist():
            p.drawLine(QPointF(x, AXIS_PX), QPointF(x, h))
        # Slices.
        frame = self.current_frame()
        p.save()
        p.setClipRect(area)
        p.setPen(_NO_PEN)
        img, y = self._slice_layer(frame)
        p.drawImage(QPointF(GUTTER_PX, y), img)
        self._paint_pending(p, frame, w)
        self._paint_labels(p, frame)
        self._paint_highlights(p, self._highlight, QColor("#ff8c00"), 2)
        self._paint_highlights(p, self._matches, QColor("#e0218a"), 2)
        self._paint_selection(p)
        self._paint_range(p, h)
        p.restore()
        self._paint_axis(p, w, xs, tick_labels)
        self.last_paint_ms = (time.perf_counter() - t_start) * 1e3

    def _paint_pending(self, p: QPainter, frame: Frame, w: int) -> None:
        if not frame.pending_rows:
            return
        done, total = self._progress
        msg = "building level of detail…" + (f" {done / total:.0%}" if total else "")
        # A plain band: a hatched brush costs tens of ms across a wide window.
        p.setBrush(QColor("#eceef1"))
        p.setPen(_NO_PEN)
        ys = [AXIS_PX + r * ROW_PX - self._scroll_px for r in frame.pending_rows]
        draw_rects(
            p,
            np.array([(GUTTER_PX, y + 2, w - GUTTER_PX, ROW_PX - 4) for y in ys], dtype=np.float64),
        )
        p.setFont(self._font)
        p.setPen(QColor("#6b7280"))
        for y in ys:
            p.drawText(QPointF(GUTTER_PX + 6, y + self._baseline), msg)

    def _paint_labels(self, p: QPainter, frame: Frame) -> None:
        n = len(frame.label_rows)
        if n == 0:
            return
        p.setFont(self._font)
        p.setPen(QColor("#1f2328"))
        fm = QFontMetrics(self._font)
        sx = self._area_width() / ((self._t1 - self._t0) * 1e-3)
        x = GUTTER_PX + (frame.label_x_us - self._t0 * 1e-3) * sx
        wpx = frame.label_w_us * sx
        x0 = np.maximum(x, GUTTER_PX)
        x1 = np.minimum(x + wpx, GUTTER_PX + self._area_width())
        avail = ((x1 - x0 - 6) // 4 * 4).astype(np.int64)  # 4 px steps: the elide cache hits
        y = AXIS_PX + frame.label_y * ROW_PX - self._scroll_px + self._baseline
        ok = np.flatnonzero(avail >= 24)
        ok = ok[np.argsort(-avail[ok], kind="stable")][:300]  # text is a frame's costly part
        syms = self.trace.symbols
        name_ids = self.trace.slices.name[frame.label_rows[ok]].tolist()
        cache = self._elided
        if len(cache) > 20_000:
            cache.clear()
        for i, nid in zip(ok.tolist(), name_ids):
            a = int(avail[i])
            text = cache.get((nid, a))
            if text is None:
                text = fm.elidedText(syms[nid], _ELIDE_RIGHT, a)
                cache[(nid, a)] = text
            if text and text != "…":
                p.drawText(QPointF(x0[i] + 3, y[i]), text)

    def _rows_px(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        s = self.trace.slices
        tracks = s.track[rows]
        depths = np.maximum(s.depth[rows], 0)
        disp = self._layout.rows_of(tracks, depths)
        sx = self._area_width() / (self._t1 - self._t0)
        x = GUTTER_PX + (s.start_ns[rows] - self._t0) * sx
        wpx = np.maximum(s.dur_ns[rows] * sx, 2.0)
        y = AXIS_PX + disp * ROW_PX - self._scroll_px
        return x, wpx, y.astype(np.float64), disp

    def _paint_highlights(
        self, p: QPainter, hl: tuple[Any, ...], colour: QColor, width: int
    ) -> None:
        rects = self._highlight_rects(hl)
        if len(rects):
            p.setBrush(_NO_BRUSH)
            p.setPen(QPen(colour, width))
            draw_rects(p, rects)

    def _highlight_rects(self, hl: tuple[Any, ...]) -> np.ndarray:
        # Outlines of highlighted slices in view, in pixels; cached per view like the frame.
        key = (
            id(hl),
            self._t0,
            self._t1,
            self._scroll_px,
            self._canvas.width(),
            self._canvas.height(),
            self._layout_version,
        )
        got = self._hl_cache.get(id(hl))
        if got is not None and got[0] == key:
            return got[1]
        rows, s, e, reach = hl
        out = np.empty((0, 4), dtype=np.float64)
        i1 = int(np.searchsorted(s, self._t1, side="left"))
        i0 = min(int(np.searchsorted(reach, self._t0, side="right")), i1)
        vis = rows[i0:i1][e[i0:i1] > self._t0]
        if len(vis):
            x, wpx, y, disp = self._rows_px(vis)
            ok = (disp >= 0) & (y > AXIS_PX - ROW_PX) & (y < self._canvas.height())
            x, wpx, y, disp = x[ok], wpx[ok], y[ok], disp[ok]
            narrow = wpx < 3
            if len(x) > HIGHLIGHT_MAX and narrow.any():
                # Past a few thousand marks only one per pixel column and row can be seen:
                # mark an occupancy grid (no sort), keep wide slices as they are.
                n_cols = self._canvas.width() + 1
                col = np.clip(x[narrow], 0, n_cols - 1).astype(np.int64)
                d0 = int(disp[narrow].min())
                rowpos = disp[narrow] - d0
                grid = np.zeros((int(rowpos.max()) + 1) * n_cols, dtype=bool)
                grid[rowpos * n_cols + col] = True
                cells = np.flatnonzero(grid)
                cy = AXIS_PX + (cells // n_cols + d0) * ROW_PX - self._scroll_px
                x = np.concatenate([(cells % n_cols).astype(np.float64), x[~narrow]])
                wpx = np.concatenate([np.full(len(cells), 2.0), wpx[~narrow]])
                y = np.concatenate([cy.astype(np.float64), y[~narrow]])
            x0 = np.maximum(x, GUTTER_PX - 4)
            x1 = np.minimum(x + wpx, self._canvas.width() + 4)
            out = np.ascontiguousarray(
                np.stack(
                    [x0, y + 1, np.maximum(x1 - x0, 2.0), np.full(len(x0), ROW_PX - 2.0)], axis=1
                )
            )
        self._hl_cache[id(hl)] = (key, out)
        return out

    def _paint_selection(self, p: QPainter) -> None:
        if self._selected < 0:
            return
        sel = np.asarray([self._selected], dtype=np.int64)
        x, wpx, y, disp = self._rows_px(sel)
        p.setBrush(_NO_BRUSH)
        if disp[0] >= 0:
            p.setPen(QPen(QColor("#111111"), 2))
            self._outline(p, x[0], wpx[0], y[0])
        if len(self._linked) == 0 or disp[0] < 0:
            return
        lx, lw, ly, ld = self._rows_px(self._linked[:50])
        p.setPen(QPen(QColor("#d1242f"), 2))
        gpu = int(self.trace.slices.kind[self._selected]) in GPU_ACTIVITY_KINDS
        for i in range(len(lx)):
            if ld[i] < 0:
                continue
            p.setBrush(_NO_BRUSH)
            self._outline(p, lx[i], lw[i], ly[i])
            # The arrow goes from the end of the launch to the start of the GPU work.
            if gpu:
                a = QPointF(lx[i] + lw[i], ly[i] + ROW_PX / 2)
                b = QPointF(x[0], y[0] + ROW_PX / 2)
            else:
                a = QPointF(x[0] + wpx[0], y[0] + ROW_PX / 2)
                b = QPointF(lx[i], ly[i] + ROW_PX / 2)
            self._arrow(p, a, b)

    def _outline(self, p: QPainter, x: float, w: float, y: float) -> None:
        # Only the visible part: an off-screen slice must not leave a box at the edge.
        x0, x1 = max(x, GUTTER_PX - 4.0), min(x + max(w, 3.0), self._canvas.width() + 4.0)
        if x1 > x0:
            p.drawRect(QRectF(x0, y + 0.5, x1 - x0, ROW_PX - 1))

    def _arrow(self, p: QPainter, a: QPointF, b: QPointF) -> None:
        # Cut the segment to a box a little larger than the canvas, keeping its slope (far-off
        # coordinates upset the rasterizer); draw the head only when the end is on screen.
        lo, hi = GUTTER_PX - 50.0, self._canvas.width() + 50.0
        ax, ay, bx, by = a.x(), a.y(), b.x(), b.y()
        if (ax < lo and bx < lo) or (ax > hi and bx > hi):
            return

        def cut(px: float, py: float, qx: float, qy: float) -> tuple[float, float]:
            if px < lo or px > hi:
                edge = lo if px < lo else hi
                t = (edge - qx) / (px - qx) if px != qx else 0.0
                return edge, qy + (py - qy) * t
            return px, py

        ax, ay = cut(ax, ay, bx, by)
        bx2, by2 = cut(bx, by, ax, ay)
        p.drawLine(QPointF(ax, ay), QPointF(bx2, by2))
        if (bx2, by2) != (bx, by):
            return
        b = QPointF(bx, by)
        ang = math.atan2(by - ay, bx - ax)
        head = QPolygonF(
            [
                b,
                QPointF(b.x() - 9 * math.cos(ang - 0.4), b.y() - 9 * math.sin(ang - 0.4)),
                QPointF(b.x() - 9 * math.cos(ang + 0.4), b.y() - 9 * math.sin(ang + 0.4)),
            ]
        )
        p.setBrush(QColor("#d1242f"))
        p.drawPolygon(head)

    def _paint_range(self, p: QPainter, h: int) -> None:
        if self._range is None:
            return
        x0 = max(float(self._x_of(self._range[0])), GUTTER_PX - 2.0)
        x1 = min(float(self._x_of(self._range[1])), self._canvas.width() + 2.0)
        if x1 < GUTTER_PX or x0 > self._canvas.width():
            return
        p.setPen(_NO_PEN)
        p.setBrush(QColor(40, 110, 220, 40))
        p.drawRect(QRectF(x0, AXIS_PX, max(x1 - x0, 1.0), h - AXIS_PX))
        p.setPen(QPen(QColor(40, 110, 220, 200), 1))
        p.drawLine(QPointF(x0, AXIS_PX), QPointF(x0, h))
        p.drawLine(QPointF(x1, AXIS_PX), QPointF(x1, h))

    def _paint_axis(self, p: QPainter, w: int, xs: np.ndarray, labels: list[str]) -> None:
        p.setPen(_NO_PEN)
        p.setBrush(QColor("#f3f5f7"))
        p.drawRect(QRectF(0, 0, w, AXIS_PX))
        p.setPen(QPen(QColor("#c9ced4"), 1))
        p.drawLine(QPointF(0, AXIS_PX - 0.5), QPointF(w, AXIS_PX - 0.5))
        p.setFont(self._font)
        p.setPen(QColor("#444c56"))
        for x, text in zip(xs.tolist(), labels):
            if x < GUTTER_PX - 1:
                continue
            p.drawLine(QPointF(x, AXIS_PX - 6), QPointF(x, AXIS_PX))
            p.drawText(QRectF(x + 3, 0, 120, AXIS_PX - 4), _VCENTER, text)
        if self._range is not None:
            a, b = self._range
            x0, x1 = float(self._x_of(a)), float(self._x_of(b))
            xm = min(max((x0 + x1) / 2, GUTTER_PX + 60), w - 60)
            text = format_ns(b - a)
            p.setPen(_NO_PEN)
            p.setBrush(QColor(40, 110, 220))
            r = QRectF(xm - 50, 3, 100, AXIS_PX - 6)
            p.drawRoundedRect(r, 4, 4)
            p.setPen(QColor("#ffffff"))
            p.setFont(self._bold)
            p.drawText(r, Qt.AlignmentFlag.AlignCenter, text)
        # Top-left corner: what the axis counts from.
        p.setPen(_NO_PEN)
        p.setBrush(QColor("#e9edf2"))
        p.drawRect(QRectF(0, 0, GUTTER_PX, AXIS_PX))
        p.setPen(QColor("#57606a"))
        p.setFont(self._font)
        span = format_ns(self._t1 - self._t0)
        p.drawText(
            QRectF(6, 0, GUTTER_PX - 8, AXIS_PX), _VCENTER, f"time from trace start · view {span}"
        )

    def _paint_gutter(self, p: QPainter, rows: range, h: int) -> None:
        lay = self._layout
        p.save()
        p.setClipRect(QRectF(0, AXIS_PX, GUTTER_PX, h - AXIS_PX))
        p.setPen(_NO_PEN)
        p.setBrush(QColor("#fbfbfc"))
        p.drawRect(QRectF(0, AXIS_PX, GUTTER_PX, h - AXIS_PX))
        fm = QFontMetrics(self._font)
        for r in rows:
            y = AXIS_PX + r * ROW_PX - self._scroll_px
            label = lay.labels[r]
            if lay.kind[r] == RowKind.GROUP:
                p.setPen(_NO_PEN)
                p.setBrush(QColor("#e9edf2"))
                p.drawRect(QRectF(0, y, GUTTER_PX, ROW_PX))
                folded = int(lay.group[r]) in lay.folded_groups
                self._triangle(p, 6, y, folded)
                p.setFont(self._bold)
                p.setPen(QColor("#24292f"))
                text = QFontMetrics(self._bold).elidedText(label, _ELIDE_RIGHT, GUTTER_PX - 24)
                p.drawText(QRectF(20, y, GUTTER_PX - 22, ROW_PX), _VCENTER, text)
                continue
            if not label:
                continue
            t = int(lay.track[r])
            indent = 20
            if lay.foldable_track(t):
                self._triangle(p, 20, y, t in lay.folded_tracks)
                indent = 34
            p.setFont(self._font)
            kind = int(self.trace.tracks.kind[t])
            ann = kind in (TrackKind.GPU_ANNOTATION, TrackKind.CPU_ANNOTATION)
            p.setPen(QColor("#6e7781" if ann else "#24292f"))
            text = fm.elidedText(label, _ELIDE_RIGHT, GUTTER_PX - indent - 4)
            p.drawText(QRectF(indent, y, GUTTER_PX - indent - 2, ROW_PX), _VCENTER, text)
        p.restore()
        p.setPen(QPen(QColor("#c9ced4"), 1))
        p.drawLine(QPointF(GUTTER_PX - 0.5, 0), QPointF(GUTTER_PX - 0.5, h))

    def _triangle(self, p: QPainter, x: float, y: float, folded: bool) -> None:
        c = y + ROW_PX / 2
        if folded:
            pts = [QPointF(x + 2, c - 4.5), QPointF(x + 8, c), QPointF(x + 2, c + 4.5)]
        else:
            pts = [QPointF(x, c - 3), QPointF(x + 9, c - 3), QPointF(x + 4.5, c + 3)]
        p.setPen(_NO_PEN)
        p.setBrush(QColor("#57606a"))
        p.drawPolygon(QPolygonF(pts))


def _short(name: str, n: int = 140) -> str:
    # C++ template kernel names run to hundreds of characters: keep the info line readable.
    return name if len(name) <= n else name[: n - 1] + "…"


def _max_end(start: np.ndarray, dur: np.ndarray, chunk: int = 1 << 18) -> int:
    # In chunks: no temporary as big as the trace on the GUI thread.
    return max(
        int((start[i : i + chunk] + dur[i : i + chunk]).max()) for i in range(0, len(start), chunk)
    )


def _stopper(owner: QtTimeline) -> Any:
    # Called when the widget is destroyed: a running QThread whose object dies aborts the
    # process, so stop it first. Captures only the worker getter, not the widget.
    def stop(*_: Any) -> None:
        try:
            owner.stop_worker()
        except RuntimeError:  # the C++ side is already gone
            pass

    return stop
