"""Views built over several event-loop turns, so that opening one never stalls the GUI thread.

A pyqtgraph plot costs several ms to create and a chart as much to fill: a view of three plots
built in one go held the GUI thread 80-100 ms on a 2-core machine as a 64-rank folder opened
(issue 25: never more than 50 ms). A :class:`StagedBuild` view builds its widgets in its
constructor and queues the rest as steps, one per event-loop turn; anything that needs the
whole view (a test, an export, a click handler) calls :meth:`StagedBuild.finish_build` first.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

STEP_DELAY_MS = 1
"""The wait before each queued step (see :meth:`StagedBuild._schedule`)."""


class StagedBuild:
    """Mixin for a QObject: ``_stage(step, ...)`` runs each step in a later event-loop turn."""

    _steps: list[Callable[[], None]]

    def _stage(self, *steps: Callable[[], None]) -> None:
        """Queue ``steps``, run in order, one per event-loop turn after this one."""
        pending = getattr(self, "_steps", None)
        self._steps = [*(pending or []), *steps]
        if not pending and self._steps:
            self._schedule()

    def _schedule(self) -> None:
        assert isinstance(self, QObject)
        # With ``self`` as context, Qt drops the call when the view is deleted first (a tab
        # closed, a window closed before its views finished building). The call holds the
        # view only weakly: PySide kept a dropped call's callable, and a bound method kept
        # the closed view, its plots and its trace alive.
        step = weakref.WeakMethod(self._run_next_step)

        def run() -> None:
            method = step()
            if method is not None:
                method()

        # 1 ms, not 0: a 0 ms single shot is a posted event, and Qt ran two or three queued
        # steps back to back before any timer or input (a 5 ms ticker saw "SS t SS t SS");
        # a real timer lets the event loop turn between steps ("t S t S t S").
        QTimer.singleShot(STEP_DELAY_MS, self, run)

    def _run_next_step(self) -> None:
        if not self._steps:
            return
        self._steps.pop(0)()
        if self._steps:
            self._schedule()

    def build_pending(self) -> bool:
        """Whether steps of the build are still queued."""
        return bool(getattr(self, "_steps", None))

    def finish_build(self) -> None:
        """Run the queued steps now (for what needs the whole view: tests, exports, clicks)."""
        while getattr(self, "_steps", None):
            self._steps.pop(0)()


__all__ = ["StagedBuild"]
