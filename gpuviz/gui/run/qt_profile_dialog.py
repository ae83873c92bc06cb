"""File → Profile script…: the dialog that sets up ``gpuviz profile`` for the user's own script.

The script (or a module, as ``python -m``), its arguments, the working folder, environment
variables, the step options of ``gpuviz profile`` and the Python interpreter. The default
interpreter is the app's own; another one is accepted once a check has shown that gpuviz and
torch import there (the check runs that Python in a ``QProcess``, so the dialog never waits for
it). Recent scripts, with everything they were run with, are kept in the settings
(``profile/recent``) and come back from the Recent list.

The dialog only collects a run (:meth:`QtProfileDialog.run_spec`, a plain dict);
:meth:`~gpuviz.gui.run.qt_run_controller.QtRunController.profile_script` runs it in a child
process. No engine module is imported here until the dialog checks its fields.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from PySide6.QtCore import QProcess, QProcessEnvironment, Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

RECENT_KEY = "profile/recent"
RECENT_MAX = 10


def parse_env(text: str) -> dict[str, str]:
    """``KEY=VALUE`` lines (blank lines and ``#`` comments skipped) -> dict.

    Raises
    ------
    ValueError
        A line without ``=`` or with a name that is not a variable name (names the line).
    """
    env: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        key, sep, value = s.partition("=")
        key = key.strip()
        if (
            not sep
            or not key
            or not (key[0].isalpha() or key[0] == "_")
            or not all(c.isalnum() or c == "_" for c in key)
        ):
            raise ValueError(f"environment line {n}: expected NAME=VALUE, got {s!r}")
        env[key] = value
    return env


def load_recent(settings: Any) -> list[dict[str, Any]]:
    """The remembered runs, newest first (entries that do not parse are left out)."""
    try:
        items = json.loads(str(settings.value(RECENT_KEY, "[]")))
    except ValueError:
        return []
    return [i for i in items if isinstance(i, dict) and i.get("target")][:RECENT_MAX]


def remember(settings: Any, spec: dict[str, Any]) -> None:
    """Put ``spec`` first in the recent list (one entry per script and arguments)."""
    key = (spec.get("target"), spec.get("module"), tuple(spec.get("args", [])))
    items = [
        i
        for i in load_recent(settings)
        if (i.get("target"), i.get("module"), tuple(i.get("args", []))) != key
    ]
    settings.setValue(RECENT_KEY, json.dumps([spec, *items][:RECENT_MAX]))
    settings.sync()


def _spin(low: int, high: int, value: int, tip: str) -> QSpinBox:
    s = QSpinBox()
    s.setRange(low, high)
    s.setValue(value)
    s.setToolTip(tip)
    return s


class QtProfileDialog(QDialog):
    """Set up a ``gpuviz profile`` run of the user's script (see the module docstring).

    Signals
    -------
    checked(bool)
        The interpreter check ended (True when gpuviz and torch import there).

    Parameters
    ----------
    settings : QSettings
        Where recent runs are kept.
    parent : QWidget, optional
    """

    checked = Signal(bool)

    def __init__(self, settings: Any, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Profile script")
        self.setObjectName("profile_dialog")
        self.settings = settings
        self._check: QProcess | None = None
        self._checked_python: str | None = None
        self._python_ok = False
        self._recent = load_recent(settings)

        self.recent = QComboBox()
        self.recent.addItem("(recent scripts)")
        for item in self._recent:
            self.recent.addItem(_recent_title(item))
        self.recent.setEnabled(bool(self._recent))
        self.recent.activated.connect(self._on_recent)

        self.kind = QComboBox()
        self.kind.addItems(["Script", "Module (-m)"])
        self.kind.currentIndexChanged.connect(self._update_state)
        self.target = QLineEdit()
        self.target.setPlaceholderText("train.py")
        self.target.textChanged.connect(self._update_state)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._on_browse_script)
        self.args = QLineEdit()
        self.args.setPlaceholderText("--lr 3e-4 --batch-size 32   (as in a shell)")
        self.args.textChanged.connect(self._update_state)
        self.cwd = QLineEdit(os.getcwd())
        self.cwd.textChanged.connect(self._update_state)
        browse_cwd = QPushButton("Browse…")
        browse_cwd.clicked.connect(self._on_browse_cwd)
        self.env = QPlainTextEdit()
        self.env.setPlaceholderText("CUDA_VISIBLE_DEVICES=0\nMY_SETTING=1")
        self.env.setFixedHeight(64)
        self.env.textChanged.connect(self._update_state)

        self.skip = _spin(0, 1_000_000, 5, "Steps left alone first: start-up, autotuning, compile")
        self.warmup = _spin(
            0, 10_000, 2, "Warm-up steps (the profiler runs, its events are dropped)"
        )
        self.active = _spin(1, 10_000, 5, "Recorded steps of each window")
        self.repeat = _spin(0, 10_000, 1, "Windows (0: until the script ends)")
        self.stop = QCheckBox("Stop the script after the last window")
        self.stop.setChecked(True)
        self.stop.toggled.connect(self._update_state)
        self.repeat.valueChanged.connect(self._update_state)
        self.step_fn = QLineEdit()
        self.step_fn.setPlaceholderText("optional: __main__:generate or model:GPT.forward")
        self.step_fn.setToolTip(
            "A script without optimizer.step() (inference): each return of this function ends "
            "a step"
        )
        self.step_fn.textChanged.connect(self._update_state)
        self.duration = QDoubleSpinBox()
        self.duration.setRange(0.1, 3600)
        self.duration.setValue(10.0)
        self.duration.setSuffix(" s")
        self.duration.setToolTip("With no step at all, the first seconds recorded as one range")
        self.record_shapes = QCheckBox("Record shapes")
        self.stack = QCheckBox("Python stacks")
        self.stack.setChecked(True)  # the Modules and Source views need them
        self.memory = QCheckBox("Allocations (profile_memory)")
        self.memory_snapshot = QCheckBox("Allocator snapshot (CUDA)")

        self.python = QLineEdit(sys.executable)
        self.python.editingFinished.connect(self._start_check)
        browse_py = QPushButton("Browse…")
        browse_py.clicked.connect(self._on_browse_python)
        self.python_status = QLabel()
        self.python_status.setTextFormat(Qt.TextFormat.PlainText)
        self.python_status.setWordWrap(True)
        self.problem = QLabel()
        self.problem.setTextFormat(Qt.TextFormat.PlainText)
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #b00020;")

        what = QGroupBox("Script")
        f = QFormLayout(what)
        f.addRow("Recent", self.recent)
        row = QHBoxLayout()
        row.addWidget(self.kind)
        row.addWidget(self.target, 1)
        row.addWidget(browse)
        f.addRow("Run", row)
        f.addRow("Arguments", self.args)
        row = QHBoxLayout()
        row.addWidget(self.cwd, 1)
        row.addWidget(browse_cwd)
        f.addRow("Working folder", row)
        f.addRow("Environment", self.env)
        steps = QGroupBox("Steps (end at optimizer.step(), --step-fn or gpuviz.step())")
        g = QFormLayout(steps)
        row = QHBoxLayout()
        for label, w in (
            ("skip", self.skip),
            ("warm-up", self.warmup),
            ("active", self.active),
            ("windows", self.repeat),
        ):
            row.addWidget(QLabel(label))
            row.addWidget(w)
        g.addRow(row)
        g.addRow(self.stop)
        g.addRow("Step function", self.step_fn)
        g.addRow("No step: record", self.duration)
        row = QHBoxLayout()
        for w in (self.record_shapes, self.stack, self.memory, self.memory_snapshot):
            row.addWidget(w)
        g.addRow(row)
        py = QGroupBox("Python")
        h = QFormLayout(py)
        row = QHBoxLayout()
        row.addWidget(self.python, 1)
        row.addWidget(browse_py)
        h.addRow("Interpreter", row)
        h.addRow(self.python_status)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        self.run_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.run_button.setText("Profile")
        self.buttons.accepted.connect(self._on_accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        for w in (what, steps, py, self.problem, self.buttons):
            layout.addWidget(w)
        self.resize(720, 0)
        if self._recent:
            self.apply_spec(self._recent[0])
        self._start_check()
        self._update_state()

    # -- the run ------------------------------------------------------------------------------
    def run_spec(self) -> dict[str, Any]:
        """The run as a plain dict (what is remembered, and what the controller runs).

        Raises
        ------
        ValueError
            A field is wrong (the message names it).
        """
        from gpuviz.engine.script.options import ProfileOptions, parse_step_fn
        from gpuviz.errors import BadInputError

        target = self.target.text().strip()
        module = self.kind.currentIndex() == 1
        cwd = self.cwd.text().strip() or os.getcwd()
        if not target:
            raise ValueError("Name the script (or the module) to profile.")
        if not os.path.isdir(cwd):
            raise ValueError(f"Working folder {cwd}: no such folder.")
        if not module and not os.path.isfile(os.path.join(cwd, target)):
            raise ValueError(f"Script {target}: no such file (in {cwd}).")
        try:
            args = shlex.split(self.args.text())
        except ValueError as exc:
            raise ValueError(f"Arguments: {exc}.") from None
        env = parse_env(self.env.toPlainText())
        step_fn = self.step_fn.text().strip() or None
        opts = ProfileOptions(
            script=None if module else target,
            module=target if module else None,
            args=args,
            skip=self.skip.value(),
            warmup=self.warmup.value(),
            active=self.active.value(),
            repeat=self.repeat.value(),
            stop=self.stop.isChecked(),
            step_fn=step_fn,
            duration_s=float(self.duration.value()),
            record_shapes=self.record_shapes.isChecked(),
            stack=self.stack.isChecked(),
            memory=self.memory.isChecked(),
            memory_snapshot=self.memory_snapshot.isChecked(),
        )
        try:
            opts.check()
            if step_fn:
                parse_step_fn(step_fn)
        except BadInputError as exc:
            raise ValueError(str(exc)) from None
        python = self.python.text().strip() or sys.executable
        if not self._python_usable(python):
            raise ValueError(
                f"Python {python}: "
                + (self._python_error or "checking that gpuviz and torch import there…")
            )
        return {
            "target": target,
            "module": module,
            "args": args,
            "cwd": cwd,
            "env": env,
            "python": python,
            "options": {
                k: v
                for k, v in opts.to_json().items()
                if k not in ("script", "module", "args", "out", "events", "events_fd", "json")
            },
        }

    def apply_spec(self, spec: dict[str, Any]) -> None:
        """Fill the form from a :meth:`run_spec` dict (a recent entry)."""
        self.kind.setCurrentIndex(1 if spec.get("module") else 0)
        self.target.setText(str(spec.get("target", "")))
        self.args.setText(shlex.join(str(a) for a in spec.get("args", [])))
        if spec.get("cwd"):
            self.cwd.setText(str(spec["cwd"]))
        self.env.setPlainText("\n".join(f"{k}={v}" for k, v in dict(spec.get("env", {})).items()))
        o = dict(spec.get("options", {}))
        for name in ("skip", "warmup", "active", "repeat"):
            if isinstance(o.get(name), int):
                getattr(self, name).setValue(o[name])
        self.stop.setChecked(bool(o.get("stop", True)))
        self.step_fn.setText(str(o.get("step_fn") or ""))
        if isinstance(o.get("duration_s"), (int, float)):
            self.duration.setValue(float(o["duration_s"]))
        for name in ("record_shapes", "stack", "memory", "memory_snapshot"):
            getattr(self, name).setChecked(bool(o.get(name, name == "stack")))
        if spec.get("python") and spec["python"] != self.python.text():
            self.python.setText(str(spec["python"]))
            self._start_check()

    # -- the interpreter ------------------------------------------------------------------------
    _python_error = ""

    def _python_usable(self, python: str) -> bool:
        if _same_file(python, sys.executable):
            return True  # the app's own: gpuviz runs here, and torch is one of its needs
        return self._python_ok and self._checked_python == python

    def _start_check(self) -> None:
        python = self.python.text().strip() or sys.executable
        self._stop_check()
        self._python_ok = False
        self._checked_python = python
        self._python_error = ""
        self.python_status.setText(f"Checking that gpuviz and torch import in {python}…")
        from gpuviz.engine.script.process import interpreter_check_command

        cmd, env = interpreter_check_command(python)
        proc = QProcess(self)
        penv = QProcessEnvironment()
        for k, v in env.items():
            penv.insert(k, v)
        proc.setProcessEnvironment(penv)
        proc.setProcessChannelMode(QProcess.ProcessChannelMode.MergedChannels)
        cwd = self.cwd.text().strip()
        if cwd and os.path.isdir(cwd):
            proc.setWorkingDirectory(cwd)
        # Bound methods, not lambdas: Qt drops these connections when the dialog goes, before
        # it deletes the process (whose death would otherwise call into a deleted dialog).
        proc.finished.connect(self._on_check_done)
        proc.errorOccurred.connect(self._on_check_error)
        self._check = proc
        proc.start(cmd[0], cmd[1:])
        self._update_state()

    def _on_check_error(self, error: QProcess.ProcessError) -> None:
        proc = self._check
        if proc is None or error != QProcess.ProcessError.FailedToStart:
            return
        self._check = None
        self._python_error = f"cannot start it ({proc.errorString()})"
        self.python_status.setText(f"✗ {self._checked_python}: {self._python_error}")
        self._update_state()
        self.checked.emit(False)

    def _on_check_done(self, code: int, _status: QProcess.ExitStatus) -> None:
        proc = self._check
        if proc is None:
            return
        from gpuviz.engine.script.process import parse_check

        output = bytes(proc.readAll().data()).decode("utf-8", "replace")
        self._check = None
        result = parse_check(code, output)
        self._python_ok = result.ok
        if result.ok:
            gpu = "a CUDA GPU" if result.cuda else "no CUDA GPU (CPU only)"
            self.python_status.setText(
                f"✓ Python {result.python}, gpuviz {result.gpuviz}, torch {result.torch}; "
                f"torch sees {gpu}"
            )
        else:
            self._python_error = result.error
            self.python_status.setText(f"✗ {result.error}")
        self._update_state()
        self.checked.emit(result.ok)

    # -- handlers -------------------------------------------------------------------------------
    def _update_state(self) -> None:
        self.repeat.setToolTip("Windows (0: until the script ends)")
        try:
            self.run_spec()
        except ValueError as exc:
            self.problem.setText(str(exc))
            self.run_button.setEnabled(False)
            return
        self.problem.setText("")
        self.run_button.setEnabled(True)

    def _on_accept(self) -> None:
        try:
            spec = self.run_spec()
        except ValueError as exc:
            self.problem.setText(str(exc))
            return
        remember(self.settings, spec)
        self.accept()

    def _on_recent(self, index: int) -> None:
        if 1 <= index <= len(self._recent):
            self.apply_spec(self._recent[index - 1])
            self._update_state()

    def _on_browse_script(self) -> None:
        path, _ = QFileDialog.getOpenFileName(
            self, "Script to profile", self.cwd.text(), "Python (*.py);;All files (*)"
        )
        if path:
            self.kind.setCurrentIndex(0)
            cwd = self.cwd.text().strip()
            try:
                rel = str(Path(path).relative_to(cwd)) if cwd else path
            except ValueError:
                rel = path
            self.target.setText(rel)

    def _on_browse_cwd(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Working folder", self.cwd.text())
        if path:
            self.cwd.setText(path)

    def _on_browse_python(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Python interpreter", self.python.text())
        if path:
            self.python.setText(path)
            self._start_check()

    def _stop_check(self) -> None:
        # Forget it and cut its signals first: killing it delivers finished() right here.
        proc, self._check = self._check, None
        if proc is not None:
            for signal in (proc.finished, proc.errorOccurred):
                with contextlib.suppress(RuntimeError, TypeError):
                    signal.disconnect()
            proc.kill()
            proc.waitForFinished(1000)

    def hideEvent(self, event: Any) -> None:
        # Closed or hidden: its Python check must not outlive it (nor call into it).
        self._stop_check()
        super().hideEvent(event)

    def done(self, result: int) -> None:
        self._stop_check()
        super().done(result)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.abspath(a) == os.path.abspath(b)


def _recent_title(item: dict[str, Any]) -> str:
    target = str(item.get("target", ""))
    head = f"-m {target}" if item.get("module") else target
    args = shlex.join(str(a) for a in item.get("args", []))
    return f"{head} {args}".strip()


__all__ = ["RECENT_KEY", "QtProfileDialog", "load_recent", "parse_env", "remember"]
