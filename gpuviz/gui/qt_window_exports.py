"""The main window's exports: a tab's trace as Chrome JSON, its summary, kernel table or view.

A part of :class:`~gpuviz.gui.qt_main_window.MainWindow` (``export_trace`` and the Export
menu's handlers), kept apart because it is its own concern; the window owns the state it uses.
The writers are :mod:`gpuviz.gui.qt_export`'s; a trace is written in a background thread.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QFileDialog

from gpuviz.display import echo
from gpuviz.gui import qt_export
from gpuviz.gui.qt_load_worker import QtTraceWorker
from gpuviz.gui.qt_threads import start_owned

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMessageBox

    from gpuviz.gui.views.qt_trace_view import QtTraceView


class MainWindowExportMixin:
    """The Export menu of the main window (mixed into ``MainWindow``)."""

    if TYPE_CHECKING:  # what the window provides
        modal_errors: bool
        _export_workers: list[QtTraceWorker]

        def current_trace_view(self) -> QtTraceView | None: ...
        def _show_status(self, text: str, timeout_ms: int = 5000) -> None: ...
        def _show_warning(self, title: str, text: str, detail: str = "") -> QMessageBox: ...

    def _save_path(self, caption: str, suggested: str, filters: str) -> str:
        path, chosen = QFileDialog.getSaveFileName(self, caption, suggested, filters)
        if path and "." not in Path(path).name:
            # Add the suffix of the chosen filter, e.g. "(*.json.gz)" -> ".json.gz".
            path += chosen[chosen.find("*") + 1 : chosen.find(")")] if "*" in chosen else ""
        return path

    def _run_export(self, what: str, write: Callable[[str], None], path: str) -> None:
        if not path:
            return
        try:
            write(path)
        except Exception as exc:
            self._show_warning("Export failed", f"Could not write {what} to {path}", str(exc))
            return
        self._show_status(f"Wrote {path}")

    def export_trace(self, view: QtTraceView, path: str) -> QtTraceWorker:
        """Write a tab's trace as Chrome JSON (``.json``/``.json.gz``) in a background thread.

        A million-slice trace takes seconds to write, so the GUI thread only starts the worker;
        the status bar (or a dialog, on failure) says when it is done. Returns the worker.
        """
        worker = QtTraceWorker(
            lambda _progress, _cancelled: qt_export.write_trace(view.trace, path),
            f"export {path}",
        )
        worker.succeeded.connect(lambda _r: self._show_status(f"Wrote {path}"))
        worker.failed.connect(partial(self._on_export_failed, path))
        worker.finished.connect(partial(self._on_export_finished, worker))
        self._export_workers.append(worker)
        self._show_status(f"Writing {path}…", 0)
        start_owned(worker)
        return worker

    def _on_export_failed(self, path: str, message: str) -> None:
        echo(f"gpuviz: could not write {path}: {message}", file=sys.stderr)
        if self.modal_errors:
            self._show_warning("Export failed", f"Could not write the trace to {path}", message)

    def _on_export_finished(self, worker: QtTraceWorker) -> None:
        if worker in self._export_workers:
            self._export_workers.remove(worker)
        worker.wait()

    def _on_export_trace(self) -> None:
        v = self.current_trace_view()
        if v is None:
            return
        path = self._save_path("Export trace", f"{v.title}.json.gz", qt_export.TRACE_FILTER)
        if path:
            self.export_trace(v, path)

    def _on_export_summary(self) -> None:
        v = self.current_trace_view()
        if v is None or v.summary is None:
            return
        path = self._save_path("Export summary", f"{v.title}-summary.json", qt_export.TABLE_FILTER)
        self._run_export("the summary", partial(qt_export.write_summary, v.summary), path)

    def _on_export_kernels(self) -> None:
        v = self.current_trace_view()
        if v is None:
            return
        path = self._save_path(
            "Export kernel table", f"{v.title}-kernels.csv", qt_export.TABLE_FILTER
        )
        self._run_export(
            "the kernel table", partial(qt_export.write_kernel_table, v.kernel_rows or []), path
        )

    def _on_export_plot(self) -> None:
        v = self.current_trace_view()
        if v is None:
            return
        name = v.current_view()
        path = self._save_path("Export view", f"{v.title}-{name}.png", qt_export.PLOT_FILTER)
        self._run_export(f"the {name} view", partial(export_view, v, name), path)


def export_view(view: QtTraceView, name: str, path: str) -> None:
    """Write view ``name`` of a trace tab as PNG/SVG: its plot where it has one, else the widget."""
    widget = view.view(name)
    finish = getattr(widget, "finish_build", None)
    if finish is not None:  # a view built over several turns, just opened: all of it
        finish()
    target = widget.export_target() if hasattr(widget, "export_target") else None
    if target is not None:
        qt_export.write_plot(target, path)
    else:
        qt_export.write_widget(widget, path)


__all__ = ["MainWindowExportMixin", "export_view"]
