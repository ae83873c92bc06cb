"""The main window: a tab per open trace, File/View/Export/Help menus, loading in the background.

Loading and analysis run in a :class:`~gpuviz.gui.qt_load_worker.QtTraceWorker`, one job at a
time (a queue), with a progress bar and Cancel in the status bar. A file that cannot be read
gives a dialog naming it (or, with ``modal_errors=False``, only the :attr:`MainWindow.loadFailed`
signal), and leaves the window and the other tabs as they were.

The Export menu is :mod:`gpuviz.gui.qt_window_exports`'s; the recent-files list and the import
cache's Clear, :mod:`gpuviz.gui.qt_window_recent`'s.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from PySide6.QtCore import QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QDragEnterEvent, QDropEvent, QKeySequence
from PySide6.QtWidgets import (
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMenu,
    QMessageBox,
    QProgressBar,
    QPushButton,
    QStackedWidget,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from gpuviz.display import echo_traceback, menu_safe, terminal_safe, title_safe
from gpuviz.gui.qt_load_worker import (
    QtTraceWorker,
    TraceAnalyses,
    analyze,
    load_and_analyze,
    trace_title,
)
from gpuviz.gui.qt_peaks_dialog import QtPeaksDialog, save_peaks, saved_peaks
from gpuviz.gui.qt_text import set_plain, set_rich, tooltip_html
from gpuviz.gui.qt_threads import start_owned
from gpuviz.gui.qt_window_exports import MainWindowExportMixin
from gpuviz.gui.qt_window_geometry import ScreenFit
from gpuviz.gui.qt_window_recent import MainWindowRecentMixin
from gpuviz.gui.samples import list_samples
from gpuviz.gui.views.qt_trace_view import VIEWS, QtTraceView
from gpuviz.trace.model import Trace
from gpuviz.trace.progress_estimate import TimeLeft, describe_time_left

OPEN_FILTER = (
    "Kineto traces (*.json *.json.gz *.gz);;"
    "CUDA allocator snapshots (*.pickle *.pickle.gz);;All files (*)"
)

# A queued load: (progress label, job(progress, cancelled) -> TraceAnalyses, tab title, source)
_Job = tuple[str, Callable[..., Any], str, str]


class MainWindow(MainWindowRecentMixin, MainWindowExportMixin, QMainWindow):
    """The gpuviz main window.

    Signals
    -------
    traceOpened(object)
        A :class:`~gpuviz.gui.views.qt_trace_view.QtTraceView` was added as a tab (its
        ``trace`` attribute is the Trace).
    loadFailed(str, str)
        A path (or title) and the one-line reason it could not be opened.
    idle()
        No load or analysis is running or queued any more.

    Parameters
    ----------
    settings : QSettings, optional
        Where the recent-files list lives (tests pass their own).
    modal_errors : bool
        Show a dialog when a file cannot be opened. ``gpuviz open --screenshot`` turns this off.
    remember_recent : bool
        Add opened files to the recent-files list.
    """

    traceOpened = Signal(object)
    loadFailed = Signal(str, str)
    idle = Signal()

    def __init__(
        self,
        settings: QSettings | None = None,
        modal_errors: bool = True,
        remember_recent: bool = True,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.settings = settings if settings is not None else QSettings("gpuviz", "gpuviz")
        self.modal_errors = modal_errors
        self.remember_recent = remember_recent
        self.errors: list[tuple[str, str]] = []
        self._queue: list[_Job] = []
        self._rank_targets: dict[str, Any] = {}  # rank file -> what to show once it opens
        self._worker: QtTraceWorker | None = None
        self._time_left = (TimeLeft(), 0.0)  # the running job's estimate and start
        self._current_job: _Job | None = None
        # A new tab opens on Insights (the advisor's view), or on `gpuviz open --view`'s: never
        # on the last view used, which may have nothing for the new trace (Ranks of one process).
        self._open_view = "insights"
        self._export_workers: list[QtTraceWorker] = []
        self.screen_fit: ScreenFit | None = None  # fit_to_screen's: the size, remembered

        self.setWindowTitle("gpuviz")
        self.setAcceptDrops(True)
        self.tabs = QTabWidget()
        self.tabs.setTabsClosable(True)
        self.tabs.setMovable(True)
        self.tabs.setDocumentMode(True)
        self.tabs.tabCloseRequested.connect(self._on_tab_close_requested)
        self.tabs.currentChanged.connect(self._on_current_tab_changed)
        self.welcome = self._build_welcome()
        self.stack = QStackedWidget()
        self.stack.addWidget(self.welcome)
        self.stack.addWidget(self.tabs)
        self.setCentralWidget(self.stack)
        self._build_status_bar()
        self._build_menus()
        self._update_actions()

    # -- public API -------------------------------------------------------------------------
    def open_trace(
        self, path: str | os.PathLike[str], compile_info: str | os.PathLike[str] | None = None
    ) -> None:
        """Open a trace file, or a folder of per-rank files, in a new tab (in the background);
        ``compile_info``: its run's compile-info folder (else ``NAME.compile/`` beside it)."""
        path = str(path)
        label = trace_title(path)
        info = None if compile_info is None else str(compile_info)
        self._enqueue(label, partial(_load_job, path, compile_info=info), label, path)

    def open_traces(self, paths: Iterable[str | os.PathLike[str]]) -> None:
        """Open each path in its own tab, in order."""
        for p in paths:
            self.open_trace(p)

    def add_trace(self, trace: Trace, title: str, source: str = "") -> None:
        """Add a trace that is already in memory (a run's result) as a tab.

        Its analyses run in the background; the tab appears when they are done.
        """
        self._enqueue(title, partial(_analyze_job, trace), title, source)

    def add_analyzed_trace(
        self, analyses: TraceAnalyses, title: str, source: str = ""
    ) -> QtTraceView:
        """Add a tab for a trace whose analyses are computed; returns the tab's view."""
        view = QtTraceView(analyses, title, source, peaks=saved_peaks(self.settings))
        view.peaksRequested.connect(self._on_peaks)
        view.rankOpenRequested.connect(self._on_rank_open)
        view.set_view(view.first_view(self._open_view))
        target = self._rank_targets.pop(source, None) if source else None
        if target is not None:  # a rank opened from a reduced folder's Ranks view
            view.show_rank_target(target)
        # A file's name is data: "&" is no shortcut, "<b>" no markup, ESC shown as \x1b.
        index = self.tabs.addTab(view, menu_safe(title))
        self.tabs.setTabToolTip(index, tooltip_html(source or title))
        self.tabs.setCurrentIndex(index)
        self.stack.setCurrentWidget(self.tabs)
        self._update_actions()
        self.traceOpened.emit(view)
        return view

    def _on_rank_open(self, path: str, target: Any) -> None:
        # A rank of a folder opened from its reductions: its own tab, loaded in the
        # background from its cache entry, showing ``target`` once there.
        if target is not None:
            self._rank_targets[path] = target
        self.open_trace(path)

    def add_dock(
        self,
        widget: QWidget,
        area: Qt.DockWidgetArea = Qt.DockWidgetArea.LeftDockWidgetArea,
        title: str = "",
    ) -> QDockWidget:
        """Put ``widget`` in a dock (the workload panel goes on the left); returns the dock."""
        dock = QDockWidget(title or widget.windowTitle(), self)
        dock.setObjectName(f"dock_{title or widget.objectName() or id(widget)}")
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        self.view_menu.addAction(dock.toggleViewAction())
        return dock

    def trace_views(self) -> list[QtTraceView]:
        """The open traces' views, in tab order."""
        return [self.tabs.widget(i) for i in range(self.tabs.count())]  # type: ignore[misc]

    def current_trace_view(self) -> QtTraceView | None:
        """The view of the current tab, or None when no trace is open."""
        w = self.tabs.currentWidget()
        return w if isinstance(w, QtTraceView) else None

    def set_view(self, name: str) -> None:
        """Show view ``name`` in every open tab (tabs opened later open on Insights, or on
        :meth:`set_open_view`'s)."""
        if name not in VIEWS:
            raise ValueError(f"unknown view {name!r}; expected one of {', '.join(VIEWS)}")
        for v in self.trace_views():
            v.set_view(name)

    def set_open_view(self, name: str) -> None:
        """Open tabs, now and later, on view ``name`` where the trace has something for it
        (``gpuviz open --view``), else on Insights."""
        self.set_view(name)
        self._open_view = name

    def fit_to_screen(self, area: Any = None) -> str:
        """Size the window to the screen (``area``: its available ``QRect``, by default the
        screen's) or as it was last closed, and remember it when closed (see
        :mod:`gpuviz.gui.qt_window_geometry`)."""
        self.screen_fit = ScreenFit(self, self.settings, area)
        return self.screen_fit.how

    def is_busy(self) -> bool:
        """Whether a load or analysis is running or queued."""
        return self._worker is not None or bool(self._queue)

    def cancel_loading(self) -> None:
        """Cancel the running load and drop the queued ones."""
        self._queue.clear()
        if self._worker is not None:
            self._worker.cancel()
            set_plain(self.status_label, "Cancelling…")

    # -- loading ----------------------------------------------------------------------------
    def _enqueue(self, label: str, job: Callable[..., Any], title: str, source: str) -> None:
        self._queue.append((label, job, title, source))
        if self._worker is None:
            # Start on the next event-loop turn, so a caller can connect to signals first.
            QTimer.singleShot(0, self._start_next)

    def _start_next(self) -> None:
        if self._worker is not None:
            return
        if not self._queue:
            self._update_progress_visible(False)
            self.idle.emit()
            return
        label, job, title, source = self._queue.pop(0)
        self._current_job = (label, job, title, source)
        worker = QtTraceWorker(job, label)
        worker.progressed.connect(self._on_worker_progressed)
        worker.succeeded.connect(self._on_worker_succeeded)
        worker.failed.connect(self._on_worker_failed)
        worker.cancelled.connect(self._on_worker_cancelled)
        worker.finished.connect(self._on_worker_finished)
        self._worker = worker
        # "about N s left" beside the bar; the clock starts with the job.
        self._time_left = (TimeLeft(), time.monotonic())
        self.progress.setValue(0)
        left = f" (+{len(self._queue)} queued)" if self._queue else ""
        set_plain(self.status_label, f"Opening {label}…{left}")
        self._update_progress_visible(True)
        start_owned(worker)

    def _on_worker_progressed(self, fraction: float, what: str) -> None:
        self.progress.setValue(round(fraction * 1000))
        if self._current_job is not None:
            left = f" (+{len(self._queue)} queued)" if self._queue else ""
            estimate, start = self._time_left
            eta = describe_time_left(estimate.update(fraction, time.monotonic() - start))
            eta = f" {eta}" if eta else ""
            set_plain(self.status_label, f"Opening {self._current_job[0]}: {what}…{eta}{left}")

    def _on_worker_succeeded(self, analyses: TraceAnalyses) -> None:
        assert self._current_job is not None
        _, _, title, source = self._current_job
        from gpuviz.trace.one_job import NotOneJobError

        if isinstance(analyses, NotOneJobError):  # unrelated files: a tab each, and why
            self.open_traces(analyses.files)
            self._show_status(f"Opening each file on its own: {analyses.message}", 30000)
            return
        try:
            self.add_analyzed_trace(analyses, title, source)
        except Exception as exc:  # a view that cannot be built must not lose the window
            echo_traceback()
            self._report_error(source or title, f"{type(exc).__name__}: {exc}")
            return
        if source and self.remember_recent:
            self._remember(source)
        from gpuviz.trace.cache import from_cache

        how = " (from the trace cache)" if from_cache(analyses.trace) else ""
        self._show_status(f"Opened {source or title}{how}")

    def _on_worker_failed(self, message: str) -> None:
        assert self._current_job is not None
        _, _, title, source = self._current_job
        self._report_error(source or title, message)

    def _on_worker_cancelled(self) -> None:
        if self._current_job is not None:
            self._show_status(f"Cancelled opening {self._current_job[0]}")

    def _on_worker_finished(self) -> None:
        worker = self._worker
        self._worker = None
        self._current_job = None
        if worker is not None:
            worker.wait()
        self._start_next()

    def _report_error(self, path: str, message: str) -> None:
        self.errors.append((path, message))
        self.loadFailed.emit(path, message)
        if not self.modal_errors:
            return
        detail = message if message.startswith(path) else f"{path}: {message}"
        self._show_warning("Could not open trace", f"Could not open {path}", detail)

    def _show_status(self, text: str, timeout_ms: int = 5000) -> None:
        self.statusBar().showMessage(terminal_safe(text, one_line=True), timeout_ms)

    def _show_warning(self, title: str, text: str, detail: str = "") -> QMessageBox:
        # Not exec(): a nested event loop would run the next load underneath the dialog, and
        # would block tests and scripted use; open() shows it window-modal and returns.
        box = QMessageBox(
            QMessageBox.Icon.Warning,
            title_safe(title),
            "",
            QMessageBox.StandardButton.Ok,
            self,
        )
        # Plain text, set before the texts: a path or message holding "<b>" reads as "<b>".
        box.setTextFormat(Qt.TextFormat.PlainText)
        box.setText(terminal_safe(text))
        if detail:
            box.setInformativeText(terminal_safe(detail))
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box

    # -- menus and widgets --------------------------------------------------------------------
    def _build_welcome(self) -> QWidget:
        w = QWidget()
        v = QVBoxLayout(w)
        v.addStretch(1)
        title = QLabel()
        set_rich(
            title,
            "<h2>gpuviz</h2><p>Open a PyTorch profiler trace (<tt>.json</tt> or "
            "<tt>.json.gz</tt>, or a folder with one file per rank): File → Open, "
            "or drop it here.</p><p>No trace at hand? Open a sample recorded on real GPUs:</p>",
        )
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title.setWordWrap(True)
        v.addWidget(title)
        for sample in list_samples()[:4]:
            b = QPushButton(sample.title)
            b.setToolTip(sample.description)
            b.clicked.connect(partial(self.open_trace, str(sample.path)))
            b.setMinimumWidth(360)
            v.addWidget(b, 0, Qt.AlignmentFlag.AlignHCenter)
        v.addStretch(2)
        return w

    def _build_status_bar(self) -> None:
        self.status_label = QLabel()
        self.status_label.setTextFormat(Qt.TextFormat.PlainText)  # it names files
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(240)
        self.progress.setTextVisible(False)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel_loading)
        bar = self.statusBar()
        bar.addPermanentWidget(self.status_label)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        self._update_progress_visible(False)

    def _update_progress_visible(self, visible: bool) -> None:
        for w in (self.status_label, self.progress, self.cancel_button):
            w.setVisible(visible)

    def _build_menus(self) -> None:
        mb = self.menuBar()
        file_menu = mb.addMenu("&File")
        self._action(
            file_menu, "&Open trace file…", self._on_open_file, QKeySequence.StandardKey.Open
        )
        self._action(
            file_menu,
            "Open trace &folder (one file per rank)…",
            self._on_open_folder,
            "Ctrl+Shift+O",
        )
        self.recent_menu = file_menu.addMenu("Open &recent")
        self.recent_menu.aboutToShow.connect(self._update_recent_menu)
        self._update_recent_menu()
        file_menu.addSeparator()
        self.clear_cache_action = self._action(
            file_menu, "Clear trace &cache", self._on_clear_cache
        )
        self.clear_cache_action.setStatusTip(
            "Delete the imported traces kept for instant re-opening (they are imported again)"
        )
        file_menu.addSeparator()
        self.close_action = self._action(
            file_menu, "&Close tab", self._on_close_current, QKeySequence.StandardKey.Close
        )
        file_menu.addSeparator()
        self._action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit)

        self.view_menu = mb.addMenu("&View")
        self.view_actions = []
        for i, name in enumerate(VIEWS):
            a = self._action(
                self.view_menu,
                name.capitalize(),
                partial(self.set_view, name),
                f"Ctrl+{i + 1}" if i < 9 else None,  # Ctrl+1 .. Ctrl+9
            )
            self.view_actions.append(a)
        self.view_menu.addSeparator()
        self.peaks_action = self._action(self.view_menu, "&Peaks…", self._on_peaks)
        self.peaks_action.setStatusTip(
            "the peak TFLOP/s and TB/s of the Roofline, MFU and Operators"
        )
        self.view_menu.addSeparator()

        export = mb.addMenu("&Export")
        self.export_actions = [
            self._action(export, "Trace as Chrome JSON…", self._on_export_trace, "Ctrl+E"),
            self._action(export, "Summary as CSV/JSON…", self._on_export_summary),
            self._action(export, "Kernel table as CSV/JSON…", self._on_export_kernels),
            self._action(export, "Current view as PNG/SVG…", self._on_export_plot, "Ctrl+Shift+E"),
        ]

        help_menu = mb.addMenu("&Help")
        samples = help_menu.addMenu("Open &sample")
        found = list_samples()
        for s in found:
            a = samples.addAction(s.title)
            a.setToolTip(s.description)
            a.setStatusTip(f"{s.description} ({s.path.name})")
            a.triggered.connect(partial(self.open_trace, str(s.path)))
        if not found:
            samples.addAction("(no samples in this installation)").setEnabled(False)
        samples.setToolTipsVisible(True)
        self.samples_menu = samples
        self._action(help_menu, "&About gpuviz", self._on_about)

    def _action(
        self, menu: QMenu, text: str, slot: Callable[..., Any], shortcut: Any = None
    ) -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(QKeySequence(shortcut))
        a.triggered.connect(lambda _checked=False: slot())
        menu.addAction(a)
        return a

    def _update_actions(self) -> None:
        has = self.tabs.count() > 0
        for a in [self.close_action, *self.export_actions, *self.view_actions]:
            a.setEnabled(has)
        if not has:
            self.stack.setCurrentWidget(self.welcome)

    # -- handlers ---------------------------------------------------------------------------
    def _on_open_file(self) -> None:
        paths, _ = QFileDialog.getOpenFileNames(self, "Open traces", "", OPEN_FILTER)
        self.open_traces(paths)

    def _on_open_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a folder of per-rank traces")
        if path:
            self.open_trace(path)

    def _on_close_current(self) -> None:
        if self.tabs.count():
            self._on_tab_close_requested(self.tabs.currentIndex())

    def _on_tab_close_requested(self, index: int) -> None:
        w = self.tabs.widget(index)
        self.tabs.removeTab(index)
        if isinstance(w, QtTraceView):
            w.stop_workers()
        if w is not None:
            w.deleteLater()
        self._update_actions()

    def _on_current_tab_changed(self, _index: int) -> None:
        v = self.current_trace_view()
        self.setWindowTitle(f"{title_safe(v.title)} — gpuviz" if v else "gpuviz")

    def peaks(self) -> Any:
        """The peaks in use (the Peaks dialog's, from QSettings), or None: the device's."""
        return saved_peaks(self.settings)

    def set_peaks(self, peaks: Any) -> None:
        """Keep ``peaks`` (a :class:`~gpuviz.analysis.peaks.PeakOverride`, or None for the
        device's) in the settings and apply them to every open trace."""
        save_peaks(self.settings, peaks)
        for view in self.trace_views():
            view.set_peaks(peaks)

    def _on_peaks(self) -> None:
        current = self.current_trace_view()
        device, m = "", None
        if current is not None:
            from gpuviz.analysis.peaks import device_peaks

            m = device_peaks(current.trace)
            device = (
                f"{m.device_name or 'This trace'}: {m.peaks.label}"
                if m.peaks is not None
                else f"No device peaks: {m.reason}"
            )
        dialog = QtPeaksDialog(self.peaks(), device, self, match=m)
        if dialog.exec() == QtPeaksDialog.DialogCode.Accepted:
            self.set_peaks(dialog.override())

    def _on_about(self) -> None:
        from gpuviz import __version__

        QMessageBox.about(
            self,
            "About gpuviz",
            f"<b>gpuviz {__version__}</b><p>See how PyTorch work "
            "runs on GPUs: timelines per stream, DataParallel splits, memory and kernels.</p>",
        )

    # -- Qt overrides -----------------------------------------------------------------------
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if event.mimeData().hasUrls() and any(u.isLocalFile() for u in event.mimeData().urls()):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:
        paths = [u.toLocalFile() for u in event.mimeData().urls() if u.isLocalFile()]
        self.open_traces(paths)
        event.acceptProposedAction()

    def closeEvent(self, event: Any) -> None:
        # A QThread still running when its QObject is destroyed aborts the process: stop it first.
        self._queue.clear()
        if self._worker is not None:
            self._worker.cancel()
            self._worker.wait()
        for w in list(self._export_workers):
            w.wait()  # a half-written export is worse than a short wait
        for view in self.trace_views():
            view.stop_workers()
        super().closeEvent(event)


def _load_job(path: str, progress: Any, cancelled: Any, compile_info: str | None = None) -> Any:
    """The analyses of ``path``; for a folder whose files are not one job, the refusal
    (:class:`~gpuviz.trace.one_job.NotOneJobError`), whose files the window opens one by one."""
    from gpuviz.trace.one_job import NotOneJobError

    if not os.path.exists(path):
        raise FileNotFoundError(2, "no such file or folder", path)
    try:
        return load_and_analyze(path, progress, cancelled, compile_info=compile_info)
    except NotOneJobError as exc:
        return exc


def _analyze_job(trace: Trace, progress: Any, cancelled: Any) -> TraceAnalyses:
    return analyze(trace, progress, cancelled)
