"""What part of the timeline is in view: its time range, vertical scroll and geometry (no Qt).

The canvas is laid out as a gutter of lane labels (``GUTTER_PX`` wide) left of the lanes and a
time axis (``AXIS_PX`` tall) above them; every lane is ``ROW_PX`` tall. :class:`Viewport` maps
between times, rows and canvas pixels; the widget (:mod:`gpuviz.gui.timeline.qt_timeline`), its
canvas and its painter share one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

GUTTER_PX = 210
AXIS_PX = 26
ROW_PX = 18
MIN_SPAN_NS = 50.0


class Viewport:
    """The visible range ``[t0, t1)`` (ns from the trace zero, floats) and the vertical scroll.

    Parameters
    ----------
    end_ns : float
        The trace's end (the latest slice end); the view may go a little past it.
    size : callable
        The canvas's current ``(width, height)`` in pixels (read live: the canvas may be resized
        before it is shown).
    """

    def __init__(self, end_ns: float, size: Callable[[], tuple[int, int]]) -> None:
        self.end_ns = end_ns
        margin = end_ns * 0.01
        self.t0, self.t1 = -margin, end_ns + margin
        self.scroll_px = 0.0
        self._size = size

    @property
    def width(self) -> int:
        """The canvas's width in pixels."""
        return self._size()[0]

    @property
    def height(self) -> int:
        """The canvas's height in pixels."""
        return self._size()[1]

    def area_width(self) -> int:
        """Pixels of the lanes' width (the canvas less the gutter), at least 1."""
        return max(self.width - GUTTER_PX, 1)

    def area_height(self) -> int:
        """Pixels of the lanes' height (the canvas less the axis), at least 1."""
        return max(self.height - AXIS_PX, 1)

    def time_at_x(self, x: float) -> float:
        """The time at canvas x."""
        return self.t0 + (x - GUTTER_PX) * (self.t1 - self.t0) / self.area_width()

    def x_of(self, t: Any) -> Any:
        """The canvas x of a time (or of an array of times)."""
        return GUTTER_PX + (t - self.t0) * self.area_width() / (self.t1 - self.t0)

    def clamped(self, t0: float, t1: float) -> tuple[float, float] | None:
        """``[t0, t1)`` kept within the zoom limits and near the trace; None if not finite."""
        if not (math.isfinite(t0) and math.isfinite(t1)):
            return None
        if t1 < t0:
            t0, t1 = t1, t0
        span = max(t1 - t0, MIN_SPAN_NS)
        max_span = self.end_ns * 1.5 + 1000
        if span > max_span:
            c = (t0 + t1) / 2
            span = max_span
            t0 = c - span / 2
        lo, hi = -self.end_ns * 0.25 - 1000, self.end_ns * 1.25 + 1000
        t0 = min(max(t0, lo), hi - span)
        return t0, t0 + span

    def row_y(self, row: Any) -> Any:
        """The canvas y of the top of a display row (or of an array of rows)."""
        return AXIS_PX + row * ROW_PX - self.scroll_px

    def row_at(self, y: float) -> int:
        """The display row at canvas y (may be out of range)."""
        return int((y - AXIS_PX + self.scroll_px) // ROW_PX)

    def visible_rows(self, n_rows: int) -> range:
        """The display rows in view, of ``n_rows``."""
        first = max(int(self.scroll_px // ROW_PX), 0)
        last = min(int((self.scroll_px + self.area_height()) // ROW_PX) + 1, n_rows)
        return range(first, max(last, first))

    def max_scroll(self, n_rows: int) -> int:
        """The largest scroll for ``n_rows`` rows (and a spare row below them)."""
        return max(n_rows * ROW_PX + ROW_PX - self.area_height(), 0)


__all__ = ["AXIS_PX", "GUTTER_PX", "MIN_SPAN_NS", "ROW_PX", "Viewport"]
