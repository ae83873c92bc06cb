"""The app and the import cache: a re-open comes from the cache, and File → Clear trace cache."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings

from gpuviz.gui.qt_main_window import MainWindow
from gpuviz.gui.qt_window_recent import _size_text
from gpuviz.trace.cache import from_cache

LOAD_TIMEOUT_MS = 60_000


@pytest.fixture
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("GPUVIZ_NO_CACHE", raising=False)
    monkeypatch.setenv("GPUVIZ_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "traces"


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(settings=settings, modal_errors=False)
    qtbot.addWidget(w)
    w.show()
    yield w
    if w.is_busy():
        with qtbot.waitSignal(w.idle, timeout=LOAD_TIMEOUT_MS):
            w.cancel_loading()
    w.close()


def _open(qtbot, window: MainWindow, path: Path):
    with qtbot.waitSignal(window.traceOpened, timeout=LOAD_TIMEOUT_MS) as opened:
        window.open_trace(str(path))
    qtbot.waitUntil(lambda: not window.is_busy(), timeout=LOAD_TIMEOUT_MS)
    return opened.args[0]


def test_a_reopen_comes_from_the_cache_and_clear_cache_says_what_it_freed(
    qtbot, window, cache_root, data_dir, tmp_path
):
    path = tmp_path / "dp.json.gz"
    shutil.copyfile(data_dir / "dataparallel_seed_2gpu.json.gz", path)
    hour_ago = time.time() - 3600
    os.utime(path, (hour_ago, hour_ago))

    first = _open(qtbot, window, path)
    assert not from_cache(first.trace)
    on_disk = sum(f.stat().st_size for f in cache_root.rglob("*") if f.is_file())
    assert on_disk > 0

    second = _open(qtbot, window, path)
    assert from_cache(second.trace)
    assert "from the trace cache" in window.statusBar().currentMessage()
    assert len(second.trace.slices) == len(first.trace.slices)
    assert second.summary == first.summary

    actions = {a.text(): a for a in window.menuBar().actions()[0].menu().actions()}
    actions["Clear trace &cache"].trigger()
    message = window.statusBar().currentMessage()
    assert message == f"Cleared the trace cache: freed {_size_text(on_disk)}"
    assert list(cache_root.iterdir()) == []
    # The open tabs still work (their columns stay mapped), and a re-open imports again.
    assert int(second.trace.slices.dur_ns.sum()) == int(first.trace.slices.dur_ns.sum())
    third = _open(qtbot, window, path)
    assert not from_cache(third.trace)


@pytest.mark.parametrize(
    ("n", "text"),
    [(0, "0 bytes"), (999, "999 bytes"), (1500, "1.5 kB"), (250_100_000, "250.1 MB"),
     (4_200_000_000, "4.20 GB")],
)  # fmt: skip
def test_size_text(n, text):
    assert _size_text(n) == text
