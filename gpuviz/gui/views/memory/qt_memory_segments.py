"""The allocator's state: each segment a row of blocks, so fragmentation shows at a glance.

One row per segment, largest first, each stretched to the full width (a row's label gives its
size): live blocks in the colour of their site, blocks waiting for a cross-stream free in
orange, free (cached) memory light grey. At the snapshot the blocks are the snapshot's own; at
a chosen earlier time they are rebuilt from the history
(:func:`gpuviz.analysis.allocator_state.segments_at`). Hover a block for its size and stack.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QCursor, QPainter
from PySide6.QtWidgets import QLabel, QToolTip, QVBoxLayout, QWidget

from gpuviz.analysis.allocator import site_of
from gpuviz.analysis.allocator_state import PENDING_FREE, SegmentLayout, segments_at
from gpuviz.analysis.allocator_timeline import MemoryTimeline
from gpuviz.display import format_bytes, html_safe
from gpuviz.gui.qt_draw import draw_rects
from gpuviz.gui.qt_text import wrap_label
from gpuviz.gui.views.memory.qt_memory_timeline import NS_PER_MS, colour_of_site, site_colours
from gpuviz.gui.views.qt_plot_style import make_plot_widget
from gpuviz.trace.arrays import unique

FREE_COLOUR = "#e8e8e8"
PENDING_COLOUR = "#ff7f0e"
ROW_HEIGHT = 0.8


class _SegmentsItem(pg.GraphicsObject):
    """Segment backgrounds and blocks, one ``drawRects`` call per colour."""

    def __init__(self) -> None:
        super().__init__()
        self.groups: list[tuple[QColor, np.ndarray]] = []
        self.background = np.zeros((0, 4))
        self._bounds = QRectF()

    def set_groups(self, background: np.ndarray, groups: list[tuple[QColor, np.ndarray]]) -> None:
        self.prepareGeometryChange()
        self.background = np.ascontiguousarray(background)
        self.groups = [(c, np.ascontiguousarray(r)) for c, r in groups]
        self._bounds = QRectF(0.0, -0.5, 1.0, max(len(background), 1) + 0.5)
        self.update()

    def boundingRect(self) -> QRectF:
        return QRectF(self._bounds)

    def paint(self, painter: QPainter, *args: Any) -> None:
        painter.setPen(pg.mkPen("#777", width=0))
        painter.setBrush(pg.mkBrush(FREE_COLOUR))
        draw_rects(painter, self.background)
        painter.setPen(Qt.PenStyle.NoPen)
        for colour, rects in self.groups:
            painter.setBrush(pg.mkBrush(colour))
            draw_rects(painter, rects)


class QtMemorySegments(QWidget):
    """The segments of one device at a chosen entry (default: the snapshot)."""

    def __init__(self, tl: MemoryTimeline, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.tl = tl
        self.colours = site_colours(tl)
        self.layout_: SegmentLayout | None = None
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.PlainText)
        wrap_label(self.title)  # its figures must not widen the window
        self.plot = make_plot_widget()
        item = self.plot.getPlotItem()
        item.getViewBox().invertY(True)
        item.hideAxis("bottom")
        item.setMouseEnabled(x=True, y=True)
        self.item = _SegmentsItem()
        item.addItem(self.item)
        self.plot.scene().sigMouseMoved.connect(self._on_mouse_moved)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.title)
        lay.addWidget(self.plot, 1)
        self.show_entry(None)

    def show_entry(self, entry: int | None) -> None:
        """Show the segments after ``entry`` (None: at the snapshot)."""
        lay = segments_at(self.tl.snap, self.tl.device, entry)
        self.layout_ = lay
        n = len(lay.seg_addr)
        frac_off = lay.block_offset / np.maximum(lay.seg_size[lay.block_seg], 1)
        frac_w = lay.block_size / np.maximum(lay.seg_size[lay.block_seg], 1)
        y = lay.block_seg.astype(np.float64) - ROW_HEIGHT / 2
        rects = np.column_stack([frac_off, y, frac_w, np.full(len(y), ROW_HEIGHT)])
        background = np.column_stack(
            [np.zeros(n), np.arange(n) - ROW_HEIGHT / 2, np.ones(n), np.full(n, ROW_HEIGHT)]
        )
        site = site_of(self.tl.snap, lay.block_stack)
        groups: list[tuple[QColor, np.ndarray]] = []
        pending = lay.block_state == PENDING_FREE
        if pending.any():
            groups.append((QColor(PENDING_COLOUR), rects[pending]))
        for s in unique(site[~pending]).tolist():
            m = (~pending) & (site == s)
            groups.append((colour_of_site(self.colours, int(s)), rects[m]))
        self.item.set_groups(background, groups)
        ticks = [
            (i, f"{format_bytes(float(lay.seg_size[i]))}  s{int(lay.seg_stream[i])}")
            for i in range(n)
        ]
        item = self.plot.getPlotItem()
        item.getAxis("left").setTicks([ticks if n <= 80 else ticks[:: max(1, n // 40)]])
        item.setXRange(0, 1, padding=0.01)
        item.setYRange(-0.5, max(min(n, 24), 1) - 0.5, padding=0)
        runs = lay.free_runs()
        total_free = int(runs.sum())
        when = (
            "at the snapshot"
            if lay.exact
            else f"at {self.tl.time_of(lay.entry) / NS_PER_MS:.3f} ms (rebuilt from the history)"
        )
        largest = int(runs.max()) if len(runs) else 0
        frag = 1 - largest / total_free if total_free else 0.0
        self.title.setText(
            f"Segments {when}: {n}, reserved {format_bytes(float(lay.seg_size.sum()))}, "
            f"{len(lay.block_seg)} live blocks, free {format_bytes(total_free)} in {len(runs)} runs "
            f"(largest {format_bytes(largest)}, fragmentation {frag:.2f})"
        )

    def block_at(self, x: float, y: float) -> int:
        """The block index at a point of the plot (``-1``: none)."""
        lay = self.layout_
        if lay is None:
            return -1
        row = round(y)
        if abs(y - row) > ROW_HEIGHT / 2 or not 0 <= row < len(lay.seg_addr):
            return -1
        inrow = np.flatnonzero(lay.block_seg == row)
        off = x * lay.seg_size[row]
        hit = inrow[
            (lay.block_offset[inrow] <= off)
            & (off < lay.block_offset[inrow] + lay.block_size[inrow])
        ]
        return int(hit[0]) if len(hit) else -1

    def _on_mouse_moved(self, pos: Any) -> None:
        vb = self.plot.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(pos):
            return
        p = vb.mapSceneToView(pos)
        b = self.block_at(p.x(), p.y())
        lay = self.layout_
        if b < 0 or lay is None:
            QToolTip.hideText()
            return
        row = int(lay.block_seg[b])
        lines = [
            f"<b>{format_bytes(float(lay.block_size[b]))}</b> block at 0x{int(lay.seg_addr[row] + lay.block_offset[b]):x}"
            + (
                " (freed, waiting for another stream)" if lay.block_state[b] == PENDING_FREE else ""
            ),
            f"segment 0x{int(lay.seg_addr[row]):x}, {format_bytes(float(lay.seg_size[row]))}, stream {int(lay.seg_stream[row])}",
        ]
        stack = int(lay.block_stack[b])
        frames = self.tl.snap.stack_frames(stack)[:12] if stack >= 0 else []
        lines += [html_safe(f"{f}:{ln} {fn}", one_line=True) for f, ln, fn in frames] or [
            "<i>no stack recorded</i>"
        ]
        QToolTip.showText(QCursor.pos(), "<br>".join(lines), self.plot)
