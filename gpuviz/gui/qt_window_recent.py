"""The main window's recent-files list and the import cache's Clear.

A part of :class:`~gpuviz.gui.qt_main_window.MainWindow` (``recent_paths``,
``clear_trace_cache``), kept apart because it is its own concern; the window owns the state it
uses. The list lives in the window's ``QSettings`` under ``recent_traces``, newest first.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuviz.display import menu_safe

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMenu

RECENT_KEY = "recent_traces"
RECENT_MAX = 10


class MainWindowRecentMixin:
    """Recent files and the trace cache of the main window (mixed into ``MainWindow``)."""

    if TYPE_CHECKING:  # what the window provides
        settings: Any
        recent_menu: QMenu

        def open_trace(self, path: str | os.PathLike[str]) -> None: ...
        def statusBar(self) -> Any: ...

    # -- recent files -------------------------------------------------------------------------
    def recent_paths(self) -> list[str]:
        """The recent-files list, newest first."""
        value = self.settings.value(RECENT_KEY, [])
        # QSettings (INI) hands back a str for a one-item list, and None for an empty one.
        if isinstance(value, str):
            return [value]
        return [str(v) for v in value] if isinstance(value, (list, tuple)) else []

    def _remember(self, path: str) -> None:
        p = str(Path(path).resolve())
        paths = [p, *[q for q in self.recent_paths() if q != p]][:RECENT_MAX]
        self.settings.setValue(RECENT_KEY, paths)
        self.settings.sync()

    def _update_recent_menu(self) -> None:
        self.recent_menu.clear()
        paths = self.recent_paths()
        for p in paths:
            a = self.recent_menu.addAction(menu_safe(p))
            a.setEnabled(os.path.exists(p))
            a.triggered.connect(partial(self.open_trace, p))
        if not paths:
            self.recent_menu.addAction("(none yet)").setEnabled(False)
        else:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list").triggered.connect(self._on_clear_recent)

    def _on_clear_recent(self) -> None:
        self.settings.setValue(RECENT_KEY, [])

    # -- the import cache -------------------------------------------------------------------
    def clear_trace_cache(self) -> int:
        """Delete the import cache's entries; says how much was freed; returns the bytes.

        Open tabs keep working: their columns stay mapped until they are closed.
        """
        from gpuviz.trace.cache import clear_cache

        freed = clear_cache()
        self.statusBar().showMessage(f"Cleared the trace cache: freed {_size_text(freed)}", 10000)
        return freed

    def _on_clear_cache(self) -> None:
        self.clear_trace_cache()


def _size_text(n: int) -> str:
    """``n`` bytes as ``"0 bytes"``, ``"512.0 kB"``, ``"250.1 MB"`` or ``"4.20 GB"``."""
    if n < 1000:
        return f"{n} bytes"
    if n < 10**6:
        return f"{n / 1e3:.1f} kB"
    if n < 10**9:
        return f"{n / 1e6:.1f} MB"
    return f"{n / 1e9:.2f} GB"


__all__ = ["RECENT_KEY", "RECENT_MAX", "MainWindowRecentMixin"]
