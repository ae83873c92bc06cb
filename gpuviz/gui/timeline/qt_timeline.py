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
``expand_rank(rank, expanded)``, ``expanded_ranks()``, ``collapse_ranks()``, ``expand_ranks()``
    Ranks of a multi-rank trace: a collapsed rank is one summary lane (its GPU busy time as a
    density strip, compute and communication told apart); more than four ranks open collapsed.
    Clicking a summary lane, or its label, expands the rank; the label collapses it again.
``set_rank_filter(text) -> frozenset | None``, ``rank_filter_text()``
    Show only some ranks (``"0-7,12"``; blank shows all); a bad filter raises ValueError
    (typed in the filter box, it is outlined in red and keeps the last good one).
``show_rank_range(rank, t0_ns, t1_ns, slice_row=-1)``
    Jump there: show and expand ``rank``, scroll its lanes into view, show the range and
    select it (and the slice, when given). The Ranks view's clicks land here.
``wait_ready()`` (tests, benchmarks), ``lod_ready`` (bool), ``stop_worker()``
    Whether every level-of-detail pyramid has been built; stop the builder thread (``close()``
    does it, and so does the widget's destruction).
``describe_slice(row)``, ``hover_text(row)``, ``info_text``, ``canvas``, ``slice_position(row)``,
``x_of_time(t)``, ``time_at_x(x)``, ``current_match()``, ``current_frame()``
    Hover text, the info line, the painted child widget and its coordinates (for tests and
    screenshots).
Signals (ints are ns relative to the trace zero; declared ``qlonglong`` because ns overflow
32 bits): ``rangeSelected(int, int)``, ``sliceClicked(int)`` (slice row),
``viewRangeChanged(int, int)`` (rate-limited to the redraw timer), ``lodProgress(int, int)``.

``viewport`` (:class:`~gpuviz.gui.timeline.viewport.Viewport`), ``zoom_at(factor, at)``,
``pan_by_fraction(f)``, ``set_scroll(y)``, ``scroll_by(dy)``, ``preview_range(t0, t1)``
    The view's geometry, and the changes the canvas's input makes.
``layout_version``, ``highlight_set``, ``match_set``, ``lod_progress``, ``painter``
    What the painter reads.

The parts, each in its own module: the canvas and its input
(:mod:`~gpuviz.gui.timeline.qt_timeline_canvas`: wheel zooms around the mouse, drag pans,
shift+drag or a drag on the axis measures a range, W/S/A/D, Esc), painting
(:mod:`~gpuviz.gui.timeline.qt_timeline_painter`), the view's geometry
(:mod:`~gpuviz.gui.timeline.viewport`), highlights, search matches and launch links
(:mod:`~gpuviz.gui.timeline.marks`), and the hover text, info line and range figures
(:mod:`~gpuviz.gui.timeline.details`), search (:mod:`~gpuviz.gui.timeline.qt_timeline_search`),
the rank lanes (:mod:`~gpuviz.gui.timeline.qt_timeline_ranks`), the pyramid worker and frame
(:mod:`~gpuviz.gui.timeline.qt_timeline_lod`), and hover, clicks and the info line
(:mod:`~gpuviz.gui.timeline.qt_timeline_pointer`). Click a lane label's triangle to fold it; hover shows a
slice's details.

Drawing: :class:`gpuviz.trace.lod.TimelineLod` gives per-colour rectangle arrays for the visible
rows at pixel resolution, which the painter turns into one image per view. Frames are cached
per view, and a pan within three view widths reuses each row's LOD window
(:class:`~gpuviz.trace.lod.TimelineLod`).
Redraws go through one timer (at most about 60 per second), never once per input event.
Level-of-detail pyramids of big rows are built by a worker ``QThread``
(:class:`~gpuviz.gui.timeline.qt_lod_worker.QtLodWorker`); rows not built yet show a
"building" band until it is done.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
from PySide6.QtCore import QPointF, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QScrollBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from gpuviz.gui.qt_text import WRAP_MIN_WIDTH, wrap_label
from gpuviz.gui.timeline.details import (
    live_range_text,
    range_summary,
)
from gpuviz.gui.timeline.marks import RowSet, SliceLinks
from gpuviz.gui.timeline.qt_lod_worker import QtLodWorker
from gpuviz.gui.timeline.qt_timeline_canvas import PAN_STEP, ZOOM_STEP, QtTimelineCanvas
from gpuviz.gui.timeline.qt_timeline_lod import LOD_REFRESH_S, TimelineLodMixin
from gpuviz.gui.timeline.qt_timeline_painter import HIGHLIGHT_MAX, QtTimelinePainter
from gpuviz.gui.timeline.qt_timeline_pointer import TimelinePointerMixin
from gpuviz.gui.timeline.qt_timeline_ranks import RANK_FILTER_TIP, TimelineRanksMixin
from gpuviz.gui.timeline.qt_timeline_search import TimelineSearchMixin
from gpuviz.gui.timeline.viewport import AXIS_PX, GUTTER_PX, MIN_SPAN_NS, ROW_PX, Viewport
from gpuviz.trace.lanes import (
    Layout,
    build_layout,
    default_collapsed_ranks,
    trace_ranks,
)
from gpuviz.trace.lod import Frame, TimelineLod
from gpuviz.trace.model import Trace

REDRAW_MS = 16
FIRST_PAINT_WAIT_MS = 500
"""The pyramid worker starts after the first paint, or this long after the widget is built."""
SYNC_TRACE_MAX = (
    60_000  # traces up to this many slices build their pyramids on the GUI thread (~30 ms)
)


class QtTimeline(
    TimelineSearchMixin, TimelineRanksMixin, TimelineLodMixin, TimelinePointerMixin, QWidget
):
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
        end_ns = float(trace.slices_end_ns) if len(s) else 1000.0
        n = len(s)
        self._lod = TimelineLod(
            trace,
            sync_build_max=(n if n <= SYNC_TRACE_MAX else 2_000),
            comm_names=comm_name_mask(trace),
        )
        quiet_btn = self._make_quiet_button()
        self._layout = build_layout(
            trace,
            depths=self._lod.depths,
            collapsed_ranks=default_collapsed_ranks(trace_ranks(trace)),
            hidden_tracks=self.hidden_tracks(),
        )
        self._rank_matches: dict[int, int] = {}
        self._layout_version = 0
        self._lod_version = 0
        self._frame: Frame | None = None
        self._frame_key: tuple[Any, ...] | None = None
        self._highlight = RowSet(trace, [])
        self._highlight_rows = np.empty(0, dtype=np.int64)
        self._matches = RowSet(trace, [])
        self._match_index = -1
        self._links = SliceLinks(trace)
        self._selected = -1
        self._details_provider: Callable[[int], str] | None = None
        self._linked = np.empty(0, dtype=np.int64)
        self._range: tuple[int, int] | None = None
        self._range_text = ""
        self._worker: QtLodWorker | None = None
        # Cleared while the GUI thread builds this widget and while it paints: the pyramid
        # worker waits (see qt_lod_worker). Set after the first paint, or FIRST_PAINT_WAIT_MS.
        self.gui_idle = threading.Event()
        self._workers_stopped = False
        self._lod_bumped = 0.0
        self._progress = (0, 0)
        self._last_emitted: tuple[int, int] | None = None
        self._ready_rows = -1

        # The viewport reads the canvas's size live; the canvas and painter are given the
        # viewport and this widget as their model and controls, and do not import it.
        self.viewport = Viewport(
            max(end_ns, 1000.0), lambda: (self._canvas.width(), self._canvas.height())
        )
        self._painter = QtTimelinePainter(self, self.font())
        self._canvas = QtTimelineCanvas(self.viewport, self, self._painter, self.gui_idle, self)
        self._canvas.hovered.connect(self._on_hover)
        self._canvas.clicked.connect(self._on_click)
        self._canvas.gutterClicked.connect(self._on_gutter_click)
        self._canvas.resized.connect(self._on_resized)
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
        self._rank_filter = QLineEdit(self)
        self._rank_filter.setPlaceholderText("Ranks, e.g. 0-7,12")
        self._rank_filter.setClearButtonEnabled(True)
        self._rank_filter.setToolTip(RANK_FILTER_TIP)
        self._rank_filter.setMaximumWidth(170)
        self._rank_filter.textChanged.connect(self._on_rank_filter_text)
        self._expand_btn = QToolButton(self)
        self._expand_btn.setText("Expand ranks")
        self._expand_btn.setToolTip("Show every shown rank's lanes")
        self._expand_btn.clicked.connect(self.expand_ranks)
        self._collapse_btn = QToolButton(self)
        self._collapse_btn.setText("Collapse ranks")
        self._collapse_btn.setToolTip("One summary lane per rank: its GPU busy time")
        self._collapse_btn.clicked.connect(self.collapse_ranks)
        for wdg in (self._rank_filter, self._expand_btn, self._collapse_btn):
            wdg.setVisible(self._layout.rank_rows)
        hint = "wheel/W/S zoom · drag/A/D pan · shift+drag selects a range · click a kernel to see its launch"
        if self._layout.rank_rows:
            hint = "click a rank's lane to expand it · wheel zoom · drag pan · shift+drag a range"
        self._hint = QLabel(hint, self)
        self._hint.setStyleSheet("color: #777;")
        # Its whole width where there is room (wrapped, it would ask for a fifth of it and
        # take four lines), but never a window wider than the screen: clipped, with a tooltip.
        self._hint.setMinimumWidth(WRAP_MIN_WIDTH)
        self._hint.setToolTip(hint)
        self._info = QLabel("", self)
        # Always rich text that details.py built with every name escaped; never guessed.
        self._info.setTextFormat(Qt.TextFormat.RichText)
        self._info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        wrap_label(self._info)  # a selected kernel's long name must not widen the window

        top = QHBoxLayout()
        top.setContentsMargins(4, 2, 4, 2)
        top.addWidget(self._search, 2)
        top.addWidget(self._prev_btn)
        top.addWidget(self._next_btn)
        top.addWidget(self._match_label)
        top.addSpacing(12)
        top.addWidget(self._rank_filter, 1)
        top.addWidget(self._expand_btn)
        top.addWidget(self._collapse_btn)
        top.addWidget(quiet_btn)
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
        QTimer.singleShot(FIRST_PAINT_WAIT_MS, self.gui_idle.set)  # if never painted
        if n > SYNC_TRACE_MAX:
            self._start_worker()

    # -- public API ------------------------------------------------------------------------------

    @property
    def layout_rows(self) -> Layout:
        """The current lane layout (:class:`gpuviz.trace.lod.Layout`)."""
        return self._layout

    @property
    def layout_version(self) -> int:
        """Counts layout changes (folds): caches of what a layout draws key on it."""
        return self._layout_version

    @property
    def highlight_set(self) -> RowSet:
        """The highlighted slices (:meth:`highlight_rows`), sorted for finding those in view."""
        return self._highlight

    @property
    def match_set(self) -> RowSet:
        """The slices matching the last search, sorted for finding those in view."""
        return self._matches

    @property
    def lod_progress(self) -> tuple[int, int]:
        """``(done, total)`` of the pyramid worker's current job; ``(0, 0)`` when idle."""
        return self._progress

    @property
    def painter(self) -> QtTimelinePainter:
        """What paints the canvas."""
        return self._painter

    @property
    def paint_count(self) -> int:
        """Frames painted (tests check that redraws are coalesced)."""
        return self._painter.paint_count

    @property
    def last_paint_ms(self) -> float:
        """How long the last frame took to paint."""
        return self._painter.last_paint_ms

    @property
    def canvas(self) -> QWidget:
        """The painted area (axis, lane labels, slices): send it input events, grab it."""
        return self._canvas

    def slice_position(self, row: int) -> QPointF | None:
        """The centre of slice ``row``'s visible part in :attr:`canvas` coordinates, or None
        when it is off screen."""
        s = self.trace.slices
        v = self.viewport
        r = self._layout.row_of(int(s.track[row]), max(int(s.depth[row]), 0))
        if r < 0:
            return None
        a = max(float(s.start_ns[row]), v.t0)
        b = min(float(s.start_ns[row] + s.dur_ns[row]), v.t1)
        y = v.row_y(r) + ROW_PX / 2
        if b < a or y < AXIS_PX or y > v.height:
            return None
        return QPointF(float(v.x_of((a + b) / 2)), y)

    def x_of_time(self, t_ns: float) -> float:
        """The canvas x of a time (ns from the trace zero) in the current view."""
        return float(self.viewport.x_of(t_ns))

    def time_at_x(self, x: float) -> float:
        """The time (ns from the trace zero) at canvas x in the current view."""
        return self.viewport.time_at_x(x)

    @property
    def info_text(self) -> str:
        """The info line under the lanes (selection and range figures), as shown."""
        return self._info.text()

    def set_view_range(self, t0_ns: float, t1_ns: float) -> None:
        """Show ``[t0_ns, t1_ns)`` (ns from the trace zero); clamped to the trace and zoom limits."""
        self._set_view(float(t0_ns), float(t1_ns))

    def view_range(self) -> tuple[int, int]:
        """The visible range ``(t0_ns, t1_ns)``, ns from the trace zero."""
        return round(self.viewport.t0), round(self.viewport.t1)

    def highlight_rows(self, rows: npt.ArrayLike) -> None:
        """Outline these slice rows (an empty array clears)."""
        self._highlight_rows = np.asarray(rows, dtype=np.int64).ravel().copy()
        self._highlight = RowSet(self.trace, self._highlight_rows)
        self._request_redraw()

    def highlighted_rows(self) -> npt.NDArray[np.int64]:
        """The rows last passed to :meth:`highlight_rows`."""
        return self._highlight_rows

    def select_range(self, t0_ns: int, t1_ns: int) -> None:
        """Select ``[t0_ns, t1_ns)`` and show its figures; emits ``rangeSelected``."""
        t0, t1 = sorted((int(t0_ns), int(t1_ns)))
        self._range = (t0, t1)
        self._range_text = range_summary(self.trace, t0, t1)
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
        self._reveal_slice(self._selected)
        self._linked = (
            self._links.of(self._selected) if self._selected >= 0 else np.empty(0, dtype=np.int64)
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

    # -- view changes (the canvas's input calls these) -------------------------------------------

    def zoom_at(self, factor: float, at: float | None = None) -> None:
        """Zoom by ``factor`` (>1 zooms in) around time ``at`` (default: the view's centre)."""
        v = self.viewport
        if at is None:
            at = (v.t0 + v.t1) / 2
        self._set_view(at - (at - v.t0) / factor, at + (v.t1 - at) / factor)

    def pan_by_fraction(self, f: float) -> None:
        """Move the view by ``f`` of its width (negative: to earlier times)."""
        v = self.viewport
        d = (v.t1 - v.t0) * f
        self._set_view(v.t0 + d, v.t1 + d)

    def set_scroll(self, y: float) -> None:
        """Scroll the lanes to ``y`` pixels from the top (clamped)."""
        v = self.viewport
        y = min(max(y, 0.0), v.max_scroll(len(self._layout)))
        if y != v.scroll_px:
            v.scroll_px = y
            self._vbar.blockSignals(True)
            self._vbar.setValue(int(y))
            self._vbar.blockSignals(False)
            self._request_redraw()

    def scroll_by(self, dy: float) -> None:
        """Scroll the lanes by ``dy`` pixels."""
        self.set_scroll(self.viewport.scroll_px + dy)

    def preview_range(self, t0: float, t1: float) -> None:
        """Show ``[t0, t1)`` as the range being dragged (measured on release)."""
        a, b = sorted((t0, t1))
        self._range = (int(a), int(b))
        self._range_text = live_range_text(a, b)
        self._update_info()
        self._request_redraw()

    def _set_view(self, t0: float, t1: float) -> None:
        v = self.viewport
        got = v.clamped(t0, t1)
        if got is not None and got != (v.t0, v.t1):
            v.t0, v.t1 = got
            self._request_redraw()

    def _on_vbar(self, v: int) -> None:
        self.viewport.scroll_px = float(v)
        self._request_redraw()

    def _on_resized(self) -> None:
        v = self.viewport
        self._vbar.setRange(0, v.max_scroll(len(self._layout)))
        self._vbar.setPageStep(v.area_height())
        self._vbar.setSingleStep(ROW_PX)
        self.set_scroll(v.scroll_px)
        self._request_redraw()

    def _relayout(
        self,
        folded_groups: Any,
        folded_tracks: Any,
        collapsed: Any = None,
        rank_filter: Any = "keep",
    ) -> None:
        lay = self._layout
        self._layout = build_layout(
            self.trace,
            folded_groups,
            folded_tracks,
            depths=self._lod.depths,
            collapsed_ranks=lay.collapsed_ranks if collapsed is None else collapsed,
            rank_filter=lay.rank_filter if rank_filter == "keep" else rank_filter,
            hidden_tracks=self.hidden_tracks(),
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


def comm_name_mask(trace: Trace) -> npt.NDArray[np.bool_]:
    """Per symbol id: a communication slice's name (NCCL kernels, gloo ranges)."""
    from gpuviz.analysis.names import is_comm_kernel, name_mask

    return name_mask(trace.symbols, lambda n: is_comm_kernel(n) or n.startswith("gloo:"))


def _stopper(owner: QtTimeline) -> Any:
    # Called when the widget is destroyed: a running QThread whose object dies aborts the
    # process, so stop it first. Captures only the worker getter, not the widget.
    def stop(*_: Any) -> None:
        try:
            owner.stop_worker()
        except RuntimeError:  # the C++ side is already gone
            pass

    return stop


__all__ = [
    "AXIS_PX",
    "GUTTER_PX",
    "HIGHLIGHT_MAX",
    "LOD_REFRESH_S",
    "MIN_SPAN_NS",
    "PAN_STEP",
    "REDRAW_MS",
    "ROW_PX",
    "SYNC_TRACE_MAX",
    "ZOOM_STEP",
    "QtTimeline",
    "comm_name_mask",
]
