"""The main window's size and place: fitted to the screen at first start, then remembered.

A fixed 1600×900 window ran off a 1280×800 screen (the MFU chart, half of the findings, the
Insights buttons and the status bar out of sight). At first start the window takes the
screen's available area (``QScreen.availableGeometry``: without the task bar), up to
:data:`DEFAULT_SIZE`; after that it opens as it was closed (``QWidget.saveGeometry`` in the
window's ``QSettings``), made smaller where that no longer fits the screen.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect, QSettings, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

GEOMETRY_KEY = "window/rect"
MAXIMIZED_KEY = "window/maximized"
DEFAULT_SIZE = (1600, 1000)
"""The largest first-start size: past it the tables' columns only grow apart."""


def available_area(window: QWidget) -> QRect | None:
    """The available area of the window's screen (the primary one before it is shown)."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry() if screen is not None else None


def fit_to_screen(window: QWidget, settings: QSettings, area: QRect | None = None) -> str:
    """Size and place ``window``: as saved in ``settings`` where that fits ``area`` (the
    screen's available area by default), else as large as :data:`DEFAULT_SIZE` allows,
    centred. Returns ``"saved"`` or ``"fitted"``."""
    area = area if area is not None else available_area(window)
    saved = _saved_rect(settings)
    if saved is not None and (
        area is None or (saved.width() <= area.width() and saved.height() <= area.height())
    ):
        window.resize(saved.size())
        if area is not None and not area.contains(saved):
            saved.moveTopLeft(area.topLeft())  # a screen gone, or moved: onto this one
        window.move(saved.topLeft())
        if settings.value(MAXIMIZED_KEY) in (True, "true"):
            window.setWindowState(window.windowState() | Qt.WindowState.WindowMaximized)
        return "saved"
    if area is None:
        window.resize(*DEFAULT_SIZE)
        return "fitted"
    # The frame (title bar, borders) is the window manager's, unknown until shown: the
    # content gets the area less the frame a shown window has, else all of it.
    extra_w = max(window.frameGeometry().width() - window.width(), 0)
    extra_h = max(window.frameGeometry().height() - window.height(), 0)
    w = min(DEFAULT_SIZE[0], area.width() - extra_w)
    h = min(DEFAULT_SIZE[1], area.height() - extra_h)
    window.resize(w, h)
    window.move(
        area.x() + (area.width() - w - extra_w) // 2, area.y() + (area.height() - h - extra_h) // 2
    )
    return "fitted"


def keep_frame_inside(window: QWidget, area: QRect | None = None) -> None:
    """Once shown (its frame known), make ``window`` smaller and move it where its frame runs
    past ``area`` (the screen's available area by default)."""
    area = area if area is not None else available_area(window)
    if area is None:
        return
    frame = window.frameGeometry()
    if area.contains(frame):
        return
    over_w = max(frame.width() - area.width(), 0)
    over_h = max(frame.height() - area.height(), 0)
    if over_w or over_h:
        window.resize(window.width() - over_w, window.height() - over_h)
    frame = window.frameGeometry()
    x = min(max(frame.x(), area.x()), area.right() + 1 - frame.width())
    y = min(max(frame.y(), area.y()), area.bottom() + 1 - frame.height())
    window.move(x, y)


def remember_geometry(window: QWidget, settings: QSettings) -> None:
    """Save ``window``'s size and place (unmaximized) and whether it is maximized."""
    g = window.normalGeometry() if window.isMaximized() else window.frameGeometry()
    # The frame's place, the content's size: what fit_to_screen gives back to move/resize.
    settings.setValue(GEOMETRY_KEY, [g.x(), g.y(), window.width(), window.height()])
    settings.setValue(MAXIMIZED_KEY, window.isMaximized())
    settings.sync()


def _saved_rect(settings: QSettings) -> QRect | None:
    value = settings.value(GEOMETRY_KEY)
    try:
        x, y, w, h = (int(v) for v in value)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        return None  # none saved, or not ours
    return QRect(x, y, w, h) if w > 0 and h > 0 else None


class ScreenFit(QObject):
    """Fits a window to the screen now (:func:`fit_to_screen`), keeps its frame on the screen
    when first shown (the window manager's frame is known only then), and saves its size and
    place when it is closed.

    Parameters
    ----------
    window : QWidget
    settings : QSettings
        Where the size is remembered (a test passes its own).
    area : QRect, optional
        The screen's available area (by default the window's screen's).

    Attributes
    ----------
    how : str
        ``"saved"`` or ``"fitted"``.
    """

    def __init__(self, window: QWidget, settings: QSettings, area: QRect | None = None) -> None:
        super().__init__(window)
        self.window, self.settings, self.area = window, settings, area
        self.how = fit_to_screen(window, settings, area)
        self._shown = False
        window.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.window:
            if event.type() == QEvent.Type.Show and not self._shown:
                self._shown = True
                keep_frame_inside(self.window, self.area)
            elif event.type() == QEvent.Type.Close:
                remember_geometry(self.window, self.settings)
        return False
