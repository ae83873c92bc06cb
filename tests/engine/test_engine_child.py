"""The child-process executor: events over a pipe as JSON lines, a dying child, cancellation."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
import userfiles

from gpuviz.engine.child import ChildProcessRunner
from gpuviz.engine.events import (
    Cancelled,
    Failed,
    Finished,
    MemorySample,
    Started,
    StepTimed,
    TraceReady,
)
from gpuviz.engine.runner import RunRequest
from gpuviz.errors import BadInputError


def user(tmp_path: Path, source: str, func: str) -> str:
    f = tmp_path / f"{func}.py"
    f.write_text(source)
    return f"{f}:{func}"


def test_child_runs_and_streams_events(tmp_path: Path) -> None:
    out = tmp_path / "t.json.gz"
    events = list(
        ChildProcessRunner(
            RunRequest("loops", {"n": 5}, device="cpu", steps=2, out=str(out)), forward_stderr=False
        )
    )
    assert isinstance(events[0], Started)
    assert isinstance(events[-1], Finished)
    assert TraceReady(str(out)) in events and out.exists()
    assert sum(isinstance(e, StepTimed) for e in events) == 4 * 3
    assert any(isinstance(e, MemorySample) for e in events)
    assert events[-1].result["trace"] == str(out)


def test_child_refuses_bad_input_in_the_parent() -> None:
    with pytest.raises(BadInputError, match="n must be"):
        ChildProcessRunner(RunRequest("loops", {"n": -1}, device="cpu"))


def test_dying_child_is_failed_with_its_signal_and_partial_trace(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.DYING, "dies")
    out = tmp_path / "t.json.gz"
    # call 1 warm-up, call 2 profiled (the trace is written), call 3 timed: SIGKILL
    events = list(
        ChildProcessRunner(
            RunRequest(w, {"die_at": 3}, device="cpu", steps=3, out=str(out)), forward_stderr=False
        )
    )
    last = events[-1]
    assert isinstance(last, Failed)
    assert "SIGKILL" in last.error and "(9)" in last.error
    assert last.partial_trace_path == str(out) and out.exists()


def test_child_that_dies_before_tracing_has_no_partial_trace(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.DYING, "dies")
    events = list(
        ChildProcessRunner(
            RunRequest(w, {"die_at": 1}, device="cpu", steps=1, out=str(tmp_path / "t.json.gz")),
            forward_stderr=False,
        )
    )
    assert isinstance(events[-1], Failed) and events[-1].partial_trace_path is None


def test_cancel_a_child(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.OK, "sleepy")
    out = tmp_path / "t.json.gz"
    runner = ChildProcessRunner(
        RunRequest(w, {"sleep_s": 0.05}, device="cpu", steps=200, out=str(out)),
        forward_stderr=False,
    )
    seen: list[Any] = []
    for e in runner:
        seen.append(e)
        if isinstance(e, StepTimed) and not e.profiled:
            runner.cancel()
    assert seen[-1] == Cancelled(str(out))
    assert sum(isinstance(e, StepTimed) and not e.profiled for e in seen) < 20
    assert runner.proc is not None and runner.proc.returncode == 0


def test_child_keeps_the_callers_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")
    src = (
        "import os\n"
        "def env(device):\n"
        "    assert os.environ.get('NCCL_NVLS_ENABLE') == '0', 'NCCL_NVLS_ENABLE was dropped'\n"
    )
    w = user(tmp_path, src, "env")
    events = list(
        ChildProcessRunner(
            RunRequest(w, device="cpu", steps=1, profile=False), forward_stderr=False
        )
    )
    assert isinstance(events[-1], Finished)
    assert os.environ["NCCL_NVLS_ENABLE"] == "0"


def test_child_killed_from_outside(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.OK, "sleepy")
    runner = ChildProcessRunner(
        RunRequest(w, {"sleep_s": 0.05}, device="cpu", steps=500, profile=False),
        forward_stderr=False,
    )
    seen: list[Any] = []
    for e in runner:
        seen.append(e)
        if isinstance(e, StepTimed) and e.step == 2:
            assert runner.proc is not None
            os.kill(runner.proc.pid, signal.SIGTERM)
    assert isinstance(seen[-1], Failed) and "SIGTERM" in seen[-1].error
