"""A folder whose files are not one job opens each file in its own tab, and says why (issue 47,
item 6): the CLI refuses such a folder (exit 2), the app shows every file instead."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings

from gpuviz.gui.qt_main_window import MainWindow

DATA = Path(__file__).parent.parent / "data"
LOAD_TIMEOUT_MS = 60_000


def test_a_folder_of_two_jobs_opens_each_file_in_its_own_tab(qtbot, tmp_path: Path) -> None:
    folder = tmp_path / "mixed"
    folder.mkdir()
    # An H200 trace beside an H100 one: two devices, two recordings.
    shutil.copy(DATA / "streams_overlap.json.gz", folder / "a.json.gz")
    shutil.copy(DATA / "gloo_2rank_h100" / "rank-0.json.gz", folder / "b.json.gz")
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    window.modal_errors = False
    window.show()
    with qtbot.waitSignal(window.idle, timeout=LOAD_TIMEOUT_MS):
        window.open_trace(str(folder))
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=LOAD_TIMEOUT_MS)
    assert window.errors == []
    titles = [v.title for v in window.trace_views()]
    assert titles == ["a", "b"]
    # Each tab is one file, one process: nothing was merged.
    assert [len(v.analyses.trace.ranks) for v in window.trace_views()] == [1, 1]
    window.close()
