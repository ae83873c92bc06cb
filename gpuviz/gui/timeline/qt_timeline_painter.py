"""How the timeline is painted: lane labels, slices as one image per view, marks and the axis.

:class:`QtTimelinePainter` paints a timeline's canvas from the timeline's state (its viewport,
layout, current LOD frame, marks, selection and range), all read through a
:class:`~gpuviz.gui.timeline.timeline_model.TimelineModel` (the owning ``QtTimeline`` is one;
the painter does not import it). The slices come from
:meth:`gpuviz.trace.lod.TimelineLod.frame`; :func:`gpuviz.trace.lod.raster_rows` paints them
into one row of pixels per lane, copied down the lane's height into one image drawn with one
``drawImage`` (:mod:`gpuviz.gui.qt_draw`): a frame costs pixels × lanes, however many
rectangles it has (one ``drawRects`` entry per rectangle cost a fill per scan line: 10+ ms for
the ~20k rectangles of a real 1M-kernel trace). The background and lane labels, and the slices'
image, are cached per view, so a repaint of an unchanged view only blits.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter, QPen, QPolygonF

from gpuviz.display import terminal_safe
from gpuviz.gui.qt_draw import argb_image, draw_rects, premultiplied_argb
from gpuviz.gui.timeline.marks import RowSet
from gpuviz.gui.timeline.palette import colour_table, density_colours
from gpuviz.gui.timeline.timefmt import format_ns, place_tick_labels, ticks
from gpuviz.gui.timeline.viewport import AXIS_PX, GUTTER_PX, ROW_PX
from gpuviz.trace.density import density_codes
from gpuviz.trace.lanes import RowKind
from gpuviz.trace.lod import ROW_HEIGHT, Frame, raster_rows
from gpuviz.trace.model import GPU_ACTIVITY_KINDS, TrackKind

if TYPE_CHECKING:
    from gpuviz.gui.timeline.timeline_model import TimelineModel

HIGHLIGHT_MAX = 20_000  # beyond this, highlights are merged to one mark per pixel and row

# Qt enum lookups cost microseconds each through shiboken: look them up once.
_NO_PEN = Qt.PenStyle.NoPen
_NO_BRUSH = Qt.BrushStyle.NoBrush
_ELIDE_RIGHT = Qt.TextElideMode.ElideRight
_VCENTER = Qt.AlignmentFlag.AlignVCenter


class QtTimelinePainter:
    """Paints one timeline's canvas (see the module docstring).

    Parameters
    ----------
    model : TimelineModel
        The timeline state painted (only read).
    font : QFont
        The owner's font; labels use it a point smaller.

    Attributes
    ----------
    paint_count : int
        Frames painted (tests check that redraws are coalesced).
    last_paint_ms : float
        How long the last frame took.
    """

    def __init__(self, model: TimelineModel, font: QFont) -> None:
        self._o = model
        self._colours = colour_table()
        self._argb = premultiplied_argb(self._colours)
        self._density_argb = premultiplied_argb(density_colours())
        self._font = QFont(font)
        self._font.setPointSizeF(max(self._font.pointSizeF() - 1, 7.5))
        self._bold = QFont(self._font)
        self._bold.setBold(True)
        fm = QFontMetrics(self._font)
        self._baseline = (ROW_PX + fm.ascent() - fm.descent()) / 2
        self._px_cache: tuple[Frame, tuple[Any, ...], QImage, float, np.ndarray] | None = None
        self._static: tuple[tuple[Any, ...], QImage] | None = None
        self.tick_labels_drawn: list[tuple[float, float]] = []  # the axis labels' x spans
        self._elided: dict[tuple[int, int], str] = {}
        self._hl_cache: dict[int, tuple[tuple[Any, ...], np.ndarray]] = {}
        self.last_paint_ms = 0.0
        self.paint_count = 0

    def _slice_layer(self, frame: Frame) -> tuple[QImage, float]:
        # The slices of the visible rows as one image, and the y where it goes. Painting a
        # frame's rectangles one by one costs a fill call per scan line in Qt's raster engine
        # (10+ ms for the ~20k rectangles of a real 1M-kernel trace's full view); one row of
        # pixels per lane painted in numpy, copied down the lane's height, costs about
        # pixels × lanes however many rectangles there are. Cached per view, like the frame.
        v = self._o.viewport
        key = (v.scroll_px, v.height)
        got = self._px_cache
        if got is not None and got[0] is frame and got[1] == key:
            return got[2], got[3]
        rows = v.visible_rows(len(self._o.layout_rows))
        n_rows = max(len(rows), 1)
        width = v.area_width()
        parts = [(k, arr) for k, arr in frame.rects.items() if len(arr)]
        if parts:
            buf = np.concatenate([arr for _, arr in parts])
            lut = self._argb
            keys = np.concatenate(
                [
                    np.full(len(arr), k if 0 <= k < len(lut) else 0, dtype=np.int64)
                    for k, arr in parts
                ]
            )
            sx = width / ((v.t1 - v.t0) * 1e-3)
            x0 = (buf[:, 0] - v.t0 * 1e-3) * sx
            lines = raster_rows(
                x0,
                x0 + buf[:, 2] * sx,
                np.floor(buf[:, 1]).astype(np.int64) - rows.start,
                lut[keys],
                n_rows,
                width,
            )
        else:
            lines = np.zeros((n_rows, width), dtype=np.uint32)
        if len(frame.density_rows):
            # Ranks' summary lanes: one colour per pixel column, from its busy shares.
            at = frame.density_rows - rows.start
            ok = (at >= 0) & (at < n_rows)
            if ok.any() and frame.density_busy.shape[1] == width:
                codes = density_codes(frame.density_busy[ok], frame.density_compute[ok])
                lines[at[ok]] = self._density_argb[codes]
        # Each lane: transparent gap, its row of pixels repeated over the bar's height, gap.
        top = round((1.0 - ROW_HEIGHT) / 2 * ROW_PX)
        bottom = round((1.0 + ROW_HEIGHT) / 2 * ROW_PX)
        pix = np.zeros((n_rows, ROW_PX, width), dtype=np.uint32)
        pix[:, top:bottom, :] = lines[:, None, :]
        pix = pix.reshape(n_rows * ROW_PX, width)
        img = argb_image(pix)
        y = AXIS_PX + rows.start * ROW_PX - v.scroll_px
        self._px_cache = (frame, key, img, y, pix)  # pix: the image's pixels, kept alive with it
        return img, y

    def _static_layer(self, w: int, h: int) -> QImage:
        # Background, row bands and lane labels change only on scroll, resize or fold: draw
        # them once into an image and blit it, instead of re-laying out text every frame.
        v = self._o.viewport
        key = (w, h, v.scroll_px, self._o.layout_version, self._o.devicePixelRatioF())
        if self._static is not None and self._static[0] == key:
            return self._static[1]
        dpr = self._o.devicePixelRatioF()
        img = QImage(round(w * dpr), round(h * dpr), QImage.Format.Format_ARGB32_Premultiplied)
        img.setDevicePixelRatio(dpr)
        img.fill(QColor("#ffffff"))
        p = QPainter(img)
        try:
            rows = v.visible_rows(len(self._o.layout_rows))
            lay = self._o.layout_rows
            p.setPen(_NO_PEN)
            bands_hdr, bands_alt, rank_lines = [], [], []
            for r in rows:
                y = AXIS_PX + r * ROW_PX - v.scroll_px
                if lay.kind[r] == RowKind.RANK:
                    rank_lines.append((0.0, y, float(w), 1.0))
                elif lay.kind[r] == RowKind.GROUP:
                    bands_hdr.append((0.0, y, float(w), float(ROW_PX)))
                elif int(lay.track[r]) % 2 == 1:
                    bands_alt.append((GUTTER_PX, y, float(w - GUTTER_PX), float(ROW_PX)))
            if bands_alt:
                p.setBrush(QColor("#f6f8fa"))
                draw_rects(p, np.array(bands_alt, dtype=np.float64))
            if bands_hdr:
                p.setBrush(QColor("#e9edf2"))
                draw_rects(p, np.array(bands_hdr, dtype=np.float64))
            self._paint_gutter(p, rows, h)
            if rank_lines:  # a rule above each rank: where one rank's lanes end
                p.setPen(_NO_PEN)
                p.setBrush(QColor("#c9ced4"))
                draw_rects(p, np.array(rank_lines, dtype=np.float64))
        finally:
            p.end()
        self._static = (key, img)
        return img

    def paint(self, p: QPainter, w: int, h: int) -> None:
        """Paint the whole canvas (``w`` × ``h`` pixels)."""
        v = self._o.viewport
        t_start = time.perf_counter()
        self.paint_count += 1
        p.drawImage(0, 0, self._static_layer(w, h))
        area = QRectF(GUTTER_PX, AXIS_PX, w - GUTTER_PX, h - AXIS_PX)
        # Own light grid (pyqtgraph's showGrid is too slow on every pan frame).
        tick_pos, tick_labels = ticks(v.t0, v.t1, v.area_width())
        xs = v.x_of(tick_pos)
        p.setPen(QPen(QColor("#e2e5e9"), 1))
        for x in xs.tolist():
            p.drawLine(QPointF(x, AXIS_PX), QPointF(x, h))
        # Slices.
        frame = self._o.current_frame()
        p.save()
        p.setClipRect(area)
        p.setPen(_NO_PEN)
        img, y = self._slice_layer(frame)
        p.drawImage(QPointF(GUTTER_PX, y), img)
        self._paint_pending(p, frame, w)
        self._paint_labels(p, frame)
        self._paint_highlights(p, self._o.highlight_set, QColor("#ff8c00"), 2)
        self._paint_highlights(p, self._o.match_set, QColor("#e0218a"), 2)
        self._paint_selection(p)
        self._paint_range(p, h)
        p.restore()
        self._paint_axis(p, w, xs, tick_labels)
        self.last_paint_ms = (time.perf_counter() - t_start) * 1e3

    def _paint_pending(self, p: QPainter, frame: Frame, w: int) -> None:
        v = self._o.viewport
        if not frame.pending_rows:
            return
        done, total = self._o.lod_progress
        msg = "building level of detail…" + (f" {done / total:.0%}" if total else "")
        # A plain band: a hatched brush costs tens of ms across a wide window.
        p.setBrush(QColor("#eceef1"))
        p.setPen(_NO_PEN)
        ys = [AXIS_PX + r * ROW_PX - v.scroll_px for r in frame.pending_rows]
        draw_rects(
            p,
            np.array([(GUTTER_PX, y + 2, w - GUTTER_PX, ROW_PX - 4) for y in ys], dtype=np.float64),
        )
        p.setFont(self._font)
        p.setPen(QColor("#6b7280"))
        for y in ys:
            p.drawText(QPointF(GUTTER_PX + 6, y + self._baseline), msg)

    def _paint_labels(self, p: QPainter, frame: Frame) -> None:
        v = self._o.viewport
        n = len(frame.label_rows)
        if n == 0:
            return
        p.setFont(self._font)
        p.setPen(QColor("#1f2328"))
        fm = QFontMetrics(self._font)
        sx = v.area_width() / ((v.t1 - v.t0) * 1e-3)
        x = GUTTER_PX + (frame.label_x_us - v.t0 * 1e-3) * sx
        wpx = frame.label_w_us * sx
        x0 = np.maximum(x, GUTTER_PX)
        x1 = np.minimum(x + wpx, GUTTER_PX + v.area_width())
        avail = ((x1 - x0 - 6) // 4 * 4).astype(np.int64)  # 4 px steps: the elide cache hits
        y = AXIS_PX + frame.label_y * ROW_PX - v.scroll_px + self._baseline
        ok = np.flatnonzero(avail >= 24)
        ok = ok[np.argsort(-avail[ok], kind="stable")][:300]  # text is a frame's costly part
        syms = self._o.trace.symbols
        name_ids = self._o.trace.slices.name[frame.label_rows[ok]].tolist()
        cache = self._elided
        if len(cache) > 20_000:
            cache.clear()
        for i, nid in zip(ok.tolist(), name_ids):
            a = int(avail[i])
            text = cache.get((nid, a))
            if text is None:
                # Drawn as plain text, with control characters shown (the name is data).
                text = fm.elidedText(terminal_safe(syms[nid], one_line=True), _ELIDE_RIGHT, a)
                cache[(nid, a)] = text
            if text and text != "…":
                p.drawText(QPointF(x0[i] + 3, y[i]), text)

    def _rows_px(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        v = self._o.viewport
        s = self._o.trace.slices
        tracks = s.track[rows]
        depths = np.maximum(s.depth[rows], 0)
        disp = self._o.layout_rows.rows_of(tracks, depths)
        sx = v.area_width() / (v.t1 - v.t0)
        x = GUTTER_PX + (s.start_ns[rows] - v.t0) * sx
        wpx = np.maximum(s.dur_ns[rows] * sx, 2.0)
        y = AXIS_PX + disp * ROW_PX - v.scroll_px
        return x, wpx, y.astype(np.float64), disp

    def _paint_highlights(self, p: QPainter, hl: RowSet, colour: QColor, width: int) -> None:
        rects = self.highlight_rects(hl)
        if len(rects):
            p.setBrush(_NO_BRUSH)
            p.setPen(QPen(colour, width))
            draw_rects(p, rects)

    def highlight_rects(self, hl: RowSet) -> np.ndarray:
        """Outlines of ``hl``'s slices in view, in canvas pixels (cached per view, like the frame)."""
        v = self._o.viewport
        key = (
            id(hl),
            v.t0,
            v.t1,
            v.scroll_px,
            v.width,
            v.height,
            self._o.layout_version,
        )
        got = self._hl_cache.get(id(hl))
        if got is not None and got[0] == key:
            return got[1]
        out = np.empty((0, 4), dtype=np.float64)
        vis = hl.in_view(v.t0, v.t1)
        if len(vis):
            x, wpx, y, disp = self._rows_px(vis)
            ok = (disp >= 0) & (y > AXIS_PX - ROW_PX) & (y < v.height)
            x, wpx, y, disp = x[ok], wpx[ok], y[ok], disp[ok]
            narrow = wpx < 3
            if len(x) > HIGHLIGHT_MAX and narrow.any():
                # Past a few thousand marks only one per pixel column and row can be seen:
                # mark an occupancy grid (no sort), keep wide slices as they are.
                n_cols = v.width + 1
                col = np.clip(x[narrow], 0, n_cols - 1).astype(np.int64)
                d0 = int(disp[narrow].min())
                rowpos = disp[narrow] - d0
                grid = np.zeros((int(rowpos.max()) + 1) * n_cols, dtype=bool)
                grid[rowpos * n_cols + col] = True
                cells = np.flatnonzero(grid)
                cy = AXIS_PX + (cells // n_cols + d0) * ROW_PX - v.scroll_px
                x = np.concatenate([(cells % n_cols).astype(np.float64), x[~narrow]])
                wpx = np.concatenate([np.full(len(cells), 2.0), wpx[~narrow]])
                y = np.concatenate([cy.astype(np.float64), y[~narrow]])
            x0 = np.maximum(x, GUTTER_PX - 4)
            x1 = np.minimum(x + wpx, v.width + 4)
            out = np.ascontiguousarray(
                np.stack(
                    [x0, y + 1, np.maximum(x1 - x0, 2.0), np.full(len(x0), ROW_PX - 2.0)], axis=1
                )
            )
        self._hl_cache[id(hl)] = (key, out)
        return out

    def _paint_selection(self, p: QPainter) -> None:
        selected = self._o.selected_slice()
        if selected < 0:
            return
        linked = self._o.linked_rows()
        sel = np.asarray([selected], dtype=np.int64)
        x, wpx, y, disp = self._rows_px(sel)
        p.setBrush(_NO_BRUSH)
        if disp[0] >= 0:
            p.setPen(QPen(QColor("#111111"), 2))
            self._outline(p, x[0], wpx[0], y[0])
        if len(linked) == 0 or disp[0] < 0:
            return
        lx, lw, ly, ld = self._rows_px(linked[:50])
        p.setPen(QPen(QColor("#d1242f"), 2))
        gpu = int(self._o.trace.slices.kind[selected]) in GPU_ACTIVITY_KINDS
        for i in range(len(lx)):
            if ld[i] < 0:
                continue
            p.setBrush(_NO_BRUSH)
            self._outline(p, lx[i], lw[i], ly[i])
            # The arrow goes from the end of the launch to the start of the GPU work.
            if gpu:
                a = QPointF(lx[i] + lw[i], ly[i] + ROW_PX / 2)
                b = QPointF(x[0], y[0] + ROW_PX / 2)
            else:
                a = QPointF(x[0] + wpx[0], y[0] + ROW_PX / 2)
                b = QPointF(lx[i], ly[i] + ROW_PX / 2)
            self._arrow(p, a, b)

    def _outline(self, p: QPainter, x: float, w: float, y: float) -> None:
        # Only the visible part: an off-screen slice must not leave a box at the edge.
        v = self._o.viewport
        x0, x1 = max(x, GUTTER_PX - 4.0), min(x + max(w, 3.0), v.width + 4.0)
        if x1 > x0:
            p.drawRect(QRectF(x0, y + 0.5, x1 - x0, ROW_PX - 1))

    def _arrow(self, p: QPainter, a: QPointF, b: QPointF) -> None:
        # Cut the segment to a box a little larger than the canvas, keeping its slope (far-off
        # coordinates upset the rasterizer); draw the head only when the end is on screen.
        v = self._o.viewport
        lo, hi = GUTTER_PX - 50.0, v.width + 50.0
        ax, ay, bx, by = a.x(), a.y(), b.x(), b.y()
        if (ax < lo and bx < lo) or (ax > hi and bx > hi):
            return

        def cut(px: float, py: float, qx: float, qy: float) -> tuple[float, float]:
            if px < lo or px > hi:
                edge = lo if px < lo else hi
                t = (edge - qx) / (px - qx) if px != qx else 0.0
                return edge, qy + (py - qy) * t
            return px, py

        ax, ay = cut(ax, ay, bx, by)
        bx2, by2 = cut(bx, by, ax, ay)
        p.drawLine(QPointF(ax, ay), QPointF(bx2, by2))
        if (bx2, by2) != (bx, by):
            return
        b = QPointF(bx, by)
        ang = math.atan2(by - ay, bx - ax)
        head = QPolygonF(
            [
                b,
                QPointF(b.x() - 9 * math.cos(ang - 0.4), b.y() - 9 * math.sin(ang - 0.4)),
                QPointF(b.x() - 9 * math.cos(ang + 0.4), b.y() - 9 * math.sin(ang + 0.4)),
            ]
        )
        p.setBrush(QColor("#d1242f"))
        p.drawPolygon(head)

    def _paint_range(self, p: QPainter, h: int) -> None:
        rng = self._o.selected_range()
        if rng is None:
            return
        v = self._o.viewport
        x0 = max(float(v.x_of(rng[0])), GUTTER_PX - 2.0)
        x1 = min(float(v.x_of(rng[1])), v.width + 2.0)
        if x1 < GUTTER_PX or x0 > v.width:
            return
        p.setPen(_NO_PEN)
        p.setBrush(QColor(40, 110, 220, 40))
        p.drawRect(QRectF(x0, AXIS_PX, max(x1 - x0, 1.0), h - AXIS_PX))
        p.setPen(QPen(QColor(40, 110, 220, 200), 1))
        p.drawLine(QPointF(x0, AXIS_PX), QPointF(x0, h))
        p.drawLine(QPointF(x1, AXIS_PX), QPointF(x1, h))

    def _paint_axis(self, p: QPainter, w: int, xs: np.ndarray, labels: list[str]) -> None:
        v = self._o.viewport
        p.setPen(_NO_PEN)
        p.setBrush(QColor("#f3f5f7"))
        p.drawRect(QRectF(0, 0, w, AXIS_PX))
        p.setPen(QPen(QColor("#c9ced4"), 1))
        p.drawLine(QPointF(0, AXIS_PX - 0.5), QPointF(w, AXIS_PX - 0.5))
        p.setFont(self._font)
        p.setPen(QColor("#444c56"))
        rng = self._o.selected_range()
        badge = None
        if rng is not None:
            x0, x1 = float(v.x_of(rng[0])), float(v.x_of(rng[1]))
            xm = min(max((x0 + x1) / 2, GUTTER_PX + 60), w - 60)
            badge = (xm - 50.0, xm + 50.0)
        # Tick labels around the range's badge (it covered them) and inside the canvas.
        fm = QFontMetrics(self._font)
        tick_xs = xs.tolist()
        starts = place_tick_labels(
            tick_xs, [float(fm.horizontalAdvance(t)) for t in labels], w, GUTTER_PX, badge
        )
        widths = [float(fm.horizontalAdvance(t)) for t in labels]
        self.tick_labels_drawn = [
            (st, st + wd)
            for x, st, wd in zip(tick_xs, starts, widths, strict=True)
            if st is not None and x >= GUTTER_PX - 1
        ]
        for x, text, start in zip(tick_xs, labels, starts, strict=True):
            if x < GUTTER_PX - 1:
                continue
            p.drawLine(QPointF(x, AXIS_PX - 6), QPointF(x, AXIS_PX))
            if start is not None:
                p.drawText(
                    QRectF(start, 0, fm.horizontalAdvance(text) + 2, AXIS_PX - 4), _VCENTER, text
                )
        if rng is not None and badge is not None:
            a, b = rng
            xm = (badge[0] + badge[1]) / 2
            text = format_ns(b - a)
            p.setPen(_NO_PEN)
            p.setBrush(QColor(40, 110, 220))
            r = QRectF(xm - 50, 3, 100, AXIS_PX - 6)
            p.drawRoundedRect(r, 4, 4)
            p.setPen(QColor("#ffffff"))
            p.setFont(self._bold)
            p.drawText(r, Qt.AlignmentFlag.AlignCenter, text)
        # Top-left corner: what the axis counts from.
        p.setPen(_NO_PEN)
        p.setBrush(QColor("#e9edf2"))
        p.drawRect(QRectF(0, 0, GUTTER_PX, AXIS_PX))
        p.setPen(QColor("#57606a"))
        p.setFont(self._font)
        span = format_ns(v.t1 - v.t0)
        p.drawText(
            QRectF(6, 0, GUTTER_PX - 8, AXIS_PX), _VCENTER, f"time from trace start · view {span}"
        )

    def _paint_gutter(self, p: QPainter, rows: range, h: int) -> None:
        v = self._o.viewport
        lay = self._o.layout_rows
        p.save()
        p.setClipRect(QRectF(0, AXIS_PX, GUTTER_PX, h - AXIS_PX))
        p.setPen(_NO_PEN)
        p.setBrush(QColor("#fbfbfc"))
        p.drawRect(QRectF(0, AXIS_PX, GUTTER_PX, h - AXIS_PX))
        fm = QFontMetrics(self._font)
        matches = self._o.rank_matches()
        for r in rows:
            y = AXIS_PX + r * ROW_PX - v.scroll_px
            label = lay.labels[r]
            if lay.kind[r] == RowKind.RANK:
                self._paint_rank_label(p, r, y, matches)
                continue
            if lay.kind[r] == RowKind.GROUP:
                p.setPen(_NO_PEN)
                p.setBrush(QColor("#e9edf2"))
                p.drawRect(QRectF(0, y, GUTTER_PX, ROW_PX))
                folded = int(lay.group[r]) in lay.folded_groups
                self._triangle(p, 6, y, folded)
                p.setFont(self._bold)
                p.setPen(QColor("#24292f"))
                text = QFontMetrics(self._bold).elidedText(
                    terminal_safe(label, one_line=True), _ELIDE_RIGHT, GUTTER_PX - 24
                )
                p.drawText(QRectF(20, y, GUTTER_PX - 22, ROW_PX), _VCENTER, text)
                continue
            if not label:
                continue
            t = int(lay.track[r])
            indent = 20
            if lay.foldable_track(t):
                self._triangle(p, 20, y, t in lay.folded_tracks)
                indent = 34
            p.setFont(self._font)
            kind = int(self._o.trace.tracks.kind[t])
            ann = kind in (TrackKind.GPU_ANNOTATION, TrackKind.CPU_ANNOTATION)
            p.setPen(QColor("#6e7781" if ann else "#24292f"))
            text = fm.elidedText(
                terminal_safe(label, one_line=True), _ELIDE_RIGHT, GUTTER_PX - indent - 4
            )
            p.drawText(QRectF(indent, y, GUTTER_PX - indent - 2, ROW_PX), _VCENTER, text)
        p.restore()
        p.setPen(QPen(QColor("#c9ced4"), 1))
        p.drawLine(QPointF(GUTTER_PX - 0.5, 0), QPointF(GUTTER_PX - 0.5, h))

    def _paint_rank_label(self, p: QPainter, r: int, y: float, matches: dict[int, int]) -> None:
        lay = self._o.layout_rows
        rank = int(lay.row_rank[r])
        p.setPen(_NO_PEN)
        p.setBrush(QColor("#dfe6ee"))
        p.drawRect(QRectF(0, y, GUTTER_PX, ROW_PX))
        self._triangle(p, 6, y, rank in lay.collapsed_ranks)
        p.setFont(self._bold)
        p.setPen(QColor("#1f2328"))
        p.drawText(QRectF(20, y, GUTTER_PX - 22, ROW_PX), _VCENTER, lay.labels[r])
        n = matches.get(rank, 0)
        if n:
            p.setFont(self._font)
            p.setPen(QColor("#b3186d"))
            text = f"{n:,} match{'es' if n != 1 else ''}"
            p.drawText(
                QRectF(20, y, GUTTER_PX - 28, ROW_PX),
                _VCENTER | Qt.AlignmentFlag.AlignRight,
                text,
            )

    def _triangle(self, p: QPainter, x: float, y: float, folded: bool) -> None:
        c = y + ROW_PX / 2
        if folded:
            pts = [QPointF(x + 2, c - 4.5), QPointF(x + 8, c), QPointF(x + 2, c + 4.5)]
        else:
            pts = [QPointF(x, c - 3), QPointF(x + 9, c - 3), QPointF(x + 4.5, c + 3)]
        p.setPen(_NO_PEN)
        p.setBrush(QColor("#57606a"))
        p.drawPolygon(QPolygonF(pts))


__all__ = ["HIGHLIGHT_MAX", "QtTimelinePainter"]
