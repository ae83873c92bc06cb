"""Builds level-of-detail pyramids off the GUI thread.

The work is :meth:`gpuviz.trace.lod.TimelineLod.build_iter`, a plain generator of small numpy
steps; this ``QThread`` runs it and reports progress. It never touches a widget. Its signals
are emitted on the worker thread and delivered queued, on the GUI thread.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from PySide6.QtCore import QThread, Signal

from gpuviz.trace.lod import Group, SourceKey, TimelineLod


class QtLodWorker(QThread):
    """Build the pyramids of some rows, stopping between steps when interrupted.

    Parameters
    ----------
    lod : TimelineLod
    keys : sequence of SourceKey
        Rows to build, in order (put the visible ones first).
    groups : sequence of Group
        The layout's groups (for folded-group rows).

    Signals
    -------
    progress(int, int)
        Slices done and in all; emitted at most every 200 ms, from the worker thread.
    built()
        All keys are built (not emitted when interrupted).
    """

    progress = Signal("qlonglong", "qlonglong")
    built = Signal()

    def __init__(
        self, lod: TimelineLod, keys: Sequence[SourceKey], groups: Sequence[Group]
    ) -> None:
        super().__init__()
        self._lod = lod
        self._keys = list(keys)
        self._groups = list(groups)

    def run(self) -> None:  # Qt override: runs on the worker thread
        last = 0.0
        for done, total in self._lod.build_iter(self._keys, self._groups):
            if self.isInterruptionRequested():
                return
            now = time.monotonic()
            if now - last > 0.2:
                last = now
                self.progress.emit(done, total)
        self.built.emit()
