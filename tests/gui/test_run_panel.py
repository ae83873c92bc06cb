"""Running workloads from the app's panel, on the CPU (pytest-qt, offscreen).

Expected figures come from the recorded event stream read with plain ``json`` and from the
workloads' declarations, never from the widgets under test.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtGui import QTextDocument

from gpuviz.gui.run.qt_run_controller import QtRunController

RUN_TIMEOUT_MS = 120_000


@pytest.fixture
def make_app(qtbot, tmp_path: Path) -> Iterator[Callable[..., QtRunController]]:
    """A main window with the run panel (CPU only, settings and runs in tmp_path)."""
    from gpuviz.gui.qt_main_window import MainWindow
    from gpuviz.gui.run.qt_run_controller import install_run_panel

    made: list[Any] = []

    def make(modal_errors: bool = True, restore: bool = False) -> QtRunController:
        settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings=settings, modal_errors=modal_errors, remember_recent=False)
        qtbot.addWidget(win)
        ctl = install_run_panel(win, runs_dir=tmp_path / "runs", gpus=[], restore=restore)
        win.resize(1400, 900)
        win.show()
        made.append(win)
        return ctl

    yield make
    for win in made:
        win.close()  # the controller cancels a run and waits for its thread and child


def _wait_end(
    qtbot, ctl: QtRunController, start: Callable[[], Any] | None = None
) -> tuple[Any, Any]:
    """Wait for the run's end and for its trace tab; returns (terminal event, view or None)."""
    ended: list[Any] = []
    shown: list[Any] = []
    ctl.runEnded.connect(ended.append)
    ctl.resultShown.connect(shown.append)
    try:
        if start is not None:
            assert start()
        qtbot.waitUntil(lambda: bool(ended and shown), timeout=RUN_TIMEOUT_MS)
    finally:
        ctl.runEnded.disconnect(ended.append)
        ctl.resultShown.disconnect(shown.append)
    return ended[0], shown[0]


def _shown(rich: str) -> str:
    """What a reader sees of a rich-text tooltip."""
    doc = QTextDocument()
    doc.setHtml(rich)
    return doc.toPlainText()


def _events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_form_is_built_from_declarations(make_app) -> None:
    from gpuviz.workloads.registry import builtin_workloads

    ctl = make_app()
    panel = ctl.panel
    specs = builtin_workloads()
    listed = [panel.list.item(i).data(0x0100) for i in range(panel.list.count())]
    assert listed[: len(specs)] == list(specs)
    assert panel.select("loops")
    for p in specs["loops"].params:
        editor = panel.form.editors[p.name]
        assert p.help in _shown(editor.toolTip())  # help as the tooltip
    assert panel.form.values() == {p.name: p.default for p in specs["loops"].params}
    assert panel.request()["device"] == "cpu"  # no GPU: the CPU only
    assert panel.steps.value() == 5
    # dataparallel's default is one epoch of the tutorial's data: 4 batches (30, 30, 30, 10)
    assert panel.select("dataparallel")
    assert panel.steps.value() == 4


def test_invalid_values_block_run(make_app, qtbot) -> None:
    ctl = make_app()
    panel = ctl.panel
    panel.select("loops")
    assert panel.run_button.isEnabled()
    for name, bad in (("n", "abc"), ("n", "-1"), ("data", ""), ("streams", "65"), ("n", "2.5")):
        panel.form.set_text(name, bad)
        assert name in panel.form.errors(), (name, bad)
        assert not panel.run_button.isEnabled()
        assert "#d62728" in panel.form.editors[name].styleSheet()  # flagged
        with qtbot.waitSignal(ctl.runRefused, timeout=1000) as refused:
            assert ctl.start_run() is False
        assert name in refused.args[0]
        assert ctl.worker is None
        panel.form.reset()
        assert panel.form.is_valid() and panel.run_button.isEnabled()


def test_user_file_params_read_without_running_it(make_app, tmp_path: Path) -> None:
    f = tmp_path / "mine.py"
    f.write_text(
        textwrap.dedent(
            """
            raise SystemExit("the app must never run this file")

            def square(device, n: int = 7, scale: float = 2.0, note: str = "x"):
                pass

            def _private(device):
                pass
            """
        )
    )
    ctl = make_app()
    names = ctl.panel.add_user_file(str(f))
    assert names == [f"{f}:square"]
    assert ctl.panel.select(names[0])
    assert ctl.panel.form.values() == {"n": 7, "scale": 2.0, "note": "x"}


def test_run_loops_from_panel(make_app, qtbot, tmp_path: Path) -> None:
    from gpuviz.workloads.loops import STRATEGIES

    ctl = make_app()
    panel = ctl.panel
    panel.select("loops")
    panel.form.set_text("n", "300")
    panel.steps.setValue(2)
    with qtbot.waitSignal(ctl.runStarted, timeout=5000):
        panel.run_button.click()
    # A second Run while one is going is refused, with a message, and nothing else starts.
    worker = ctl.worker
    with qtbot.waitSignal(ctl.runRefused, timeout=1000) as refused:
        panel.run_button.click()
    assert "A run is going" in refused.args[0]
    assert ctl.worker is worker
    end, view = _wait_end(qtbot, ctl)
    assert type(end).__name__ == "Finished", getattr(end, "error", end)
    assert ctl.worker is None and not panel.cancel_button.isEnabled()

    # Expected figures: from the saved event stream, read with plain json.
    streams = list((tmp_path / "runs").glob("*.events.jsonl"))
    assert len(streams) == 1
    events = _events(streams[0])
    steps = [e for e in events if e["type"] == "StepTimed"]
    total = [e for e in events if e["type"] == "Progress"][-1]["total"]
    assert len(steps) == total
    assert ctl.live_plots.step_points() == len(steps)  # one point per step
    assert ctl.live_plots.gpu_points() == 0  # the CPU has no GPU time
    samples = [e for e in events if e["type"] == "MemorySample"]
    assert ctl.live_plots.memory_curves()[("cpu", "RSS")] >= len(samples) > 0

    # The comparison lists every strategy the workload declares, the skipped ones included.
    assert ctl.comparison.strategy_names() == list(STRATEGIES)
    result = events[-1]["result"]
    skipped = {s["name"] for s in result["strategies"] if s["status"] == "skipped"}
    assert {"streams", "cuda_graph"} <= skipped  # needs CUDA: visible, not silent

    # The run's trace is open in a tab.
    trace = [e for e in events if e["type"] == "TraceReady"][-1]["path"]
    assert view is not None
    assert Path(view.source).resolve() == (streams[0].parent / trace).resolve()
    assert view.run_result["strategies"] == result["strategies"]

    # The saved stream replays into the same views (and opens the same trace).
    ended: list[Any] = []
    ctl.runEnded.connect(ended.append)
    assert ctl.replay(streams[0])
    qtbot.waitUntil(lambda: bool(ended), timeout=RUN_TIMEOUT_MS)
    assert ctl.live_plots.step_points() == len(steps)
    assert ctl.live_plots.memory_curves()[("cpu", "RSS")] == len(samples)

    # Settings: the workload and its parameters come back in a new window.
    ctl2 = make_app(restore=True)
    assert ctl2.panel.current_spec().name == "loops"
    assert ctl2.panel.form.values()["n"] == 300
    assert ctl2.panel.steps.value() == 2


def test_cancel_mid_run_leaves_nothing_running(make_app, qtbot) -> None:
    import psutil

    ctl = make_app()
    ctl.start_run({"workload": "loops", "params": {"n": 3000}, "device": "cpu", "steps": 200})
    pids: list[int] = []

    def first_step(event: Any) -> bool:
        if ctl.worker is not None and ctl.worker.child_pid():
            pids.append(ctl.worker.child_pid())
        return type(event).__name__ == "StepTimed"

    with qtbot.waitSignal(ctl.eventReceived, check_params_cb=first_step, timeout=RUN_TIMEOUT_MS):
        pass
    assert pids, "the profiled run goes to a child process"
    with qtbot.waitSignal(ctl.runEnded, timeout=RUN_TIMEOUT_MS) as ended:
        ctl.panel.cancel_button.click()
    end = ended.args[0]
    assert type(end).__name__ == "Cancelled"
    assert ctl.live.steps_timed < ctl.live.total  # stopped between steps, early
    assert ctl.worker is None
    # The child (and the profiler and the sampler in it) is gone, not left behind.
    assert not psutil.pid_exists(pids[0]) or psutil.Process(pids[0]).status() == "zombie"
    # What was recorded is kept: the partial trace opens.
    if end.partial_trace_path:
        with qtbot.waitSignal(ctl.resultShown, timeout=RUN_TIMEOUT_MS) as shown:
            pass
        assert shown.args[0] is not None
    assert ctl.panel.run_button.isEnabled()  # usable again


def test_cancel_in_thread_run_stops_profiler_and_sampler(make_app, qtbot) -> None:
    import threading

    ctl = make_app()
    ctl.start_run(
        {"workload": "loops", "params": {"n": 3000}, "device": "cpu", "steps": 200},
        executor="thread",
    )
    with qtbot.waitSignal(
        ctl.eventReceived,
        check_params_cb=lambda e: type(e).__name__ == "StepTimed",
        timeout=RUN_TIMEOUT_MS,
    ):
        pass
    with qtbot.waitSignal(ctl.runEnded, timeout=RUN_TIMEOUT_MS) as ended:
        ctl.cancel_run()
    assert type(ended.args[0]).__name__ == "Cancelled"
    import torch

    assert not torch.autograd.profiler._is_profiler_enabled
    names = [t.name for t in threading.enumerate()]
    assert "gpuviz-memory-sampler" not in names
    assert ctl.worker is None


FAILING = """
import torch

calls = [0]


def breaks_later(device, n: int = 100):
    calls[0] += 1
    x = torch.ones(n, device=device) * 2
    if calls[0] >= 3:  # the warm-up and the profiled step pass; a timed step raises
        raise RuntimeError(f"boom on call {calls[0]}")
    return x.sum()
"""


def test_failure_shows_dialog_and_partial_trace(make_app, qtbot, tmp_path: Path) -> None:
    from gpuviz.gui.run.qt_failure_dialog import QtFailureDialog

    f = tmp_path / "fails.py"
    f.write_text(FAILING)
    ctl = make_app(modal_errors=True)
    [name] = ctl.panel.add_user_file(str(f))
    ctl.panel.select(name)
    ctl.panel.steps.setValue(3)
    end, view = _wait_end(qtbot, ctl, ctl.start_run)
    assert type(end).__name__ == "Failed"
    dialog = ctl.failure_dialog
    assert isinstance(dialog, QtFailureDialog) and dialog.isVisible()
    assert not dialog.isModal()  # the app stays usable
    assert "boom on call 3" in dialog.message
    assert not dialog.traceback_shown()
    dialog.toggle.click()
    assert dialog.traceback_shown()
    assert "RuntimeError" in dialog.traceback_edit.toPlainText()
    # The partial trace (the profiled step) is opened.
    events = _events(next((tmp_path / "runs").glob("*.events.jsonl")))
    partial = [e for e in events if e["type"] == "TraceReady"][-1]["path"]
    assert view is not None
    assert Path(view.source).resolve() == (tmp_path / "runs" / partial).resolve()
    assert os.path.basename(partial) in dialog.trace_label.text()
    dialog.close()
    assert ctl.worker is None and ctl.panel.run_button.isEnabled()


EXITS = """
import sys


def exits(device, exit_at: int = 2):
    exits.calls = getattr(exits, "calls", 0) + 1
    if exits.calls >= exit_at:  # call 1 is the warm-up, call 2 the first timed step
        sys.exit(5)
"""


def test_a_user_file_runs_in_a_child_and_its_sys_exit_is_a_failure(
    make_app, qtbot, tmp_path: Path
) -> None:
    f = tmp_path / "exits.py"
    f.write_text(EXITS)
    ctl = make_app(modal_errors=False)
    [name] = ctl.panel.add_user_file(str(f))
    ctl.panel.select(name)
    ctl.panel.profile.setChecked(False)  # unprofiled built-ins may run in-thread; files never
    ctl.panel.steps.setValue(2)
    sources: list[str] = []
    ctl.eventReceived.connect(
        lambda e: sources.append(type(ctl.worker.source).__name__) if ctl.worker else None
    )
    with qtbot.waitSignal(ctl.runEnded, timeout=RUN_TIMEOUT_MS) as ended:
        assert ctl.start_run()
    end = ended.args[0]
    assert type(end).__name__ == "Failed"
    assert end.error == "the workload called sys.exit(5) in step 0"
    assert sources and set(sources) == {"ChildProcessRunner"}
    assert ctl.worker is None and ctl.panel.run_button.isEnabled()


def test_window_layout_and_device_persist(make_app, qtbot) -> None:
    from PySide6.QtCore import Qt

    ctl = make_app()
    win = ctl.window
    win.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, ctl.live_dock)
    ctl.panel.select("streams")
    ctl.panel.form.set_text("matmuls", "7")
    ctl.panel.steps.setValue(9)
    ctl.save_settings()
    ctl.save_layout()
    ctl2 = make_app(restore=True)
    assert ctl2.window.dockWidgetArea(ctl2.live_dock) == Qt.DockWidgetArea.RightDockWidgetArea
    assert ctl2.panel.current_spec().name == "streams"
    assert ctl2.panel.form.values()["matmuls"] == 7
    assert ctl2.panel.steps.value() == 9
    assert ctl2.panel.devices.device() == "cpu"


def test_device_picker_offers_gpus_and_a_gpu_set(qtbot) -> None:
    from gpuviz.gui.run.qt_device_picker import GpuInfo
    from gpuviz.gui.run.qt_workload_panel import QtWorkloadPanel
    from gpuviz.workloads.registry import WorkloadSpec

    gib = 1 << 30
    gpus = [GpuInfo(i, "NVIDIA H200", 141 * gib, (i + 1) * gib, 10.0 * i) for i in range(3)]
    panel = QtWorkloadPanel(gpus)
    qtbot.addWidget(panel)
    panel.show()
    combo = panel.devices.combo
    assert [combo.itemData(i) for i in range(combo.count())] == [
        "cpu",
        "cuda:0",
        "cuda:1",
        "cuda:2",
    ]
    assert "NVIDIA H200" in combo.itemText(2) and "2.0 / 141.0 GiB" in combo.itemText(2)
    assert panel.devices.device() == "cuda:0"  # like the CLI: cuda when there is one
    panel.add_workload(WorkloadSpec(name="multi", title="t", multi_gpu=True))
    panel.select("multi")
    assert panel.devices.gpu_box.isVisible()
    assert panel.request()["gpus"] == "0,1,2"
    panel.devices.gpu_checks[1].setChecked(False)
    assert panel.request()["gpus"] == "0,2"
    for cb in panel.devices.gpu_checks:
        cb.setChecked(False)
    assert not panel.run_button.isEnabled()  # an empty GPU set blocks Run
    panel.devices.set_device("cpu")
    assert panel.run_button.isEnabled() and panel.request()["gpus"] is None
    panel.select("loops")
    assert not panel.devices.gpu_box.isVisible()


def test_run_gui_screenshot(qapp, tmp_path: Path) -> None:
    """What ``gpuviz run loops --gui --screenshot OUT.png`` does: run, show, save, exit 0."""
    from PySide6.QtGui import QImage

    from gpuviz.gui.run.launch import run_gui

    out = tmp_path / "shot.png"
    request = {"workload": "loops", "params": {"n": 200}, "device": "cpu", "steps": 1}
    rc = run_gui(request, screenshot=str(out), size=(1200, 760), runs_dir=tmp_path / "runs")
    assert rc == 0
    image = QImage(str(out))
    assert (image.width(), image.height()) == (1200, 760)
    assert len(list((tmp_path / "runs").glob("loops-*.json.gz"))) == 1


def test_dead_child_is_a_failure_and_the_app_lives_on(make_app, qtbot) -> None:
    import signal

    ctl = make_app(modal_errors=True)
    ctl.start_run({"workload": "loops", "params": {"n": 3000}, "device": "cpu", "steps": 200})
    with qtbot.waitSignal(
        ctl.eventReceived,
        check_params_cb=lambda e: type(e).__name__ == "StepTimed",
        timeout=RUN_TIMEOUT_MS,
    ):
        pass
    pid = ctl.worker.child_pid()
    assert pid is not None
    os.kill(pid, signal.SIGKILL)  # a crash of the workload's process
    end, _view = _wait_end(qtbot, ctl)
    assert type(end).__name__ == "Failed"
    assert "SIGKILL" in end.error
    assert ctl.failure_dialog is not None and ctl.failure_dialog.isVisible()
    assert "SIGKILL" in ctl.failure_dialog.message
    ctl.failure_dialog.close()
    assert ctl.worker is None and ctl.panel.run_button.isEnabled()


def test_closing_the_window_stops_the_run(make_app, qtbot) -> None:
    import psutil

    ctl = make_app()
    ctl.start_run({"workload": "loops", "params": {"n": 3000}, "device": "cpu", "steps": 500})
    with qtbot.waitSignal(
        ctl.eventReceived,
        check_params_cb=lambda e: type(e).__name__ == "Progress",
        timeout=RUN_TIMEOUT_MS,
    ):
        pass
    worker = ctl.worker
    pid = worker.child_pid()
    ctl.window.close()
    assert not worker.isRunning()
    assert pid is None or not psutil.pid_exists(pid) or psutil.Process(pid).status() == "zombie"


def test_closing_right_after_run_starts_nothing(make_app, qtbot) -> None:
    ctl = make_app()
    assert ctl.start_run({"workload": "loops", "params": {"n": 10}, "device": "cpu", "steps": 1})
    worker = ctl.worker
    ctl.window.close()  # before the worker thread was started
    qtbot.wait(200)
    assert not worker.isRunning() and worker.source is None


def test_run_modules_load_neither_engine_nor_torch() -> None:
    """The engine is imported when a run starts, never with the app's modules."""
    import subprocess
    import sys

    code = (
        "import sys, gpuviz.gui.run.qt_run_controller, gpuviz.gui.run.launch; "
        "print(sorted(m for m in sys.modules if m.startswith(('torch', 'gpuviz.engine'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
