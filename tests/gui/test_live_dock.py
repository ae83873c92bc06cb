"""The Live run dock folds while no run is going, so the trace gets the window's height; a run
unfolds it; the user's choice is kept for the next window (pytest-qt, offscreen)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings, Qt

from gpuviz.gui.run.qt_live_dock import OPEN_KEY

DATA = Path(__file__).resolve().parents[1] / "data"
LOAD_TIMEOUT_MS = 60_000
TIMEOUT_MS = 120_000
W, H = 1280, 1000


@pytest.fixture
def make_app(qtbot, tmp_path: Path) -> Iterator[Callable[[], Any]]:
    """Main windows with the run panel, all sharing one settings file (as successive starts)."""
    from gpuviz.gui.qt_main_window import MainWindow
    from gpuviz.gui.run.qt_run_controller import install_run_panel

    made: list[Any] = []

    def make() -> Any:
        settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
        qtbot.addWidget(win)
        ctl = install_run_panel(win, runs_dir=tmp_path / "runs", gpus=[], restore=True)
        win.resize(W, H)
        win.show()
        qtbot.waitExposed(win)
        made.append(win)
        return ctl

    yield make
    for w in made:
        w.close()


def _open(qtbot, ctl: Any) -> Any:
    with qtbot.waitSignal(ctl.window.traceOpened, timeout=LOAD_TIMEOUT_MS) as opened:
        ctl.window.open_trace(str(DATA / "streams_overlap.json.gz"))
    qtbot.wait(20)
    return opened.args[0]


def test_with_no_run_the_trace_gets_the_height(make_app, qtbot) -> None:
    ctl = make_app()
    view = _open(qtbot, ctl)
    assert not ctl.live_fold.is_open()
    assert not ctl.live_plots.isVisible()
    # Before: the live plots took 330 px and the trace about 60% of the window.
    assert view.height() >= 0.85 * ctl.window.height(), (view.height(), ctl.window.height())
    assert ctl.live_dock.isVisible()  # folded to its title bar, still there to click
    assert ctl.live_dock.height() < 0.05 * ctl.window.height()


def test_the_users_choice_is_kept_for_the_next_window(make_app, qtbot) -> None:
    ctl = make_app()
    view = _open(qtbot, ctl)
    folded_height = view.height()
    qtbot.mouseClick(ctl.live_fold.button, Qt.MouseButton.LeftButton)
    qtbot.wait(20)
    assert ctl.live_fold.is_open() and ctl.live_plots.isVisible()
    assert ctl.live_dock.height() >= 200  # room for the plots again
    assert view.height() <= folded_height - 200
    assert str(ctl.settings.value(OPEN_KEY)).lower() == "true"
    ctl.window.close()

    again = make_app()  # a new window, the same settings: open, as left
    assert again.live_fold.is_open() and again.live_plots.isVisible()
    assert again.live_dock.height() >= 200
    qtbot.mouseClick(again.live_fold.button, Qt.MouseButton.LeftButton)
    assert not again.live_fold.is_open() and not again.live_plots.isVisible()
    again.window.close()

    third = make_app()
    assert not third.live_fold.is_open() and not third.live_plots.isVisible()


def _stream(folder: Path) -> Path:
    """A one-strategy run's event stream, the real trace beside it (nothing to compare)."""
    folder.mkdir(parents=True)
    shutil.copy(DATA / "streams_overlap.json.gz", folder / "run.json.gz")
    lines = [
        {"type": "Started", "schema": 1, "workload": "streams", "params": {}, "device": "cpu",
         "devices": ["cpu"], "torch_version": "2.x"},
        {"type": "StepTimed", "step": 0, "label": "streams", "wall_ms": 3.0, "profiled": True},
        {"type": "TraceReady", "path": "run.json.gz"},
        {"type": "Finished", "result": {"workload": "streams", "strategies": []}},
    ]  # fmt: skip
    path = folder / "run.events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return path


def _replay(qtbot, ctl: Any, path: Path) -> list[bool]:
    """Replay ``path``; returns, for each event, whether the live plots were shown then."""
    seen: list[bool] = []
    ctl.eventReceived.connect(
        lambda _e: seen.append(ctl.live_fold.is_open() and ctl.live_plots.isVisible())
    )
    ended: list[Any] = []
    shown: list[Any] = []
    ctl.runEnded.connect(ended.append)
    ctl.resultShown.connect(shown.append)
    assert ctl.replay(path)
    assert ctl.live_fold.is_open()  # at once, before the first event
    qtbot.waitUntil(lambda: bool(ended and shown), timeout=TIMEOUT_MS)
    assert shown[0] is not None  # the run's trace opened in a tab
    return seen


def test_a_run_unfolds_the_dock_and_its_end_folds_it_again(make_app, qtbot, tmp_path) -> None:
    ctl = make_app()
    assert not ctl.live_fold.is_open()
    seen = _replay(qtbot, ctl, _stream(tmp_path / "run"))
    assert seen and all(seen)
    assert not ctl.live_fold.is_open()  # the user never opened it: folded again
    assert not ctl.live_plots.isVisible()
    assert "last run" in ctl.live_fold.note.text()


def test_a_comparison_of_strategies_stays_open_after_the_run(make_app, qtbot) -> None:
    ctl = make_app()
    seen = _replay(qtbot, ctl, DATA / "events" / "training_h100" / "events.jsonl")
    assert seen and all(seen)
    # The comparison is the run's result: it stays in view until the user folds it.
    assert ctl.bottom.currentWidget() is ctl.comparison
    assert ctl.live_fold.is_open() and ctl.comparison.isVisible()
    qtbot.mouseClick(ctl.live_fold.button, Qt.MouseButton.LeftButton)
    assert not ctl.live_fold.is_open()
