"""Worker threads outlive the widgets that start them (qt_threads), never abort the process."""

from __future__ import annotations

import gc
import threading
from typing import ClassVar

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


class _Cycle:
    """Half of a reference cycle that says on which thread the collector freed it."""

    freed_on: ClassVar[list[threading.Thread]] = []

    def __init__(self) -> None:
        self.other = _Pair(self)

    def __del__(self) -> None:
        _Cycle.freed_on.append(threading.current_thread())


class _Pair:
    def __init__(self, first: _Cycle) -> None:
        self.first = first


def test_while_the_app_runs_cycles_are_collected_on_the_gui_thread_only(qtbot) -> None:
    from gpuviz.gui.app import collect_on_gui_thread

    _Cycle.freed_on = []
    count = 20_000  # far past the first generation's threshold (700)

    def make_garbage() -> None:
        for _ in range(count):
            _Cycle()

    assert gc.isenabled()
    with collect_on_gui_thread(interval_s=0.02):
        assert not gc.isenabled()
        worker = threading.Thread(target=make_garbage)
        worker.start()  # without the GUI-thread collector its collections free them there
        worker.join()
        qtbot.waitUntil(lambda: len(_Cycle.freed_on) == count, timeout=10_000)
    assert gc.isenabled()
    assert set(_Cycle.freed_on) == {threading.main_thread()}
