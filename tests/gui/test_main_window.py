"""The main window: opening traces (tabs, errors, cancel), drag and drop, recent files, samples,
the links between views (memory click -> timeline, kernel row -> highlighted slices), export."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QMimeData, QPointF, QSettings, Qt, QThread, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QLabel, QMessageBox

from gpuviz.gui.qt_main_window import MainWindow
from gpuviz.gui.qt_window_exports import export_view
from gpuviz.gui.views.qt_trace_view import VIEWS

SHARED = [
    "streams_overlap.json.gz",
    "dataparallel_seed_2gpu.json.gz",
    "worker_thread.json.gz",
    "ddp_2rank",
]
LOAD_TIMEOUT_MS = 60_000


def _events(path: Path) -> list[dict]:
    files = sorted(path.glob("*.json.gz")) if path.is_dir() else [path]
    out = []
    for f in files:
        with gzip.open(f, "rt") as fh:
            data = json.load(fh)
        out.extend(data["traceEvents"] if isinstance(data, dict) else data)
    return out


def _kernel_names(path: Path) -> set[str]:
    return {
        e["name"]
        for e in _events(path)
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() == "kernel"
    }


def _running_threads(window: MainWindow) -> list[QThread]:
    from gpuviz.gui.qt_threads import running_threads

    # The app's workers have no parent (see qt_threads), so they are not the window's children.
    return [t for t in running_threads() + window.findChildren(QThread) if t.isRunning()]


@pytest.fixture
def main_window(qtbot, tmp_path):
    """A MainWindow with its own settings file; fails the test if it leaves a QThread running."""
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    window.resize(1200, 800)
    window.show()
    yield window
    if window.is_busy():
        with qtbot.waitSignal(window.idle, timeout=LOAD_TIMEOUT_MS):
            window.cancel_loading()
    assert not _running_threads(window), "a QThread is still running after the test"
    window.close()


def open_and_wait(qtbot, window: MainWindow, *paths) -> None:
    with qtbot.waitSignal(window.idle, timeout=LOAD_TIMEOUT_MS):
        window.open_traces([str(p) for p in paths])


@pytest.mark.parametrize("name", SHARED)
def test_opening_a_shared_trace_gives_a_tab_with_its_kernels(qtbot, main_window, data_dir, name):
    path = data_dir / name
    with qtbot.waitSignal(main_window.traceOpened, timeout=LOAD_TIMEOUT_MS) as opened:
        main_window.open_trace(str(path))
    view = opened.args[0]
    assert main_window.tabs.count() == 1
    assert main_window.current_trace_view() is view
    assert view.title == name.removesuffix(".json.gz")
    assert main_window.errors == []
    # The kernel table has one row per distinct kernel name, counted here from the raw JSON.
    names = _kernel_names(path)
    assert view.kernels_view.model.rowCount() == len(names)
    assert {r["name"] for r in view.kernels_view.model.rows} == names
    # Every view exists, and the summary names a device of the trace.
    assert "cuda:0" in view.summary_view.text()


def test_views_are_built_when_first_shown(qtbot, main_window, data_dir):
    # Building every plot at once would stall the GUI thread: only the shown view is built.
    main_window.set_open_view("memory")
    open_and_wait(qtbot, main_window, data_dir / "streams_overlap.json.gz")
    view = main_window.current_trace_view()
    assert view.built_views() == ["memory"]
    view.tabs.setCurrentIndex(VIEWS.index("kernels"))
    assert view.built_views() == ["memory", "kernels"]
    assert view.current_view() == "kernels"


def test_two_traces_two_tabs_and_the_view_applies_to_both(qtbot, main_window, data_dir):
    open_and_wait(
        qtbot, main_window, data_dir / "streams_overlap.json.gz", data_dir / "worker_thread.json.gz"
    )
    assert main_window.tabs.count() == 2
    assert [v.title for v in main_window.trace_views()] == ["streams_overlap", "worker_thread"]
    main_window.set_view("kernels")
    assert [v.current_view() for v in main_window.trace_views()] == ["kernels", "kernels"]


def test_a_bad_file_gives_a_dialog_naming_it_and_keeps_other_tabs(
    qtbot, main_window, data_dir, tmp_path
):
    open_and_wait(qtbot, main_window, data_dir / "streams_overlap.json.gz")
    good = main_window.trace_views()[0]
    bad = tmp_path / "broken_trace.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "name": "k"', encoding="utf-8")
    with qtbot.waitSignal(main_window.loadFailed, timeout=LOAD_TIMEOUT_MS) as failed:
        main_window.open_trace(str(bad))
    assert failed.args[0] == str(bad)
    qtbot.waitUntil(lambda: any(b.isVisible() for b in main_window.findChildren(QMessageBox)))
    boxes = [b for b in main_window.findChildren(QMessageBox) if b.isVisible()]
    assert len(boxes) == 1
    text = boxes[0].text() + "\n" + boxes[0].informativeText()
    assert str(bad) in text
    boxes[0].accept()
    assert main_window.tabs.count() == 1
    assert main_window.trace_views()[0] is good
    assert main_window.current_trace_view() is good


def test_a_memory_timeline_file_is_refused_with_a_reason(qtbot, main_window, data_dir):
    main_window.modal_errors = False
    path = data_dir / "hta__memory_analysis__memory_timeline.raw.gz"
    with qtbot.waitSignal(main_window.loadFailed, timeout=LOAD_TIMEOUT_MS) as failed:
        main_window.open_trace(str(path))
    assert failed.args[0] == str(path)
    assert str(path) in failed.args[1]
    assert main_window.tabs.count() == 0
    assert not [b for b in main_window.findChildren(QMessageBox) if b.isVisible()]


def test_a_missing_file_is_reported(qtbot, main_window, tmp_path):
    main_window.modal_errors = False
    missing = tmp_path / "nope.json.gz"
    with qtbot.waitSignal(main_window.loadFailed, timeout=LOAD_TIMEOUT_MS) as failed:
        main_window.open_trace(str(missing))
    assert str(missing) in failed.args[1]


def test_cancel_stops_a_load_and_adds_no_tab(qtbot, main_window, data_dir):
    big = data_dir / "hta__df_index_resolver__df_index_resolver.json.gz"  # 216k events
    with qtbot.waitSignal(main_window.idle, timeout=LOAD_TIMEOUT_MS):
        main_window.open_trace(str(big))
        qtbot.waitUntil(lambda: main_window._worker is not None, timeout=5000)
        assert main_window.cancel_button.isVisible()
        main_window.cancel_button.click()
    assert main_window.tabs.count() == 0
    assert main_window.errors == []
    assert not main_window.cancel_button.isVisible()


def test_drop_opens_the_dropped_files(qtbot, main_window, data_dir):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(data_dir / "worker_thread.json.gz"))])
    event = QDropEvent(
        QPointF(10, 10),
        Qt.DropAction.CopyAction,
        mime,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.NoModifier,
    )
    with qtbot.waitSignal(main_window.idle, timeout=LOAD_TIMEOUT_MS):
        main_window.dropEvent(event)
    assert [v.title for v in main_window.trace_views()] == ["worker_thread"]


def test_recent_files_remember_opened_traces(qtbot, main_window, data_dir):
    open_and_wait(qtbot, main_window, data_dir / "worker_thread.json.gz", data_dir / "ddp_2rank")
    recent = main_window.recent_paths()
    assert recent[:2] == [
        str((data_dir / "ddp_2rank").resolve()),
        str((data_dir / "worker_thread.json.gz").resolve()),
    ]
    main_window._update_recent_menu()
    texts = [a.text() for a in main_window.recent_menu.actions()]
    assert str((data_dir / "ddp_2rank").resolve()) in texts
    # A recent entry opens the trace again.
    action = next(a for a in main_window.recent_menu.actions() if a.text() == recent[0])
    with qtbot.waitSignal(main_window.idle, timeout=LOAD_TIMEOUT_MS):
        action.trigger()
    assert main_window.tabs.count() == 3


def test_help_open_sample_opens_a_real_h200_trace(qtbot, main_window):
    actions = main_window.samples_menu.actions()
    titles = [a.text() for a in actions]
    assert any("H200" in t for t in titles)
    with qtbot.waitSignal(main_window.traceOpened, timeout=LOAD_TIMEOUT_MS) as opened:
        actions[0].trigger()
    view = opened.args[0]
    assert len(view.trace.slices) > 0
    props = view.trace.ranks[0].metadata.get("deviceProperties") or [{}]
    assert "H200" in props[0].get("name", "")
    qtbot.waitUntil(lambda: not main_window.is_busy())


def test_the_welcome_page_opens_a_sample_in_one_click(qtbot, main_window):
    from PySide6.QtWidgets import QPushButton

    assert main_window.stack.currentWidget() is main_window.welcome
    buttons = [b for b in main_window.welcome.findChildren(QPushButton) if "H200" in b.text()]
    assert buttons
    with qtbot.waitSignal(main_window.traceOpened, timeout=LOAD_TIMEOUT_MS):
        buttons[0].click()
    assert main_window.stack.currentWidget() is main_window.tabs
    qtbot.waitUntil(lambda: not main_window.is_busy())


def test_add_trace_and_add_dock_for_the_run_panel(qtbot, main_window, data_dir):
    from gpuviz.trace.kineto import load_trace

    trace = load_trace(str(data_dir / "worker_thread.json.gz"))
    with qtbot.waitSignal(main_window.traceOpened, timeout=LOAD_TIMEOUT_MS) as opened:
        main_window.add_trace(trace, "my run")
    assert opened.args[0].trace is trace
    assert main_window.tabs.tabText(0) == "my run"
    dock = main_window.add_dock(QLabel("panel"), title="Workloads")
    assert dock.widget().text() == "panel"
    assert main_window.dockWidgetArea(dock) == Qt.DockWidgetArea.LeftDockWidgetArea
    qtbot.waitUntil(lambda: not main_window.is_busy())


def test_clicking_the_memory_plot_moves_the_timeline(qtbot, main_window, data_dir):
    open_and_wait(qtbot, main_window, data_dir / "streams_overlap.json.gz")
    view = main_window.current_trace_view()
    view.set_view("memory")
    mem = view.memory_view
    t_ns = int(mem.series[0].ts_ns[len(mem.series[0].ts_ns) // 2])
    with qtbot.waitSignal(mem.timeClicked, timeout=2000):
        mem.click_at_time(t_ns)
    t0, t1 = view.timeline.view_range()
    assert t0 <= t_ns <= t1
    assert abs((t0 + t1) / 2 - t_ns) <= max((t1 - t0) * 0.01, 1000)
    assert t1 - t0 < view.end_ns  # zoomed in on the moment, not the whole trace
    assert view.current_view() == "timeline"


def test_a_real_mouse_click_on_the_memory_plot_emits_its_time(qtbot, main_window, data_dir):
    from PySide6.QtTest import QTest

    open_and_wait(qtbot, main_window, data_dir / "streams_overlap.json.gz")
    view = main_window.current_trace_view()
    view.set_view("memory")
    plot = view.memory_view.plot
    vb = plot.getPlotItem().getViewBox()
    x0, x1 = vb.viewRange()[0]
    target_ms = x0 + 0.5 * (x1 - x0)
    scene_pt = vb.mapViewToScene(QPointF(target_ms, sum(vb.viewRange()[1]) / 2))
    pos = plot.mapFromScene(scene_pt)
    with qtbot.waitSignal(view.memory_view.timeClicked, timeout=2000) as clicked:
        QTest.mouseClick(
            plot.viewport(), Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, pos
        )
    span_ns = (x1 - x0) * 1e6
    assert abs(clicked.args[0] - target_ms * 1e6) <= span_ns * 0.01


def test_selecting_a_kernel_row_highlights_its_slices(qtbot, main_window, data_dir, monkeypatch):
    path = data_dir / "dataparallel_seed_2gpu.json.gz"
    open_and_wait(qtbot, main_window, path)
    view = main_window.current_trace_view()
    calls = []
    monkeypatch.setattr(
        view.timeline, "highlight_rows", lambda rows: calls.append(np.asarray(rows))
    )
    kv = view.kernels_view
    kv.table.selectRow(0)
    name = kv.selected_names()[0]
    assert calls, "selecting a row did not reach the timeline"
    rows = calls[-1]
    # As many slices as the raw JSON has kernel events of that name, all with that name.
    expected = sum(
        1
        for e in _events(path)
        if e.get("ph") == "X" and str(e.get("cat", "")).lower() == "kernel" and e["name"] == name
    )
    assert len(rows) == expected
    assert {view.trace.name_of(int(r)) for r in rows} == {name}


def test_exports_write_readable_files(qtbot, main_window, data_dir, tmp_path):
    from gpuviz.gui import qt_export
    from gpuviz.trace.kineto import load_trace

    open_and_wait(qtbot, main_window, data_dir / "streams_overlap.json.gz")
    view = main_window.current_trace_view()
    summary = view.summary
    qt_export.write_summary(summary, str(tmp_path / "s.json"))
    assert json.loads((tmp_path / "s.json").read_text())["events"] == len(
        _events(data_dir / "streams_overlap.json.gz")
    )
    qt_export.write_summary(summary, str(tmp_path / "s.csv"))
    lines = (tmp_path / "s.csv").read_text().splitlines()
    assert lines[0] == "table,rank,device,stream,name,field,value"
    assert any(line.startswith("streams,") for line in lines)
    qt_export.write_kernel_table(view.kernel_rows, str(tmp_path / "k.csv"))
    assert len((tmp_path / "k.csv").read_text().splitlines()) == 1 + len(
        _kernel_names(data_dir / "streams_overlap.json.gz")
    )
    qt_export.write_kernel_table(view.kernel_rows, str(tmp_path / "k.json"))
    assert len(json.loads((tmp_path / "k.json").read_text())) == len(view.kernel_rows)
    worker = main_window.export_trace(view, str(tmp_path / "t.json.gz"))
    qtbot.waitUntil(lambda: worker not in main_window._export_workers, timeout=LOAD_TIMEOUT_MS)
    again = load_trace(str(tmp_path / "t.json.gz"))
    assert len(again.slices) == len(view.trace.slices)
    for name in ("memory", "splits", "kernels", "timeline"):
        view.set_view(name)
        for suffix in ("png", "svg"):
            out = tmp_path / f"{name}.{suffix}"
            export_view(view, name, str(out))
            assert out.stat().st_size > 500, out


def test_a_failed_export_says_so_without_blocking(qtbot, main_window, data_dir, tmp_path):
    open_and_wait(qtbot, main_window, data_dir / "worker_thread.json.gz")
    view = main_window.current_trace_view()
    target = tmp_path / "no_such_folder" / "t.json.gz"
    worker = main_window.export_trace(view, str(target))
    qtbot.waitUntil(lambda: worker not in main_window._export_workers, timeout=LOAD_TIMEOUT_MS)
    boxes = [b for b in main_window.findChildren(QMessageBox) if b.isVisible()]
    assert len(boxes) == 1
    assert str(target) in boxes[0].text()
    boxes[0].accept()


def test_the_status_line_says_about_how_long_is_left(qtbot, main_window, data_dir, monkeypatch):
    import itertools

    from gpuviz.gui import qt_main_window

    clock = itertools.count(0.0, 0.5)  # each report half a second after the last
    monkeypatch.setattr(qt_main_window.time, "monotonic", lambda: next(clock))
    shown: list[str] = []
    real_set_plain = qt_main_window.set_plain

    def set_plain(label, text):
        shown.append(text)
        real_set_plain(label, text)

    monkeypatch.setattr(qt_main_window, "set_plain", set_plain)
    monkeypatch.setenv("GPUVIZ_NO_CACHE", "1")
    open_and_wait(
        qtbot, main_window, data_dir / "hta__df_index_resolver__df_index_resolver.json.gz"
    )
    assert main_window.tabs.count() == 1
    assert any(" left" in t and t.startswith("Opening ") for t in shown), shown


def test_a_closed_tab_frees_its_trace(qtbot, main_window, data_dir, _no_dangling_qthreads):
    # Each closed tab kept its Trace alive until the app quit (its memory and ~42 cache files
    # held open): the attribution's module-level table held it, and so did the Insights
    # view's staged build, whose dropped timer call PySide kept.
    import gc
    import weakref

    from PySide6.QtCore import QCoreApplication, QEvent

    open_and_wait(qtbot, main_window, data_dir / "streams_overlap.json.gz")
    view = main_window.current_trace_view()
    view.set_view("modules")  # a view that attributes the trace
    qtbot.waitUntil(lambda: not main_window.is_busy())
    gone = weakref.ref(view.trace)
    del view
    main_window.tabs.tabCloseRequested.emit(0)
    assert main_window.tabs.count() == 0
    # The fixture holds every QThread started (a loader holds the trace it made): the threads
    # are done, so it need not.
    assert not any(t.isRunning() for t in _no_dangling_qthreads)
    _no_dangling_qthreads.clear()
    for _ in range(3):  # the event loop's deleteLater, then the collector
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
        qtbot.wait(20)
        gc.collect()
    assert gone() is None
