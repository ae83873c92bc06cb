"""The active memory timeline of an allocator snapshot: each live allocation a band stacked over
time, coloured by the site that allocated it, drawn at pixel resolution (LOD).

The bands are one raster per frame (:mod:`gpuviz.trace.allocator_lod`), recomputed for the
visible range on a timer after each pan or zoom, never once per event. Over them: the live
bytes (a line), the reserved bytes (dashed), the profiler's own ``Total Allocated`` when a trace
of the same run is open on the same clock (dotted), the peak and any OOM, and the chosen time.
Above: the ``external_annotations`` ranges (``ProfilerStep#N``, optimizer phases).

Hover a band for its size, stream, lifetime and stack; click to choose a time (the segments
and sites panels follow); double-click to show that moment in the Timeline.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QColor, QCursor, QImage, QPainter, QTransform
from PySide6.QtWidgets import QToolTip, QVBoxLayout, QWidget

from gpuviz.analysis.allocator import BEFORE_HISTORY, NO_SITE
from gpuviz.analysis.allocator_timeline import MemoryTimeline
from gpuviz.display import html_safe
from gpuviz.gui.qt_draw import draw_rects, premultiplied_argb
from gpuviz.gui.views.qt_plot_style import byte_unit, legend_below, style_plot_item
from gpuviz.trace.allocator_lod import row_at, stack_raster
from gpuviz.trace.arrays import unique

NS_PER_MS = 1e6
REDRAW_MS = 30  # the raster follows pans and zooms at about 30 Hz
LEFT_AXIS_PX = 60
COMPACT_ANNOTATIONS_PX = 30

# 20 distinct colours (Tableau 20), then grey for allocations without a site
SITE_COLOURS = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#a0cbe8", "#ffbe7d", "#8cd17d", "#b6992d", "#f1ce63", "#499894", "#86bcb6",
    "#d37295", "#fabfd2", "#79706e", "#d4a6c8",
)  # fmt: skip
NO_SITE_COLOUR = "#9d9d9d"
BEFORE_COLOUR = "#c9c9c9"


def site_colours(tl: MemoryTimeline) -> dict[int, QColor]:
    """A colour per site: the sites holding the most bytes at the peak get distinct ones."""
    order = [s.frame for s in tl.figures.top_sites_at_peak] + [
        s.frame for s in tl.figures.top_sites
    ]
    colours: dict[int, QColor] = {
        NO_SITE: QColor(NO_SITE_COLOUR),
        BEFORE_HISTORY: QColor(BEFORE_COLOUR),
    }
    i = 0
    for f in order:
        if f not in colours:
            colours[f] = QColor(SITE_COLOURS[i % len(SITE_COLOURS)])
            i += 1
    return colours


def shared_site_colours(timelines: list[MemoryTimeline]) -> list[dict[int, QColor]]:
    """Colours for several snapshots (ranks): a site (file, line, function) has one colour in
    all of them, the sites holding the most bytes at the peaks, over all, a distinct one."""
    held: dict[tuple[str, int, str], int] = {}
    for tl in timelines:
        for s in [*tl.figures.top_sites_at_peak, *tl.figures.top_sites]:
            if s.frame >= 0:
                key = (s.filename, s.line, s.function)
                held[key] = max(held.get(key, 0), s.bytes)
    order = sorted(held, key=lambda k: -held[k])
    colour_of = {k: QColor(SITE_COLOURS[i % len(SITE_COLOURS)]) for i, k in enumerate(order)}
    out = []
    for tl in timelines:
        colours = {NO_SITE: QColor(NO_SITE_COLOUR), BEFORE_HISTORY: QColor(BEFORE_COLOUR)}
        for s in [*tl.figures.top_sites_at_peak, *tl.figures.top_sites]:
            if s.frame >= 0:
                colours[s.frame] = colour_of[(s.filename, s.line, s.function)]
        out.append(colours)
    return out


def colour_of_site(colours: dict[int, QColor], frame: int) -> QColor:
    """The colour of a site (hashed into the palette when it is not among the top ones)."""
    c = colours.get(frame)
    if c is None:
        c = QColor(SITE_COLOURS[(frame * 2654435761) % len(SITE_COLOURS)])
        c = c.lighter(115)
    return c


def row_values(tl: MemoryTimeline, colours: dict[int, QColor]) -> np.ndarray:
    """The premultiplied ARGB value of each allocation row."""
    if len(tl.site_ids) == 0:
        return np.empty(0, dtype=np.uint32)
    palette = premultiplied_argb([colour_of_site(colours, int(s)) for s in tl.site_ids.tolist()])
    return palette[tl.row_site_index]


class _QuietAxis(pg.AxisItem):
    """An axis that sets its label's rich text only when the text changes.

    pyqtgraph sets it again (``QGraphicsTextItem.setHtml``, then a relayout) at every range
    change: about 60 times, 13 ms, while this view is built and first shown.
    """

    _shown_html: str | None = None

    def _updateLabel(self) -> None:
        html = self.labelString()
        if html != self._shown_html:
            self._shown_html = html
            super()._updateLabel()
            return
        self.picture = None  # what the rest of _updateLabel does: redraw the ticks
        self.update()


class _RasterItem(pg.GraphicsObject):
    """Draws a column-major raster (one image row per time column) over a data rectangle."""

    def __init__(self) -> None:
        super().__init__()
        self._image: QImage | None = None
        self._pixels: np.ndarray | None = None  # keeps the image's buffer alive
        self._rect = QRectF()

    def set_raster(self, pixels: np.ndarray, x0: float, dx: float, y_top: float) -> None:
        """``pixels``: ``(height, columns)`` uint32, C-contiguous, the top row first; column
        ``c`` spans ``[x0+c*dx, …)``."""
        self.prepareGeometryChange()
        h, w = pixels.shape
        # Row-major: drawn through a scale, Qt blits it. Drawn column-major through a quarter
        # turn (the raster's own layout) it took Qt's general path: 4.4 ms a frame at 2349
        # columns on the VM, against 0.7 ms now, and 1-2 ms more for stack_raster's copy.
        self._pixels = np.ascontiguousarray(pixels, dtype=np.uint32)
        self._image = QImage(
            self._pixels.data, w, h, w * 4, QImage.Format.Format_ARGB32_Premultiplied
        )
        self._rect = QRectF(x0, 0.0, dx * w, y_top)
        self._dx, self._h = dx, h
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(self._rect)

    def paint(self, painter: QPainter, *args: Any) -> None:
        if self._image is None or self._h == 0:
            return
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform, False)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        # image (column c across, pixel u from the top down) -> data (x0 + c*dx, top - u*dy)
        dy = self._rect.height() / self._h
        t = QTransform(self._dx, 0.0, 0.0, -dy, self._rect.left(), self._rect.height())
        painter.setTransform(t, True)
        painter.drawImage(QPointF(0.0, 0.0), self._image)
        painter.restore()


class _AnnotationItem(pg.GraphicsObject):
    """The annotation ranges as rows of rectangles: each paint draws those in view and at
    least half a pixel wide, one ``drawRects`` call per colour."""

    def __init__(self, rects: np.ndarray, colours: np.ndarray) -> None:
        super().__init__()
        self.rects = np.ascontiguousarray(rects, dtype=np.float64)
        self.colours = colours
        self.brushes = {
            int(c): pg.mkBrush(QColor(SITE_COLOURS[int(c) % len(SITE_COLOURS)]).lighter(130))
            for c in unique(colours)
        }
        r = self.rects
        self._bounds = (
            QRectF(
                float(r[:, 0].min()),
                0.0,
                float((r[:, 0] + r[:, 2]).max() - r[:, 0].min()),
                float((r[:, 1] + r[:, 3]).max()),
            )
            if len(r)
            else QRectF()
        )

    def boundingRect(self) -> QRectF:
        return QRectF(self._bounds)

    def paint(self, painter: QPainter, *args: Any) -> None:
        r = self.rects
        vb = self.getViewBox()
        if vb is None or len(r) == 0:
            return
        (x0, x1), _ = vb.viewRange()
        px = (x1 - x0) / max(vb.width(), 1.0)
        keep = (r[:, 0] < x1) & (r[:, 0] + r[:, 2] > x0) & (r[:, 2] >= px / 2)
        painter.setPen(pg.mkPen("#666", width=0))
        for c, brush in self.brushes.items():
            sel = r[keep & (self.colours == c)]
            if len(sel):
                painter.setBrush(brush)
                draw_rects(painter, np.ascontiguousarray(sel))


class QtMemoryTimeline(QWidget):
    """The active memory timeline of one :class:`MemoryTimeline`.

    Signals
    -------
    entryChosen(int)
        The entry of the time the user clicked (``-1``: the window's start).
    timeClicked(object)
        ns from the origin of a double-click (to show that moment in the Timeline).
    """

    entryChosen = Signal(int)
    timeClicked = Signal(object)

    def __init__(
        self,
        tl: MemoryTimeline,
        trace_series: Any = None,
        parent: QWidget | None = None,
        colours: dict[int, QColor] | None = None,
    ) -> None:
        super().__init__(parent)
        self.tl = tl
        # a view of several snapshots gives the same site the same colour in each
        self.colours = site_colours(tl) if colours is None else colours
        self.values = row_values(tl, self.colours)
        top = tl.top_bytes
        self.unit, self.unit_bytes = byte_unit(top)
        self.y_top = top * 1.08 / self.unit_bytes
        self.chosen_entry: int | None = None
        self.frames_drawn = 0

        self.graphics = pg.GraphicsLayoutWidget()
        self.graphics.setBackground("w")
        # The annotation row is a bare ViewBox beside an axis that carries its label (lined up
        # with the plot's left axis): a second PlotItem would cost about 13 ms more to build
        # (its control panel), a tenth of the first frame's budget.
        self.ann_axis = _QuietAxis("left", pen=pg.mkPen("#444"), textPen=pg.mkPen("#222"))
        self.ann_axis.setWidth(LEFT_AXIS_PX)
        self.ann_axis.setLabel("annotations", color="#222")
        self.ann_axis.setTicks([[]])
        self.ann_view = pg.ViewBox(enableMenu=False)
        self.ann_view.setMouseEnabled(x=True, y=False)
        self.ann_axis.linkToView(self.ann_view)
        # the same margins and spacing as a PlotItem's layout, so the two views line up
        self.ann_row = self.graphics.addLayout(row=0, col=0)
        self.ann_row.layout.setContentsMargins(1, 1, 1, 1)
        self.ann_row.layout.setSpacing(0)
        self.ann_row.addItem(self.ann_axis, row=0, col=0)
        self.ann_row.addItem(self.ann_view, row=0, col=1)
        # no context menus: pyqtgraph builds each (tens of ms) with its plot
        axes = {side: _QuietAxis(side) for side in ("left", "bottom", "top", "right")}
        self.plot = style_plot_item(
            self.graphics.addPlot(row=1, col=0, enableMenu=False, axisItems=axes)
        )
        for side in ("top", "right"):  # axes given to a PlotItem are shown; these two are not
            self.plot.hideAxis(side)
        self.graphics.ci.layout.setRowStretchFactor(0, 1)
        self.graphics.ci.layout.setRowStretchFactor(1, 7)
        # An axis with SI-prefix scaling rebuilds its label's rich text at every range change,
        # hidden or not: about 110 setHtml calls (24 ms) while this widget is built and shown.
        # Only the time axis keeps it; the byte axes are in a chosen unit already.
        self.ann_axis.enableAutoSIPrefix(False)
        for name in ("left", "top", "right"):
            self.plot.getAxis(name).enableAutoSIPrefix(False)
        self.ann_view.setXLink(self.plot.getViewBox())
        self.plot.getAxis("left").setWidth(LEFT_AXIS_PX)
        self.plot.setLabel("left", f"memory ({self.unit})", color="#222")
        origin = "trace start" if tl.on_trace_axis else "first recorded entry"
        self.plot.setLabel("bottom", f"time since the {origin} (ms)", color="#222")
        self.raster = _RasterItem()
        self.plot.addItem(self.raster)
        self._add_curves(trace_series)
        self._add_markers()
        self._add_annotations()
        self.chosen_line = pg.InfiniteLine(
            angle=90, movable=False, pen=pg.mkPen("#333", style=Qt.PenStyle.DashLine)
        )
        self.chosen_line.setVisible(False)
        self.plot.addItem(self.chosen_line, ignoreBounds=True)
        vb = self.plot.getViewBox()
        vb.setLimits(yMin=0)
        x0, x1 = self._x_extent()
        self.plot.setXRange(x0, x1, padding=0.01)
        self.plot.setYRange(0, self.y_top, padding=0)

        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._update_raster)
        vb.sigRangeChanged.connect(self._on_range_changed)
        vb.sigResized.connect(self._on_range_changed)
        self._hover = pg.SignalProxy(
            self.graphics.scene().sigMouseMoved, rateLimit=30, slot=self._on_mouse_moved
        )
        self.graphics.scene().sigMouseClicked.connect(self._on_mouse_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.graphics)

    # -- building -------------------------------------------------------------------------------
    def _x_extent(self) -> tuple[float, float]:
        t = self.tl.t_ns
        if len(t) == 0:
            return 0.0, 1.0
        return float(t[0]) / NS_PER_MS, max(float(t[-1]), float(t[0]) + 1) / NS_PER_MS

    def _add_curves(self, trace_series: Any) -> None:
        # The live and reserved lines are drawn per frame from the frame's columns (a point
        # per column), not from every entry: a million-point curve would cost more than the
        # bands themselves, to build and at each paint.
        legend_below(self.plot, 3)  # under the axis: it hides no band
        self.live_curve = pg.PlotDataItem(
            pen=pg.mkPen("#222", width=1), name="allocated (bands by site)"
        )
        self.reserved_curve = pg.PlotDataItem(
            pen=pg.mkPen("#555", width=1, style=Qt.PenStyle.DashLine), name="reserved"
        )
        self.plot.addItem(self.live_curve)
        self.plot.addItem(self.reserved_curve)
        tl, u = self.tl, self.unit_bytes
        if trace_series is not None and tl.on_trace_axis and len(trace_series.ts_ns):
            tx = trace_series.ts_ns / NS_PER_MS
            prof = pg.PlotDataItem(
                tx,
                trace_series.allocated_bytes / u,
                pen=pg.mkPen("#d62728", width=1.5, style=Qt.PenStyle.DotLine),
                name="profiler's Total Allocated",
            )
            self.plot.addItem(prof)
            prof.setClipToView(True)
            prof.setDownsampling(auto=True, method="peak")
            self.trace_curve = prof

    def _update_curves(self, cols: Any) -> None:
        """Step lines through each shown column's live and reserved bytes."""
        tl, u = self.tl, self.unit_bytes
        shown = np.flatnonzero(cols.shown)
        if len(shown) == 0 or len(tl.t_ns) == 0:
            self.live_curve.setData([], [])
            self.reserved_curve.setData([], [])
            return
        k = cols.entry[shown]
        live = np.where(k >= 0, tl.live[np.maximum(k, 0)], tl.baseline) / u
        reserved = tl.reserved[np.maximum(k, 0)] / u
        x0 = (cols.x0_ns + shown * cols.bucket_ns) / NS_PER_MS
        x = np.repeat(x0, 2)
        x[1::2] += cols.bucket_ns / NS_PER_MS
        self.live_curve.setData(x, np.repeat(live, 2))
        self.reserved_curve.setData(x, np.repeat(reserved, 2))

    def _add_markers(self) -> None:
        tl, fig, u = self.tl, self.tl.figures, self.unit_bytes
        peak_t = tl.time_of(fig.peak_entry) / NS_PER_MS
        self.plot.addItem(
            pg.ScatterPlotItem(
                [peak_t],
                [fig.peak_allocated_bytes / u],
                symbol="t",
                size=12,
                brush=pg.mkBrush("#222"),
                pen=pg.mkPen("#222"),
            )
        )
        label = pg.TextItem(
            f"peak {fig.peak_allocated_bytes / u:.2f} {self.unit}", color="#222", anchor=(0.5, 1.3)
        )
        label.setPos(peak_t, fig.peak_allocated_bytes / u)
        self.plot.addItem(label)
        if fig.oom is not None:
            t = tl.time_of(fig.oom.entry) / NS_PER_MS
            self.plot.addItem(pg.InfiniteLine(t, angle=90, pen=pg.mkPen("#d62728", width=2)))
            text = pg.TextItem(
                f"OOM: asked {fig.oom.request_bytes / u:.2f} {self.unit}",
                color="#d62728",
                anchor=(1.05, 0),
            )
            text.setPos(t, self.y_top)
            self.plot.addItem(text)

    def _add_annotations(self) -> None:
        lanes = self.tl.lanes
        if lanes is None or len(lanes) == 0:
            self.ann_row.hide()
            return
        rows = int(lanes.row.max()) + 1
        rects = np.column_stack(
            [
                lanes.start_ns / NS_PER_MS,
                rows - 1 - lanes.row + 0.1,
                (lanes.end_ns - lanes.start_ns) / NS_PER_MS,
                np.full(len(lanes), 0.8),
            ]
        )
        self.ann_item = _AnnotationItem(rects, lanes.group)
        self.ann_view.addItem(self.ann_item)
        self.ann_view.setYRange(0, rows, padding=0)
        self.ann_ranges = self.tl.annotations
        # names on the ranges wide enough to hold them at the full view (a label is not
        # clipped to its range, so narrow ones would pile up)
        x0, x1 = self._x_extent()
        wide = (rects[:, 2] >= 0.06 * max(x1 - x0, 1e-9)) & (lanes.row == 0)
        for i in np.flatnonzero(wide)[:30].tolist():
            t = pg.TextItem(lanes.names[i], color="#222", anchor=(0, 0.5))
            t.setPos(max(rects[i, 0], x0), rects[i, 1] + 0.4)
            self.ann_view.addItem(t)

    def set_compact(self, legend: bool = False, time_label: bool = False) -> None:
        """Fewer rows, for a lane among others (the ranks' view): the annotations a thin strip
        without its label, and the legend and the time axis's label only where asked."""
        item = getattr(self.plot, "legend", None)
        if item is not None and not legend:
            self.plot.layout.removeItem(item)
            item.hide()
        self.plot.getAxis("bottom").showLabel(time_label)
        self.ann_axis.showLabel(False)
        self.ann_row.setMaximumHeight(COMPACT_ANNOTATIONS_PX)

    # -- the raster ------------------------------------------------------------------------------
    def _on_range_changed(self, *args: Any) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def _update_raster(self) -> None:
        """Recompute the bands for the visible range at the view's pixel size."""
        vb = self.plot.getViewBox()
        (x0, x1), (y0, y1) = vb.viewRange()
        w_px = max(int(vb.width()), 16)
        h_px = max(int(vb.height()), 16)
        y1 = max(y1, 1e-9)
        # the raster starts at zero bytes: when zoomed in vertically, more rows reach the top
        full_h = int(min(h_px * y1 / max(y1 - max(y0, 0.0), 1e-9), 16384))
        al = self.tl.allocations
        # Columns at least a pixel wide (half as many as pixels to as many): each shows the
        # peak of its span and Qt widens it. Narrower ones (up to two a pixel) were dropped
        # by the nearest-pixel scaling, peaks too, and cost twice the raster.
        cols = self.tl.pyramid.columns(x0 * NS_PER_MS, x1 * NS_PER_MS, max(w_px // 2, 1))
        pixels = stack_raster(
            cols,
            al.start,
            al.end,
            al.block_bytes,
            self.values,
            full_h,
            y1 * self.unit_bytes,
            self.tl.live_rows,
            row_major=True,
        )
        self.raster.set_raster(pixels, cols.x0_ns / NS_PER_MS, cols.bucket_ns / NS_PER_MS, y1)
        self._update_curves(cols)
        self.frames_drawn += 1

    def render_now(self) -> None:
        """Compute the raster for the current view at once (tests, screenshots)."""
        self._timer.stop()
        self._update_raster()

    # -- interaction ------------------------------------------------------------------------------
    def _entry_and_level(self, scene_pos: Any) -> tuple[int, float, float] | None:
        vb = self.plot.getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            return None
        p = vb.mapSceneToView(scene_pos)
        t_ns = p.x() * NS_PER_MS
        return self.tl.entry_at(t_ns), p.y() * self.unit_bytes, t_ns

    def allocation_at(self, t_ns: float, level_bytes: float) -> int:
        """The allocation row drawn at a time and a height (``-1``: none)."""
        k = self.tl.entry_at(t_ns)
        if len(self.tl.t_ns) == 0 or t_ns < self.tl.t_ns[0] or t_ns > self.tl.t_ns[-1]:
            return -1
        al = self.tl.allocations
        return row_at(al.start, al.end, al.block_bytes, k, level_bytes)[0]

    def tooltip_html(self, row: int) -> str:
        """The hover text of an allocation row (file names escaped)."""
        tl, al = self.tl, self.tl.allocations
        u = self.unit_bytes
        size, req = int(al.block_bytes[row]), int(al.size_bytes[row])
        start = (
            "before the history began"
            if al.start[row] < 0
            else f"{tl.time_of(int(al.start[row])) / NS_PER_MS:.3f} ms"
        )
        end = (
            "still live at the snapshot"
            if al.end[row] >= len(tl.t_ns)
            else f"{tl.time_of(int(al.end[row])) / NS_PER_MS:.3f} ms"
        )
        lines = [
            f"<b>{size / u:.3f} {self.unit}</b> block ({req:,} bytes requested)",
            f"address 0x{int(al.addr[row]):x}, stream {int(al.stream[row])}",
            f"allocated {start}; freed {end}",
        ]
        stack = int(al.stack[row])
        if stack < 0:
            lines.append("<i>no stack recorded</i>")
        else:
            if al.stack_of_free[row]:
                lines.append("<i>allocated before the history began: the stack of its free</i>")
            frames = tl.snap.stack_frames(stack)[:14]
            lines += [html_safe(f"{f}:{ln} {fn}", one_line=True) for f, ln, fn in frames]
        return "<br>".join(lines)

    def _on_mouse_moved(self, args: Any) -> None:
        hit = self._entry_and_level(args[0])
        if hit is None:
            return
        _k, level, t_ns = hit
        row = self.allocation_at(t_ns, level)
        if row >= 0:
            QToolTip.showText(QCursor.pos(), self.tooltip_html(row), self.graphics)
        else:
            QToolTip.hideText()

    def _on_mouse_clicked(self, event: Any) -> None:
        if event.button() != Qt.MouseButton.LeftButton:
            return
        hit = self._entry_and_level(event.scenePos())
        if hit is None:
            return
        if event.double():
            self.timeClicked.emit(int(hit[2]))
            return
        self.choose_entry(hit[0])

    def choose_entry(self, entry: int) -> None:
        """Mark an entry's time and emit :attr:`entryChosen` (what a click does)."""
        n = len(self.tl.t_ns)
        entry = int(min(max(entry, -1), n - 1))
        self.chosen_entry = entry
        self.chosen_line.setPos(self.tl.time_of(entry) / NS_PER_MS)
        self.chosen_line.setVisible(True)
        self.entryChosen.emit(entry)
