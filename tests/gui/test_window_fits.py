"""Every view fits a 1280×800 screen: no label, table or panel makes the window wider or taller.

An allocator snapshot's one-line figures once asked for 1722 px, and the window grew to it, off
the side of a 1600 px screen. The window here is the app's own: the run panel on the left and
the live run below, as ``gpuviz`` opens it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRect, QSettings

from gpuviz.gui.qt_main_window import MainWindow
from gpuviz.gui.views.qt_trace_view import VIEWS

SCREEN_W, SCREEN_H = 1280, 800
SCREEN = QRect(0, 0, SCREEN_W, SCREEN_H)
LOAD_TIMEOUT_MS = 60_000
TRACES = [
    "snapshots/snap_train.pickle.gz",  # the allocator-snapshot mode of the Memory view
    "gloo_4rank_cpu",  # four ranks: the Ranks view, the Timeline's rank bar
    "dataparallel_seed_2gpu.json.gz",  # the Splits view's charts and its what-if panel
]


@pytest.fixture
def app_window(qtbot, tmp_path: Path) -> MainWindow:
    """The app's main window with its run panel, at the size of a 1280×800 screen."""
    from gpuviz.gui.run.qt_run_controller import install_run_panel

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
    qtbot.addWidget(win)
    install_run_panel(win, runs_dir=tmp_path / "runs", gpus=[], restore=False)
    # As the app starts: sized to the screen's available area (issue 47, item 21).
    assert win.fit_to_screen(SCREEN) == "fitted"
    win.show()
    assert SCREEN.contains(win.frameGeometry()), win.frameGeometry()
    return win


def _assert_fits(qtbot, win: MainWindow, what: str) -> None:
    from PySide6.QtWidgets import QWidget

    from gpuviz.gui.views.qt_staged import StagedBuild

    def built() -> bool:
        return not any(
            w.build_pending() for w in win.findChildren(QWidget) if isinstance(w, StagedBuild)
        )

    # Every chart drawn (the staged views draw theirs over later turns), by the event loop:
    # a build finished here and measured at once caught its layout half done.
    qtbot.waitUntil(built, timeout=LOAD_TIMEOUT_MS)
    qtbot.wait(50)  # deferred layouts and the views' first paint
    hint, minimum = win.minimumSizeHint(), win.minimumSize()
    need = (max(hint.width(), minimum.width()), max(hint.height(), minimum.height()))
    assert need[0] <= SCREEN_W and need[1] <= SCREEN_H, f"{what}: the window needs {need}"
    fitted = (win.width(), win.height())
    win.resize(*fitted)
    qtbot.wait(10)
    assert (win.width(), win.height()) == fitted, what
    assert SCREEN.contains(win.frameGeometry()), f"{what}: {win.frameGeometry()}"
    assert not _cut_charts(win), f"{what}: charts cut at their view's edge"
    assert not _off_screen(win), f"{what}: out of sight: {_off_screen(win)}"


def _off_screen(win: MainWindow) -> list[str]:
    """The shown buttons, tables, trees, charts and the status bar that lie (even in part)
    outside the screen, or that their parents clip to nothing: what a 1600×900 window on a
    1280×800 screen hid (the MFU chart, half of the findings, "Show in Timeline", "Export",
    the status bar). Widgets inside a scroll area are left to its scroll bars."""
    from PySide6.QtWidgets import (
        QAbstractButton,
        QAbstractItemView,
        QAbstractScrollArea,
        QGraphicsView,
        QStatusBar,
        QTabBar,
        QWidget,
    )

    kinds = (QAbstractButton, QAbstractItemView, QGraphicsView, QStatusBar)
    out = []
    for w in win.findChildren(QWidget):
        if not isinstance(w, kinds) or not w.isVisible() or w.width() <= 0 or w.height() <= 0:
            continue
        if isinstance(w.parentWidget(), QTabBar):
            continue  # a tab bar's scroll buttons
        p = w.parentWidget()
        scrolled = False
        while p is not None and p is not win:
            if isinstance(p, QAbstractScrollArea) and not isinstance(p, QGraphicsView):
                scrolled = True
                break
            p = p.parentWidget()
        if scrolled:
            continue
        top_left = w.mapToGlobal(w.rect().topLeft())
        rect = QRect(top_left, w.size())
        name = w.objectName() or getattr(w, "text", lambda: "")() or type(w).__name__
        if not SCREEN.contains(rect):
            out.append(f"{name} at {rect.getRect()}")
        elif (w.viewport() if isinstance(w, QAbstractScrollArea) else w).visibleRegion().isEmpty():
            # (a scroll area's opaque viewport covers it: the viewport's region is the one)
            out.append(f"{name} clipped away")
    return out


def _cut_charts(win: MainWindow) -> list[str]:
    """The shown charts that run past their view, named by their titles. A plot is at least as
    wide as its title beside its left axis: in the app's window at 1280 px the Ranks view's
    collectives chart is 382 px, and its title, "Worst collectives: each rank's arrival before
    the last", made the plot 441 px, the title and the last arrivals past the view's edge."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QGraphicsView

    cut = []
    for gv in win.findChildren(QGraphicsView):
        if not gv.isVisible():
            continue
        shown = gv.mapToScene(gv.viewport().rect()).boundingRect().adjusted(-1, -1, 1, 1)
        for item in gv.scene().items():
            if isinstance(item, pg.PlotItem) and item.isVisible():
                if not shown.contains(item.sceneBoundingRect()):
                    cut.append(item.titleLabel.text or "(untitled)")
    return cut


@pytest.mark.parametrize("name", TRACES)
def test_every_view_fits_1280x800(qtbot, app_window: MainWindow, data_dir: Path, name: str):
    win = app_window
    with qtbot.waitSignal(win.idle, timeout=LOAD_TIMEOUT_MS):
        win.open_trace(data_dir / name)
    assert not win.errors
    view = win.current_trace_view()
    assert view is not None
    for v in VIEWS:
        win.set_view(v)
        assert view.current_view() == v
        _assert_fits(qtbot, win, f"{name}, {v}")
    memory = view.view("memory")
    if view.analyses.snapshots:
        # Both modes of the Memory view: the snapshot's panels, then the trace's counters.
        win.set_view("memory")
        for mode in ("snapshot", "counters", "snapshot"):
            memory.set_mode(mode)
            _assert_fits(qtbot, win, f"{name}, memory {mode}")
        assert memory.snapshot_view is not None and memory.snapshot_view.isVisible()


def test_a_folder_of_rank_snapshots_fits_1280x800(qtbot, app_window: MainWindow, rank_snapshots):
    win = app_window
    with qtbot.waitSignal(win.idle, timeout=LOAD_TIMEOUT_MS):
        win.open_trace(rank_snapshots)
    assert not win.errors
    view = win.current_trace_view()
    assert view is not None
    for v in VIEWS:
        win.set_view(v)
        _assert_fits(qtbot, win, f"rank snapshots, {v}")
    win.set_view("memory")
    memory = view.view("memory")
    assert memory.ranks_view is not None and memory.ranks_view.isVisible()
    _assert_fits(qtbot, win, "rank snapshots, all ranks")
    for i in range(len(memory.ranks_view.timelines)):
        memory.show_rank_detail(i)  # each rank's own panels
        assert memory.snapshot_view.isVisible()
        _assert_fits(qtbot, win, f"rank snapshots, one rank ({i})")
    memory.rank_pages.setCurrentIndex(0)
    for mode in ("counters", "snapshot"):
        memory.set_mode(mode)
        _assert_fits(qtbot, win, f"rank snapshots, memory {mode}")
    assert memory.ranks_view.isVisible()
