"""The Memory view: allocated and reserved memory per device over time, peaks marked.

Clicking the plot asks for the Timeline to move to that moment (:attr:`QtMemoryView.timeClicked`).

With CUDA allocator snapshots (opened with the trace, or alone) the view has a second mode,
"Allocator snapshot" (:mod:`qt_memory_snapshot`), shown first; "Trace counters" is the plot of
the trace's ``[memory]`` events.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QStackedWidget, QTabBar, QVBoxLayout, QWidget

from gpuviz.gui.qt_text import set_plain
from gpuviz.gui.views.qt_plot_style import byte_unit, color, legend_below, make_plot_widget

NS_PER_MS = 1e6
LEGEND_COLUMNS = 4  # two devices' allocated and reserved curves a line


def _steps(ts_ns: np.ndarray, values: np.ndarray, end_ns: int) -> tuple[np.ndarray, np.ndarray]:
    """A step curve: each value holds until the next event (and the last one until ``end_ns``)."""
    x = np.repeat(np.append(ts_ns, max(end_ns, int(ts_ns[-1]))), 2)[1:-1]
    y = np.repeat(values, 2)
    return x.astype(np.float64), y.astype(np.float64)


def _device_label(series: Any) -> str:
    dev = f"cuda:{series.device}" if series.device_type == 1 else f"cpu:{series.device}"
    return dev if series.rank is None else f"rank {series.rank} {dev}"


class QtMemoryView(QWidget):
    """Allocator memory of each device over the trace, from ``memory_series``.

    Signals
    -------
    timeClicked(int)
        A time in ns (relative to the trace zero) where the user clicked the plot.

    Parameters
    ----------
    series : list of MemorySeries or None
        From :func:`gpuviz.analysis.memory.memory_series`.
    end_ns : int
        The trace's end, so each curve holds its last value to the end.
    error : str
        Shown when the series could not be computed.
    """

    timeClicked = Signal(object)

    def __init__(
        self,
        series: list[Any] | None,
        end_ns: int,
        error: str = "",
        parent: QWidget | None = None,
        snapshots: list[Any] | None = None,
        snapshot_error: str = "",
        snapshot_ranks: list[int] | None = None,
        snapshot_table: Any = None,
    ) -> None:
        super().__init__(parent)
        self.series = series or []
        self.end_ns = int(end_ns)
        self.snapshot_view: Any = None
        self.ranks_view: Any = None
        self.rank_pages: Any = None
        self._snapshot_ranks = snapshot_ranks or []
        self._snapshot_table = snapshot_table
        counters = QWidget()
        self.plot = make_plot_widget("GPU memory (caching allocator)")
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.time_marker = pg.InfiniteLine(
            angle=90, movable=False, pen=pg.mkPen("#888", style=Qt.PenStyle.DashLine)
        )
        self.time_marker.setVisible(False)
        self.peaks: list[tuple[str, int, int]] = []  # (label, t_ns, bytes) of each marked peak
        layout = QVBoxLayout(counters)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.plot, 1)
        layout.addWidget(self.info)
        self._build_modes(counters, snapshots or [], snapshot_error)
        if series is None:
            self.plot.hide()
            set_plain(self.info, f"Memory could not be computed: {error or 'not available'}")
        elif not self.series:
            self.plot.hide()
            set_plain(
                self.info,
                "This trace has no GPU [memory] events. Record with "
                "torch.profiler.profile(profile_memory=True) to see allocator memory.",
            )
        else:
            self._update_plot()
            self.plot.scene().sigMouseClicked.connect(self._on_mouse_clicked)

    def _build_modes(self, counters: QWidget, snapshots: list[Any], snapshot_error: str) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.modes = QTabBar()
        self.pages = QStackedWidget()
        if snapshots or snapshot_error:
            if snapshots:
                from gpuviz.gui.views.memory.qt_memory_snapshot import QtMemorySnapshotView

                self.snapshot_view = QtMemorySnapshotView(snapshots, self.series)
                self.snapshot_view.timeClicked.connect(self._on_snapshot_time_clicked)
                page: QWidget = self.snapshot_view
                if self._snapshot_table is not None and len(set(self._snapshot_ranks)) >= 2:
                    page = self._rank_pages(snapshots)
            else:
                page = QLabel(f"The allocator snapshot could not be read: {snapshot_error}")
                page.setTextFormat(Qt.TextFormat.PlainText)
                page.setWordWrap(True)
            self.modes.addTab("Allocator snapshot")
            self.pages.addWidget(page)
            self.modes.addTab("Trace counters")
            self.modes.currentChanged.connect(self.pages.setCurrentIndex)
            outer.addWidget(self.modes)
        self.pages.addWidget(counters)
        outer.addWidget(self.pages, 1)

    def _rank_pages(self, snapshots: list[Any]) -> QWidget:
        """Snapshots of several ranks: "All ranks" (stacked, :mod:`qt_memory_ranks`) first,
        then "One rank" (the single-snapshot panels, with a choice of rank and device)."""
        from PySide6.QtWidgets import QTabWidget

        from gpuviz.gui.views.memory.qt_memory_ranks import QtMemoryRanksView

        self.ranks_view = QtMemoryRanksView(
            snapshots, self._snapshot_ranks, self._snapshot_table, self.series
        )
        self.ranks_view.timeClicked.connect(self._on_snapshot_time_clicked)
        self.ranks_view.detailRequested.connect(self.show_rank_detail)
        self.rank_pages = QTabWidget()
        self.rank_pages.setDocumentMode(True)
        self.rank_pages.addTab(self.ranks_view, "All ranks")
        self.rank_pages.addTab(self.snapshot_view, "One rank")
        return self.rank_pages

    def show_rank_detail(self, index: int) -> None:
        """Show one (rank, device) snapshot's panels: timeline, segments and sites."""
        if self.rank_pages is not None and self.snapshot_view is not None:
            self.snapshot_view.picker.setCurrentIndex(index)
            self.rank_pages.setCurrentWidget(self.snapshot_view)

    def set_mode(self, name: str) -> None:
        """Show ``"snapshot"`` or ``"counters"`` (when the view has both)."""
        if self.modes.count():
            self.modes.setCurrentIndex(0 if name == "snapshot" else 1)

    def _on_snapshot_time_clicked(self, t_ns: Any) -> None:
        self.timeClicked.emit(int(t_ns))

    def _update_plot(self) -> None:
        item = self.plot.getPlotItem()
        peak_all = max(
            max(int(s.peak_allocated_bytes), int(s.peak_reserved_bytes or 0)) for s in self.series
        )
        unit, size = byte_unit(peak_all)
        item.setLabel("left", f"memory ({unit})", color="#222")
        item.setLabel("bottom", "time since trace start (ms)", color="#222")
        legend_below(item, LEGEND_COLUMNS)  # under the axis: it hides no curve
        notes = []
        for i, s in enumerate(self.series):
            if len(s.ts_ns) == 0:
                continue
            c = color(i)
            label = _device_label(s)
            x, y = _steps(s.ts_ns, s.allocated_bytes, self.end_ns)
            name = f"{label} allocated" + (" (running sum of Bytes)" if s.from_deltas else "")
            self._add_curve(item, x / NS_PER_MS, y / size, pg.mkPen(c, width=2), name)
            if s.reserved_bytes is not None:
                x, y = _steps(s.ts_ns, s.reserved_bytes, self.end_ns)
                pen = pg.mkPen(c, width=1.5, style=Qt.PenStyle.DashLine)
                self._add_curve(item, x / NS_PER_MS, y / size, pen, f"{label} reserved")
            k = int(np.argmax(s.allocated_bytes))
            t_peak, peak = int(s.ts_ns[k]), int(s.allocated_bytes[k])
            self.peaks.append((label, t_peak, peak))
            item.addItem(
                pg.ScatterPlotItem(
                    [t_peak / NS_PER_MS],
                    [peak / size],
                    symbol="t",
                    size=12,
                    brush=pg.mkBrush(c),
                    pen=pg.mkPen("#222"),
                )
            )
            # Put the label on the side of the marker that has room.
            near_end = t_peak > 0.75 * self.end_ns
            text = pg.TextItem(
                f"peak {peak / size:.2f} {unit}",
                color="#222",
                anchor=(1.0 if near_end else 0.0, 1.2),
            )
            text.setPos(t_peak / NS_PER_MS, peak / size)
            item.addItem(text)
            res = (
                ""
                if s.peak_reserved_bytes is None
                else f", reserved peak {int(s.peak_reserved_bytes) / size:.2f} {unit}"
            )
            notes.append(
                f"{label}: allocated peak {peak / size:.2f} {unit} at {t_peak / NS_PER_MS:.3f} ms{res}"
                + (
                    " (running sum of Bytes deltas from the trace start: a 2021-era trace)"
                    if s.from_deltas
                    else ""
                )
            )
        item.addItem(self.time_marker, ignoreBounds=True)
        item.setXRange(0, self.end_ns / NS_PER_MS, padding=0.02)
        # Memory reads against zero; running sums of deltas (2021 era) may dip below it.
        low = min(0, *(int(x.allocated_bytes.min()) for x in self.series if len(x.ts_ns)))
        item.setYRange(low / size, peak_all / size * 1.15, padding=0)
        set_plain(
            self.info,
            "  ·  ".join(notes) + "   —   click the plot to show that moment in the Timeline.",
        )

    @staticmethod
    def _add_curve(item: pg.PlotItem, x: np.ndarray, y: np.ndarray, pen: Any, name: str) -> None:
        curve = pg.PlotDataItem(x, y, pen=pen, name=name)
        item.addItem(curve)
        # Set after addItem: pyqtgraph 0.14 fails (autoRangeEnabled on the PlotWidget) when a
        # clipped item is added to a PlotWidget's scene before it has its ViewBox parent.
        curve.setClipToView(True)
        curve.setDownsampling(auto=True, method="peak")

    def _on_mouse_clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        vb = self.plot.getPlotItem().getViewBox()
        pos = event.scenePos()
        if not vb.sceneBoundingRect().contains(pos):
            return
        t_ms = vb.mapSceneToView(pos).x()
        self.click_at_time(round(t_ms * NS_PER_MS))

    def click_at_time(self, t_ns: int) -> None:
        """Mark ``t_ns`` on the plot and emit :attr:`timeClicked` (what a click does)."""
        t_ns = int(min(max(t_ns, 0), self.end_ns))
        self.time_marker.setPos(t_ns / NS_PER_MS)
        self.time_marker.setVisible(True)
        self.timeClicked.emit(t_ns)

    def export_target(self) -> Any:
        """The graphics scene that Export → Plot writes."""
        page = self.pages.currentWidget()
        if page is not None and page is self.rank_pages:
            shown = self.rank_pages.currentWidget()
            return shown.export_target()
        if self.snapshot_view is not None and page is self.snapshot_view:
            return self.snapshot_view.export_target()
        return self.plot.getPlotItem() if self.series else None
