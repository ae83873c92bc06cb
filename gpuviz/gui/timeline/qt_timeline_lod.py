"""The Timeline's level of detail: the pyramid worker thread, and the frame of the current view.

A part of :class:`~gpuviz.gui.timeline.qt_timeline.QtTimeline` (see its module docstring for
the interface: ``lod``, ``lod_ready``, ``wait_ready``, ``stop_worker``, ``current_frame``),
kept apart because it is its own concern; the widget owns the state it uses. Pyramids of big
rows are built by a worker ``QThread``
(:class:`~gpuviz.gui.timeline.qt_lod_worker.QtLodWorker`), rows not built yet show a "building"
band, and frames are cached per view.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING

from gpuviz.gui.qt_threads import start_owned
from gpuviz.gui.timeline.qt_lod_worker import QtLodWorker

if TYPE_CHECKING:
    import threading

    from PySide6.QtCore import Signal

    from gpuviz.gui.timeline.viewport import Viewport
    from gpuviz.trace.lanes import Layout
    from gpuviz.trace.lod import Frame, TimelineLod

LOD_REFRESH_S = 0.3
"""While pyramids build, visible rows that became ready are drawn at most this often."""


class TimelineLodMixin:
    """The pyramid worker and the current frame of the Timeline (mixed into ``QtTimeline``)."""

    if TYPE_CHECKING:  # what the widget provides
        viewport: Viewport
        gui_idle: threading.Event
        lodProgress: Signal
        _lod: TimelineLod
        _layout: Layout
        _layout_version: int
        _lod_version: int
        _frame: Frame | None
        _frame_key: tuple[object, ...] | None
        _worker: QtLodWorker | None
        _workers_stopped: bool
        _lod_bumped: float
        _progress: tuple[int, int]
        _ready_rows: int

        def _request_redraw(self) -> None: ...

    @property
    def lod(self) -> TimelineLod:
        """The level-of-detail engine (pure numpy)."""
        return self._lod

    @property
    def lod_ready(self) -> bool:
        """Whether every row's pyramid is built (or small enough to build on demand)."""
        return not any(
            not self._lod.is_ready(k, self._layout.groups) for k in self._lod.unbuilt(self._layout)
        )

    def wait_ready(self, timeout_s: float = 60.0) -> bool:
        """Block (processing events) until :attr:`lod_ready`; for tests and benchmarks."""
        from PySide6.QtWidgets import QApplication

        deadline = time.monotonic() + timeout_s
        while not self.lod_ready or (self._worker is not None and self._worker.isRunning()):
            if time.monotonic() > deadline:
                return False
            if self._worker is None and not self.lod_ready:
                self._start_worker()
            QApplication.processEvents()
            time.sleep(0.002)
        QApplication.processEvents()
        return True

    def stop_worker(self, final: bool = True) -> None:
        """Stop the pyramid worker thread, if any, and wait for it.

        ``final`` (closing): none starts again, whatever a queued ``finished`` or a redraw asks.
        """
        self._workers_stopped = final
        w = self._worker
        self._worker = None
        if w is not None:
            w.requestInterruption()
            w.wait()

    # -- level of detail worker ----------------------------------------------------------------

    def _visible_rows(self) -> range:
        return self.viewport.visible_rows(len(self._layout))

    def _start_worker(self) -> None:
        if self._workers_stopped or (self._worker is not None and self._worker.isRunning()):
            return
        vis = list(self._visible_rows())
        keys = self._lod.unbuilt(self._layout, vis)
        rest = [k for k in self._lod.unbuilt(self._layout) if k not in keys]
        keys = [k for k in keys + rest if not self._lod.is_ready(k, self._layout.groups)]
        if not keys:
            return
        w = QtLodWorker(self._lod, keys, self._layout.groups, self.gui_idle)
        w.progress.connect(self._on_lod_progress)
        w.finished.connect(self._on_worker_finished)
        self._worker = w
        start_owned(w)

    def _on_lod_progress(self, done: int, total: int) -> None:
        self._progress = (done, total)
        self.lodProgress.emit(done, total)
        # Recompute the frame only when a visible row became drawable: while a big row builds,
        # a repaint just redraws the cached frame and the progress note (the GUI thread shares
        # the GIL and the CPUs with the worker, so every frame skipped keeps it responsive).
        groups = self._layout.groups
        ready = sum(
            1
            for r in self._visible_rows()
            if (k := self._layout.sources[r]) is not None and self._lod.is_ready(k, groups)
        )
        # And at most every LOD_REFRESH_S: each new frame is a cold one (tens of ms on the
        # GUI thread while the worker competes for the GIL); the worker's end redraws anyway.
        now = time.monotonic()
        if ready != self._ready_rows and now - self._lod_bumped >= LOD_REFRESH_S:
            self._ready_rows = ready
            self._lod_bumped = now
            self._lod_version += 1
        self._request_redraw()

    def _on_worker_finished(self) -> None:
        w = self._worker
        if w is not None and not w.isRunning():
            self._worker = None
        self._lod_version += 1
        self._progress = (0, 0)
        self._request_redraw()
        if not self.lod_ready:
            self._start_worker()

    # -- the frame ---------------------------------------------------------------------------------

    def current_frame(self) -> Frame:
        """The frame for the current view (computed when the view or layout changed)."""
        v = self.viewport
        rows = self._visible_rows()
        key = (
            v.t0,
            v.t1,
            v.area_width(),
            rows.start,
            rows.stop,
            self._layout_version,
            self._lod_version,
        )
        if self._frame is None or self._frame_key != key:
            self._frame = self._lod.frame(
                self._layout, rows, math.floor(v.t0), math.ceil(v.t1), v.area_width()
            )
            self._frame_key = key
            if self._frame.pending_rows and self._worker is None:
                self._start_worker()
        return self._frame


__all__ = ["LOD_REFRESH_S", "TimelineLodMixin"]
