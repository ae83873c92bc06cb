"""Start the app: check that Qt can show a window, build the main window, run or screenshot.

``run_app`` is what ``gpuviz`` and ``gpuviz open`` call. With ``screenshot`` it renders
offscreen, waits until every trace is loaded, saves a PNG and returns; nothing is modal, and a
trace that cannot be opened is one line on stderr and exit code 2.
"""

from __future__ import annotations

import contextlib
import ctypes.util
import gc
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuviz.display import echo

if TYPE_CHECKING:  # Qt is imported only when the app starts
    from PySide6.QtWidgets import QApplication

    from gpuviz.gui.qt_main_window import MainWindow

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# The system libraries Qt's xcb platform plugin needs beyond libxcb itself (Debian/Ubuntu
# package name -> the library's link name for ctypes.util.find_library).
XCB_LIBRARIES = {
    "libxcb-cursor0": "xcb-cursor",
    "libxcb-icccm4": "xcb-icccm",
    "libxcb-keysyms1": "xcb-keysyms",
    "libxcb-image0": "xcb-image",
    "libxcb-render-util0": "xcb-render-util",
    "libxcb-xkb1": "xcb-xkb",
    "libxkbcommon-x11-0": "xkbcommon-x11",
    "libxcb-shape0": "xcb-shape",
    "libxcb-randr0": "xcb-randr",
}

# How long a screenshot waits for loads and for the views to settle, at most.
SCREENSHOT_TIMEOUT_MS = 120_000
SETTLE_MS = 300
DEFAULT_SIZE = (1600, 900)
"""The size of a screenshot (`gpuviz open --screenshot`) unless `--size` says otherwise."""


def missing_xcb_libraries() -> list[str]:
    """The packages of :data:`XCB_LIBRARIES` whose library the dynamic linker cannot find."""
    return [pkg for pkg, lib in XCB_LIBRARIES.items() if ctypes.util.find_library(lib) is None]


def platform_problem(env: dict[str, str] | None = None, platform: str | None = None) -> str | None:
    """Why Qt could not show a window here, in one line, or None when it should work.

    Only Linux's X11 (xcb) platform is checked: no display at all, or missing xcb libraries
    (found as the dynamic linker finds them; ``GPUVIZ_SKIP_PLATFORM_CHECK=1`` skips the check
    where they live somewhere it does not look).
    """
    env = dict(os.environ if env is None else env)
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux") or env.get("GPUVIZ_SKIP_PLATFORM_CHECK"):
        return None
    qpa = env.get("QT_QPA_PLATFORM", "")
    if qpa and not qpa.startswith("xcb"):
        return None  # offscreen, wayland, vnc…: the user chose; Qt reports its own errors
    if not qpa and env.get("WAYLAND_DISPLAY"):
        return None
    if not env.get("DISPLAY"):
        return (
            "no display: DISPLAY is not set, so no window can be shown. Run gpuviz on a "
            "desktop, forward X (ssh -X), or render to a file with "
            "`gpuviz open TRACE --screenshot OUT.png`"
        )
    missing = missing_xcb_libraries()
    if missing:
        return (
            "Qt's xcb platform plugin cannot load: missing system libraries "
            f"{', '.join(missing)}. Install them (Debian/Ubuntu: sudo apt-get install "
            f"{' '.join(missing)}), or set GPUVIZ_SKIP_PLATFORM_CHECK=1 if they are there"
        )
    return None


def start_qt(offscreen: bool) -> QApplication | None:
    """The QApplication, or None after saying on stderr why Qt cannot start here.

    With ``offscreen`` (screenshots) Qt renders without a display unless the caller chose a
    platform. The platform check runs first, so a missing xcb library is named instead of
    Qt's bare "could not load the platform plugin".
    """
    if offscreen and "QT_QPA_PLATFORM" not in os.environ:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    problem = platform_problem()
    if problem:
        echo(f"gpuviz: {problem}", file=sys.stderr)
        return None

    from PySide6.QtWidgets import QApplication

    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        _drop_offscreen_noise()
    app = QApplication.instance() or QApplication(["gpuviz"])
    assert isinstance(app, QApplication)
    app.setApplicationName("gpuviz")
    app.setOrganizationName("gpuviz")
    return app


OFFSCREEN_NOISE = "This plugin does not support propagateSizeHints()"
"""What Qt's offscreen platform prints each time a window is shown (every screenshot printed
it twice): it says only that there is no window system to tell, so it is dropped."""


def _drop_offscreen_noise() -> None:
    """Route Qt's messages through a handler that drops :data:`OFFSCREEN_NOISE` and passes
    every other message on (to the handler installed before, else to stderr as Qt does)."""
    from PySide6.QtCore import qInstallMessageHandler

    previous: Any = None

    def handler(mode: Any, context: Any, message: str) -> None:
        if message == OFFSCREEN_NOISE:
            return
        if previous is not None:
            previous(mode, context, message)
        else:
            echo(message, file=sys.stderr)

    previous = qInstallMessageHandler(handler)


@contextlib.contextmanager
def collect_on_gui_thread(interval_s: float = 1.0) -> Iterator[object]:
    """Python's cyclic garbage collection only on the GUI thread, on a timer, while inside.

    A collection that starts on a worker thread (a loader, the run worker) may free Qt
    objects held in cycles, such as a closed tab's widgets. Their C++ destructors then run on
    that worker and take Qt's lock, while the GUI thread, holding the GIL, waits for the same
    lock: the deadlock read with gdb in a hung CI run (2026-11-28). pyqtgraph's
    ``GarbageCollector`` turns the automatic collector off and collects on a GUI-thread timer
    with the same thresholds. Leaving restores the automatic collector (``gpuviz open
    --screenshot`` returns to its caller). Yields the collector.
    """
    from pyqtgraph.util.garbage_collector import GarbageCollector

    was_enabled = gc.isenabled()
    collector = GarbageCollector(interval=interval_s)
    try:
        yield collector
    finally:
        collector.timer.stop()
        if was_enabled:
            gc.enable()


def run_app(
    argv_paths: Sequence[str] = (),
    view: str = "insights",
    screenshot: str | None = None,
    size: tuple[int, int] | None = None,
    compile_info: str | None = None,
) -> int:
    """Open the app with these traces (each in a tab), and run it or take a screenshot.

    Parameters
    ----------
    argv_paths : sequence of str
        Trace files or folders to open.
    view : str
        The view to show: insights, timeline, splits, memory, kernels or summary.
    screenshot : str, optional
        Render offscreen, save a PNG here once everything is loaded, and return.
    size : (int, int), optional
        The window's size in pixels; by default fitted to the screen (as last closed, after
        the first start), and 1600×900 for a screenshot.
    compile_info : str, optional
        The compile-info folder of the one trace (``gpuviz open --compile-info``); without
        it each trace's ``NAME.compile/`` beside it is used, where there is one.

    Returns
    -------
    int
        The exit code: 0, 1 (Qt cannot start here) or 2 (a trace could not be opened, with
        ``screenshot``).
    """
    app = start_qt(offscreen=screenshot is not None)
    if app is None:
        return EXIT_FAILED

    from gpuviz.gui.qt_main_window import MainWindow

    with collect_on_gui_thread():
        window = MainWindow(modal_errors=screenshot is None, remember_recent=screenshot is None)
        if screenshot is None and size is None:
            window.fit_to_screen()  # the screen's size at first start, then as last closed
        else:
            window.resize(*(size or DEFAULT_SIZE))
        window.set_open_view(view)
        if compile_info is not None:
            for p in argv_paths:
                window.open_trace(p, compile_info=compile_info)
        else:
            window.open_traces(argv_paths)
        if screenshot is None:
            # The workload panel, live plots and Run menu (gpuviz.gui.run); `open --screenshot`
            # renders the traces alone.
            from gpuviz.gui.run.qt_run_controller import install_run_panel

            install_run_panel(window)
            window.show()
            return int(app.exec())
        return _screenshot(app, window, screenshot, size or DEFAULT_SIZE)


def _screenshot(app: QApplication, window: MainWindow, out: str, size: tuple[int, int]) -> int:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    window.idle.connect(loop.quit)
    timeout = QTimer()
    timeout.setSingleShot(True)
    timeout.timeout.connect(loop.quit)
    window.show()
    if window.is_busy():
        timeout.start(SCREENSHOT_TIMEOUT_MS)
        loop.exec()
    if window.is_busy():
        window.cancel_loading()
        window.close()
        echo(
            f"gpuviz open: timed out after {SCREENSHOT_TIMEOUT_MS // 1000} s loading traces",
            file=sys.stderr,
        )
        return EXIT_FAILED
    if window.errors:
        path, message = window.errors[0]
        echo(message if path in message else f"{path}: {message}", file=sys.stderr)
        window.close()
        return EXIT_USAGE
    # The Timeline builds its level-of-detail pyramids of large traces in a thread of its own.
    for view in window.trace_views():
        if "timeline" not in view.built_views():
            continue
        wait_ready = getattr(view.timeline, "wait_ready", None)
        if wait_ready is not None:
            wait_ready(SCREENSHOT_TIMEOUT_MS / 1000)
    # Operators, Modules and Source show the attribution, computed in a thread of its own too.
    for view in window.trace_views():
        wait = getattr(view, "wait_breakdowns", None)
        if wait is not None:
            wait(SCREENSHOT_TIMEOUT_MS / 1000)
    # Let the views lay out and draw (timers, deferred resizes) before grabbing.
    QTimer.singleShot(SETTLE_MS, loop.quit)
    loop.exec()
    window.resize(*size)
    app.processEvents()
    image = window.grab()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    ok = image.save(out)
    window.close()
    if not ok:
        echo(f"gpuviz open: {out}: could not write the PNG", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK
