"""The Memory view's "All ranks" page: allocator snapshots of several ranks, side by side.

Top: the ranks' table (``gpuviz memory DIR``'s: peak allocated, reserved, fragmentation, largest
free block, OOM, per rank and device), the row of the rank whose peak is highest marked, and
the line that names it. Below: each rank's active memory timeline
(:class:`~gpuviz.gui.views.qt_memory_timeline.QtMemoryTimeline`, the single-snapshot view's own
widget and palette, a site one colour in every lane), one lane per rank, their time axes
linked, so a pan or zoom in one moves them all, and one byte scale, so the lanes' heights
compare. A double-click on a table row asks for that rank's detail (segments and sites).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QScrollArea,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpuviz.analysis.allocator_ranks import COLUMNS, RankTable, highest_peak_line, table_rows
from gpuviz.analysis.allocator_timeline import MemoryTimeline
from gpuviz.display import terminal_safe
from gpuviz.gui.qt_text import wrap_label
from gpuviz.gui.views.qt_memory_timeline import QtMemoryTimeline, shared_site_colours

LANE_MIN_PX = 150
"""A lane's least height: its annotations and plot stay legible; more ranks scroll."""
LEGEND_PX = 50
"""What the last lane adds: the time axis's label and the legend."""
HIGHEST_COLOUR = "#fff3c4"
TABLE_MAX_PX = 260


class QtMemoryRanksView(QWidget):
    """The ranks' table over their timelines, stacked on one time axis.

    Signals
    -------
    timeClicked(object)
        ns from the trace's zero of a double-click on a lane on the trace's clock.
    detailRequested(int)
        The index (into ``timelines``) of a row double-clicked in the table.

    Parameters
    ----------
    timelines : list of MemoryTimeline
        One per (rank, device), ranks ascending.
    ranks : list of int
        The rank of each timeline.
    table : RankTable
        The ranks' figures.
    trace_series : list, optional
        The trace's memory series (its ``Total Allocated`` is drawn over the lane of the same
        rank and device, when the clocks match).
    """

    timeClicked = Signal(object)
    detailRequested = Signal(int)

    def __init__(
        self,
        timelines: Sequence[MemoryTimeline],
        ranks: Sequence[int],
        table: RankTable,
        trace_series: Sequence[Any] | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.timelines = list(timelines)
        self.ranks = list(ranks)
        self.rank_table = table
        self.highest_peak_rank = table.highest_peak_rank
        self.summary = QLabel(terminal_safe(highest_peak_line(table)))
        self.summary.setTextFormat(Qt.TextFormat.PlainText)
        wrap_label(self.summary)
        self.table = self._build_table()
        self.lanes: list[QtMemoryTimeline] = []
        self.lane_titles: list[QLabel] = []
        lanes = QWidget()
        lane_layout = QVBoxLayout(lanes)
        lane_layout.setContentsMargins(0, 0, 0, 0)
        series = list(trace_series or [])
        colours = shared_site_colours(self.timelines)
        for tl, rank, palette in zip(self.timelines, self.ranks, colours):
            best = rank == self.highest_peak_rank
            title = QLabel(
                terminal_safe(tl.label, one_line=True) + ("  ▲ highest peak" if best else "")
            )
            title.setTextFormat(Qt.TextFormat.PlainText)
            if best:
                title.setStyleSheet("font-weight: bold;")
            lane = QtMemoryTimeline(tl, _series_for(series, tl, rank), colours=palette)
            last = len(self.lanes) == len(self.timelines) - 1
            lane.set_compact(legend=last, time_label=last)  # one legend and label, at the bottom
            lane.setMinimumHeight(LANE_MIN_PX + (LEGEND_PX if last else 0))
            lane.timeClicked.connect(self._on_time_clicked)
            lane_layout.addWidget(title)
            lane_layout.addWidget(lane, 1)
            self.lanes.append(lane)
            self.lane_titles.append(title)
        self._link_time_axes()
        self._share_byte_scale()
        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setWidget(lanes)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.scroll)
        split.setStretchFactor(1, 1)
        # the table as tall as its rows (up to about eight), the lanes the rest
        fit = self.table.verticalHeader().length() + self.table.horizontalHeader().height() + 4
        split.setSizes([min(fit, TABLE_MAX_PX), 10_000])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.summary)
        lay.addWidget(split, 1)

    def _build_table(self) -> QTableWidget:
        rows = table_rows(self.rank_table)
        t = QTableWidget(len(rows), len(COLUMNS))
        t.setHorizontalHeaderLabels(list(COLUMNS))
        t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        t.verticalHeader().setVisible(False)
        t.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        t.horizontalHeader().setStretchLastSection(True)
        bold = QFont()
        bold.setBold(True)
        self.highest_rows: list[int] = []
        for i, row in enumerate(rows):
            best = row[0] == str(self.highest_peak_rank)
            if best:
                self.highest_rows.append(i)
            for j, text in enumerate(row):
                item = QTableWidgetItem(text)
                align = Qt.AlignmentFlag.AlignLeft if j in (1, 6) else Qt.AlignmentFlag.AlignRight
                item.setTextAlignment(align | Qt.AlignmentFlag.AlignVCenter)
                if best:
                    item.setFont(bold)
                    item.setBackground(QBrush(QColor(HIGHEST_COLOUR)))
                t.setItem(i, j, item)
        t.cellDoubleClicked.connect(self._on_row_activated)
        return t

    def _share_byte_scale(self) -> None:
        """One byte scale: every lane reaches the highest lane's top, so heights compare."""
        if not self.lanes:
            return
        top = max(lane.y_top * lane.unit_bytes for lane in self.lanes)
        for lane in self.lanes:
            lane.y_top = top / lane.unit_bytes
            lane.plot.setYRange(0, lane.y_top, padding=0)

    def y_tops_bytes(self) -> list[float]:
        """Each lane's visible top, in bytes."""
        return [lane.plot.getViewBox().viewRange()[1][1] * lane.unit_bytes for lane in self.lanes]

    def _link_time_axes(self) -> None:
        """One time axis: every lane's x follows the first's, over the union of their spans."""
        if not self.lanes:
            return
        spans = [lane._x_extent() for lane in self.lanes]
        first = self.lanes[0].plot
        for lane in self.lanes[1:]:
            lane.plot.setXLink(first)
        first.setXRange(min(a for a, _ in spans), max(b for _, b in spans), padding=0.01)

    def x_ranges(self) -> list[tuple[float, float]]:
        """Each lane's visible time range (ms)."""
        return [tuple(lane.plot.getViewBox().viewRange()[0]) for lane in self.lanes]  # type: ignore[misc]

    def render_now(self) -> None:
        """Draw every lane's bands at once (tests, screenshots)."""
        for lane in self.lanes:
            lane.render_now()

    def _on_row_activated(self, row: int, _column: int) -> None:
        rank_text, device = self.table.item(row, 0).text(), self.table.item(row, 1).text()
        for i, (tl, rank) in enumerate(zip(self.timelines, self.ranks)):
            if str(rank) == rank_text and f"cuda:{tl.device}" == device:
                self.scroll.ensureWidgetVisible(self.lanes[i])
                self.detailRequested.emit(i)
                return

    def _on_time_clicked(self, t_ns: Any) -> None:
        lane = self.sender()
        if isinstance(lane, QtMemoryTimeline) and lane.tl.on_trace_axis:
            self.timeClicked.emit(int(t_ns))

    def export_target(self) -> Any:
        """The graphics of the lanes, for Export → Plot (the first lane's plot)."""
        return self.lanes[0].plot if self.lanes else None


def _series_for(series: list[Any], tl: MemoryTimeline, rank: int) -> Any:
    for s in series:
        if getattr(s, "device_type", 1) == 1 and s.device == tl.device and s.rank in (rank, None):
            return s
    return None
