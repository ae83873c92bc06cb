"""Worker threads outlive the widgets that start them (qt_threads), never abort the process."""

from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QWidget

from gpuviz.gui.qt_threads import running_threads, start_owned


class _Gate(QThread):
    """Runs until its gate opens."""

    def __init__(self, gate: threading.Event, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.gate = gate

    def run(self) -> None:
        self.gate.wait(30)


def test_deleting_the_parent_of_a_running_thread_leaves_it_running(qtbot) -> None:
    gate = threading.Event()
    parent = QWidget()
    thread = start_owned(_Gate(gate, parent))
    assert thread.parent() is None
    parent.deleteLater()  # without start_owned, Qt aborts the process here
    del parent
    qtbot.wait(50)
    assert thread.isRunning() and thread in running_threads()
    gate.set()
    qtbot.waitUntil(lambda: thread not in running_threads(), timeout=10_000)
    assert thread.isFinished()


def test_dropping_the_last_reference_to_a_running_thread_is_safe(qtbot) -> None:
    gate = threading.Event()
    start_owned(_Gate(gate))
    gc.collect()  # the garbage collector freed such a thread in a later test, mid-run
    assert [t for t in running_threads() if t.isRunning()]
    gate.set()
    qtbot.waitUntil(lambda: not running_threads(), timeout=10_000)
