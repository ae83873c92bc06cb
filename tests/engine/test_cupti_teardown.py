"""Profiled runs ask Kineto to detach CUPTI after the trace, unless the user said otherwise,
and see the detaching done: Kineto's teardown waits for a CUDA call that may never come."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from subproc import gpuviz_env

from gpuviz.engine import cupti
from gpuviz.engine.cupti import TEARDOWN_ENV, release_cupti_after_tracing


def test_set_when_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(TEARDOWN_ENV, raising=False)
    release_cupti_after_tracing()
    assert os.environ[TEARDOWN_ENV] == "1"


def test_a_users_choice_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(TEARDOWN_ENV, "0")
    release_cupti_after_tracing()
    assert os.environ[TEARDOWN_ENV] == "0"


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("0", "0")])
def test_gpuviz_profile_sets_it_for_the_script(
    tmp_path: Path, given: str | None, seen: str
) -> None:
    script = tmp_path / "show.py"
    script.write_text("import os\nprint('TEARDOWN', os.environ.get('TEARDOWN_CUPTI'))\n")
    env = gpuviz_env()
    env.pop(TEARDOWN_ENV, None)
    if given is not None:
        env[TEARDOWN_ENV] = given
    r = subprocess.run(
        [sys.executable, "-m", "gpuviz", "profile", "--duration", "1", "--out",
         str(tmp_path / "t.json.gz"), str(script)],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"TEARDOWN {seen}" in r.stdout


def test_a_cpu_only_window_asks_for_the_teardown_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A CPU-only torch.profiler window on a CUDA machine left the process's later CUDA steps
    # 20% slower without it (docs/profiling-overhead.md); the app runs workloads one after
    # another in one process.
    pytest.importorskip("torch")
    from gpuviz.engine.profiling import ProfilerSession

    monkeypatch.delenv(TEARDOWN_ENV, raising=False)
    session = ProfilerSession(tmp_path / "t.json.gz", 1, cuda=False)
    session.start()
    try:
        assert os.environ.get(TEARDOWN_ENV) == "1"
    finally:
        session.stop()


# ------------------------------------------------------------------- the teardown completed


class _Kineto:
    """What ``prof.stop()`` does under ``TEARDOWN_CUPTI=1``: start a thread that ends in the
    exit callback of a later CUDA runtime call (here the ``calls_needed``-th)."""

    def __init__(self, calls_needed: int = 1) -> None:
        self.calls_needed = calls_needed
        self.calls = 0
        self._armed = threading.Event()
        self._done = threading.Event()
        self.thread: threading.Thread | None = None

    def stop(self) -> None:
        self.thread = threading.Thread(target=self._teardown, daemon=True)
        self.thread.start()
        self._armed.wait()

    def _teardown(self) -> None:
        self._armed.set()
        self._done.wait()

    def runtime_call(self) -> None:
        self.calls += 1
        if self._armed.is_set() and self.calls >= self.calls_needed:
            self._done.set()

    def end(self) -> None:
        self._done.set()
        if self.thread is not None:
            self.thread.join(5)


@pytest.fixture
def kineto(monkeypatch: pytest.MonkeyPatch) -> Iterator[_Kineto]:
    k = _Kineto(calls_needed=3)
    monkeypatch.setattr(cupti, "_runtime_call", lambda: k.runtime_call)
    monkeypatch.setattr(cupti, "_pending", set())
    monkeypatch.setattr(cupti, "_exit_hook", True)  # no atexit hook left behind by a test
    yield k
    k.end()


def _stop(kineto: _Kineto, monkeypatch: pytest.MonkeyPatch, teardown: str) -> threading.Thread:
    """Kineto's stop under ``TEARDOWN_CUPTI=teardown``, as gpuviz makes it; its thread."""
    monkeypatch.setenv(TEARDOWN_ENV, teardown)
    with cupti.teardown_completed():
        kineto.stop()
    assert kineto.thread is not None
    return kineto.thread


def test_a_stop_returns_once_the_teardown_it_started_has_ended(
    kineto: _Kineto, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stop(kineto, monkeypatch, "1")
    kineto.thread.join(0.5)  # it was already ending: its last step follows the third call
    assert not kineto.thread.is_alive()
    assert kineto.calls >= 3
    assert not cupti._pending


def test_without_the_teardown_asked_for_nothing_is_called(
    kineto: _Kineto, monkeypatch: pytest.MonkeyPatch
) -> None:
    thread = _stop(kineto, monkeypatch, "0")
    assert kineto.calls == 0
    assert thread.is_alive()


def test_a_teardown_that_does_not_end_in_time_is_retried_at_exit(
    kineto: _Kineto, monkeypatch: pytest.MonkeyPatch
) -> None:
    kineto.calls_needed = 10**9
    monkeypatch.setattr(cupti, "WAIT_S", 0.05)
    t = time.perf_counter()
    thread = _stop(kineto, monkeypatch, "1")
    assert 0.05 <= time.perf_counter() - t < 0.5
    assert thread.is_alive()
    assert cupti._pending  # kept for the exit
    kineto.calls_needed = kineto.calls + 1
    assert cupti.complete_pending(wait_s=2.0)
    assert not cupti._pending


def test_a_teardown_still_waiting_at_exit_is_said(
    kineto: _Kineto, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    kineto.calls_needed = 10**9
    monkeypatch.setattr(cupti, "WAIT_S", 0.02)
    _stop(kineto, monkeypatch, "1")
    assert not cupti.complete_pending()
    err = capsys.readouterr().err
    assert "teardown after the trace did not complete" in err and "TEARDOWN_CUPTI=0" in err


def test_where_no_cuda_runtime_is_loaded_a_stop_does_not_wait(
    kineto: _Kineto, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cupti, "_runtime_call", lambda: None)
    t = time.perf_counter()
    assert not cupti.complete({str(threading.get_native_id())}, 5.0)  # a thread that goes on
    assert time.perf_counter() - t < 1.0


def test_windows_back_to_back_skip_the_teardown_between_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TEARDOWN_ENV, "1")
    with cupti.teardown_skipped():
        assert os.environ[TEARDOWN_ENV] == "0"  # what Kineto reads as the trace stops
    assert os.environ[TEARDOWN_ENV] == "1"
    monkeypatch.setenv(TEARDOWN_ENV, "0")  # the user's choice stays
    with cupti.teardown_skipped():
        assert os.environ[TEARDOWN_ENV] == "0"
    assert os.environ[TEARDOWN_ENV] == "0"


@contextlib.contextmanager
def _recorded(stacks: list[list[tuple[str, int | None]]]) -> Iterator[None]:
    stacks.append([(f.filename, f.lineno) for f in traceback.extract_stack()])
    yield


def test_the_app_sessions_stop_on_its_last_step_is_completed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    from gpuviz.engine import profiling

    stacks: list[list[tuple[str, int | None]]] = []
    monkeypatch.setattr(profiling, "teardown_completed", lambda: _recorded(stacks))
    session = profiling.ProfilerSession(tmp_path / "t.json", 2, cuda=False)
    session.start()
    session.step()
    assert stacks == []  # the first step stops nothing: nothing listed
    session.step()  # the last one stops the trace
    assert len(stacks) == 1
    session.stop()
    assert len(stacks) == 2
    assert session.written is not None


def test_the_scripts_own_profiler_and_gpuvizs_window_stop_completed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    from gpuviz.engine.script import profiler_hooks
    from gpuviz.engine.script import session as session_module
    from gpuviz.engine.script.options import OutPlan, ProfileOptions
    from gpuviz.engine.script.target import resolve_target

    stacks: list[list[tuple[str, int | None]]] = []
    monkeypatch.setattr(profiler_hooks, "teardown_completed", lambda: _recorded(stacks))
    script = tmp_path / "own.py"
    script.write_text(
        textwrap.dedent(
            """\
            import torch
            p = torch.zeros(4, requires_grad=True)
            opt = torch.optim.SGD([p], lr=0.1)
            for _ in range(6):
                opt.step()
            with torch.profiler.profile():
                torch.ones(3) * 2
            """
        )
    )
    out = tmp_path / "t.json"
    options = ProfileOptions(
        script=str(script), skip=0, warmup=0, active=2, stack=False, out=str(out), events=None
    )
    session = session_module.ScriptSession(
        options, resolve_target(str(script), None, []), OutPlan(out)
    )
    assert session.run() == 0, capsys.readouterr().err
    assert out.exists()
    # the script's line where each stop happened
    lines = [[n for f, n in s if f == str(script)][-1] for s in stacks]
    assert lines.count(5) >= 1  # gpuviz's window, stopped in a step (opt.step())
    assert lines.count(6) == 1  # the script's own profiler, at the end of its with


def test_a_stop_between_windows_keeps_cupti_and_the_last_one_tears_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch")
    from gpuviz.engine.script import profiler_hooks
    from gpuviz.engine.script import session as session_module
    from gpuviz.engine.script.options import OutPlan, ProfileOptions
    from gpuviz.engine.script.target import resolve_target

    calls: list[str] = []

    @contextlib.contextmanager
    def completed() -> Iterator[None]:
        # as the real one: nothing unless TEARDOWN_CUPTI=1 (teardown_skipped() sets 0)
        if os.environ.get(TEARDOWN_ENV) == "1":
            calls.append("completed")
        yield

    @contextlib.contextmanager
    def skipped() -> Iterator[None]:
        calls.append("skipped")
        with cupti.teardown_skipped():
            yield

    monkeypatch.delenv(TEARDOWN_ENV, raising=False)  # the session asks for the teardown
    monkeypatch.setattr(profiler_hooks, "teardown_completed", completed)
    monkeypatch.setattr(session_module, "teardown_skipped", skipped)
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n"
        "p = torch.zeros(4, requires_grad=True)\n"
        "opt = torch.optim.SGD([p], lr=0.1)\n"
        "for _ in range(12):\n"
        "    opt.step()\n"
    )
    out = tmp_path / "t.json"
    options = ProfileOptions(
        script=str(script), skip=1, warmup=1, active=2, repeat=3, stack=False, out=str(out),
        events=None,
    )  # fmt: skip
    session = session_module.ScriptSession(
        options, resolve_target(str(script), None, []), OutPlan(out)
    )
    assert session.run() == 0, capsys.readouterr().err
    # The recording before the first step ends at the optimizer; windows end at steps 3, 6
    # and 9, the first two starting the next window in the same call (CUPTI kept), the last
    # one tearing down; dropping the profiler after it stops no trace.
    assert calls == ["completed", "skipped", "skipped", "completed"]
    assert len(session.traces) == 3


# --------------------------------------------------------------------------- on a real GPU


def _ends(cmd: list[str], env: dict[str, str], cwd: Path, limit_s: float = 120) -> str:
    """Run ``cmd``; fail if it has not ended within ``limit_s`` (a hang at exit), else give
    its stderr."""
    with subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    ) as proc:  # fmt: skip
        try:
            out, err = proc.communicate(timeout=limit_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate(timeout=30)
            pytest.fail(f"{cmd[-1]} did not end in {limit_s} s: {out[-800:]} {err[-2000:]}")
    assert proc.returncode == 0, err[-3000:]
    return out


def _needs_cuda() -> Any:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    return torch


_STEPS = """\
import torch
m = torch.nn.Linear(256, 256).cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.01)
for _ in range(8):
    m(torch.randn(64, 256, device="cuda")).sum().backward()
    opt.step()
    opt.zero_grad()
print("done")
"""

_OWN = """\
import torch
from torch.profiler import ProfilerActivity, profile
with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
    a = torch.randn(512, 512, device="cuda")
    (a @ a).sum().item()
print("done")
"""


@pytest.mark.gpu
@pytest.mark.parametrize(
    ("name", "text", "args"),
    [
        # A script that never touches CUDA: the no-step range ends with the script. Before
        # teardown_completed() this one hung at exit on an H200.
        ("no_cuda.py", "print('done')\n", ["--duration", "1"]),
        # The window's last step is the script's, and the script's own profiler under the
        # TEARDOWN_CUPTI=1 gpuviz set. These ended before too: gpuviz's own CUDA calls after
        # the stop (the step timer's events, the memory figures) finished the teardown. They
        # guard those paths against a change to those calls.
        ("last_steps.py", _STEPS, ["--skip", "3", "--warmup", "0", "--active", "5"]),
        ("own_profiler.py", _OWN, ["--duration", "1"]),
    ],
    ids=["no_cuda", "last_steps", "own_profiler"],
)
def test_gpuviz_profile_ends_whatever_follows_the_last_stop(
    tmp_path: Path, name: str, text: str, args: list[str]
) -> None:
    _needs_cuda()
    script = tmp_path / name
    script.write_text(text)
    env = gpuviz_env()
    env.pop(TEARDOWN_ENV, None)
    cmd = [sys.executable, "-m", "gpuviz", "profile", *args]
    out = _ends([*cmd, "--out", str(tmp_path / "t.json.gz"), str(script)], env, tmp_path)
    assert "done" in out


@pytest.mark.gpu
def test_a_plain_torch_window_ends_once_the_teardown_is_completed(tmp_path: Path) -> None:
    # Without teardown_completed() this process never exits on an H200 (torch 2.11, CUDA 13).
    _needs_cuda()
    script = tmp_path / "plain.py"
    script.write_text(
        textwrap.dedent(
            """\
            import torch
            from torch.profiler import ProfilerActivity, profile
            from gpuviz.engine.cupti import teardown_completed
            p = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
            p.start()
            a = torch.randn(512, 512, device="cuda")
            (a @ a).sum().item()
            with teardown_completed():
                p.stop()
            print("done")
            """
        )
    )
    env = gpuviz_env()
    env[TEARDOWN_ENV] = "1"
    assert "done" in _ends([sys.executable, str(script)], env, tmp_path)


@pytest.mark.gpu
@pytest.mark.parametrize("warmup", ["1", "0"])
def test_windows_back_to_back_each_record_the_gpu(tmp_path: Path, warmup: str) -> None:
    # Each window stops its trace and starts the next one's in one prof.step(): a teardown
    # there would finalize CUPTI inside the next window (kineto#1554's race).
    _needs_cuda()
    script = tmp_path / "steps.py"
    script.write_text(_STEPS.replace("range(8)", "range(14)"))
    env = gpuviz_env()
    env.pop(TEARDOWN_ENV, None)
    out = tmp_path / "t.json.gz"
    cmd = [sys.executable, "-m", "gpuviz", "profile", "--skip", "2", "--warmup", warmup,
           "--active", "2", "--repeat", "3", "--out", str(out), str(script)]  # fmt: skip
    assert "done" in _ends(cmd, env, tmp_path)
    windows = [out, *(tmp_path / f"t.window-{k}.json.gz" for k in (2, 3))]
    for path in windows:
        with gzip.open(path, "rt") as f:
            events = json.load(f)["traceEvents"]
        kernels = [e for e in events if e.get("cat") == "kernel"]
        # 2 recorded steps of 9 kernels each (forward, backward, SGD) on an H200: 18
        assert len(kernels) >= 2 * 3, (path.name, len(kernels))
