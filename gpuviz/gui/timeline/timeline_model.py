"""What the timeline's canvas and painter need of their owner, as two small interfaces (no Qt).

The canvas (:mod:`~gpuviz.gui.timeline.qt_timeline_canvas`) turns input into view changes, and
the painter (:mod:`~gpuviz.gui.timeline.qt_timeline_painter`) paints the timeline's state. Both
are given a :class:`~gpuviz.gui.timeline.viewport.Viewport` and one of these interfaces rather
than the :class:`~gpuviz.gui.timeline.qt_timeline.QtTimeline` that owns them (as napari's views
take a model): neither imports its owner, so there is no import circle
(``tests/test_architecture.py`` checks it). ``QtTimeline`` satisfies both.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from gpuviz.gui.timeline.marks import RowSet
    from gpuviz.gui.timeline.viewport import Viewport
    from gpuviz.trace.lanes import Layout
    from gpuviz.trace.lod import Frame
    from gpuviz.trace.model import Trace


class TimelineModel(Protocol):
    """The state the painter reads (only reads): the trace, the view, the layout and the marks."""

    @property
    def trace(self) -> Trace:
        """The trace shown."""
        ...

    @property
    def viewport(self) -> Viewport:
        """The view's time range, scroll and geometry."""
        ...

    @property
    def layout_rows(self) -> Layout:
        """The current lane layout."""
        ...

    @property
    def layout_version(self) -> int:
        """Counts layout changes: caches of what a layout draws key on it."""
        ...

    @property
    def highlight_set(self) -> RowSet:
        """The highlighted slices."""
        ...

    @property
    def match_set(self) -> RowSet:
        """The slices matching the last search."""
        ...

    @property
    def lod_progress(self) -> tuple[int, int]:
        """``(done, total)`` of the pyramid builder's current job; ``(0, 0)`` when idle."""
        ...

    def current_frame(self) -> Frame:
        """The level-of-detail frame of the current view."""
        ...

    def selected_slice(self) -> int:
        """The selected slice row, or -1."""
        ...

    def linked_rows(self) -> npt.NDArray[np.int64]:
        """The slices linked to the selection (launch ↔ GPU work)."""
        ...

    def selected_range(self) -> tuple[int, int] | None:
        """The selected (or dragged) time range, or None."""
        ...

    def rank_matches(self) -> dict[int, int]:
        """Per collapsed rank: how many of its slices match the search."""
        ...

    def devicePixelRatioF(self) -> float:  # Qt's name: a QWidget has it
        """Device pixels per logical pixel of the window shown in."""
        ...


class TimelineControls(Protocol):
    """The view changes the canvas's input asks for (times in ns from the trace zero)."""

    def zoom_at(self, factor: float, at: float | None = None) -> None:
        """Zoom by ``factor`` (>1 zooms in) around time ``at`` (default: the view's centre)."""
        ...

    def pan_by_fraction(self, f: float) -> None:
        """Move the view by ``f`` of its width."""
        ...

    def set_view_range(self, t0_ns: float, t1_ns: float) -> None:
        """Show ``[t0_ns, t1_ns)``."""
        ...

    def set_scroll(self, y: float) -> None:
        """Scroll the lanes to ``y`` pixels from the top."""
        ...

    def scroll_by(self, dy: float) -> None:
        """Scroll the lanes by ``dy`` pixels."""
        ...

    def preview_range(self, t0: float, t1: float) -> None:
        """Show ``[t0, t1)`` as the range being dragged."""
        ...

    def select_range(self, t0_ns: int, t1_ns: int) -> None:
        """Select ``[t0_ns, t1_ns)``."""
        ...

    def clear_range(self) -> None:
        """Drop the range selection."""
        ...

    def select_slice(self, row: int) -> None:
        """Select slice ``row`` (-1 clears)."""
        ...


__all__ = ["TimelineControls", "TimelineModel"]
