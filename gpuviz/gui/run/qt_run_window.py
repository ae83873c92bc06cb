"""The run controller's ties to the main window: its menus, its settings, comparing two runs.

A part of :class:`~gpuviz.gui.run.qt_run_controller.QtRunController` (``compare``,
``install_menus``, ``save_settings``, ``save_layout``, ``restore_settings``), kept apart from
running because it is its own concern; the controller owns the state it uses. The settings
keep the workload, its parameters, the device, steps and user files, and the window layout,
under ``run/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QMenu,
)

from gpuviz.display import terminal_safe
from gpuviz.errors import BadInputError
from gpuviz.gui.run.qt_compare import QtRunComparison

if TYPE_CHECKING:
    import os

    from gpuviz.gui.run.qt_workload_panel import QtWorkloadPanel

SETTINGS_PREFIX = "run/"


class RunWindowMixin:
    """Menus, settings and run comparison of the run controller (mixed into it)."""

    if TYPE_CHECKING:  # what the controller provides
        window: Any
        settings: Any
        panel: QtWorkloadPanel
        runs_dir: Path
        results: dict[str, dict[str, Any]]
        comparisons: list[QtRunComparison]

        def start_run(
            self, request: dict[str, Any] | None = None, executor: str | None = None
        ) -> bool: ...
        def cancel_run(self) -> None: ...
        def open_profile_dialog(self) -> bool: ...
        def replay(self, path: str | os.PathLike[str], speed: float = 0.0) -> bool: ...
        def _refuse(self, message: str) -> bool: ...

    # -- comparing --------------------------------------------------------------------------
    def compare(self, a: Any = None, b: Any = None) -> QtRunComparison | None:
        """Open two trace tabs side by side (default: ask which; the last two when offered)."""
        views = list(self.window.trace_views())
        if a is None or b is None:
            if len(views) < 2:
                self._refuse("Open or run at least two traces to compare them.")
                return None
            picked = self._pick_two(views)
            if picked is None:
                return None
            a, b = picked
        win = QtRunComparison(
            a,
            b,
            self.results.get(_resolved(a.source)),
            self.results.get(_resolved(b.source)),
        )
        win.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        win.destroyed.connect(lambda _o=None, w=win: self._forget(w))
        self.comparisons.append(win)
        win.show()
        return win

    def _forget(self, win: QtRunComparison) -> None:
        if win in self.comparisons:
            self.comparisons.remove(win)

    def _pick_two(self, views: list[Any]) -> tuple[Any, Any] | None:
        dialog = QDialog(self.window)
        dialog.setWindowTitle("Compare two runs")
        form = QFormLayout(dialog)
        combos = []
        for tag, default in (("A", len(views) - 2), ("B", len(views) - 1)):
            c = QComboBox()
            for v in views:
                c.addItem(terminal_safe(v.title, one_line=True))
            c.setCurrentIndex(default)
            form.addRow(tag, c)
            combos.append(c)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        buttons.accepted.connect(dialog.accept)
        buttons.rejected.connect(dialog.reject)
        form.addRow(buttons)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        return views[combos[0].currentIndex()], views[combos[1].currentIndex()]

    # -- menus ------------------------------------------------------------------------------
    def install_menus(self) -> None:
        """A Run menu, and File → Replay events… (before the File menu's last separator)."""
        w = self.window
        bar = w.menuBar()
        file_menu = _find_menu(bar, "File")
        if file_menu is not None:
            seps = [a for a in file_menu.actions() if a.isSeparator()]
            act = file_menu.addAction("Replay &events…")
            act.triggered.connect(lambda _c=False: self._on_replay_menu())
            profile = file_menu.addAction("&Profile script…")
            profile.setShortcut("Ctrl+Shift+P")
            profile.triggered.connect(lambda _c=False: self.open_profile_dialog())
            if seps:
                file_menu.removeAction(act)
                file_menu.insertAction(seps[-1], act)
                file_menu.removeAction(profile)
                file_menu.insertAction(seps[0], profile)
            self.replay_action = act
            self.profile_action = profile
        run_menu = QMenu("&Run", w)
        help_menu = _find_menu(bar, "Help")
        if help_menu is not None:
            bar.insertMenu(help_menu.menuAction(), run_menu)
        else:
            bar.addMenu(run_menu)
        a_run = run_menu.addAction("&Run workload")
        a_run.setShortcut("Ctrl+R")
        a_run.triggered.connect(lambda _c=False: self.start_run())
        a_cancel = run_menu.addAction("&Cancel run")
        a_cancel.setShortcut("Ctrl+.")
        a_cancel.triggered.connect(lambda _c=False: self.cancel_run())
        run_menu.addSeparator()
        a_cmp = run_menu.addAction("Co&mpare two runs…")
        a_cmp.triggered.connect(lambda _c=False: self.compare())
        a_rep = run_menu.addAction("Replay &events…")
        a_rep.triggered.connect(lambda _c=False: self._on_replay_menu())
        a_prof = run_menu.addAction("&Profile script…")
        a_prof.triggered.connect(lambda _c=False: self.open_profile_dialog())
        self.run_menu = run_menu

    def _on_replay_menu(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self.window,
            "Replay a recorded event stream",
            str(self.runs_dir),
            "Event streams (*.jsonl);;All files (*)",
        )
        if path:
            self.replay(path, speed=4.0)

    # -- settings ---------------------------------------------------------------------------
    def save_settings(self) -> None:
        """Remember the workload, its parameters, the device, steps and user files."""
        s = self.settings
        spec = self.panel.current_spec()
        if spec is not None:
            s.setValue(SETTINGS_PREFIX + "workload", spec.name)
        s.setValue(
            SETTINGS_PREFIX + "params",
            json.dumps(self.panel.all_param_values(), default=str),
        )
        s.setValue(SETTINGS_PREFIX + "device", self.panel.devices.device())
        s.setValue(SETTINGS_PREFIX + "gpus", ",".join(map(str, self.panel.devices.gpu_set())))
        s.setValue(SETTINGS_PREFIX + "steps", int(self.panel.steps.value()))
        s.setValue(SETTINGS_PREFIX + "profile", bool(self.panel.profile.isChecked()))
        s.setValue(SETTINGS_PREFIX + "user_files", json.dumps(self.panel.user_files()))
        s.sync()

    def save_layout(self) -> None:
        """Remember the window's geometry and the docks' layout."""
        self.settings.setValue(SETTINGS_PREFIX + "window_geometry", self.window.saveGeometry())
        self.settings.setValue(SETTINGS_PREFIX + "window_state", self.window.saveState())
        self.settings.sync()

    def restore_settings(self, layout: bool = True) -> None:
        """Restore :meth:`save_settings` (and, with ``layout``, the window layout)."""
        s = self.settings
        try:
            files = json.loads(str(s.value(SETTINGS_PREFIX + "user_files", "[]")))
        except ValueError:
            files = []
        for f in files if isinstance(files, list) else []:
            try:
                self.panel.add_user_file(str(f))
            except BadInputError:
                pass  # the file moved or broke since: leave it out
        try:
            params = json.loads(str(s.value(SETTINGS_PREFIX + "params", "{}")))
        except ValueError:
            params = {}
        name = s.value(SETTINGS_PREFIX + "workload")
        if name:
            self.panel.select(str(name))
        if isinstance(params, dict):
            self.panel.set_all_param_values(params)
        device = s.value(SETTINGS_PREFIX + "device")
        if device:
            self.panel.devices.set_device(str(device))
        gpus = s.value(SETTINGS_PREFIX + "gpus")
        if gpus:
            self.panel.devices.set_gpus(str(gpus))
        steps = s.value(SETTINGS_PREFIX + "steps")
        if steps is not None:
            try:
                self.panel.steps.setValue(int(steps))
            except (TypeError, ValueError):
                pass
        profile = s.value(SETTINGS_PREFIX + "profile")
        if profile is not None:
            self.panel.profile.setChecked(str(profile).lower() in ("true", "1"))
        if layout:
            geom = s.value(SETTINGS_PREFIX + "window_geometry")
            state = s.value(SETTINGS_PREFIX + "window_state")
            if geom is not None:
                self.window.restoreGeometry(geom)
            if state is not None:
                self.window.restoreState(state)


def _resolved(path: str) -> str:
    return str(Path(path).resolve()) if path else ""


def _find_menu(bar: Any, name: str) -> QMenu | None:
    for a in bar.actions():
        if a.text().replace("&", "") == name and a.menu() is not None:
            return a.menu()
    return None


__all__ = ["SETTINGS_PREFIX", "RunWindowMixin"]
