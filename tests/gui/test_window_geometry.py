"""The main window's first size comes from the screen, and it opens as it was closed (issue 47,
item 21): a fixed 1600×900 window ran off a 1280×800 screen."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QRect, QSettings

from gpuviz.gui.qt_main_window import MainWindow
from gpuviz.gui.qt_window_geometry import DEFAULT_SIZE, GEOMETRY_KEY

SMALL = QRect(0, 0, 1280, 800)


def _window(qtbot, settings: QSettings) -> MainWindow:
    win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
    qtbot.addWidget(win)
    return win


def _settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def test_first_start_fits_a_small_screen(qtbot, tmp_path):
    win = _window(qtbot, _settings(tmp_path))
    assert win.fit_to_screen(SMALL) == "fitted"
    win.show()
    assert SMALL.contains(win.frameGeometry()), win.frameGeometry()
    # The offscreen platform's frame is 2 px a side: the content gets the rest.
    frame = win.frameGeometry().width() - win.width()
    assert (win.width(), win.height()) == (1280 - frame, 800 - frame)


def test_first_start_on_a_large_screen_takes_the_default_size_centred(qtbot, tmp_path):
    big = QRect(0, 0, 2560, 1440)
    win = _window(qtbot, _settings(tmp_path))
    win.fit_to_screen(big)
    assert (win.width(), win.height()) == DEFAULT_SIZE
    assert win.frameGeometry().center().x() in range(1270, 1290)


def test_the_size_is_remembered_in_the_windows_settings(qtbot, tmp_path):
    settings = _settings(tmp_path)
    win = _window(qtbot, settings)
    win.fit_to_screen(SMALL)
    win.show()
    win.resize(1000, 700)
    win.close()
    assert settings.value(GEOMETRY_KEY) is not None
    again = _window(qtbot, _settings(tmp_path))
    assert again.fit_to_screen(SMALL) == "saved"
    assert (again.width(), again.height()) == (1000, 700)


def test_a_saved_size_larger_than_the_screen_now_is_fitted_again(qtbot, tmp_path):
    settings = _settings(tmp_path)
    win = _window(qtbot, settings)
    win.fit_to_screen(QRect(0, 0, 2560, 1440))
    win.show()
    win.close()
    again = _window(qtbot, _settings(tmp_path))
    assert again.fit_to_screen(SMALL) == "fitted"
    again.show()
    assert SMALL.contains(again.frameGeometry()), again.frameGeometry()


def test_a_window_with_a_fixed_size_saves_nothing(qtbot, tmp_path):
    # `gpuviz open --screenshot` and tests resize the window themselves: nothing is saved.
    settings = _settings(tmp_path)
    win = _window(qtbot, settings)
    win.resize(900, 600)
    win.show()
    win.close()
    assert settings.value(GEOMETRY_KEY) is None


def test_tests_never_write_the_users_settings():
    path = Path(QSettings("gpuviz", "gpuviz").fileName())
    assert not str(path).startswith(str(Path.home() / ".config")), path
