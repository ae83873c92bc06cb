"""The Timeline's pointer and info line: hover tooltips, clicks on slices and lane labels.

A part of :class:`~gpuviz.gui.timeline.qt_timeline.QtTimeline` (see its module docstring for
the interface: ``describe_slice``, ``hover_text``, ``set_details_provider``,
``refresh_details``), kept apart because it is its own concern; the widget owns the state it
uses. The texts themselves are built in :mod:`~gpuviz.gui.timeline.details`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QPoint, QPointF
from PySide6.QtWidgets import QToolTip

from gpuviz.gui.timeline.details import describe_slice, info_line
from gpuviz.gui.timeline.viewport import AXIS_PX, GUTTER_PX
from gpuviz.trace.lanes import RowKind

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
    from PySide6.QtCore import Signal
    from PySide6.QtWidgets import QLabel, QWidget

    from gpuviz.gui.timeline.viewport import Viewport
    from gpuviz.trace.lanes import Layout
    from gpuviz.trace.lod import TimelineLod
    from gpuviz.trace.model import Trace


class TimelinePointerMixin:
    """Hover, clicks and the info line of the Timeline (mixed into ``QtTimeline``)."""

    if TYPE_CHECKING:  # what the widget provides
        trace: Trace
        viewport: Viewport
        sliceClicked: Signal
        _lod: TimelineLod
        _layout: Layout
        _canvas: QWidget
        _info: QLabel
        _selected: int
        _linked: npt.NDArray[np.int64]
        _range_text: str
        _details_provider: Callable[[int], str] | None

        def select_slice(self, row: int) -> None: ...
        def expand_rank(self, rank: int, expanded: bool = True) -> None: ...
        def fold_group(self, index: int, folded: bool = True) -> None: ...
        def fold_track(self, track: int, folded: bool = True) -> None: ...
        def _rank_lane_text(self, pos: QPointF) -> str: ...

    # -- info line, tooltips ---------------------------------------------------------------------

    def describe_slice(self, row: int, rich: bool = True) -> str:
        """The hover text of slice ``row``: name, category, duration, start, lane, main args."""
        return describe_slice(self.trace, row, rich)

    def set_details_provider(self, provider: Callable[[int], str] | None) -> None:
        """Add ``provider(row)`` (rich text, names escaped) to a selected slice's info line:
        the trace view gives a kernel's op, module and source line this way."""
        self._details_provider = provider
        self._update_info()

    def refresh_details(self) -> None:
        """Ask the details provider again (its data has come)."""
        self._update_info()

    def _update_info(self) -> None:
        provider = self._details_provider
        more = provider(self._selected) if provider is not None and self._selected >= 0 else ""
        self._info.setText(
            info_line(self.trace, self._selected, self._linked, self._range_text, more)
        )

    def _on_hover(self, pos: QPointF, global_pos: QPoint) -> None:
        row, count = self._hit(pos)
        lane = self._rank_lane_text(pos)
        if row < 0 and not lane:
            QToolTip.hideText()
            return
        if row < 0:
            QToolTip.showText(global_pos, f"<qt>{lane}</qt>", self._canvas)
            return
        QToolTip.showText(global_pos, self.hover_text(row, count, lane), self._canvas)

    def hover_text(self, row: int, count: int = 1, lane: str = "") -> str:
        """The tooltip of slice ``row`` (``count`` slices under the cursor), as rich text.

        Marked as rich (``<qt>``) so that Qt never guesses: the names in it are escaped.
        ``lane`` (a rank summary lane's figures, rich text without names) goes first.
        """
        text = (lane + "<br>" if lane else "") + self.describe_slice(row)
        if count > 1:
            text += (
                f"<br><i>{count - 1:,} more slice{'s' if count > 2 else ''} under the cursor</i>"
            )
        return f"<qt>{text}</qt>"

    def _hit(self, pos: QPointF) -> tuple[int, int]:
        if pos.x() < GUTTER_PX or pos.y() < AXIS_PX:
            return -1, 0
        v = self.viewport
        r = v.row_at(pos.y())
        if not 0 <= r < len(self._layout):
            return -1, 0
        px_ns = (v.t1 - v.t0) / v.area_width()
        return self._lod.slices_near(self._layout, r, v.time_at_x(pos.x()), 2 * px_ns)

    def _on_click(self, pos: QPointF) -> None:
        lay = self._layout
        r = self.viewport.row_at(pos.y()) if pos.y() >= AXIS_PX else -1
        if 0 <= r < len(lay) and lay.kind[r] == RowKind.RANK:
            rank = int(lay.row_rank[r])
            if rank in lay.collapsed_ranks:  # a click on a summary lane expands its rank
                self.expand_rank(rank, True)
                return
        row, _ = self._hit(pos)
        self.select_slice(row)
        if row >= 0:
            self.sliceClicked.emit(row)

    def _on_gutter_click(self, pos: QPointF) -> None:
        if pos.y() < AXIS_PX:
            return
        r = self.viewport.row_at(pos.y())
        if not 0 <= r < len(self._layout):
            return
        lay = self._layout
        if lay.kind[r] == RowKind.RANK:
            rank = int(lay.row_rank[r])
            self.expand_rank(rank, rank in lay.collapsed_ranks)
        elif lay.kind[r] == RowKind.GROUP:
            g = int(lay.group[r])
            self.fold_group(g, g not in lay.folded_groups)
        else:
            t = int(lay.track[r])
            if lay.foldable_track(t) and lay.labels[r]:
                self.fold_track(t, t not in lay.folded_tracks)


__all__ = ["TimelinePointerMixin"]
