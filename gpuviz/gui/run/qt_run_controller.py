"""Runs workloads from the app: the panel, the worker, the live plots and the main window, wired.

:func:`install_run_panel` puts the workload panel in a left dock and the live plots (with the
strategy comparison) in a bottom dock of a :class:`~gpuviz.gui.qt_main_window.MainWindow`, adds
a Run menu and File → Replay events…, and returns the :class:`QtRunController`. It uses only the
window's public methods (``add_dock``, ``open_trace``, ``trace_views``, ``traceOpened``,
``loadFailed``, ``settings``, ``modal_errors``) and its menu bar.

One run at a time: a second Run while one is going is refused with a message (never run twice).
Each run's event stream is saved beside its trace (``NAME-STAMP.events.jsonl``), so any run can
be replayed later (File → Replay events…).

The controller's menus, settings and run comparison are :mod:`gpuviz.gui.run.qt_run_window`'s.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QDialog,
    QFrame,
    QMainWindow,
    QScrollArea,
    QTabWidget,
)

from gpuviz.display import echo, terminal_safe
from gpuviz.errors import BadInputError
from gpuviz.gui.qt_threads import start_owned
from gpuviz.gui.run.live_buffers import LiveRun
from gpuviz.gui.run.qt_compare import QtRunComparison, QtStrategyComparison
from gpuviz.gui.run.qt_device_picker import query_gpus
from gpuviz.gui.run.qt_failure_dialog import QtFailureDialog
from gpuviz.gui.run.qt_live_dock import install_live_dock
from gpuviz.gui.run.qt_live_plots import QtLivePlots
from gpuviz.gui.run.qt_run_window import RunWindowMixin
from gpuviz.gui.run.qt_run_worker import QtRunWorker, make_script_source, make_source
from gpuviz.gui.run.qt_workload_panel import QtWorkloadPanel

PROBE_INTERVAL_MS = 40
"""How often the app reads a child's RSS itself while the child sends no memory sample."""
PROBE_GAP_S = 0.075
"""A child silent for this long (its GIL held by the profiler's export) gets app-read samples."""
PROBE_SPACING_S = 0.035
"""At most one app-read sample per this many seconds (about the engine's own 20 Hz)."""
SHUTDOWN_WAIT_MS = 10_000
START_DELAY_MS = 40
EVENTS_SUFFIX = ".events.jsonl"


def _stamp_name(folder: Path, name: str, multi_process: bool) -> Path:
    """``folder/NAME-YYYYmmdd-HHMMSS.json.gz`` (a folder for multi-process runs), made unique."""
    if ":" in name:  # FILE.py:FUNC -> FILE-FUNC
        path, _, func = name.rpartition(":")
        name = f"{Path(path).stem}-{func}"
    base = f"{name}-{datetime.now():%Y%m%d-%H%M%S}"
    for i in range(1000):
        stem = base if i == 0 else f"{base}-{i}"
        p = folder / (stem if multi_process else f"{stem}.json.gz")
        if not p.exists() and not (folder / f"{stem}{EVENTS_SUFFIX}").exists():
            return p
    raise BadInputError(f"{folder}: too many runs named {base}")


def _events_path(trace: Path) -> Path:
    name = trace.name[: -len(".json.gz")] if trace.name.endswith(".json.gz") else trace.name
    return trace.with_name(name + EVENTS_SUFFIX)


class QtRunController(RunWindowMixin, QObject):
    """Runs one workload at a time from the panel and shows it live, then its result.

    Signals
    -------
    runStarted(dict)
        The request that started (``RunRequest`` fields), or ``{"replay": path}``.
    eventReceived(object)
        Each engine event, on the GUI thread.
    runEnded(object)
        The terminal event (``Finished``, ``Failed`` or ``Cancelled``); the worker thread has
        ended. A run that broke outside the engine ends with a ``Failed`` made here.
    resultShown(object)
        The run's trace tab (a ``QtTraceView``) once it is open, or None when there is no
        trace to open or it could not be opened. Comes after ``runEnded``.
    runRefused(str)
        Why Run was refused (one is going; the form is invalid).

    Parameters
    ----------
    window : MainWindow
        The app's main window.
    runs_dir : str or PathLike, optional
        Where run traces and event streams are written (default ``./gpuviz-runs``, as the
        CLI's ``--out``).
    gpus : list of GpuInfo, optional
        GPUs to offer instead of NVML's (tests).
    """

    runStarted = Signal(dict)
    eventReceived = Signal(object)
    runEnded = Signal(object)
    resultShown = Signal(object)
    runRefused = Signal(str)

    def __init__(
        self,
        window: Any,
        runs_dir: str | os.PathLike[str] | None = None,
        gpus: list[Any] | None = None,
    ) -> None:
        super().__init__(window)
        self.window: Any = window
        self.panel_dock: Any = None
        self.live_dock: Any = None
        self.live_fold: Any = None  # the QtLiveDock that folds live_dock while no run goes
        self.settings = window.settings
        self.runs_dir = Path(runs_dir) if runs_dir is not None else Path("gpuviz-runs")
        self.panel = QtWorkloadPanel(gpus)
        self.live_plots = QtLivePlots()
        self.comparison = QtStrategyComparison()
        self.bottom = QTabWidget()
        self.bottom.setObjectName("run_live")
        self.bottom.setWindowTitle("Live run")
        self.bottom.addTab(self.live_plots, "Live")
        self.bottom.addTab(self.comparison, "Strategies")
        self.bottom.setTabEnabled(1, False)

        self.worker: QtRunWorker | None = None
        self.live: LiveRun | None = None
        self.request: dict[str, Any] | None = None
        self.label = ""
        self.terminal: Any = None
        self.results: dict[str, dict[str, Any]] = {}  # trace path -> Finished.result
        self.failure_dialog: QtFailureDialog | None = None
        self.comparisons: list[QtRunComparison] = []
        self._writer: Any = None
        self._writer_path: Path | None = None
        self._pending_trace: str | None = None
        self._started_at = 0.0
        self._last_probe_t_s = -1.0
        self._errored: tuple[str, str] | None = None
        self._is_child = False
        self._closing = False

        self.panel.runClicked.connect(self.start_run)
        self.panel.cancelClicked.connect(self.cancel_run)
        self.panel.profileClicked.connect(self.open_profile_dialog)
        window.traceOpened.connect(self._on_trace_opened)
        window.loadFailed.connect(self._on_load_failed)
        self.read_gpus: Any = query_gpus  # NVML; tests put a fake here
        self.profile_dialog: Any = None
        self.probe_timer = QTimer(self)
        self.probe_timer.setInterval(PROBE_INTERVAL_MS)
        self.probe_timer.timeout.connect(self._on_probe)

    # -- state ------------------------------------------------------------------------------
    def is_running(self) -> bool:
        """Whether a run (or a replay) is going."""
        return self.worker is not None

    # -- running ----------------------------------------------------------------------------
    def start_run(self, request: dict[str, Any] | None = None, executor: str | None = None) -> bool:
        """Start the panel's run (or ``request``); False, with ``runRefused``, when refused.

        Parameters
        ----------
        request : dict, optional
            ``RunRequest`` fields; default: what the panel shows. An extra ``events`` key
            names the file the event stream is saved to (default: beside the trace).
        executor : {"child", "thread"}, optional
            Default: the child process for profiled runs and for the user's own workloads
            (files, plugins), the in-thread Runner for unprofiled built-in ones.
        """
        if self.is_running():
            return self._refuse(
                f"A run is going ({self.label}): wait for it to end or press Cancel. "
                "This Run was not started."
            )
        try:
            req = dict(request) if request is not None else self.panel.request()
        except BadInputError as exc:
            return self._refuse(f"Cannot run: {exc}")
        events_override = req.pop("events", None)  # gpuviz run --gui --events E.jsonl
        req.setdefault("params", {})
        req.setdefault("steps", 5)
        req.setdefault("profile", True)
        spec = self.panel.specs.get(req["workload"])
        # The user's own code (a file, a plugin) always runs in a child: its os._exit() or
        # crash must not take the app down. Built-in unprofiled timing may run in-thread.
        builtin = spec is not None and spec.source == "builtin"
        executor = executor or ("child" if req["profile"] or not builtin else "thread")
        multi_process = bool(spec and spec.multi_process)
        events_file: Path | None = None
        if req["profile"] and not req.get("out"):
            folder = self.runs_dir.resolve()
            try:
                folder.mkdir(parents=True, exist_ok=True)
                req["out"] = str(_stamp_name(folder, req["workload"], multi_process))
            except (OSError, BadInputError) as exc:
                return self._refuse(f"Cannot write the run's trace in {folder}: {exc}")
        if events_override:
            events_file = Path(events_override)
        elif req.get("out"):
            events_file = _events_path(Path(req["out"]))
        self.save_settings()
        name = str(req["workload"])
        if ":" in name and ".py" in name:  # a user file: its name, not its whole path
            path, _, func = name.rpartition(":")
            name = f"{os.path.basename(path)}:{func}"
        label = f"{name} on {req.get('device') or 'default device'}"
        self._begin(label, lambda: make_source(req, executor), req, events_file)
        self._is_child = executor == "child"
        if self._is_child:
            self.probe_timer.start()
        self.panel.show_message(
            f"Running {label}" + (f"; trace: {req['out']}" if req.get("out") else " (no trace)")
        )
        return True

    def profile_script(self, spec: dict[str, Any]) -> bool:
        """Run ``gpuviz profile`` on the user's script in a child process, shown live.

        Parameters
        ----------
        spec : dict
            :meth:`QtProfileDialog.run_spec`'s dict (``target``, ``module``, ``args``, ``cwd``,
            ``env``, ``python``, ``options``); ``out`` may name the trace (default: a new file
            in the runs folder).

        Returns
        -------
        bool
            False, with ``runRefused``, when refused (a run is going; no runs folder).
        """
        if self.is_running():
            return self._refuse(
                f"A run is going ({self.label}): wait for it to end or press Cancel. "
                "The script was not started."
            )
        target = str(spec["target"])
        stem = target if spec.get("module") else Path(target).stem
        out = spec.get("out")
        if not out:
            folder = self.runs_dir.resolve()
            try:
                folder.mkdir(parents=True, exist_ok=True)
                out = str(_stamp_name(folder, stem, False))
            except (OSError, BadInputError) as exc:
                return self._refuse(f"Cannot write the trace in {folder}: {exc}")
        run = {**spec, "out": out}
        label = f"profile {'-m ' if spec.get('module') else ''}{os.path.basename(target)}"
        self._begin(label, lambda: make_script_source(run), run, _events_path(Path(out)))
        self._is_child = True
        self.probe_timer.start()
        self.panel.show_message(f"Profiling {label}; trace: {out}")
        return True

    def open_profile_dialog(self) -> bool:
        """File → Profile script…: ask, then :meth:`profile_script` (False when dismissed)."""
        from gpuviz.gui.run.qt_profile_dialog import QtProfileDialog

        dialog = QtProfileDialog(self.settings, self.window)
        self.profile_dialog = dialog
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return False
        return self.profile_script(dialog.run_spec())

    def replay(self, path: str | os.PathLike[str], speed: float = 0.0) -> bool:
        """Replay a recorded event stream into the live views; opens the trace it names.

        ``speed`` 0 replays at once; ``s > 0`` paces memory samples at ``s`` times real time.
        """
        if self.is_running():
            return self._refuse(f"A run is going ({self.label}): replay it when it has ended.")
        from gpuviz.gui.run.replay import EventReplay

        p = os.fspath(path)
        if not os.path.isfile(p):
            return self._refuse(f"{p}: no such events file")
        self._begin(f"replay of {os.path.basename(p)}", lambda: EventReplay(p, speed), None, None)
        self.runStarted.emit({"replay": p})
        self.panel.show_message(f"Replaying {p}")
        return True

    def cancel_run(self) -> None:
        """Stop the run at its next step boundary; the trace recorded so far is kept and opened."""
        if self.worker is not None:
            self.worker.cancel()
            self.panel.show_message(f"Cancelling {self.label} (at the next step boundary)…")

    def _refuse(self, message: str) -> bool:
        self.panel.show_message(message, error=True)
        sb = getattr(self.window, "statusBar", None)
        if sb is not None:
            sb().showMessage(terminal_safe(message, one_line=True), 8000)
        self.runRefused.emit(message)
        return False

    def _begin(
        self, label: str, make: Any, request: dict[str, Any] | None, events_file: Path | None
    ) -> None:
        self.label = label
        self.request = request
        self.terminal = None
        self._errored = None
        self._pending_trace = None
        self.live = LiveRun()
        self.live_plots.set_run(self.live)
        self.bottom.setCurrentIndex(0)
        self.bottom.setTabEnabled(1, False)
        self._writer = None
        # Opened on the first event: by then the worker thread has imported the engine's
        # events module (its dataclasses cost ~30 ms to build, too long for the GUI thread).
        self._writer_path = events_file
        self._started_at = time.monotonic()
        self._last_probe_t_s = -1.0
        worker = QtRunWorker(make, label)
        worker.yielded.connect(self._on_event)
        worker.errored.connect(self._on_errored)
        worker.finished.connect(self._on_worker_finished)
        self.worker = worker
        self.panel.set_running(True)
        if request is not None:
            self.runStarted.emit(dict(request))
        # Start the thread once the panel has repainted: its first work is importing the
        # engine, and a GUI thread that paints while another thread imports trades the GIL
        # every 5 ms (measured: a 90-170 ms stall right after Run, 40 ms without).
        QTimer.singleShot(START_DELAY_MS, lambda: self._start_worker(worker))

    def _start_worker(self, worker: QtRunWorker) -> None:
        if self._closing or worker is not self.worker:
            return  # the window closed in the meantime: nothing may start now
        start_owned(worker)

    # -- worker signals ---------------------------------------------------------------------
    def _on_event(self, event: Any) -> None:
        live = self.live
        if live is None:
            return
        name = type(event).__name__
        if name == "Started":
            # Align the app's clock on the child's: its t_s count from Started.
            self._started_at = time.monotonic()
        live.apply(event)
        if self._writer is None and self._writer_path is not None:
            from gpuviz.engine.events import EventWriter

            path, self._writer_path = self._writer_path, None
            try:
                self._writer = EventWriter(path)
            except OSError as exc:  # the run goes on; only its replayable stream is lost
                echo(f"gpuviz: could not save the run's events to {path}: {exc}", file=sys.stderr)
        if self._writer is not None:
            try:
                self._writer.write(event)
            except (OSError, ValueError) as exc:  # a full disk must not stop the run
                echo(f"gpuviz: could not save the run's events: {exc}", file=sys.stderr)
                self._writer = None
        if name in ("Finished", "Failed", "Cancelled"):
            self.terminal = event
        self.eventReceived.emit(event)

    def _on_errored(self, message: str, traceback: str) -> None:
        self._errored = (message, traceback)

    def _on_probe(self) -> None:
        # While the child's profiler export holds its GIL, the child sends no memory sample for
        # seconds. What can be read from outside it still is: its RSS (the CPU's curve) and
        # each GPU's NVML used memory. The allocator's figures cannot, and are left as gaps.
        live, worker = self.live, self.worker
        if (
            live is None
            or worker is None
            or not live.workload
            or live.terminal is not None  # the run is over; the child is only exiting
        ):
            return
        t_s = time.monotonic() - self._started_at
        if t_s - live.last_engine_sample_t_s < PROBE_GAP_S:
            return  # the engine's own samples are coming
        if t_s - self._last_probe_t_s < PROBE_SPACING_S:
            return
        pid = worker.child_pid()
        if pid is None:
            return
        try:
            import psutil

            rss = int(psutil.Process(pid).memory_info().rss)
        except Exception:
            return
        if rss <= 0:  # a process that is exiting
            return
        if live.device == "cpu":
            self._last_probe_t_s = t_s
            live.add_memory("cpu", t_s, rss, from_app=True)
            return
        used = {f"cuda:{g.index}": g.used_bytes for g in self.read_gpus()}
        cuda = [d for d in live.devices if used.get(d) is not None]
        if not cuda:
            return
        self._last_probe_t_s = t_s
        for d in cuda:
            live.add_memory(d, t_s, rss, nvml_used_bytes=used[d], from_app=True)

    def _on_worker_finished(self) -> None:
        worker = self.worker
        self.worker = None
        self.probe_timer.stop()
        if worker is not None:
            worker.wait()
        if self.terminal is None:
            from gpuviz.engine.events import Failed

            message, tb = self._errored or ("the run ended without a result", "")
            event = Failed(message, tb, self.live.trace_path if self.live else None)
            if self.live is not None:
                self.live.apply(event)
            if self._writer is not None:
                self._writer.write(event)
            self.terminal = event
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        self.live_plots.stop()
        self.panel.set_running(False)
        self._show_end(self.terminal)
        self.runEnded.emit(self.terminal)
        if self._pending_trace is None:
            self.resultShown.emit(None)

    def _show_end(self, end: Any) -> None:
        if self._closing:
            return
        live = self.live
        name = type(end).__name__
        trace = None
        if name == "Finished":
            trace = end.result.get("trace") or (live.trace_path if live else None)
            result = end.result
            if trace:
                self.results[str(Path(trace).resolve())] = result
            if len(result.get("strategies", [])) > 1:
                self.comparison.set_result(result)
                self.bottom.setTabEnabled(1, True)
                self.bottom.setCurrentIndex(1)
            self.panel.show_message(
                f"Done: {self.label}" + (f". Trace: {trace}" if trace else " (no trace recorded)")
            )
        elif name == "Failed":
            trace = end.partial_trace_path or (live.trace_path if live else None)
            self.panel.show_message(f"Failed: {end.error}", error=True)
            title = self.label
            if self.window.modal_errors:
                dialog = QtFailureDialog(title, end.error, end.traceback, trace, self.window)
                self.failure_dialog = dialog
                # show(), not open()/exec(): a modal dialog would lock the window until closed.
                dialog.setModal(False)
                dialog.show()
            else:
                echo(f"gpuviz run: {title} failed: {end.error}", file=sys.stderr)
                if end.traceback:
                    echo(end.traceback.rstrip(), file=sys.stderr)
                if trace:
                    echo(f"partial trace: {trace}", file=sys.stderr)
        elif name == "Cancelled":
            trace = end.partial_trace_path or (live.trace_path if live else None)
            self.panel.show_message(
                "Cancelled"
                + (f"; the partial trace is kept: {trace}" if trace else "; no trace was recorded")
            )
        if trace and os.path.exists(trace):
            self._pending_trace = str(Path(trace).resolve())
            self.window.open_trace(self._pending_trace)
        elif name == "Failed":
            # out of memory before any trace was written: the snapshot taken at the failure
            snapshot = _failure_snapshot(self.request)
            if snapshot is not None:
                self.window.open_trace(snapshot)

    def _on_trace_opened(self, view: Any) -> None:
        if self._pending_trace is None:
            return
        src = getattr(view, "source", "")
        if src and str(Path(src).resolve()) == self._pending_trace:
            self._pending_trace = None
            view.run_result = self.results.get(str(Path(src).resolve()))
            self.resultShown.emit(view)

    def _on_load_failed(self, path: str, _message: str) -> None:
        if self._pending_trace is not None and str(Path(path).resolve()) == self._pending_trace:
            self._pending_trace = None
            self.resultShown.emit(None)

    # -- shutting down ------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Cancel a run and wait for its thread (and child) to end; close comparisons."""
        self._closing = True  # the run's end must open no tab or dialog in a closing window
        worker = self.worker
        if worker is not None:
            worker.cancel()
            if not worker.wait(SHUTDOWN_WAIT_MS):
                kill = getattr(worker.source, "_kill_if_alive", None)
                if kill is not None:
                    kill()
                worker.wait()
        for win in list(self.comparisons):
            win.close()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        win: Any = self.window
        if watched is win and event.type() == QEvent.Type.Close:
            self.shutdown()
            if getattr(win, "remember_recent", True):  # not in screenshot mode
                self.save_layout()
                self.save_settings()
        return False


def install_run_panel(
    window: QMainWindow,
    runs_dir: str | os.PathLike[str] | None = None,
    gpus: list[Any] | None = None,
    restore: bool = True,
) -> QtRunController:
    """Add the workload panel, the live plots and the Run menu to ``window``.

    Parameters
    ----------
    window : MainWindow
    runs_dir : str or PathLike, optional
        Where runs write their traces and event streams (default ``./gpuviz-runs``).
    gpus : list of GpuInfo, optional
        GPUs to offer instead of NVML's (tests).
    restore : bool
        Restore the last workload, parameters, device and window layout from the settings.

    Returns
    -------
    QtRunController
    """
    # A run's result opens in a Timeline; importing its module costs ~40 ms of GUI thread,
    # better spent at start-up than while the run's trace is being loaded and shown.
    try:
        import gpuviz.gui.timeline.qt_timeline  # noqa: F401
    except ImportError:
        pass  # the trace view shows its stand-in and says why
    ctl = QtRunController(window, runs_dir, gpus)
    w: Any = window
    # The panel scrolls rather than forcing the window taller than the screen, and takes the
    # bottom-left corner, so the live plots sit under the trace tabs only.
    scroll = QScrollArea()
    scroll.setObjectName("run_panel_scroll")
    scroll.setWidget(ctl.panel)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setMinimumWidth(ctl.panel.minimumSizeHint().width() + 16)
    window.setCorner(Qt.Corner.BottomLeftCorner, Qt.DockWidgetArea.LeftDockWidgetArea)
    ctl.panel_dock = w.add_dock(scroll, Qt.DockWidgetArea.LeftDockWidgetArea, "Run")
    ctl.live_dock = w.add_dock(ctl.bottom, Qt.DockWidgetArea.BottomDockWidgetArea, "Live run")
    install_live_dock(ctl)  # folded while no run goes, unless the user opened it
    window.resizeDocks([ctl.panel_dock], [300], Qt.Orientation.Horizontal)
    ctl.install_menus()
    if restore:
        ctl.restore_settings(layout=True)
    window.installEventFilter(ctl)
    w.run_controller = ctl
    return ctl


__all__ = ["QtRunController", "install_run_panel"]


def _failure_snapshot(request: dict[str, Any] | None) -> str | None:
    """The allocator snapshot a failed ``--memory-snapshot`` run left beside its trace path."""
    if not request or not request.get("memory_snapshot") or not request.get("out"):
        return None
    from gpuviz.trace.allocator_snapshot import snapshot_path_for

    path = snapshot_path_for(request["out"])
    return str(path) if path.is_file() else None
