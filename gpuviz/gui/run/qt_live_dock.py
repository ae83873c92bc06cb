"""The Live run dock, folded to its title bar while no run is going, so the traces get the room.

Unfolded, the live plots took about 40% of the window's height with nothing to show (the
Timeline got about 350 px of a 1000 px screen). Folded, the dock is one line: an arrow button,
"Live run", and what it would show. A run (or a replay) unfolds it; once the run's trace is
shown it folds again, unless the user keeps it open, or the run compared strategies (the
comparison is its result). Clicking the arrow is the user's choice, kept in the settings
(:data:`OPEN_KEY`) for the next window.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QDockWidget, QHBoxLayout, QLabel, QToolButton, QWidget

from gpuviz.gui.qt_text import set_plain

OPEN_KEY = "run/live_open"
"""The settings key of the user's choice: the live dock open (true) or folded while idle."""
HEIGHT_KEY = "run/live_height"
DEFAULT_HEIGHT_PX = 330
MAX_SHARE = 0.5
"""Unfolding takes at most this share of the window's height (the trace keeps the rest)."""
QWIDGETSIZE_MAX = (1 << 24) - 1


class QtLiveDock(QObject):
    """Folds and unfolds a run controller's Live run dock.

    Parameters
    ----------
    ctl : QtRunController
        Its ``live_dock`` (holding ``bottom``, the Live and Strategies tabs), ``window``,
        ``settings`` and run signals are used.
    """

    def __init__(self, ctl: Any) -> None:
        super().__init__(ctl)  # its parent, not an attribute: no reference cycle with it
        self.dock: QDockWidget = ctl.live_dock
        self.window = ctl.window
        self.settings = ctl.settings
        self.button = QToolButton()
        self.button.setObjectName("live_fold")
        self.button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.button.setText("Live run")
        self.button.setAutoRaise(True)
        self.button.clicked.connect(self._on_button_clicked)
        self.note = QLabel()
        self.note.setStyleSheet("color: #777;")
        bar = QWidget()
        row = QHBoxLayout(bar)
        row.setContentsMargins(4, 1, 4, 1)
        row.addWidget(self.button)
        row.addWidget(self.note, 1)
        # A title bar of our own; a drag on it still moves and floats the dock (Qt passes the
        # mouse events that the bar's widgets ignore on to the dock).
        self.dock.setTitleBarWidget(bar)
        self._height = _int(self.settings.value(HEIGHT_KEY), DEFAULT_HEIGHT_PX)
        self._open = False
        self._resize(self._height)  # when open; a layout restored later overrides it
        ctl.runStarted.connect(self._on_run_started)
        ctl.runEnded.connect(self._on_run_ended)
        ctl.resultShown.connect(self._on_result_shown)
        self.set_open(self.user_wants_open())
        self._update_note()

    @property
    def ctl(self) -> Any:
        """The run controller whose dock this folds."""
        return self.parent()

    # -- state --------------------------------------------------------------------------------
    def is_open(self) -> bool:
        """Whether the live plots are shown (False: folded to the title bar)."""
        return self._open

    def user_wants_open(self) -> bool:
        """The user's last choice (default: folded while no run is going)."""
        return str(self.settings.value(OPEN_KEY, "false")).lower() in ("true", "1")

    def set_open(self, open_: bool, remember: bool = False) -> None:
        """Unfold (``True``) or fold the dock; with ``remember``, as the user's choice."""
        if remember:
            self.settings.setValue(OPEN_KEY, bool(open_))
            self.settings.sync()
        content = self.dock.widget()
        if open_ == self._open and content.isHidden() != open_:
            return
        self._open = open_
        if open_:
            folded = content.isHidden()
            self.dock.setMaximumHeight(QWIDGETSIZE_MAX)
            content.show()
            if folded:  # back to the height it had (a restored layout's, at start)
                self._resize(min(self._height, int(self.window.height() * MAX_SHARE)))
        else:
            if content.isVisible() and self.dock.height() > 2 * self.dock.minimumHeight():
                self._height = self.dock.height()  # unfolding gives it back
                self.settings.setValue(HEIGHT_KEY, self._height)
            content.hide()
            # Only the title bar: the dock area shrinks to it and the trace takes the rest.
            self.dock.setMaximumHeight(self.dock.minimumSizeHint().height())
        self.button.setArrowType(Qt.ArrowType.DownArrow if open_ else Qt.ArrowType.RightArrow)
        self.button.setToolTip(
            "Fold the live plots (the trace gets the room)"
            if open_
            else "Show the live plots of the run (a run shows them by itself)"
        )
        self._update_note()

    def _resize(self, height: int) -> None:
        self.window.resizeDocks([self.dock], [max(height, 1)], Qt.Orientation.Vertical)

    # -- handlers -----------------------------------------------------------------------------
    def _on_button_clicked(self) -> None:
        self.set_open(not self._open, remember=True)

    def _on_run_started(self, _request: Any) -> None:
        self.dock.show()  # also when the user closed it from the View menu
        self.set_open(True)
        self._update_note()

    def _on_run_ended(self, _end: Any) -> None:
        self._update_note()

    def _on_result_shown(self, _view: Any) -> None:
        compared = self.ctl.bottom.isTabEnabled(1)  # the Strategies tab: the run's result
        if not compared and not self.ctl.is_running():
            self.set_open(self.user_wants_open())

    def _update_note(self) -> None:
        if self.ctl.is_running():
            text = f"running {self.ctl.label}"
        elif self.ctl.terminal is not None:
            text = f"last run: {self.ctl.label}, {type(self.ctl.terminal).__name__.lower()}"
        else:
            text = "no run going" + ("" if self._open else "; a run shows its plots here")
        set_plain(self.note, text)


def _int(value: Any, default: int) -> int:
    try:
        return max(int(value), 1)
    except (TypeError, ValueError):
        return default


def install_live_dock(ctl: Any) -> QtLiveDock:
    """Fold ``ctl``'s Live run dock while idle (as the user last chose); returns the folder.

    Call it before a saved window layout is restored, which then sets the open dock's height.
    """
    folder = QtLiveDock(ctl)
    ctl.live_fold = folder
    return folder


__all__ = ["HEIGHT_KEY", "OPEN_KEY", "QtLiveDock", "install_live_dock"]
