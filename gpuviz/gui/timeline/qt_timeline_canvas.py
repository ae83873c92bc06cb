"""The timeline's painted area, and how mouse, wheel and keys move and select in it.

Wheel zooms around the mouse (shift+wheel pans, wheel over the lane labels or ctrl+wheel
scrolls rows); drag pans; shift+drag, or a drag on the time axis, selects a range; W/S zoom
in/out around the mouse, A/D pan (Perfetto); Esc clears the selection. Clicks, hovers and
resizes go to the timeline as signals; painting is the painter's
(:class:`~gpuviz.gui.timeline.qt_timeline_painter.QtTimelinePainter`).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QPoint, QPointF, Qt, Signal
from PySide6.QtGui import (
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

from gpuviz.gui.timeline.viewport import AXIS_PX, GUTTER_PX, ROW_PX, Viewport

if TYPE_CHECKING:
    from gpuviz.gui.timeline.qt_timeline_painter import QtTimelinePainter
    from gpuviz.gui.timeline.timeline_model import TimelineControls

ZOOM_STEP = 1.25
PAN_STEP = 0.2


class QtTimelineCanvas(QWidget):
    """Paints the axis, lane labels and slices, and turns input into view changes.

    Signals: ``hovered(pos, global_pos)`` (mouse moved, no button down), ``clicked(pos)`` (a
    click on the lanes), ``gutterClicked(pos)`` (on the lane labels), ``resized()``.

    Parameters
    ----------
    viewport : Viewport
        The view's geometry, shared with the painter and the owner (read here).
    controls : TimelineControls
        What the input changes (zoom, pan, scroll, range, selection).
    painter : QtTimelinePainter
        What paints the canvas.
    idle : threading.Event
        Cleared while painting: the pyramid worker waits (the GIL is the paint's).
    parent : QWidget
    """

    hovered = Signal(QPointF, QPoint)
    clicked = Signal(QPointF)
    gutterClicked = Signal(QPointF)
    resized = Signal()

    def __init__(
        self,
        viewport: Viewport,
        controls: TimelineControls,
        painter: QtTimelinePainter,
        idle: threading.Event,
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._viewport = viewport
        self._controls = controls
        self._painter = painter
        self._idle = idle
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(300, 120)
        self._press: QPointF | None = None
        self._press_mode = ""
        self._press_view: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self._moved = False
        self._mouse: QPointF | None = None

    # Qt overrides ------------------------------------------------------------------------------
    def paintEvent(self, event: QPaintEvent) -> None:
        idle = self._idle
        idle.clear()  # the pyramid worker waits between its steps: the GIL is the paint's
        p = QPainter(self)
        try:
            self._painter.paint(p, self.width(), self.height())
        finally:
            p.end()
            idle.set()

    def resizeEvent(self, event: QResizeEvent) -> None:
        self.resized.emit()

    def wheelEvent(self, event: QWheelEvent) -> None:
        o = self._controls
        pos = event.position()
        dy = event.angleDelta().y()
        dx = event.angleDelta().x()
        mods = event.modifiers()
        if pos.x() < GUTTER_PX or mods & Qt.KeyboardModifier.ControlModifier:
            o.scroll_by(-dy / 120 * 3 * ROW_PX)
        elif mods & Qt.KeyboardModifier.ShiftModifier or (dx and not dy):
            o.pan_by_fraction(-(dy or dx) / 120 * 0.1)
        elif dy:
            o.zoom_at(ZOOM_STEP ** (dy / 120), self._viewport.time_at_x(pos.x()))
        event.accept()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        self.setFocus()
        if event.button() != Qt.MouseButton.LeftButton:
            return
        o = self._controls
        v = self._viewport
        self._press = pos
        self._moved = False
        self._press_view = (v.t0, v.t1, v.scroll_px)
        if pos.x() < GUTTER_PX:
            self._press_mode = "gutter"
        elif pos.y() < AXIS_PX or event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self._press_mode = "range"
            t = v.time_at_x(pos.x())
            o.preview_range(t, t)
        else:
            self._press_mode = "pan"
            self.setCursor(Qt.CursorShape.ClosedHandCursor)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        o = self._controls
        self._mouse = pos
        if self._press is None:
            self.hovered.emit(pos, event.globalPosition().toPoint())
            return
        if (pos - self._press).manhattanLength() > 3:
            self._moved = True
        v = self._viewport
        if self._press_mode == "pan" and self._moved:
            t0, t1, scroll = self._press_view
            dt = (pos.x() - self._press.x()) * (t1 - t0) / max(v.area_width(), 1)
            o.set_view_range(t0 - dt, t1 - dt)
            o.set_scroll(scroll - (pos.y() - self._press.y()))
        elif self._press_mode == "range":
            o.preview_range(v.time_at_x(self._press.x()), v.time_at_x(pos.x()))

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        if self._press is None:
            return
        pos = event.position()
        o = self._controls
        mode, moved, press = self._press_mode, self._moved, self._press
        self._press = None
        self.unsetCursor()
        if mode == "gutter" and not moved:
            self.gutterClicked.emit(pos)
        elif mode == "range":
            v = self._viewport
            t0, t1 = sorted((v.time_at_x(press.x()), v.time_at_x(pos.x())))
            if moved and t1 > t0:
                o.select_range(int(t0), int(t1))
            else:
                o.clear_range()
        elif mode == "pan" and not moved:
            self.clicked.emit(pos)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        o = self._controls
        key = event.key()
        mouse = self._mouse
        at = (
            self._viewport.time_at_x(mouse.x())
            if mouse is not None and mouse.x() >= GUTTER_PX
            else None
        )
        if key == Qt.Key.Key_W:
            o.zoom_at(ZOOM_STEP, at)
        elif key == Qt.Key.Key_S:
            o.zoom_at(1 / ZOOM_STEP, at)
        elif key == Qt.Key.Key_A:
            o.pan_by_fraction(-PAN_STEP)
        elif key == Qt.Key.Key_D:
            o.pan_by_fraction(PAN_STEP)
        elif key == Qt.Key.Key_Escape:
            o.clear_range()
            o.select_slice(-1)
        else:
            super().keyPressEvent(event)
            return
        event.accept()

    def leaveEvent(self, event: Any) -> None:
        self._mouse = None


__all__ = ["PAN_STEP", "ZOOM_STEP", "QtTimelineCanvas"]
