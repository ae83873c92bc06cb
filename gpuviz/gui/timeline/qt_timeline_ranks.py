"""The Timeline's ranks: summary lanes that expand and collapse, the rank filter, jumps.

A part of :class:`~gpuviz.gui.timeline.qt_timeline.QtTimeline` (see its module docstring for
the interface: ``expand_rank``, ``expanded_ranks``, ``collapse_ranks``, ``expand_ranks``,
``set_rank_filter``, ``rank_filter_text``, ``show_rank_range``, ``rank_matches``), kept apart
because it only matters for traces of several ranks; the widget owns the state it uses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPointF

from gpuviz.gui.qt_text import set_tooltip
from gpuviz.gui.timeline.details import describe_rank_lane
from gpuviz.gui.timeline.quiet_lanes import QUIET_MAX_SLICES, QUIET_SHARE, quiet_tracks
from gpuviz.gui.timeline.viewport import AXIS_PX, GUTTER_PX, ROW_PX
from gpuviz.trace.lanes import RowKind
from gpuviz.trace.lod import RankSource
from gpuviz.trace.rank_filter import format_ranks, parse_rank_filter

if TYPE_CHECKING:
    from PySide6.QtWidgets import QLineEdit

    from gpuviz.gui.timeline.viewport import Viewport
    from gpuviz.trace.lanes import Layout
    from gpuviz.trace.lod import TimelineLod
    from gpuviz.trace.model import Trace

RANK_FILTER_TIP = "Show only these ranks: ranks and ranges, e.g. 0-7,12 or 32- (blank: all)"


class TimelineRanksMixin:
    """Rank lanes of the Timeline (mixed into ``QtTimeline``)."""

    if TYPE_CHECKING:  # what the widget provides
        trace: Trace
        viewport: Viewport
        _layout: Layout
        _lod: TimelineLod
        _rank_matches: dict[int, int]
        _rank_filter: QLineEdit
        _search: QLineEdit
        _quiet: frozenset[int]
        _show_quiet: bool
        _quiet_btn: Any

        def search(self, text: str) -> int: ...
        def select_slice(self, row: int) -> None: ...
        def select_range(self, t0_ns: int, t1_ns: int) -> None: ...
        def set_scroll(self, y: float) -> None: ...
        def _set_view(self, t0: float, t1: float) -> None: ...
        def _relayout(
            self,
            folded_groups: Any,
            folded_tracks: Any,
            collapsed: Any = None,
            rank_filter: Any = "keep",
        ) -> None: ...

    # -- quiet lanes (streams with next to nothing on them: quiet_lanes.py) -------------------
    def _make_quiet_button(self) -> Any:
        """The "Quiet lanes" toggle (hidden when the trace has none)."""
        from PySide6.QtWidgets import QToolButton

        self._quiet = quiet_tracks(self.trace)
        self._show_quiet = False
        btn = QToolButton(self)  # type: ignore[arg-type]
        btn.setCheckable(True)
        btn.setText(f"Quiet lanes ({len(self._quiet)})")
        btn.setToolTip(
            f"{len(self._quiet)} GPU lanes (streams and their annotations) with at most "
            f"{QUIET_MAX_SLICES} slices filling less than {QUIET_SHARE:.1%} of the trace are "
            "hidden: show them"
        )
        btn.setVisible(bool(self._quiet))
        btn.toggled.connect(self.show_quiet_lanes)
        self._quiet_btn = btn
        return btn

    def hidden_tracks(self) -> frozenset[int]:
        """The tracks not laid out now: the quiet lanes, unless shown."""
        return frozenset() if self._show_quiet else self._quiet

    def show_quiet_lanes(self, shown: bool = True) -> None:
        """Show (or hide again) the quiet lanes."""
        if bool(shown) == self._show_quiet:
            return
        self._show_quiet = bool(shown)
        self._quiet_btn.setChecked(self._show_quiet)
        self._relayout(self._layout.folded_groups, self._layout.folded_tracks)

    def _reveal_slice(self, row: int) -> None:
        # A slice on a hidden lane (a search hit, a jump) shows the quiet lanes again.
        if row >= 0 and not self._show_quiet and self._quiet:
            if int(self.trace.slices.track[row]) in self._quiet:
                self.show_quiet_lanes(True)

    def expanded_ranks(self) -> list[int]:
        """The shown ranks whose lanes are expanded (all of them for a trace of one rank)."""
        lay = self._layout
        return [r for r in lay.shown_ranks() if r not in lay.collapsed_ranks]

    def rank_matches(self) -> dict[int, int]:
        """Rank -> slices of it matching the last search (traces of several ranks)."""
        return dict(self._rank_matches)

    def expand_rank(self, rank: int, expanded: bool = True) -> None:
        """Expand ``rank`` to its lanes, or collapse it to its summary lane."""
        cr = set(self._layout.collapsed_ranks)
        (cr.discard if expanded else cr.add)(int(rank))
        self._relayout(self._layout.folded_groups, self._layout.folded_tracks, collapsed=cr)

    def collapse_ranks(self) -> None:
        """Collapse every rank to its summary lane."""
        self._relayout(
            self._layout.folded_groups, self._layout.folded_tracks, collapsed=self._layout.ranks
        )

    def expand_ranks(self) -> None:
        """Expand every shown rank (the filtered-out ones stay collapsed)."""
        lay = self._layout
        keep = set(lay.collapsed_ranks) - set(lay.shown_ranks())
        self._relayout(lay.folded_groups, lay.folded_tracks, collapsed=keep)

    def set_rank_filter(self, text: str) -> frozenset[int] | None:
        """Show only the ranks ``text`` names (``"0-7,12"``; blank: all); returns them.

        Raises ValueError for text that is not a rank list (the filter is then unchanged).
        """
        picked = parse_rank_filter(text, self._layout.ranks)
        self._set_filter(picked)
        if self._rank_filter.text().strip() != (text or "").strip():
            self._rank_filter.blockSignals(True)
            self._rank_filter.setText(text)
            self._rank_filter.blockSignals(False)
        self._rank_filter.setStyleSheet("")
        return picked

    def rank_filter_text(self) -> str:
        """The rank filter in force, as the shortest text (blank: all ranks)."""
        f = self._layout.rank_filter
        return "" if f is None else format_ranks(f)

    def show_rank_range(self, rank: int, t0_ns: int, t1_ns: int, slice_row: int = -1) -> None:
        """Show ``[t0_ns, t1_ns)`` on ``rank``'s lanes: the rank shown and expanded, its rows
        scrolled into view, the range selected (and ``slice_row`` too, when given)."""
        lay = self._layout
        rank = int(rank)
        if lay.rank_rows:
            f = lay.rank_filter
            if f is not None and rank not in f:
                self._set_filter(None)
                self._rank_filter.blockSignals(True)
                self._rank_filter.clear()
                self._rank_filter.blockSignals(False)
            if rank in self._layout.collapsed_ranks:
                self.expand_rank(rank, True)
        a, b = sorted((int(t0_ns), int(t1_ns)))
        pad = max((b - a) // 10, 1000)
        self._set_view(float(a - pad), float(b + pad))
        self.select_range(a, b)
        if slice_row >= 0:
            self.select_slice(int(slice_row))
        lay = self._layout
        r = lay.rank_row(rank) if lay.rank_rows else 0
        s = self.trace.slices
        at = r
        if 0 <= slice_row < len(s):
            at = lay.row_of(int(s.track[slice_row]), max(int(s.depth[slice_row]), 0))
        if r >= 0:
            # The rank's summary lane at the top, unless the slice would be below the screen.
            area = self.viewport.area_height()
            if at < r or (at - r + 2) * ROW_PX <= area:
                self.set_scroll((r - 1) * ROW_PX)
            else:
                self.set_scroll(at * ROW_PX - area / 3)

    def _set_filter(self, picked: frozenset[int] | None) -> None:
        lay = self._layout
        self._relayout(
            lay.folded_groups, lay.folded_tracks, collapsed=lay.collapsed_ranks, rank_filter=picked
        )
        if self._search.text().strip():
            self.search(self._search.text())

    def _on_rank_filter_text(self, text: str) -> None:
        try:
            self.set_rank_filter(text)
        except ValueError as exc:
            self._rank_filter.setStyleSheet("QLineEdit { border: 1px solid #d1242f; }")
            set_tooltip(self._rank_filter, f"Not a rank filter: {exc}")
            return
        self._rank_filter.setToolTip(RANK_FILTER_TIP)

    def _rank_lane_text(self, pos: QPointF) -> str:
        # A summary lane's hover: the rank's busy share around the cursor (3 pixels wide).
        if pos.x() < GUTTER_PX or pos.y() < AXIS_PX:
            return ""
        v = self.viewport
        r = v.row_at(pos.y())
        lay = self._layout
        if not 0 <= r < len(lay) or lay.kind[r] != RowKind.RANK:
            return ""
        key = lay.sources[r]
        if key is None or not self._lod.is_ready(key, lay.groups):
            return ""
        src = self._lod.source(key, lay.groups)
        if not isinstance(src, RankSource):
            return ""
        px_ns = (v.t1 - v.t0) / v.area_width()
        t = v.time_at_x(pos.x())
        busy, compute = src.shares(t - 1.5 * px_ns, t + 1.5 * px_ns, 1)
        return describe_rank_lane(
            int(lay.row_rank[r]),
            float(busy[0]),
            float(compute[0]),
            3 * px_ns,
            int(lay.row_rank[r]) in lay.collapsed_ranks,
        )
