"""Builds level-of-detail pyramids off the GUI thread.

The work is :meth:`gpuviz.trace.lod.TimelineLod.build_iter`, a plain generator of small numpy
steps; this ``QThread`` runs it and reports progress. It never touches a widget. Its signals
are emitted on the worker thread and delivered queued, on the GUI thread.

The worker shares the GIL with the GUI thread: while the GUI thread paints, every step the
worker takes makes the paint wait for the GIL (measured on a 2-core box, 1M kernels: paints
of 15 ms took 30-60 ms while the pyramids built). So between steps the worker waits while a
paint is under way (``gui_idle``, an event the timeline clears while it paints).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from PySide6.QtCore import QThread, Signal

from gpuviz.trace.lod import Group, SourceKey, TimelineLod

PAINT_WAIT_S = 0.25
"""The longest the worker waits for a paint to end, between two steps."""
START_WAIT_S = 1.0
"""The longest the worker waits, before its first step, for the GUI thread to be idle."""


class QtLodWorker(QThread):
    """Build the pyramids of some rows, stopping between steps when interrupted.

    Parameters
    ----------
    lod : TimelineLod
    keys : sequence of SourceKey
        Rows to build, in order (put the visible ones first).
    groups : sequence of Group
        The layout's groups (for folded-group rows).
    gui_idle : threading.Event, optional
        Set while the GUI thread is not painting; the worker waits for it between steps (at
        most :data:`PAINT_WAIT_S` each time).

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
        self,
        lod: TimelineLod,
        keys: Sequence[SourceKey],
        groups: Sequence[Group],
        gui_idle: threading.Event | None = None,
    ) -> None:
        super().__init__()
        self._lod = lod
        self._keys = list(keys)
        self._groups = list(groups)
        self._gui_idle = gui_idle

    def run(self) -> None:  # Qt override: runs on the worker thread
        last = 0.0
        idle = self._gui_idle
        if idle is not None:  # the timeline is being built and first painted: let it
            idle.wait(START_WAIT_S)
        if self.isInterruptionRequested():  # stopped while it waited: not even one step
            return
        for done, total in self._lod.build_iter(self._keys, self._groups):
            if self.isInterruptionRequested():
                return
            if idle is not None and not idle.is_set():
                idle.wait(PAINT_WAIT_S)  # releases the GIL: the paint runs alone
                if self.isInterruptionRequested():  # stopped during the paint
                    return
            now = time.monotonic()
            if now - last > 0.2:
                last = now
                self.progress.emit(done, total)
        self.built.emit()
