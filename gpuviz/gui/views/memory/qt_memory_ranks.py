"""The Memory view's "All ranks" page: allocator snapshots of several ranks, side by side.

Top: the ranks' table (``gpuviz memory DIR``'s: peak allocated, reserved, fragmentation, largest
free block, OOM, per rank and device), the row of the rank whose peak is highest marked, and
the line that names it. Below: each rank's active memory timeline
(:class:`~gpuviz.gui.views.memory.qt_memory_timeline.QtMemoryTimeline`, the single-snapshot view's own
widget and palette, a site one colour in every lane), one lane per rank, their time axes
linked, so a pan or zoom in one moves them all, and one byte scale, so the lanes' heights
compare. A lane is built when it first scrolls into view (one costs 35-80 ms here), so 64
ranks open as fast as the three or four on screen. A double-click on a table row asks for that
rank's detail (segments and sites).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
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
from gpuviz.gui.views.memory.qt_memory_timeline import (
    NS_PER_MS,
    QtMemoryTimeline,
    shared_site_colours,
)

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
        self.lanes: list[QtMemoryTimeline | None] = [None] * len(self.timelines)
        self.lane_titles: list[QLabel] = []
        self._slots: list[QVBoxLayout] = []
        self._placeholders: list[QWidget | None] = []
        self._series = list(trace_series or [])
        self._colours = shared_site_colours(self.timelines)
        self._top_bytes = max((_top_bytes(tl) for tl in self.timelines), default=1.0)
        self._x_span = _x_span(self.timelines)
        lanes = QWidget()
        lane_layout = QVBoxLayout(lanes)
        lane_layout.setContentsMargins(0, 0, 0, 0)
        for i, (tl, rank) in enumerate(zip(self.timelines, self.ranks)):
            best = rank == self.highest_peak_rank
            title = QLabel(
                terminal_safe(tl.label, one_line=True) + ("  ▲ highest peak" if best else "")
            )
            title.setTextFormat(Qt.TextFormat.PlainText)
            if best:
                title.setStyleSheet("font-weight: bold;")
            # each lane is built when first scrolled into view: a pyqtgraph lane costs
            # 35-80 ms, and a job has 8 ranks or 64
            placeholder = QWidget()
            placeholder.setMinimumHeight(self._lane_height(i))
            slot = QVBoxLayout()
            slot.setContentsMargins(0, 0, 0, 0)
            slot.addWidget(title)
            slot.addWidget(placeholder, 1)
            lane_layout.addLayout(slot, 1)
            self.lane_titles.append(title)
            self._slots.append(slot)
            self._placeholders.append(placeholder)
        self._build_lane(0)  # the first carries the time axis the others link to
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
        self.scroll.verticalScrollBar().valueChanged.connect(self._build_visible_soon)
        self._build_timer = QTimer(self)
        self._build_timer.setSingleShot(True)
        self._build_timer.setInterval(0)
        self._build_timer.timeout.connect(self.build_visible)

    def _lane_height(self, i: int) -> int:
        return LANE_MIN_PX + (LEGEND_PX if i == len(self.timelines) - 1 else 0)

    def _build_lane(self, i: int) -> QtMemoryTimeline:
        lane = self.lanes[i]
        if lane is not None:
            return lane
        tl, rank = self.timelines[i], self.ranks[i]
        lane = QtMemoryTimeline(tl, _series_for(self._series, tl, rank), colours=self._colours[i])
        last = i == len(self.timelines) - 1
        lane.set_compact(legend=last, time_label=last)  # one legend and label, at the bottom
        lane.setMinimumHeight(self._lane_height(i))
        lane.timeClicked.connect(self._on_time_clicked)
        # one byte scale, so heights compare; one time axis, the first lane's
        lane.y_top = self._top_bytes / lane.unit_bytes
        lane.plot.setYRange(0, lane.y_top, padding=0)
        first = self.lanes[0]
        if first is None:
            lane.plot.setXRange(*self._x_span, padding=0.01)
        else:
            lane.plot.setXLink(first.plot)
        old = self._placeholders[i]
        if old is not None:
            self._slots[i].replaceWidget(old, lane)
            old.deleteLater()
            self._placeholders[i] = None
        else:
            self._slots[i].addWidget(lane, 1)
        self.lanes[i] = lane
        return lane

    def _build_visible_soon(self, *args: Any) -> None:
        self._build_timer.start()

    def build_visible(self) -> None:
        """Build the lanes that the scroll area shows (and one more, below)."""
        view = self.scroll.viewport().rect()
        inner = self.scroll.widget()
        for i, placeholder in enumerate(self._placeholders):
            if placeholder is None:
                continue
            top_left = placeholder.mapTo(inner, placeholder.rect().topLeft())
            y = top_left.y() - self.scroll.verticalScrollBar().value()
            if y < view.bottom() + LANE_MIN_PX and y + placeholder.height() > view.top():
                self._build_lane(i)

    def build_all(self) -> list[QtMemoryTimeline]:
        """Build every lane (tests, export); returns them."""
        return [self._build_lane(i) for i in range(len(self.timelines))]

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self._build_visible_soon()

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._build_visible_soon()

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

    def y_tops_bytes(self) -> list[float]:
        """Each lane's visible top, in bytes."""
        return [lane.plot.getViewBox().viewRange()[1][1] * lane.unit_bytes for lane in self.built()]

    def x_ranges(self) -> list[tuple[float, float]]:
        """Each built lane's visible time range (ms)."""
        return [tuple(lane.plot.getViewBox().viewRange()[0]) for lane in self.built()]  # type: ignore[misc]

    def built(self) -> list[QtMemoryTimeline]:
        """The lanes built so far."""
        return [lane for lane in self.lanes if lane is not None]

    def render_now(self) -> None:
        """Draw every built lane's bands at once (tests, screenshots)."""
        for lane in self.built():
            lane.render_now()

    def _on_row_activated(self, row: int, _column: int) -> None:
        rank_text, device = self.table.item(row, 0).text(), self.table.item(row, 1).text()
        for i, (tl, rank) in enumerate(zip(self.timelines, self.ranks)):
            if str(rank) == rank_text and f"cuda:{tl.device}" == device:
                self.scroll.ensureWidgetVisible(self.lane_titles[i])
                self.detailRequested.emit(i)
                return

    def _on_time_clicked(self, t_ns: Any) -> None:
        lane = self.sender()
        if isinstance(lane, QtMemoryTimeline) and lane.tl.on_trace_axis:
            self.timeClicked.emit(int(t_ns))

    def export_target(self) -> Any:
        """The graphics of the lanes, for Export → Plot (the first lane's plot)."""
        first = self.lanes[0] if self.lanes else None
        return None if first is None else first.plot


def _top_bytes(tl: MemoryTimeline) -> float:
    """A lane's top in bytes, as :class:`QtMemoryTimeline` computes it (reserved, live)."""
    return tl.top_bytes * 1.08


def _x_span(timelines: Sequence[MemoryTimeline]) -> tuple[float, float]:
    """The union of the lanes' spans (ms)."""
    spans = [(float(t.t_ns[0]), float(t.t_ns[-1])) for t in timelines if len(t.t_ns)]
    if not spans:
        return 0.0, 1.0
    lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
    return lo / NS_PER_MS, max(hi, lo + 1) / NS_PER_MS


def _series_for(series: list[Any], tl: MemoryTimeline, rank: int) -> Any:
    for s in series:
        if getattr(s, "device_type", 1) == 1 and s.device == tl.device and s.rank in (rank, None):
            return s
    return None
