"""The Timeline's search: find slices by name, count the matches per rank, step through them.

A part of :class:`~gpuviz.gui.timeline.qt_timeline.QtTimeline` (see its module docstring for
the interface: ``search``, ``next_match``, ``prev_match``, ``match_rows``, ``current_match``),
kept apart because it is its own concern; the widget owns the state it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from gpuviz.gui.timeline.marks import RowSet, search_rows
from gpuviz.gui.timeline.viewport import MIN_SPAN_NS, ROW_PX

if TYPE_CHECKING:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QLabel, QLineEdit

    from gpuviz.gui.timeline.viewport import Viewport
    from gpuviz.trace.lanes import Layout
    from gpuviz.trace.model import Trace


class TimelineSearchMixin:
    """Search and match stepping of the Timeline (mixed into ``QtTimeline``)."""

    if TYPE_CHECKING:  # what the widget provides
        trace: Trace
        viewport: Viewport
        _layout: Layout
        _layout_version: int
        _matches: RowSet
        _match_index: int
        _rank_matches: dict[int, int]
        _search: QLineEdit
        _search_timer: QTimer
        _match_label: QLabel

        def select_slice(self, row: int) -> None: ...
        def set_scroll(self, y: float) -> None: ...
        def _set_view(self, t0: float, t1: float) -> None: ...
        def _request_redraw(self) -> None: ...

    def search(self, text: str) -> int:
        """Highlight slices whose name contains ``text`` (case-insensitive); return the count.

        With a rank filter, only the shown ranks' slices count; each rank's summary lane
        says how many of its slices match.
        """
        text = (text or "").strip().lower()
        rows = search_rows(self.trace, text)
        lay = self._layout
        if lay.rank_rows and len(rows):
            rank = self.trace.tracks.rank[self.trace.slices.track[rows]]
            if lay.rank_filter is not None:
                keep = np.isin(rank, np.fromiter(lay.rank_filter, dtype=np.int64))
                rows, rank = rows[keep], rank[keep]
            counts = np.bincount(rank - rank.min())  # not np.unique: it imports numpy.ma
            hit = np.flatnonzero(counts)
            self._rank_matches = dict(zip((hit + rank.min()).tolist(), counts[hit].tolist()))
        else:
            self._rank_matches = {}
        self._matches = RowSet(self.trace, rows)
        self._match_index = -1
        self._layout_version += 1  # the rank labels carry the counts
        if self._search.text().strip().lower() != text:
            self._search.blockSignals(True)
            self._search.setText(text)
            self._search.blockSignals(False)
        self._update_match_label()
        self._request_redraw()
        return len(self._matches)

    def match_rows(self) -> npt.NDArray[np.int64]:
        """The rows matching the last search, in time order."""
        return self._matches.rows

    def current_match(self) -> int:
        """Index of the current match in :meth:`match_rows`, or -1."""
        return self._match_index

    def next_match(self) -> int:
        """Move to (and select) the next match in time order; returns its index or -1."""
        return self._step_match(+1)

    def prev_match(self) -> int:
        """Move to (and select) the previous match; returns its index or -1."""
        return self._step_match(-1)

    def _step_match(self, step: int) -> int:
        rows = self._matches.rows
        if len(rows) == 0:
            self._match_index = -1
            self._update_match_label()
            return -1
        if self._match_index < 0:
            # Start from the view: the first match at or after its left edge (or before it).
            starts = self._matches.start
            i = int(np.searchsorted(starts, self.viewport.t0, side="left"))
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
        v = self.viewport
        start = float(s.start_ns[row])
        dur = float(s.dur_ns[row])
        span = v.t1 - v.t0
        if dur > 0.8 * span:
            span = dur / 0.6
        elif dur * v.area_width() / span < 2:
            # Too small to see at this zoom: zoom in so it is about 1/20 of the view.
            span = max(dur * 20, MIN_SPAN_NS)
        c = start + dur / 2
        self._set_view(c - span / 2, c + span / 2)
        d = max(int(s.depth[row]), 0)
        r = self._layout.row_of(int(s.track[row]), d)
        if r >= 0:
            y = r * ROW_PX
            if y < v.scroll_px or y + ROW_PX > v.scroll_px + v.area_height():
                self.set_scroll(y - v.area_height() / 3)

    def _update_match_label(self) -> None:
        n = len(self._matches)
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
