"""The workload panel: pick a workload, fill its form, pick devices, Run / Cancel.

The list holds the built-in workloads, those that installed packages add (the
``gpuviz.workloads`` entry points) and functions of the user's own files, added with
"Add file…". Everything here comes from torch-free declarations; a user file is read with
``ast`` and never run in the app (DESIGN.md), so the panel is built without loading torch.
The panel only collects a request; :class:`~gpuviz.gui.run.qt_run_controller.QtRunController`
runs it.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QSizePolicy,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from gpuviz.display import html_safe, terminal_safe
from gpuviz.errors import BadInputError
from gpuviz.gui.qt_text import set_plain, set_rich, set_tooltip
from gpuviz.gui.run.qt_device_picker import GpuInfo, QtDevicePicker
from gpuviz.gui.run.qt_param_form import QtParamForm
from gpuviz.workloads.registry import WorkloadSpec, all_workloads, user_workload

DEFAULT_STEPS = 5
MAX_STEPS = 100_000
_SPEC_ROLE = Qt.ItemDataRole.UserRole


def user_file_workloads(path: str) -> tuple[list[WorkloadSpec], list[str]]:
    """Every workload function of a user file, read with ``ast`` (never run).

    Returns the specs of its top-level public functions that take the device first, and the
    reasons the others were left out.

    Raises
    ------
    BadInputError
        A missing file or a syntax error.
    """
    from gpuviz.workloads.params import parse_source

    tree = parse_source(path)
    specs: list[WorkloadSpec] = []
    skipped: list[str] = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
            continue
        try:
            specs.append(user_workload(f"{path}:{node.name}"))
        except BadInputError as exc:
            skipped.append(str(exc))
    return specs, skipped


class QtWorkloadPanel(QWidget):
    """Workload list, parameter form, device picker, steps, Run and Cancel.

    Signals
    -------
    runClicked()
        Run was pressed (and the form is valid).
    cancelClicked()
    profileClicked()
        "Profile script…" was pressed (the controller asks for the script).
    workloadChanged(str)
        The selected workload's name.

    Parameters
    ----------
    gpus : sequence of GpuInfo, optional
        Passed to the device picker (tests); default: NVML's.
    """

    runClicked = Signal()
    cancelClicked = Signal()
    profileClicked = Signal()
    workloadChanged = Signal(str)

    def __init__(self, gpus: list[GpuInfo] | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("workload_panel")
        self.setWindowTitle("Run a workload")
        self.specs: dict[str, WorkloadSpec] = {}
        self._values: dict[str, dict[str, Any]] = {}  # per workload, kept while switching
        self._running = False

        self.list = QListWidget()
        self.list.setAlternatingRowColors(True)
        self.list.setMinimumHeight(130)  # the seven built-ins without scrolling
        self.list.setMaximumHeight(190)
        self.list.currentItemChanged.connect(self._on_current_changed)
        self.add_file_button = QPushButton("Add file…")
        self.add_file_button.setToolTip(
            "Add the functions of your own Python file: def f(device, n: int = 1000). "
            "Their parameters are read from the source; the file runs only in the engine."
        )
        self.add_file_button.clicked.connect(self._on_add_file)
        self.profile_button = QPushButton("Profile script…")
        self.profile_button.setToolTip(
            "Profile your own script, unmodified (python train.py --lr 3e-4): its steps are "
            "found at each optimizer.step(), and it runs in a child process"
        )
        self.profile_button.clicked.connect(self.profileClicked)
        self.about = QLabel()
        self.about.setWordWrap(True)
        self.about.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.about.setStyleSheet("color: #333;")

        self.form = QtParamForm()
        self.form.changed.connect(self._update_run_enabled)
        self.reset_button = QPushButton("Defaults")
        self.reset_button.setToolTip("Set every parameter back to its default")
        self.reset_button.clicked.connect(self.form.reset)

        self.devices = QtDevicePicker(gpus)
        self.devices.changed.connect(self._update_run_enabled)
        self.steps = QSpinBox()
        self.steps.setRange(1, MAX_STEPS)
        self.steps.setValue(DEFAULT_STEPS)
        self.steps.setToolTip("Timed steps per strategy (after one profiled step of each)")
        self.profile = QCheckBox("Profile (record a trace)")
        self.profile.setChecked(True)
        self.profile.setToolTip(
            "Record a torch.profiler trace of one step of each strategy. Profiled runs go to a "
            "child process, so the profiler's seconds-long stop and export never freeze the "
            "app. Unchecked: a quick timing run without a trace, in the app's process."
        )
        self.memory_snapshot = QCheckBox("Record allocator history (CUDA)")
        self.memory_snapshot.setToolTip(
            "Record the CUDA caching allocator's history from set-up through the profiled "
            "steps and save it beside the trace (NAME.memory.pickle; written at out of memory "
            "too). It opens with the trace: Memory, Allocator snapshot. Needs CUDA and a trace."
        )
        self.profile.toggled.connect(self.memory_snapshot.setEnabled)

        self.run_button = QPushButton("Run")
        self.run_button.setDefault(True)
        self.run_button.setStyleSheet("QPushButton { font-weight: bold; padding: 4px 16px; }")
        self.run_button.clicked.connect(self._on_run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.cancel_button.setToolTip("Stop at the next step boundary; what was recorded is kept")
        self.cancel_button.clicked.connect(self.cancelClicked.emit)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # A fixed height: a message of another length must not re-lay out the whole window
        # (measured: 50 ms on the GUI thread each time, with the plots docked).
        self.message.setFixedHeight(self.message.fontMetrics().lineSpacing() * 4 + 4)
        self.message.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.message.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

        wl_box = QGroupBox("Workload")
        v = QVBoxLayout(wl_box)
        v.setContentsMargins(6, 4, 6, 4)
        v.addWidget(self.list, 1)
        h = QHBoxLayout()
        h.addWidget(self.profile_button)
        h.addStretch(1)
        h.addWidget(self.add_file_button)
        v.addLayout(h)
        v.addWidget(self.about)

        form_box = QGroupBox("Parameters")
        fv = QVBoxLayout(form_box)
        fv.setContentsMargins(6, 4, 6, 4)
        fv.addWidget(self.form)
        h2 = QHBoxLayout()
        h2.addStretch(1)
        h2.addWidget(self.reset_button)
        fv.addLayout(h2)

        run_box = QGroupBox("Device and steps")
        rf = QFormLayout(run_box)
        rf.setContentsMargins(6, 4, 6, 4)
        rf.addRow("Device", self.devices)
        rf.addRow("Steps", self.steps)
        rf.addRow(self.profile)
        rf.addRow(self.memory_snapshot)

        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button, 1)
        buttons.addWidget(self.cancel_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(wl_box)
        layout.addWidget(form_box)
        layout.addWidget(run_box)
        layout.addLayout(buttons)
        layout.addWidget(self.message)
        layout.addStretch(1)

        try:
            found = all_workloads()
        except Exception as exc:  # a broken declaration must not take the panel down
            found = {}
            self.show_message(f"Could not list the workloads: {exc}", error=True)
        for spec in found.values():
            self.add_workload(spec)
        if self.list.count():
            self.list.setCurrentRow(0)

    # -- workloads --------------------------------------------------------------------------
    def add_workload(self, spec: WorkloadSpec) -> None:
        """List ``spec`` (replacing one of the same name)."""
        if spec.name in self.specs:
            self.specs[spec.name] = spec
            return
        self.specs[spec.name] = spec
        if spec.file:
            text = f"{os.path.basename(spec.file)}:{spec.entry.rpartition(':')[2]}  (your file)"
        elif spec.source.startswith("plugin:"):
            text = f"{spec.name}  ({spec.source})"
        else:
            text = spec.name
        # A user's file names its functions, title and help: data, shown as they are.
        item = QListWidgetItem(terminal_safe(text, one_line=True))
        item.setData(_SPEC_ROLE, spec.name)
        item.setToolTip(
            f"<qt><b>{html_safe(spec.title)}</b><br>"
            f"{html_safe(spec.help or '').replace(chr(10), '<br>')}</qt>"
        )
        self.list.addItem(item)

    def add_user_file(self, path: str) -> list[str]:
        """List each workload function of a user file; returns their names (``FILE.py:FUNC``).

        Raises
        ------
        BadInputError
            A missing file, a syntax error, or no function that takes the device first.
        """
        specs, skipped = user_file_workloads(path)
        if not specs:
            why = "; ".join(skipped) or "it has no top-level function"
            raise BadInputError(f"{path}: no workload function ({why})")
        for spec in specs:
            self.add_workload(spec)
        return [s.name for s in specs]

    def user_files(self) -> list[str]:
        """The user files whose functions are listed."""
        return sorted({s.file for s in self.specs.values() if s.file})

    def select(self, name: str) -> bool:
        """Select workload ``name``; False when it is not listed."""
        for i in range(self.list.count()):
            if self.list.item(i).data(_SPEC_ROLE) == name:
                self.list.setCurrentRow(i)
                return True
        return False

    def current_spec(self) -> WorkloadSpec | None:
        """The selected workload's declaration."""
        item = self.list.currentItem()
        return None if item is None else self.specs.get(item.data(_SPEC_ROLE))

    def set_param_values(self, values: Mapping[str, Any]) -> None:
        """Show these values (typed or ``-p`` text) in the selected workload's form."""
        for name, value in values.items():
            if name in self.form.editors:
                self.form.set_value(name, value)
        self._update_run_enabled()

    def all_param_values(self) -> dict[str, dict[str, Any]]:
        """Per workload, the form values last shown (for the settings)."""
        spec = self.current_spec()
        if spec is not None:
            self._values[spec.name] = self.form.texts()
        return {k: dict(v) for k, v in self._values.items()}

    def set_all_param_values(self, values: Mapping[str, Mapping[str, Any]]) -> None:
        """Restore :meth:`all_param_values` (the selected workload's form is refreshed)."""
        self._values.update({k: dict(v) for k, v in values.items()})
        spec = self.current_spec()
        if spec is not None and spec.name in self._values:
            self.form.set_params(spec.params, self._values[spec.name])
            self._update_run_enabled()

    # -- the request ------------------------------------------------------------------------
    def problem(self) -> str | None:
        """Why Run is blocked (invalid values, no workload...), or None."""
        if self.current_spec() is None:
            return "pick a workload"
        errors = self.form.errors()
        if errors:
            return "fix the flagged parameters: " + "; ".join(errors.values())
        return self.devices.problem()

    def request(self) -> dict[str, Any]:
        """The run the form describes, as ``RunRequest`` fields (``out`` left to the caller).

        Raises
        ------
        BadInputError
            When the form is not valid (the message says why).
        """
        spec = self.current_spec()
        problem = self.problem()
        if spec is None or problem:
            raise BadInputError(problem or "pick a workload")
        return {
            "workload": spec.name,
            "params": self.form.values(),
            "device": self.devices.device(),
            "gpus": self.devices.gpus_text(),
            "steps": int(self.steps.value()),
            "profile": bool(self.profile.isChecked()),
            "memory_snapshot": bool(self.profile.isChecked() and self.memory_snapshot.isChecked()),
        }

    def set_running(self, running: bool) -> None:
        """Enable Cancel and lock the inputs while a run goes."""
        self._running = running
        self.cancel_button.setEnabled(running)
        for w in (
            self.list,
            self.add_file_button,
            self.profile_button,
            self.form,
            self.reset_button,
        ):
            w.setEnabled(not running)
        self._update_run_enabled()

    def show_message(self, text: str, error: bool = False) -> None:
        """A line under the buttons (why Run was refused, where the trace went...)."""
        self.message.setStyleSheet("color: #c0392b;" if error else "color: #333;")
        set_plain(self.message, text)

    # -- handlers ---------------------------------------------------------------------------
    def _update_run_enabled(self) -> None:
        problem = self.problem()
        # Run stays pressable while a run goes, so that a second press is answered (refused
        # with a message) instead of silently ignored.
        self.run_button.setEnabled(problem is None)
        set_tooltip(self.run_button, problem or "Run the workload")

    def _on_current_changed(self, current: QListWidgetItem | None, previous: Any) -> None:
        if previous is not None:
            old = self.specs.get(previous.data(_SPEC_ROLE))
            if old is not None:
                self._values[old.name] = self.form.texts()
        spec = None if current is None else self.specs.get(current.data(_SPEC_ROLE))
        if spec is None:
            self.form.set_params([])
            set_plain(self.about, "")
        else:
            self.form.set_params(spec.params, self._values.get(spec.name))
            where = f"<br><i>{html_safe(spec.file)}</i>" if spec.file else ""
            set_rich(self.about, f"<b>{html_safe(spec.title)}</b>{where}")
            set_tooltip(self.about, spec.help)
            self.devices.set_multi_gpu(spec.multi_gpu or spec.multi_process)
            # Each workload has its own default step count (dataparallel: one epoch).
            self.steps.setValue(spec.steps_for({}))
            self.workloadChanged.emit(spec.name)
        self._update_run_enabled()

    def _on_add_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Add workloads from a Python file", "", "Python files (*.py)"
        )
        if not path:
            return
        try:
            names = self.add_user_file(path)
        except BadInputError as exc:
            self.show_message(str(exc), error=True)
            return
        self.select(names[0])
        self.show_message(f"Added {len(names)} function(s) from {os.path.basename(path)}")

    def _on_run(self) -> None:
        problem = None if self._running else self.problem()
        if problem:
            self.show_message(f"Cannot run: {problem}", error=True)
            return
        self.runClicked.emit()


__all__ = ["DEFAULT_STEPS", "QtWorkloadPanel", "user_file_workloads"]
