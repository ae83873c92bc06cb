"""The app's side of ``gpuviz profile``: the script in a child process, events from its pipe."""

from __future__ import annotations

import gzip
import json
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuviz.engine.events import Cancelled, Finished, StepTimed, TraceReady
from gpuviz.engine.script.options import ProfileOptions
from gpuviz.engine.script.process import ScriptProcess, ScriptRun, check_interpreter, parse_check

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "scripts"


@pytest.mark.slow
def test_child_run_streams_events_and_keeps_the_scripts_output(tmp_path: Path) -> None:
    out = tmp_path / "a.json.gz"
    opts = ProfileOptions(
        script="train_mlp.py", args=["--steps", "8"], skip=2, warmup=1, active=2, out=str(out)
    )
    lines: list[str] = []
    src = ScriptProcess(ScriptRun(opts, cwd=str(SCRIPTS), env={"GPUVIZ_TEST": "1"}), lines.append)
    events = list(src)
    assert type(events[-1]) is Finished
    assert [e.step for e in events if isinstance(e, StepTimed)] == list(range(8))
    assert [e.path for e in events if isinstance(e, TraceReady)] == [str(out)]
    assert any("trained 8 steps" in ln for ln in lines)  # the script's stdout, read here
    with gzip.open(out, "rt") as f:
        names = {
            e["name"] for e in json.load(f)["traceEvents"] if "ProfilerStep#" in e.get("name", "")
        }
    assert names == {"ProfilerStep#3", "ProfilerStep#4"}


def _cancel_at_step_8(out: Path) -> tuple[ScriptProcess, list[Any]]:
    """Run ``ends.py sleep`` in the app's child process and Cancel it at step 8."""
    opts = ProfileOptions(
        script="ends.py", args=["sleep"], skip=2, warmup=1, active=20, out=str(out)
    )
    src = ScriptProcess(ScriptRun(opts, cwd=str(SCRIPTS)))
    seen: list[Any] = []
    for event in src:
        seen.append(event)
        if isinstance(event, StepTimed) and event.step == 8:
            src.cancel()
    return src, seen


@pytest.mark.slow
def test_cancel_is_ctrl_c_and_keeps_the_partial_trace(tmp_path: Path) -> None:
    out = tmp_path / "c.json.gz"
    src, seen = _cancel_at_step_8(out)
    end = seen[-1]
    assert type(end) is Cancelled and end.partial_trace_path == str(out)
    assert out.exists()
    assert src.proc is not None and src.proc.returncode == 130


@pytest.mark.slow
def test_cancel_stops_the_script_even_where_the_app_started_with_ctrl_c_ignored(
    tmp_path: Path,
) -> None:
    # An app started in a shell's background inherits SIGINT ignored, and so would its child.
    out = tmp_path / "c.json.gz"
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        src, seen = _cancel_at_step_8(out)
    finally:
        signal.signal(signal.SIGINT, old)
    assert type(seen[-1]) is Cancelled and out.exists()
    assert src.proc is not None and src.proc.returncode == 130  # Ctrl-C's, not SIGTERM's 143


def test_interpreter_check() -> None:
    ok = check_interpreter(sys.executable)
    assert ok.ok and ok.gpuviz and ok.torch
    bad = check_interpreter(str(SCRIPTS / "ends.py"))  # not an executable
    assert not bad.ok and "not an executable" in bad.error
    missing = parse_check(1, "Traceback...\nModuleNotFoundError: No module named 'torch'\n")
    assert not missing.ok and "install gpuviz and torch" in missing.error
    late = parse_check(0, '{"python": "3.12", "gpuviz": "0.1", "torch": "2.11", "cuda": true}\nW')
    assert late.ok and late.cuda and late.torch == "2.11"
