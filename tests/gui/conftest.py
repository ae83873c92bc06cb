"""Fixtures of the GUI tests: no dangling QThreads, garbage freed on the main thread, timelines."""

from __future__ import annotations

import gc
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

GRACE_MS = 5000  # a thread told to stop may take a moment to return from its current step


def _running(thread: QThread) -> bool:
    try:
        return thread.isRunning()
    except RuntimeError:  # its C++ object is gone, so it is not running
        return False


@pytest.fixture(autouse=True, scope="session")
def _settings_in_a_temp_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """QSettings of every test in a folder of the test session, never the user's (a window
    made without its own settings saves its size and recent files there)."""
    from PySide6.QtCore import QSettings

    folder = tmp_path_factory.mktemp("qsettings")
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(folder))
        QSettings.setPath(fmt, QSettings.Scope.SystemScope, str(folder / "system"))
    yield folder


@pytest.fixture(autouse=True)
def _no_dangling_qthreads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[QThread]]:
    """Fail a test that leaves a QThread running after its widgets are closed.

    Every ``QThread.start`` during the test is recorded (napari's ``dangling_qthreads`` does
    the same). pytest-qt closes the test's widgets before fixtures are torn down, so a widget
    that stops its threads on close passes.
    """
    started: list[QThread] = []
    original = QThread.start

    def start(self: QThread, *args: object, **kwargs: object) -> None:
        started.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(QThread, "start", start)
    yield started
    app = QApplication.instance()
    if app is not None:
        app.processEvents()
    dangling = []
    for t in started:
        if _running(t) and not t.wait(GRACE_MS):
            dangling.append(t)
    for t in dangling:  # stop them, so the next test and the process exit are not hurt
        t.requestInterruption()
        t.quit()
        t.wait()
    # Free this test's closed widgets here, on the main thread: a collection that a worker
    # thread of a later test starts would run their Qt destructors there, and that deadlocked
    # with the GUI thread (a hung CI run, 2026-11-28; the app collects on its GUI thread,
    # gpuviz.gui.app.collect_on_gui_thread).
    gc.collect()
    if dangling:
        names = ", ".join(f"{type(t).__name__}({t.objectName()!r})" for t in dangling)
        pytest.fail(f"the test left {len(dangling)} QThread(s) running: {names}")


@pytest.fixture
def make_timeline(qapp: QApplication) -> Iterator[Callable[..., object]]:
    """A factory of shown ``QtTimeline`` widgets (1200×700 unless told), closed after the test."""
    from gpuviz.gui.timeline.qt_timeline import QtTimeline

    made: list[QtTimeline] = []

    def make(trace: object, width: int = 1200, height: int = 700, ready: bool = True) -> QtTimeline:
        w = QtTimeline(trace)  # type: ignore[arg-type]
        w.resize(width, height)
        w.show()
        made.append(w)
        qapp.processEvents()
        if ready:
            assert w.wait_ready(60), "level of detail not built in 60 s"
        return w

    yield make
    for w in made:
        try:
            w.close()
            w.deleteLater()
        except RuntimeError:
            pass
    qapp.processEvents()


@pytest.fixture(scope="session")
def folder64(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated 64-rank job (``rank_folders.write_ranks64``: a planted straggler, files
    that begin late), written once per session."""
    from rank_folders import write_ranks64

    return write_ranks64(tmp_path_factory.mktemp("r64") / "run")
