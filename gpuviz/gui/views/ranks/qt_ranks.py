"""The Ranks view: a rank × step heatmap of one measure, the straggler, and the worst collectives.

Everything it shows comes from :func:`gpuviz.analysis.ranks.rank_analysis` (computed with the
trace's other analyses, off the GUI thread) through :mod:`gpuviz.gui.views.ranks.rank_figures`:

- the heatmap: one row per rank, one column per step, coloured by the chosen measure (step
  time, compute, communication, idle, wait in collectives, work); missing cells (a rank whose
  file lacks the step) are grey; the straggler's row is outlined in red and named above;
- the worst collectives: for each of the collectives the ranks waited longest at, every rank's
  arrival relative to the last one (a dot per rank: how long it waited), the last rank in red,
  with a table of the figures beside it.

Clicking a cell, a collective's row or a table row emits ``jumpRequested(Target)``: the trace's
tab shows that range on the Timeline, with the rank expanded (and, for a collective, the last
rank's part selected).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import (
    QComboBox,
    QGraphicsRectItem,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from gpuviz.display import tooltip_html
from gpuviz.gui.qt_text import set_plain, set_tooltip
from gpuviz.gui.timeline.timefmt import format_ns
from gpuviz.gui.views.qt_plot_style import make_plot_widget
from gpuviz.gui.views.qt_staged import StagedBuild
from gpuviz.gui.views.ranks.rank_figures import (
    MEASURE_LABELS,
    Target,
    WorstCollectives,
    cell_target,
    collective_target,
    heatmap_ms,
    reduced_text,
    straggler_text,
    worst_collectives,
)

MISSING_COLOUR = "#d9dce0"
STRAGGLER_COLOUR = "#d1242f"
ARRIVAL_COLOUR = "#4e79a7"
CELL_TEXT_MAX = 96
"""Heatmaps of at most this many cells write each cell's value in it."""
DEFAULT_MEASURE = "wait"
"""The measure shown first when no straggler is named (else the straggler's measure)."""


class QtRanksView(StagedBuild, QWidget):
    """Ranks of a multi-rank trace compared (see the module docstring).

    Parameters
    ----------
    analysis : RankAnalysis or None
        ``rank_analysis(trace)``; None for a trace of one process, or when it failed.
    n_ranks : int
        Ranks in the trace (to tell "one process" from "failed").
    error : str
        Why the analysis failed, when it did.
    reduced : ReducedRanks, optional
        A folder opened from its ranks' reductions: no events here, so a click opens its
        rank in a tab of its own, and "Open rank" opens any rank.

    Signals
    -------
    jumpRequested(Target)
        A cell or a collective was clicked: show it on the Timeline.

    The status line is there when the constructor returns; the heatmap and the worst
    collectives follow in the next event-loop turns (see
    :class:`~gpuviz.gui.views.qt_staged.StagedBuild`); ``chart``, ``table`` and the methods
    below finish them when called.
    """

    jumpRequested = Signal(object)

    def __init__(
        self,
        analysis: Any,
        n_ranks: int,
        error: str = "",
        parent: QWidget | None = None,
        reduced: Any = None,
    ) -> None:
        super().__init__(parent)
        self.analysis = analysis
        self.reduced = reduced
        self._measure = DEFAULT_MEASURE
        self._values = np.empty((0, 0))
        self._worst: WorstCollectives | None = None
        self._image: pg.ImageItem | None = None
        self._bar: pg.ColorBarItem | None = None
        self._outline: QGraphicsRectItem | None = None
        self._chart_scale = 1.0  # chart x units per ms (1000 when it shows µs)
        self._cell_texts: list[pg.TextItem] = []

        self.status = QLabel()
        self.status.setWordWrap(True)
        self.status.setTextFormat(Qt.TextFormat.PlainText)
        self.measure_box = QComboBox()
        for key, label in MEASURE_LABELS.items():
            self.measure_box.addItem(label, key)
        self.measure_box.currentIndexChanged.connect(self._on_measure_changed)
        self.cell_info = QLabel("Hover a cell for its value; click it to see it on the Timeline.")
        self.cell_info.setTextFormat(Qt.TextFormat.PlainText)
        self.cell_info.setStyleSheet("color: #555;")

        self.heatmap = make_plot_widget("Ranks × steps")
        hp = self.heatmap.getPlotItem()
        hp.invertY(True)
        hp.setLabel("left", "rank")
        hp.setLabel("bottom", "step")
        hp.getViewBox().setMouseEnabled(x=False, y=False)
        hp.hideButtons()
        self.heatmap.scene().sigMouseMoved.connect(self._on_heatmap_hover)
        self.heatmap.scene().sigMouseClicked.connect(self._on_heatmap_click)

        # A short title: a plot is at least its title's width beside its left axis (these
        # collectives' names), and in the app's window at 1280 px the chart is 382 px wide; a
        # longer title pushed its right end, the last arrivals, out of view. The axis says the
        # rest.
        self._chart = make_plot_widget("Worst collectives")
        cp = self._chart.getPlotItem()
        cp.invertY(True)
        cp.setLabel("bottom", "arrival − last arrival (ms): how long each rank waited")
        cp.getViewBox().setMouseEnabled(x=True, y=False)
        cp.hideButtons()
        self._chart.scene().sigMouseClicked.connect(self._on_chart_click)
        table = self._table = QTableWidget(0, 5)
        table.setHorizontalHeaderLabels(
            ["collective", "last rank", "its delay", "waits in all", "longest wait"]
        )
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        table.cellClicked.connect(self._on_table_click)
        self.collectives_note = QLabel()
        self.collectives_note.setWordWrap(True)
        self.collectives_note.setTextFormat(Qt.TextFormat.PlainText)

        top = QHBoxLayout()
        top.addWidget(QLabel("Measure:"))
        top.addWidget(self.measure_box)
        top.addSpacing(12)
        top.addWidget(self.cell_info, 1)
        self.rank_box = QSpinBox()
        if reduced is not None:  # drill-down: one rank's events, loaded on demand
            ranks = sorted(reduced.sources)
            self.rank_box.setRange(ranks[0], ranks[-1])
            self.rank_box.setPrefix("rank ")
            self.cell_info.setText("Hover a cell for its value; click it to open that rank.")
            open_button = QPushButton("Open rank")
            open_button.clicked.connect(lambda: self.open_rank(self.rank_box.value()))
            top.addWidget(self.rank_box)
            top.addWidget(open_button)
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addLayout(top)
        ll.addWidget(self.heatmap, 1)
        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.addWidget(self.collectives_note)
        rl.addWidget(self._chart, 3)
        rl.addWidget(self._table, 2)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        self.splitter.addWidget(right)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.status)
        layout.addWidget(self.splitter, 1)

        if analysis is None:
            self.splitter.hide()
            if error:
                set_plain(self.status, f"The ranks could not be compared: {error}")
            elif n_ranks < 2:
                self.status.setText(
                    "This trace has one process. The Ranks view compares the ranks of a "
                    "distributed job: open a folder with one trace file per rank "
                    "(gpuviz run ddp --out DIR, or torchrun with gpuviz profile)."
                )
            else:
                self.status.setText("The ranks have not been compared (no analysis).")
            return
        text = straggler_text(analysis.straggler, len(analysis.collectives))
        if reduced is not None:
            text += "\n" + reduced_text(reduced)
        self.status.setText(text)  # plain text (the label's format)
        if analysis.straggler is not None:
            self.status.setStyleSheet(f"color: {STRAGGLER_COLOUR}; font-weight: bold;")
        # Open on the measure that tells the ranks apart: what makes the straggler slower, or
        # the waiting (step times of ranks in lockstep are all alike).
        first = analysis.straggler.measure if analysis.straggler is not None else "wait"
        self._measure = first
        self.measure_box.blockSignals(True)
        self.measure_box.setCurrentIndex(list(MEASURE_LABELS).index(first))
        self.measure_box.blockSignals(False)
        # The heatmap and the collectives in the next two turns: each is some 10-20 ms on a
        # 2-core machine, and with the plots' making they stalled the GUI thread 60-130 ms.
        self._stage(self._make_heatmap, self._draw_heatmap, self._draw_collectives)
        # Neither plot is painted until drawn: a paint of an empty plot would size its axes
        # for the default range's labels (an axis grows for its labels, never shrinks back).
        for w in (self.heatmap, self._chart):
            w.setUpdatesEnabled(False)

    def _draw_heatmap(self) -> None:
        self.heatmap.setUpdatesEnabled(True)
        self._update_heatmap()

    def _draw_collectives(self) -> None:
        self._chart.setUpdatesEnabled(True)
        self._update_collectives()

    @property
    def chart(self) -> pg.PlotWidget:
        """The worst collectives' chart."""
        self.finish_build()
        return self._chart

    @property
    def table(self) -> QTableWidget:
        """The worst collectives' table."""
        self.finish_build()
        return self._table

    # -- state (tests, the trace view) ------------------------------------------------------------

    def measure(self) -> str:
        """The measure the heatmap shows (a key of ``MEASURE_LABELS``)."""
        return self._measure

    def set_measure(self, name: str) -> None:
        """Show measure ``name`` (a key of ``MEASURE_LABELS``)."""
        self.finish_build()
        if name not in MEASURE_LABELS:
            raise ValueError(
                f"unknown measure {name!r}; expected one of {', '.join(MEASURE_LABELS)}"
            )
        self.measure_box.setCurrentIndex(list(MEASURE_LABELS).index(name))

    def heatmap_values(self) -> np.ndarray:
        """The drawn heatmap in ms, (ranks, steps), NaN where a rank lacks the step."""
        self.finish_build()
        return self._values

    def image_levels(self) -> tuple[float, float]:
        """The colour scale's ends (ms)."""
        self.finish_build()
        if self._image is None:
            return (0.0, 0.0)
        lo, hi = self._image.getLevels()
        return float(lo), float(hi)

    def straggler_rank(self) -> int | None:
        """The straggler's rank, or None."""
        s = None if self.analysis is None else self.analysis.straggler
        return None if s is None else int(s.rank)

    def straggler_row(self) -> int:
        """The heatmap row outlined as the straggler's, or -1."""
        self.finish_build()
        rank = self.straggler_rank()
        if rank is None or self._outline is None:
            return -1
        return int(np.flatnonzero(self.analysis.matrix.ranks == rank)[0])

    def worst(self) -> WorstCollectives | None:
        """The collectives in the chart, worst first."""
        self.finish_build()
        return self._worst

    def click_cell(self, rank_index: int, step_index: int) -> Target | None:
        """Act as a click on a heatmap cell: emits ``jumpRequested``; returns the target."""
        if self.analysis is None:
            return None
        target = cell_target(self.analysis.matrix, rank_index, step_index)
        if target is not None:
            self.jumpRequested.emit(target)
        return target

    def open_rank(self, rank: int) -> None:
        """Ask for ``rank`` whole (``jumpRequested`` with an empty range)."""
        self.jumpRequested.emit(Target(int(rank), 0, 0))

    def click_collective(self, k: int) -> Target | None:
        """Act as a click on the ``k``-th worst collective: emits ``jumpRequested``."""
        self.finish_build()
        w = self._worst
        if self.analysis is None or w is None or not 0 <= k < len(w):
            return None
        target = collective_target(self.analysis.collectives, int(w.rows[k]))
        self.jumpRequested.emit(target)
        return target

    def cell_at(self, scene_pos: QPointF) -> tuple[int, int]:
        """The heatmap cell ``(rank index, step index)`` under a scene point, or ``(-1, -1)``."""
        self.finish_build()
        vb = self.heatmap.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            return -1, -1
        p = vb.mapSceneToView(scene_pos)
        i, j = int(np.floor(p.y() + 0.5)), int(np.floor(p.x() + 0.5))
        n_r, n_s = self._values.shape
        if 0 <= i < n_r and 0 <= j < n_s:
            return i, j
        return -1, -1

    # -- drawing ------------------------------------------------------------------------------------

    def _make_heatmap(self) -> None:
        """The heatmap's items, before their values: a turn of its own, since the colour bar
        alone took about half of the 51 ms that the heatmap's one turn held the GUI thread as a
        64-rank folder opened on a 16-core H200 host (issue 25: at most 50 ms)."""
        if self._image is not None:
            return
        m = self.analysis.matrix
        n_r, n_s = len(m.ranks), len(m.steps)  # the shape of every measure's values
        plot = self.heatmap.getPlotItem()
        # Missing cells: a grey board under the image, whose NaN cells are transparent.
        board = QGraphicsRectItem(QRectF(-0.5, -0.5, max(n_s, 1), max(n_r, 1)))
        board.setBrush(QColor(MISSING_COLOUR))
        board.setPen(QPen(Qt.PenStyle.NoPen))
        plot.addItem(board)
        self._image = pg.ImageItem(axisOrder="row-major")
        plot.addItem(self._image)
        self._set_ticks(m)
        self._bar = pg.ColorBarItem(
            values=(0.0, 1.0),
            colorMap=pg.colormap.get("viridis"),
            interactive=False,
            label="ms",
            width=14,
        )
        self._bar.setImageItem(self._image, insert_in=plot)

    def _update_heatmap(self) -> None:
        self._make_heatmap()
        m = self.analysis.matrix
        values = heatmap_ms(m, self._measure)
        self._values = values
        n_r, n_s = values.shape
        plot = self.heatmap.getPlotItem()
        finite = values[np.isfinite(values)]
        lo, hi = (float(finite.min()), float(finite.max())) if len(finite) else (0.0, 1.0)
        if hi <= lo:
            hi = lo + 1e-3
        cmap = pg.colormap.get("viridis")
        self._image.setImage(values, levels=(lo, hi), autoLevels=False)
        self._image.setColorMap(cmap)
        # After setImage: the rect scales the image's pixels, so it needs their count.
        self._image.setRect(QRectF(-0.5, -0.5, max(n_s, 1), max(n_r, 1)))
        assert self._bar is not None  # _make_heatmap
        self._bar.setLevels((lo, hi))
        plot.setTitle(f"Ranks × steps: {MEASURE_LABELS[self._measure]} (ms)", color="#222")
        self._update_cell_texts(values, lo, hi)
        rank = self.straggler_rank()
        if rank is not None and self._outline is None:
            i = int(np.flatnonzero(m.ranks == rank)[0])
            self._outline = QGraphicsRectItem(QRectF(-0.5, i - 0.5, max(n_s, 1), 1.0))
            pen = QPen(QColor(STRAGGLER_COLOUR), 2.5)
            pen.setCosmetic(True)
            self._outline.setPen(pen)
            plot.addItem(self._outline)
        plot.getViewBox().setRange(
            xRange=(-0.5, max(n_s, 1) - 0.5), yRange=(-0.5, max(n_r, 1) - 0.5), padding=0
        )

    def _update_cell_texts(self, values: np.ndarray, lo: float, hi: float) -> None:
        # Few cells: write each value in its cell (dark text on the light end of viridis).
        plot = self.heatmap.getPlotItem()
        for item in self._cell_texts:
            plot.removeItem(item)
        self._cell_texts = []
        if values.size > CELL_TEXT_MAX:
            return
        for (i, j), v in np.ndenumerate(values):
            if not np.isfinite(v):
                continue
            dark = (v - lo) / (hi - lo) > 0.6
            item = pg.TextItem(
                format_ns(float(v) * 1e6), color="#111" if dark else "#fff", anchor=(0.5, 0.5)
            )
            item.setPos(float(j), float(i))
            plot.addItem(item)
            self._cell_texts.append(item)

    def _set_ticks(self, m: Any) -> None:
        plot = self.heatmap.getPlotItem()
        n_r, n_s = len(m.ranks), len(m.steps)
        rank = self.straggler_rank()
        every_r = 1 if n_r <= 24 else (4 if n_r <= 96 else 16)
        ticks = [
            (float(i), f"{int(r)}" + (" ◀" if rank is not None and int(r) == rank else ""))
            for i, r in enumerate(m.ranks.tolist())
            if i % every_r == 0 or (rank is not None and int(r) == rank)
        ]
        plot.getAxis("left").setTicks([ticks])
        every_s = max(1, int(np.ceil(n_s / 24)))
        plot.getAxis("bottom").setTicks(
            [[(float(j), str(int(s))) for j, s in enumerate(m.steps.tolist()) if j % every_s == 0]]
        )

    def _update_collectives(self) -> None:
        table = self.analysis.collectives
        if len(table) == 0:
            self._chart.hide()
            self._table.hide()
            self.collectives_note.setText(
                "No collectives found: no NCCL kernels or gloo ranges that two ranks share."
            )
            return
        w = worst_collectives(table)
        self._worst = w
        self.collectives_note.setText(
            f"{len(table):,} collectives matched across {len(table.ranks)} ranks "
            f"(by {table.matched_by}); the {len(w)} with the most waiting. "
            + (
                "Click one to open its last rank."
                if self.reduced
                else "Click one to see it on the Timeline."
            )
        )
        plot = self._chart.getPlotItem()
        plot.clear()
        n, n_r = w.offset_ms.shape
        # Waits of microseconds (a fast interconnect) read better in µs than as 0.00x ms.
        finite = w.offset_ms[np.isfinite(w.offset_ms)]
        micro = len(finite) > 0 and float(np.abs(finite).max()) < 1.0
        self._chart_scale = 1e3 if micro else 1.0
        unit = "µs" if micro else "ms"
        bottom = plot.getAxis("bottom")
        bottom.enableAutoSIPrefix(False)
        plot.setLabel("bottom", f"arrival − last arrival ({unit}): how long each rank waited")
        ys = np.repeat(np.arange(n, dtype=np.float64), n_r)
        xs = w.offset_ms.ravel() * self._chart_scale
        cols = np.tile(np.arange(n_r), n)
        ok = np.isfinite(xs)
        is_last = np.zeros(n * n_r, dtype=bool)
        for k in range(n):
            is_last[k * n_r + int(np.flatnonzero(w.ranks == w.last_rank[k])[0])] = True
        # The wait span of each collective: from the earliest arrival to the last.
        spans = np.nanmin(w.offset_ms, axis=1) * self._chart_scale
        seg_x = np.column_stack([spans, np.zeros(n)]).ravel()
        seg_y = np.repeat(np.arange(n, dtype=np.float64), 2)
        plot.addItem(
            pg.PlotDataItem(seg_x, seg_y, connect="pairs", pen=pg.mkPen("#b8c4d6", width=5))
        )
        data = [
            (int(k), int(w.ranks[c]))
            for k, c in zip(ys[ok].astype(int).tolist(), cols[ok].tolist())
        ]
        others = ok & ~is_last
        self._arrivals = pg.ScatterPlotItem(
            x=xs[others],
            y=ys[others],
            data=[d for d, o in zip(data, (~is_last)[ok].tolist()) if o],
            size=7,
            brush=pg.mkBrush(ARRIVAL_COLOUR),
            pen=pg.mkPen("w", width=0.5),
            hoverable=True,
            tip=self._arrival_tip,
        )
        self._lasts = pg.ScatterPlotItem(
            x=xs[is_last],
            y=ys[is_last],
            data=[(k, int(w.last_rank[k])) for k in range(n)],
            size=11,
            symbol="d",
            brush=pg.mkBrush(STRAGGLER_COLOUR),
            pen=pg.mkPen("w", width=0.5),
            hoverable=True,
            tip=self._arrival_tip,
        )
        plot.addItem(self._arrivals)
        plot.addItem(self._lasts)
        for k in range(n):
            label = pg.TextItem(
                f"rank {int(w.last_rank[k])}", color=STRAGGLER_COLOUR, anchor=(0, 0.5)
            )
            label.setPos(0.0, float(k))
            plot.addItem(label)
        plot.getAxis("left").setTicks([[(float(k), w.labels[k]) for k in range(n)]])
        lo = float(np.nanmin(spans)) if n else -1.0
        plot.getViewBox().setRange(
            xRange=(min(lo, -1e-3) * 1.08, -0.18 * min(lo, -1e-3)),
            yRange=(-0.6, n - 0.4),
            padding=0,
        )
        self._table.setRowCount(n)
        for k in range(n):
            cells = [
                w.labels[k],
                f"rank {int(w.last_rank[k])}",
                format_ns(float(w.delay_ms[k]) * 1e6),
                format_ns(float(w.total_wait_ms[k]) * 1e6),
                format_ns(float(w.max_wait_ms[k]) * 1e6),
            ]
            for c, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setData(Qt.ItemDataRole.UserRole, k)
                self._table.setItem(k, c, item)

    def _arrival_tip(self, x: float, y: float, data: Any) -> str:
        # pyqtgraph sets it as the tooltip, which Qt may take for rich text: mark it as such.
        text = self._arrival_text(x, data)
        return tooltip_html(text) if text else ""

    def _arrival_text(self, x: float, data: Any) -> str:
        w = self._worst
        if w is None or not isinstance(data, tuple):
            return ""
        k, rank = data
        last = int(w.last_rank[k])
        if rank == last:
            return (
                f"rank {rank} arrived last at {w.labels[k]}, "
                f"{format_ns(float(w.delay_ms[k]) * 1e6)} after the one before it"
            )
        return (
            f"rank {rank} arrived {format_ns(-x / self._chart_scale * 1e6)} before rank {last} "
            f"and waited that long ({w.labels[k]})"
        )

    # -- events ------------------------------------------------------------------------------------

    def _on_measure_changed(self, index: int) -> None:
        self.finish_build()  # the heatmap is drawn once, then redrawn for the new measure
        key = self.measure_box.itemData(index)
        if key and key != self._measure:
            self._measure = str(key)
            if self.analysis is not None:
                self._update_heatmap()

    def _on_heatmap_hover(self, pos: QPointF) -> None:
        i, j = self.cell_at(pos)
        if i < 0:
            return
        m = self.analysis.matrix
        v = self._values[i, j]
        rank, step = int(m.ranks[i]), int(m.steps[j])
        if not np.isfinite(v):
            text = f"rank {rank} · step {step}: not in this rank's trace"
        else:
            text = (
                f"rank {rank} · step {step}: {MEASURE_LABELS[self._measure]} {format_ns(v * 1e6)}"
            )
        set_plain(self.cell_info, text)
        set_tooltip(self.heatmap, text)

    def _on_heatmap_click(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        i, j = self.cell_at(event.scenePos())
        if i >= 0:
            self.click_cell(i, j)

    def _on_chart_click(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton or self._worst is None:
            return
        vb = self._chart.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(event.scenePos()):
            return
        k = int(np.floor(vb.mapSceneToView(event.scenePos()).y() + 0.5))
        self.click_collective(k)

    def _on_table_click(self, row: int, _col: int) -> None:
        self.click_collective(row)


__all__ = ["DEFAULT_MEASURE", "QtRanksView"]
