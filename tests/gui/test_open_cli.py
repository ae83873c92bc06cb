"""``gpuviz open ... --screenshot``: offscreen PNGs and exit codes, run as a user would (subprocess).
Also the platform checks that replace Qt's bare "could not load the platform plugin"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuviz.gui import app as gui_app
from gpuviz.gui.view_names import VIEWS


def _gpuviz(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ if env is None else env)
    return subprocess.run(
        [sys.executable, "-m", "gpuviz", *args], capture_output=True, text=True, env=e, timeout=180
    )


def _pixels_vary(png: Path) -> bool:
    """True when the PNG holds more than a blank fill (read with Qt, in this process)."""
    from PySide6.QtGui import QImage

    img = QImage(str(png))
    assert not img.isNull()
    colors = set()
    for y in range(0, img.height(), max(img.height() // 60, 1)):
        for x in range(0, img.width(), max(img.width() // 80, 1)):
            colors.add(img.pixel(x, y))
    return len(colors) > 8


@pytest.mark.slow
@pytest.mark.parametrize("view", VIEWS)
def test_screenshot_of_each_view(qapp, data_dir, tmp_path, view):
    trace = {
        "memory": "streams_overlap.json.gz",
        "ranks": "ddp_2rank",
        "operators": "attribution/tinylm_train.json.gz",
        "modules": "attribution/tinylm_train.json.gz",
        "source": "attribution/tinylm_train.json.gz",
    }.get(view, "dataparallel_seed_2gpu.json.gz")
    out = tmp_path / f"{view}.png"
    r = _gpuviz(
        "open",
        str(data_dir / trace),
        "--view",
        view,
        "--screenshot",
        str(out),
        "--size",
        "1000x700",
    )
    assert r.returncode == 0, r.stderr
    from PySide6.QtGui import QImage

    img = QImage(str(out))
    assert (img.width(), img.height()) == (1000, 700)
    assert _pixels_vary(out)


def test_screenshot_of_a_bad_file_exits_2_with_one_line(data_dir, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("this is not json", encoding="utf-8")
    out = tmp_path / "out.png"
    r = _gpuviz("open", str(data_dir / "worker_thread.json.gz"), str(bad), "--screenshot", str(out))
    assert r.returncode == 2
    lines = [ln for ln in r.stderr.splitlines() if ln.strip() and "propagateSizeHints" not in ln]
    assert len(lines) == 1, r.stderr
    assert str(bad) in lines[0]
    assert "Traceback" not in r.stderr
    assert not out.exists()


def test_screenshot_of_json_nested_too_deeply_exits_2_with_one_line(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    out = tmp_path / "out.png"
    r = _gpuviz("open", str(deep), "--screenshot", str(out))
    assert r.returncode == 2, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip() and "propagateSizeHints" not in ln]
    assert lines == [f"{deep}: byte 100: JSON nested too deeply (100,000 levels of brackets)"]
    assert not out.exists()


def test_open_a_missing_path_exits_2(tmp_path):
    r = _gpuviz("open", str(tmp_path / "missing.json.gz"), "--screenshot", str(tmp_path / "o.png"))
    assert r.returncode == 2
    assert r.stderr.strip().splitlines() == [
        f"gpuviz open: {tmp_path / 'missing.json.gz'}: no such file or folder"
    ]


def test_the_app_without_a_display_says_so(tmp_path):
    if not sys.platform.startswith("linux"):
        pytest.skip("the display check is for Linux")
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")
    }
    r = _gpuviz(env=env)
    assert r.returncode == 1
    assert "no display" in r.stderr
    assert "could not load the Qt platform plugin" not in r.stderr


def test_missing_xcb_libraries_are_named(monkeypatch):
    present = {
        "xcb-cursor",
        "xcb-icccm",
        "xcb-keysyms",
        "xcb-image",
        "xcb-render-util",
        "xcb-shape",
        "xcb-randr",
    }
    monkeypatch.setattr(
        gui_app.ctypes.util,
        "find_library",
        lambda name: f"lib{name}.so" if name in present else None,
    )
    msg = gui_app.platform_problem({"DISPLAY": ":0"}, "linux")
    assert msg is not None
    assert "libxcb-xkb1" in msg and "libxkbcommon-x11-0" in msg
    assert "libxcb-cursor0" not in msg


def test_no_problem_reported_offscreen_or_off_linux():
    assert gui_app.platform_problem({"QT_QPA_PLATFORM": "offscreen"}, "linux") is None
    assert gui_app.platform_problem({}, "darwin") is None
    assert gui_app.platform_problem({"WAYLAND_DISPLAY": "wayland-0"}, "linux") is None
    assert "no display" in (gui_app.platform_problem({}, "linux") or "")


def test_a_screenshot_prints_no_qt_noise(qapp, data_dir, tmp_path):
    # issue 47, item 20: the offscreen platform printed "This plugin does not support
    # propagateSizeHints()" twice on every screenshot
    out = tmp_path / "shot.png"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    r = _gpuviz(
        "open", str(data_dir / "streams_overlap.json.gz"), "--screenshot", str(out), env=env
    )
    assert r.returncode == 0, r.stderr
    assert "propagateSizeHints" not in r.stderr and r.stderr == "", r.stderr
    assert _pixels_vary(out)


def test_other_qt_messages_still_reach_stderr(tmp_path):
    code = (
        "from gpuviz.gui.app import OFFSCREEN_NOISE, start_qt\n"
        "app = start_qt(True)\n"
        "from PySide6.QtCore import qWarning\n"
        "qWarning(OFFSCREEN_NOISE)\n"
        "qWarning('a message that matters')\n"
    )
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == ["a message that matters"]
