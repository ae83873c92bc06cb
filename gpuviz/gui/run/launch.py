"""``gpuviz run NAME --gui [-p k=v]... [--screenshot OUT.png]``: a workload run inside the app.

:func:`run_gui` opens the main window with the run panel, fills the panel with the request (so
the user sees what runs), starts the run, and shows its result: the trace's tab, the strategy
comparison. With ``screenshot`` it renders offscreen, waits until the result is shown, saves a
PNG of the window and returns; nothing is modal, and a failure goes to stderr.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from gpuviz.display import echo

EXIT_OK, EXIT_FAILED, EXIT_CANCELLED = 0, 1, 130
SETTLE_MS = 400
READY_TIMEOUT_S = 120.0


def _as_dict(request: Any) -> dict[str, Any]:
    if isinstance(request, dict):
        return dict(request)
    to_json = getattr(request, "to_json", None)
    if to_json is not None:
        return dict(to_json())
    raise TypeError(f"expected a RunRequest or a dict, got {type(request).__name__}")


def run_gui(
    request: Any,
    screenshot: str | None = None,
    size: tuple[int, int] | None = None,
    runs_dir: str | os.PathLike[str] | None = None,
    events: str | None = None,
) -> int:
    """Run one workload in the app.

    Parameters
    ----------
    request : RunRequest or dict
        What to run (``RunRequest`` fields; parameters already parsed and checked).
    screenshot : str, optional
        Render offscreen, save a PNG here once the result is shown, and return.
    size : (int, int), optional
        The window's size in pixels; by default fitted to the screen (1600×900 for a
        screenshot).
    runs_dir : str or PathLike, optional
        Where the trace goes when the request names no ``out`` (default ``./gpuviz-runs``).
    events : str, optional
        Save the run's event stream here (``--events``); by default it is saved beside the
        trace as ``NAME-STAMP.events.jsonl``.

    Returns
    -------
    int
        0 when the run finished, 1 when it failed (or Qt cannot start here), 130 when it was
        cancelled; without ``screenshot``, the app's exit code once the window is closed.
    """
    req = _as_dict(request)
    if events:
        req["events"] = events
    from gpuviz.gui.app import start_qt

    app = start_qt(offscreen=screenshot is not None)
    if app is None:
        return EXIT_FAILED

    from PySide6.QtCore import QEventLoop, QTimer

    from gpuviz.gui.qt_main_window import MainWindow
    from gpuviz.gui.run.qt_run_controller import install_run_panel

    interactive = screenshot is None
    window = MainWindow(modal_errors=interactive, remember_recent=interactive)
    ctl = install_run_panel(window, runs_dir=runs_dir, restore=interactive)
    show_request(ctl, req)
    if interactive and size is None:
        window.fit_to_screen()
    else:
        window.resize(*(size or (1600, 900)))
    window.show()

    ended: list[Any] = []
    shown: list[Any] = []
    loop = QEventLoop()
    ctl.runEnded.connect(ended.append)

    def on_shown(view: Any) -> None:
        shown.append(view)
        if not interactive:  # the picture shows the run's live plots, which fold once idle
            ctl.live_fold.set_open(True)
        loop.quit()

    ctl.resultShown.connect(on_shown)
    if not ctl.start_run(req):
        echo(f"gpuviz run: {ctl.panel.message.text()}", file=sys.stderr)
        window.close()
        return EXIT_FAILED
    if interactive:
        return int(app.exec())

    while not shown:
        loop.exec()
    # The trace's analyses and the Timeline's level of detail finish in their own threads.
    if window.is_busy():
        window.idle.connect(loop.quit)
        loop.exec()
    for view in window.trace_views():
        wait_ready = getattr(view.timeline, "wait_ready", None)
        if wait_ready is not None:
            wait_ready(READY_TIMEOUT_S)
    QTimer.singleShot(SETTLE_MS, loop.quit)
    loop.exec()
    window.resize(*(size or (1600, 900)))
    app.processEvents()
    image = window.grab()
    Path(screenshot).parent.mkdir(parents=True, exist_ok=True)  # type: ignore[arg-type]
    ok = image.save(screenshot)  # type: ignore[arg-type]
    window.close()
    if not ok:
        echo(f"gpuviz run: {screenshot}: could not write the PNG", file=sys.stderr)
        return EXIT_FAILED
    end = type(ended[-1]).__name__ if ended else "Failed"
    return {"Finished": EXIT_OK, "Cancelled": EXIT_CANCELLED}.get(end, EXIT_FAILED)


def show_request(ctl: Any, req: dict[str, Any]) -> None:
    """Fill the panel with ``req`` (workload, parameters, device, GPUs, steps, profiling)."""
    from gpuviz.errors import BadInputError
    from gpuviz.workloads.registry import is_user_file

    panel = ctl.panel
    name = str(req["workload"])
    if is_user_file(name) and name not in panel.specs:
        try:
            panel.add_user_file(name.rpartition(":")[0])
        except BadInputError:
            pass
    panel.select(name)
    panel.set_param_values(req.get("params") or {})
    if req.get("device"):
        panel.devices.set_device(str(req["device"]))
    if req.get("gpus"):
        panel.devices.set_gpus(str(req["gpus"]))
    if req.get("steps"):
        panel.steps.setValue(int(req["steps"]))
    panel.profile.setChecked(bool(req.get("profile", True)))
    panel.memory_snapshot.setChecked(bool(req.get("memory_snapshot", False)))


__all__ = ["run_gui", "show_request"]
