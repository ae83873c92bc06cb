"""Names from files are data in the app (issue 16): no markup, no control characters, anywhere.

A hostile trace (kernel, op, thread, process, annotation and args names with terminal escapes,
NUL, right-to-left overrides and HTML, in a file with a hostile name) is opened, every view is
built, and then every label, tooltip, table cell, tab, window title and plot text of the
window is read back as Qt shows it (plain text as it is; rich text, or text that Qt would take
for rich text, through ``QTextDocument``): none renders markup, none holds a control character.
The names are also checked to be there (escaped), searchable and selectable by their exact
text. The run panel, live plots, strategy comparison, failure dialog and run comparison get the
same sweep with a hostile user file and a hostile replayed event stream.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
import pytest
from evil_names import (
    ALL_EVIL,
    EVIL_ARG,
    EVIL_FILE_NAME,
    EVIL_NAMES,
    EVIL_THREAD,
    markup_rendered,
    unsafe_chars,
    write_evil_trace,
)
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QPainter, QTextDocument
from PySide6.QtGui import Qt as GuiQt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGraphicsTextItem,
    QLabel,
    QListWidget,
    QMessageBox,
    QTabBar,
    QWidget,
)

from gpuviz.display import menu_safe, terminal_safe, title_safe
from gpuviz.gui.qt_load_worker import trace_title
from gpuviz.gui.qt_main_window import MainWindow
from gpuviz.gui.views.qt_trace_view import VIEWS
from gpuviz.gui.views.trace.qt_kernels import NAME_ROLE
from gpuviz.trace.model import Kind

LOAD_TIMEOUT_MS = 60_000


def rendered(text: str, fmt: Qt.TextFormat = Qt.TextFormat.AutoText) -> str:
    """What a reader sees of ``text`` shown in format ``fmt`` (Qt's own rich-text guess)."""
    rich = fmt == Qt.TextFormat.RichText or (
        fmt == Qt.TextFormat.AutoText and GuiQt.mightBeRichText(text)
    )
    if not rich:
        return text
    doc = QTextDocument()
    doc.setHtml(text)
    return doc.toPlainText()


def check(visible: str, where: str) -> None:
    """``visible`` holds no control character and shows no name's markup as markup."""
    assert not unsafe_chars(visible), (where, visible)
    assert not markup_rendered(visible), (where, visible)
    assert "\ufffc" not in visible, (where, visible)  # an <img> rendered as an image


def mnemonic_shown(text: str) -> str:
    """A tab or button title as shown: ``&&`` is ``&``; a lone ``&`` would be a shortcut."""
    assert "&" not in text.replace("&&", ""), f"a lone & in {text!r}"
    return text.replace("&&", "&")


def sweep(root: QWidget) -> list[str]:
    """Check every text ``root`` and its children show; returns all of it (for positive checks)."""
    seen: list[str] = []

    def see(text: str, where: str, fmt: Qt.TextFormat = Qt.TextFormat.AutoText) -> None:
        if text:
            visible = rendered(text, fmt)
            check(visible, where)
            seen.append(visible)

    widgets = [root, *root.findChildren(QWidget)]
    for w in widgets:
        if w.isWindow() and w.windowTitle():
            title = w.windowTitle()
            check(title.replace("[*][*]", ""), f"title of {type(w).__name__}")
            assert "[*]" not in title.replace("[*][*]", ""), title
            seen.append(title)
        see(w.toolTip(), f"tooltip of {type(w).__name__}")
        if isinstance(w, QLabel):
            see(w.text(), f"QLabel {w.objectName()}", w.textFormat())
        if isinstance(w, QTabBar):
            for i in range(w.count()):
                see(mnemonic_shown(w.tabText(i)), "tab", Qt.TextFormat.PlainText)
                see(w.tabToolTip(i), "tab tooltip")
        if isinstance(w, QListWidget):
            for i in range(w.count()):
                see(w.item(i).text(), "list item", Qt.TextFormat.PlainText)
                see(w.item(i).toolTip(), "list item tooltip")
        if isinstance(w, QAbstractItemView) and w.model() is not None:
            m = w.model()
            try:
                columns = m.columnCount()
            except TypeError:  # a list model's columnCount is private: one column
                columns = 1
            for r in range(min(m.rowCount(), 200)):
                for c in range(columns):
                    idx = m.index(r, c)
                    # Item views draw DisplayRole as plain text (no HTML delegate in gpuviz).
                    see(str(idx.data() or ""), "cell", Qt.TextFormat.PlainText)
                    see(str(idx.data(Qt.ItemDataRole.ToolTipRole) or ""), "cell tooltip")
        if isinstance(w, pg.GraphicsView) and w.scene() is not None:
            for item in w.scene().items():
                if isinstance(item, QGraphicsTextItem):
                    see(item.toPlainText(), "plot text", Qt.TextFormat.PlainText)
    return seen


@pytest.fixture
def window(qtbot, tmp_path: Path) -> Iterator[MainWindow]:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(settings=settings, modal_errors=True, remember_recent=True)
    qtbot.addWidget(w)
    w.resize(1300, 850)
    w.show()
    yield w
    if w.is_busy():
        with qtbot.waitSignal(w.idle, timeout=LOAD_TIMEOUT_MS):
            w.cancel_loading()
    w.close()


def _open(qtbot, w: MainWindow, path: Path) -> Any:
    with qtbot.waitSignal(w.idle, timeout=LOAD_TIMEOUT_MS):
        w.open_trace(str(path))
    view = w.current_trace_view()
    assert view is not None, w.errors
    return view


@pytest.fixture
def evil_view(qtbot, window: MainWindow, evil_trace: Path) -> Any:
    view = _open(qtbot, window, evil_trace)
    for name in VIEWS:  # build every view
        view.set_view(name)
    assert view.timeline.wait_ready(60)
    return view


def _kernel_rows(view: Any) -> dict[str, int]:
    s = view.trace.slices
    rows = np.flatnonzero(s.kind == Kind.KERNEL)
    return {view.trace.name_of(int(r)): int(r) for r in rows}


def test_every_text_of_the_window_shows_the_hostile_trace_as_text(
    qtbot, window: MainWindow, evil_view: Any, evil_trace: Path
) -> None:
    tl = evil_view.timeline
    rows = _kernel_rows(evil_view)
    assert set(rows) == set(EVIL_NAMES)
    tl.select_slice(rows[EVIL_NAMES[5]])  # "<b>bold</b>": the info line names it
    evil_view.kernels_view.select_name(EVIL_NAMES[0])
    seen = "\n".join(sweep(window))
    # Not vacuous: the names are shown, escaped, in the kernel table and the summary.
    for name in EVIL_NAMES:
        assert terminal_safe(name, one_line=True) in seen, name
    assert terminal_safe(str(evil_trace), one_line=True) in seen  # the tab's tooltip


def test_tab_and_window_titles_keep_the_file_name_literal(
    qtbot, window: MainWindow, evil_view: Any, evil_trace: Path
) -> None:
    title = trace_title(str(evil_trace))
    assert "&" in title and "[*]" in title and "<b>" in title
    tab = window.tabs.tabBar().tabText(window.tabs.currentIndex())
    assert tab == menu_safe(title)
    assert mnemonic_shown(tab) == terminal_safe(title, one_line=True)
    assert window.windowTitle() == f"{title_safe(title)} — gpuviz"
    tip = window.tabs.tabBar().tabToolTip(window.tabs.currentIndex())
    assert rendered(tip) == terminal_safe(str(evil_trace))
    status = window.statusBar().currentMessage()
    assert status.startswith(terminal_safe(f"Opened {evil_trace}", one_line=True))


def test_kernel_table_cells_are_data_and_names_stay_exact(evil_view: Any) -> None:
    kv = evil_view.kernels_view
    model = kv.model
    for r in range(model.rowCount()):
        idx = model.index(r, 0)
        name = idx.data(NAME_ROLE)
        assert name in EVIL_NAMES  # the exact name
        assert idx.data() == terminal_safe(name, one_line=True)
        assert rendered(idx.data(Qt.ItemDataRole.ToolTipRole)) == terminal_safe(name)
    for name in EVIL_NAMES:  # selecting by the exact name (as a timeline click does)
        assert kv.select_name(name), name
        assert kv.selected_names() == [name]
    kv.filter_edit.setText("evil\x1b[31m")  # the filter matches the exact names
    assert kv.proxy.rowCount() == 1
    kv.filter_edit.setText("<b>")
    assert kv.proxy.rowCount() == 1
    kv.filter_edit.setText("")


def test_timeline_details_tooltips_and_search(evil_view: Any) -> None:
    tl = evil_view.timeline
    rows = _kernel_rows(evil_view)
    for name, row in rows.items():
        shown = rendered(tl.hover_text(row))
        check(shown, f"hover of {name!r}")
        assert terminal_safe(name, one_line=True) in shown
        tl.select_slice(row)
        info = rendered(tl.info_text, Qt.TextFormat.RichText)
        check(info, f"info line of {name!r}")
        assert terminal_safe(name, one_line=True) in info
    assert tl._info.textFormat() == Qt.TextFormat.RichText  # never guessed
    # An op on the hostile thread: its lane and its args are shown escaped.
    s = evil_view.trace.slices
    op = int(np.flatnonzero(s.kind == Kind.CPU_OP)[0])
    shown = rendered(tl.hover_text(op, count=3))
    check(shown, "hover of the op")
    assert terminal_safe(EVIL_THREAD, one_line=True) in shown
    assert terminal_safe(EVIL_ARG, one_line=True) in shown
    # Search finds the exact (raw) names.
    assert tl.search("evil\x1b[31mred") == 1
    assert tl.match_rows().tolist() == [rows[EVIL_NAMES[0]]]
    assert tl.search("<b>bold</b>") == 1
    assert tl.search("nul\x00") == 1


def test_timeline_draws_names_and_lanes_escaped(
    evil_view: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    tl = evil_view.timeline
    t0, t1 = tl.view_range()
    tl.set_view_range(t0, t0 + (t1 - t0) // 4)  # wide slices: their names are drawn
    drawn: list[str] = []
    original = QPainter.drawText

    def record(self: QPainter, *args: Any) -> Any:
        drawn.extend(a for a in args if isinstance(a, str))
        return original(self, *args)

    monkeypatch.setattr(QPainter, "drawText", record)
    tl.painter._static = None  # the lanes' gutter is cached per view: draw it again
    tl.canvas.grab()
    assert drawn
    for text in drawn:
        check(text, "drawn text")
    lane = terminal_safe(EVIL_THREAD, one_line=True)
    assert any(t.rstrip("…") and lane.startswith(t.rstrip("…")) for t in drawn), drawn


def test_summary_view_shows_names_and_path_literally(evil_view: Any, evil_trace: Path) -> None:
    text = evil_view.summary_view.text()
    check(text, "summary")
    for name in EVIL_NAMES:
        assert terminal_safe(name, one_line=True) in text
    assert terminal_safe(str(evil_trace), one_line=True) in text


def test_a_bad_hostile_file_gives_a_plain_text_dialog(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    bad = tmp_path / EVIL_FILE_NAME
    bad.write_text("not json", encoding="utf-8")
    with qtbot.waitSignal(window.loadFailed, timeout=LOAD_TIMEOUT_MS):
        window.open_trace(str(bad))
    qtbot.waitUntil(lambda: any(b.isVisible() for b in window.findChildren(QMessageBox)))
    (box,) = [b for b in window.findChildren(QMessageBox) if b.isVisible()]
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert box.text() == terminal_safe(f"Could not open {bad}")
    assert terminal_safe(str(bad)) in box.informativeText()
    sweep(box)
    box.accept()


def test_recent_files_menu_shows_the_path_literally(
    qtbot, window: MainWindow, evil_view: Any, evil_trace: Path
) -> None:
    window._update_recent_menu()
    texts = [a.text() for a in window.recent_menu.actions()]
    path = str(evil_trace.resolve())
    assert menu_safe(path) in texts
    assert window.recent_paths()[0] == path  # remembered exactly
    action = next(a for a in window.recent_menu.actions() if a.text() == menu_safe(path))
    with qtbot.waitSignal(window.idle, timeout=LOAD_TIMEOUT_MS):
        action.trigger()  # and it opens the exact path again
    assert window.tabs.count() == 2


def test_failure_dialog_shows_a_users_traceback_as_text(qtbot) -> None:
    from gpuviz.gui.run.qt_failure_dialog import QtFailureDialog

    title = "wl-<b>bold</b>\x1b]0;t\x07.py:f on cpu"
    message = "ValueError: <a href=x>link</a> \x1b[31m\u202e"
    tb = 'Traceback (most recent call last):\n  File "<b>bold</b>\x1b[2J.py"\nValueError: x\x00'
    partial = "/tmp/<i>PROC</i>\x1b]52;c;QQ==\x07.json.gz"
    d = QtFailureDialog(title, message, tb, partial)
    qtbot.addWidget(d)
    seen = "\n".join(sweep(d))
    assert terminal_safe(title, one_line=True) + " failed" in seen
    assert terminal_safe(message, one_line=True) in seen
    assert terminal_safe(partial, one_line=True) in seen
    assert d.traceback_edit.toPlainText() == terminal_safe(tb)
    assert d.windowTitle() == title_safe(f"Run failed: {title}")


EVIL_USER_SOURCE = '''
def ok(device, n: int = 3):
    """<b>bold</b> title\\x1b]0;t\\x07\\u202e"""
    return n
'''


@pytest.fixture
def run_app(qtbot, tmp_path: Path) -> Iterator[Any]:
    from gpuviz.gui.run.qt_run_controller import install_run_panel

    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
    qtbot.addWidget(win)
    ctl = install_run_panel(win, runs_dir=tmp_path / "runs", gpus=[], restore=False)
    win.resize(1400, 900)
    win.show()
    yield ctl
    win.close()


def test_run_panel_shows_a_hostile_user_file_as_text(run_app: Any, tmp_path: Path) -> None:
    f = tmp_path / "wl-\x1b[31m<b>bold\u202e.py"
    f.write_text(EVIL_USER_SOURCE, encoding="utf-8")
    panel = run_app.panel
    (name,) = panel.add_user_file(str(f))
    assert panel.select(name)
    panel.show_message(f"Added 1 function(s) from {f.name}")
    seen = "\n".join(sweep(panel))
    assert terminal_safe(f.name, one_line=True) + ":ok" in seen  # the list item
    assert terminal_safe("<b>bold</b> title\x1b]0;t\x07\u202e", one_line=True) in seen
    assert panel.message.textFormat() == Qt.TextFormat.PlainText
    assert panel.request()["workload"] == name  # the exact name goes to the engine


def _evil_stream(folder: Path, trace: Path) -> Path:
    wl = "wl<b>bold</b>\x1b]0;t\x07"
    dev = "cpu<i>PROC</i>\x1b[31m"
    label = "loop<a href=x>link</a>\u202e"
    lines: list[dict[str, Any]] = [
        {"type": "Started", "schema": 1, "workload": wl, "params": {}, "device": dev,
         "devices": [dev], "torch_version": "2.x\x1b[5m"},
        {"type": "Progress", "step": 0, "total": 2},
    ]  # fmt: skip
    for step, lab in enumerate((label, "vector<b>THR</b>")):
        lines.append({"type": "MemorySample", "t_s": 0.1 * (step + 1), "device": dev,
                      "rss_bytes": 10**8})  # fmt: skip
        lines.append({"type": "StepTimed", "step": step, "label": lab, "wall_ms": 2.0 + step,
                      "profiled": False})  # fmt: skip
        lines.append({"type": "SplitRecorded", "step": step, "replica": 0, "device": dev,
                      "rows": 3})  # fmt: skip
    lines.append({"type": "TraceReady", "path": trace.name})
    strategies = [
        {"name": label, "title": "<b>ARG</b> title\x1b[31m", "status": "ok",
         "median_wall_ms": 2.0, "speedup": 1.0},
        {"name": "vector<b>THR</b>", "title": "t", "status": "ok", "median_wall_ms": 3.0,
         "speedup": 0.67},
        {"name": "skipped\x1b[2J<u>OPX</u>", "status": "skipped",
         "reason": "needs <i>PROC</i>\x07", "error": "<b>bold</b>\x00"},
    ]  # fmt: skip
    lines.append({"type": "Finished", "result": {"workload": wl, "device": dev,
                  "baseline": label, "strategies": strategies, "trace": trace.name}})  # fmt: skip
    path = folder / "evil.events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    return path


def test_replayed_hostile_stream_shows_as_text_in_live_views(
    qtbot, run_app: Any, tmp_path: Path
) -> None:
    trace = write_evil_trace(tmp_path)
    path = _evil_stream(tmp_path, trace)
    ended: list[Any] = []
    shown: list[Any] = []
    run_app.runEnded.connect(ended.append)
    run_app.resultShown.connect(shown.append)
    assert run_app.replay(path)
    qtbot.waitUntil(lambda: bool(ended and shown), timeout=LOAD_TIMEOUT_MS)
    assert type(ended[0]).__name__ == "Finished", ended
    run_app.live_plots._on_tick()  # draw the last state now
    seen = "\n".join(sweep(run_app.window))  # the live plots and the strategies are docked
    assert terminal_safe("wl<b>bold</b>\x1b]0;t\x07", one_line=True) in seen  # status line
    assert terminal_safe("loop<a href=x>link</a>\u202e", one_line=True) in seen  # legend, table
    assert terminal_safe("skipped\x1b[2J<u>OPX</u>", one_line=True) in seen
    assert run_app.comparison.note.textFormat() == Qt.TextFormat.RichText
    assert run_app.live_plots.status.textFormat() == Qt.TextFormat.RichText


def test_run_comparison_of_hostile_traces_shows_titles_as_text(
    qtbot, window: MainWindow, tmp_path: Path
) -> None:
    from gpuviz.gui.run.qt_compare import QtRunComparison

    a = _open(qtbot, window, write_evil_trace(tmp_path))
    other = tmp_path / "b"
    other.mkdir()
    b = _open(qtbot, window, write_evil_trace(other, "b-<b>bold\x1b]0;t\x07.json"))
    win = QtRunComparison(a, b)
    qtbot.addWidget(win)
    for tl in win.timelines:
        assert tl.wait_ready(60)
    seen = "\n".join(sweep(win))
    assert win.windowTitle() == title_safe(f"Compare: A {a.title} · B {b.title}")
    assert terminal_safe(b.title, one_line=True) in seen
    assert terminal_safe(b.source, one_line=True) in seen
    win.close()


def test_the_sweep_catches_rich_text_and_controls(qtbot) -> None:
    # The checks above can fail: a label in AutoText with a name, and one with an ESC.
    bad = QLabel("kernel <b>bold</b>")
    qtbot.addWidget(bad)
    with pytest.raises(AssertionError):
        sweep(bad)
    esc = QLabel("kernel \x1b[31m")
    esc.setTextFormat(Qt.TextFormat.PlainText)
    qtbot.addWidget(esc)
    with pytest.raises(AssertionError):
        sweep(esc)
    good = QLabel()
    good.setTextFormat(Qt.TextFormat.PlainText)
    good.setText(terminal_safe("kernel <b>bold</b> \x1b[31m"))
    qtbot.addWidget(good)
    assert sweep(good) == [terminal_safe("kernel <b>bold</b> \x1b[31m")]
    assert re.search(r"\\x1b", sweep(good)[0])
    assert all(n for n in ALL_EVIL)
