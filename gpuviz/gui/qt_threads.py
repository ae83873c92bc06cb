"""Worker threads that live until they end, whatever happens to the widget that started them.

Qt aborts the whole process ("QThread: Destroyed while thread is still running") when a
``QThread`` object is destroyed while its thread runs. Two ordinary events did that: a tab or a
window deleted (``deleteLater``, a closed test window) takes its child QThreads with it, and
Python's garbage collector frees the last wrapper of an unparented one (a timeline's pyramid
builder) in the middle of some later, unrelated work. :func:`start_owned` takes both away: the
thread gets no parent and this module holds it until its ``finished`` signal reaches the GUI
thread, after which it goes when its last Python reference does.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QThread, QTimer, Slot


class _Keeper(QObject):
    """Holds running threads; lives in the GUI thread, so ``finished`` reaches it queued."""

    def __init__(self) -> None:
        super().__init__()
        self.running: set[QThread] = set()

    @Slot()
    def release(self) -> None:
        # Not here, and not through sender(): a QThread freed while its own finished signal is
        # being delivered leaves Qt a dangling sender (this crashed the app's test run 4
        # times in 6). Sweep on the next turn of the event loop, after every queued signal
        # the thread sent.
        QTimer.singleShot(0, self._sweep)

    def _sweep(self) -> None:
        self.running = {t for t in self.running if not t.isFinished()}


_keeper: _Keeper | None = None


def start_owned(thread: QThread) -> QThread:
    """Start ``thread`` with no parent, kept alive here until it has finished.

    Call it from the GUI thread, after connecting the thread's own signals. Returns ``thread``.
    """
    global _keeper
    if _keeper is None:
        _keeper = _Keeper()
    if thread.parent() is not None:
        thread.setParent(None)  # a parent's deletion would destroy it while it runs
    _keeper.running.add(thread)
    thread.finished.connect(_keeper.release)
    thread.start()
    return thread


def running_threads() -> list[QThread]:
    """The threads started by :func:`start_owned` that are still held (running, or ended moments
    ago and not yet swept)."""
    return [] if _keeper is None else list(_keeper.running)


__all__ = ["running_threads", "start_owned"]
