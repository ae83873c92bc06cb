"""File → Profile script…: the dialog, and a CPU script profiled live from the app (pytest-qt).

Expected figures come from the run's saved event stream, read with plain ``json``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from gpuviz.gui.run.qt_profile_dialog import QtProfileDialog, load_recent, parse_env
from gpuviz.gui.run.qt_run_controller import QtRunController

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "scripts"
RUN_TIMEOUT_MS = 180_000


@pytest.fixture
def settings(tmp_path: Path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def make_app(qtbot, tmp_path: Path, settings: QSettings) -> Iterator[Callable[[], QtRunController]]:
    from gpuviz.gui.qt_main_window import MainWindow
    from gpuviz.gui.run.qt_run_controller import install_run_panel

    made: list[Any] = []

    def make() -> QtRunController:
        win = MainWindow(settings=settings, modal_errors=False, remember_recent=False)
        qtbot.addWidget(win)
        ctl = install_run_panel(win, runs_dir=tmp_path / "runs", gpus=[], restore=False)
        win.resize(1400, 900)
        win.show()
        made.append(win)
        return ctl

    yield make
    for win in made:
        win.close()


def _fill(d: QtProfileDialog, target: str, args: str) -> None:
    d.cwd.setText(str(SCRIPTS))
    d.kind.setCurrentIndex(0)
    d.target.setText(target)
    d.args.setText(args)
    d.skip.setValue(2)
    d.warmup.setValue(1)
    d.active.setValue(2)
    d.stop.setChecked(False)


def test_dialog_checks_its_fields_and_remembers_runs(qtbot, settings: QSettings) -> None:
    d = QtProfileDialog(settings)
    qtbot.addWidget(d)
    _fill(d, "train_mlp.py", "--steps 8 --lr '3e-4'")
    d.env.setPlainText("GPUVIZ_X=1\n# a comment\n")
    assert d.run_button.isEnabled(), d.problem.text()
    spec = d.run_spec()
    assert spec["args"] == ["--steps", "8", "--lr", "3e-4"]
    assert spec["env"] == {"GPUVIZ_X": "1"}
    assert spec["options"]["skip"] == 2 and spec["python"] == sys.executable
    d.env.setPlainText("not a variable line")
    assert not d.run_button.isEnabled() and "environment line 1" in d.problem.text()
    d.env.setPlainText("")
    d.target.setText("no_such.py")
    assert not d.run_button.isEnabled() and "no such file" in d.problem.text()
    d.target.setText("train_mlp.py")
    d.step_fn.setText("not-a-function")
    assert not d.run_button.isEnabled() and "--step-fn" in d.problem.text()
    d.step_fn.setText("")
    d.run_button.click()  # accepted: remembered
    assert load_recent(settings)[0]["args"] == ["--steps", "8", "--lr", "3e-4"]
    again = QtProfileDialog(settings)
    qtbot.addWidget(again)
    assert again.target.text() == "train_mlp.py"
    assert again.args.text() == "--steps 8 --lr 3e-4"
    assert again.recent.count() == 2  # the placeholder and one run
    with pytest.raises(ValueError):
        parse_env("1BAD=x")


def test_another_interpreter_must_import_gpuviz(qtbot, settings: QSettings, tmp_path: Path) -> None:
    fake = tmp_path / "python"
    fake.write_text("#!/bin/sh\necho 'ModuleNotFoundError: No module named gpuviz' >&2\nexit 1\n")
    fake.chmod(0o755)
    d = QtProfileDialog(settings)
    qtbot.addWidget(d)
    _fill(d, "ends.py", "none")
    with qtbot.waitSignal(d.checked, timeout=30_000) as checked:
        d.python.setText(str(fake))
        d.python.editingFinished.emit()
    assert checked.args == [False]
    assert not d.run_button.isEnabled()
    assert "No module named gpuviz" in d.python_status.text()
    with qtbot.waitSignal(d.checked, timeout=120_000) as checked:
        d.python.setText(sys.executable)
        d.python.editingFinished.emit()
    assert checked.args == [True] and d.run_button.isEnabled()


def _run(qtbot, ctl: QtRunController, spec: dict[str, Any], on_event: Any = None) -> tuple:
    ended: list[Any] = []
    shown: list[Any] = []
    ctl.runEnded.connect(ended.append)
    ctl.resultShown.connect(shown.append)
    if on_event is not None:
        ctl.eventReceived.connect(on_event)
    assert ctl.profile_script(spec)
    qtbot.waitUntil(lambda: bool(ended and shown), timeout=RUN_TIMEOUT_MS)
    return ended[0], shown[0]


@pytest.mark.slow
def test_profile_a_script_live_then_open_its_trace(make_app, qtbot, settings) -> None:
    ctl = make_app()
    d = QtProfileDialog(settings, ctl.window)
    qtbot.addWidget(d)
    _fill(d, "train_mlp.py", "--steps 8")
    d.env.setPlainText("GPUVIZ_FROM_APP=yes")
    end, view = _run(qtbot, ctl, d.run_spec())
    assert type(end).__name__ == "Finished", getattr(end, "error", "")
    trace = end.result["trace"]
    assert view is not None and Path(view.source).resolve() == Path(trace).resolve()
    stream_file = Path(trace).with_name(Path(trace).name.replace(".json.gz", ".events.jsonl"))
    stream = [json.loads(x) for x in stream_file.read_text().splitlines()]
    assert stream[0]["workload"] == "profile:train_mlp.py"
    timed = [e for e in stream if e["type"] == "StepTimed"]
    assert len(timed) == 8
    # The live plots were fed: every step and the memory curve.
    assert ctl.live.steps_timed == 8
    qtbot.waitUntil(lambda: ctl.live_plots.step_points() == 8, timeout=5000)
    assert sum(ctl.live_plots.memory_curves().values()) > 0
    assert ctl.panel.profile_button.isEnabled()


@pytest.mark.slow
def test_cancel_sends_ctrl_c_and_opens_the_partial_trace(make_app, qtbot, settings) -> None:
    ctl = make_app()
    d = QtProfileDialog(settings, ctl.window)
    qtbot.addWidget(d)
    _fill(d, "ends.py", "sleep")
    d.active.setValue(30)

    def cancel_at_step_8(event: Any) -> None:
        if type(event).__name__ == "StepTimed" and event.step == 8:
            ctl.cancel_run()

    end, view = _run(qtbot, ctl, d.run_spec(), cancel_at_step_8)
    assert type(end).__name__ == "Cancelled" and end.partial_trace_path
    assert view is not None
    assert Path(view.source).resolve() == Path(end.partial_trace_path).resolve()
    assert ctl.worker is None
