"""What ``gpuviz profile`` does at each step outside its window stays cheap (no timing here).

``benchmarks/step_cost.py`` measures the cost; these tests catch what made it grow: a CUDA
event made (or a wait for the GPU) at every step, state kept per step beyond the step's own
figures, a system call per event.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import gpuviz
from gpuviz.engine.events import Finished, Progress, StepTimed
from gpuviz.engine.script import forking, step_timer, writing
from gpuviz.engine.script.step_timer import StepTimer

# ------------------------------------------------------------------------- CUDA events, faked


class _FakeEvent:
    """A CUDA event that completes ``lag`` boundaries after it is recorded."""

    made = 0
    syncs = 0
    clock = 0

    def __init__(self, enable_timing: bool = False) -> None:
        assert enable_timing
        type(self).made += 1
        self.at: int | None = None

    def record(self, stream: Any = None) -> None:
        self.at = _FakeEvent.clock

    def query(self) -> bool:
        return self.at is not None and _FakeEvent.clock - self.at >= 2

    def synchronize(self) -> None:
        type(self).syncs += 1

    def elapsed_time(self, end: _FakeEvent) -> float:
        assert self.at is not None and end.at is not None
        return float(end.at - self.at)


def _fake_torch(calls: list[str]) -> Any:
    def sync(*_: Any) -> None:
        calls.append("torch.cuda.synchronize")

    def stream(stream_id: int = 0, device_index: int = 0, device_type: int = 1) -> Any:
        calls.append("Stream()")  # made once per stream, not once a step
        return ("stream", stream_id, device_index)

    cuda = SimpleNamespace(
        Event=_FakeEvent,
        Stream=stream,
        synchronize=sync,
        is_initialized=lambda: True,
        current_device=lambda: 0,
        is_current_stream_capturing=lambda: False,
        current_stream=lambda index=None: ("stream", 0, index),
    )
    return SimpleNamespace(cuda=cuda, _C=SimpleNamespace())


def _c_entry_points(torch: Any) -> Any:
    """The same fake torch, with the C entry points under torch.cuda's helpers."""
    torch._C = SimpleNamespace(
        _cuda_getDevice=lambda: 0,
        _cuda_isCurrentStreamCapturing=lambda: False,
        _cuda_getCurrentStream=lambda index: (7, index, 1),
        _CudaEventBase=SimpleNamespace(
            record=_FakeEvent.record, query=_FakeEvent.query, elapsed_time=_FakeEvent.elapsed_time
        ),
    )
    return torch


def _fake_timer(torch: Any) -> StepTimer:
    """A StepTimer over a fake torch, the fake clock at 0."""
    _FakeEvent.made = _FakeEvent.syncs = _FakeEvent.clock = 0
    timer = StepTimer(0.0)
    timer._cuda = step_timer._CudaCalls(torch)
    return timer


def _run_steps(timer: StepTimer, n: int, read: bool = True) -> list[Any]:
    """``n`` boundaries on a CUDA device, the fake clock one tick a step; what ready() gave."""
    device = SimpleNamespace(type="cuda", index=0)
    out: list[Any] = []
    for k in range(n):
        _FakeEvent.clock += 1
        timer.end(k, False, device)
        if read:
            out += timer.ready()
    return out


@pytest.mark.parametrize("calls_through", ["helpers", "c entry points"])
def test_step_timing_reuses_its_cuda_events_and_never_waits_for_the_gpu(
    calls_through: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(step_timer, "READ_EVERY_S", 0.0)  # read at every boundary
    calls: list[str] = []
    torch = _fake_torch(calls)
    if calls_through == "c entry points":
        torch = _c_entry_points(torch)
    timer = _fake_timer(torch)
    out = _run_steps(timer, 300)
    # Events complete two boundaries late: a few are in flight, the rest come from the pool.
    assert _FakeEvent.made <= 4
    assert _FakeEvent.syncs == 0
    assert calls == (["Stream()"] if calls_through == "c entry points" else [])
    assert [s.step for s in out] == list(range(len(out))) and len(out) >= 297
    assert all(s.gpu_ms == 1.0 for s in out[1:])  # one tick of the fake clock a step
    rest = timer.flush()  # the end of the run may wait
    assert [s.step for s in out + rest] == list(range(300))


def test_cuda_events_are_read_at_most_every_period(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(step_timer, "READ_EVERY_S", 3600.0)
    monkeypatch.setattr(step_timer, "READ_PENDING", 10**6)
    timer = _fake_timer(_c_entry_points(_fake_torch([])))
    out = _run_steps(timer, 50)
    # The first boundary reads: step 0 (no start event) is known; the next read is an hour off.
    assert [s.step for s in out] == [0]
    assert _FakeEvent.made == 50  # none read, so none reused yet
    rest = timer.flush()
    assert [s.step for s in rest] == list(range(1, 50))
    assert all(s.gpu_ms == 1.0 for s in rest)
    # And on the CPU (no events) nothing waits for the period.
    cpu = StepTimer(0.0)
    cpu.end(0, False, SimpleNamespace(type="cpu", index=None))
    assert [s.step for s in cpu.ready()] == [0]


@pytest.mark.gpu
def test_on_cuda_step_timing_reuses_its_events_and_never_synchronizes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import torch

    made, syncs = [0], []

    class CountedEvent(torch.cuda.Event):
        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            made[0] += 1
            return super().__new__(cls, *args, **kwargs)

        def synchronize(self) -> None:
            syncs.append("Event.synchronize")
            super().synchronize()

    monkeypatch.setattr(torch.cuda, "Event", CountedEvent)
    real_sync = torch.cuda.synchronize
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: syncs.append("synchronize"))
    x = torch.zeros(1024, device="cuda")
    timer = StepTimer(0.0)
    out = []
    for k in range(300):
        for _ in range(5):
            x.add_(1.0)
        timer.end(k, False, x.device)
        out += timer.ready()
    assert syncs == []  # never waits for the GPU at a step
    # The GPU keeps a few steps behind at most; every other event comes from the pool.
    assert made[0] <= 16, made[0]
    real_sync()
    rest = timer.flush()
    steps = out + rest
    assert [s.step for s in steps] == list(range(300))
    assert all(s.gpu_ms is not None and s.gpu_ms >= 0 for s in steps[1:])


# ------------------------------------------------------------------------------- the sink


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_step_events_wait_in_the_buffer_and_go_out_before_anything_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writing, "FLUSH_S", 1e9)
    path = tmp_path / "e.jsonl"
    sink = writing.EventSink(str(path))
    try:
        for k in range(5):
            sink.emit(StepTimed(k, "s", 1.0, None, False))
            sink.emit(Progress(k + 1, 0))
        assert path.read_text() == ""  # no system call per step
        sink.emit(Finished({"ok": True}))
        types = [e["type"] for e in _lines(path)]
        # Of the Progress events only the latest is written, before what ends the run.
        assert types == ["StepTimed"] * 5 + ["Progress", "Finished"]
        assert _lines(path)[-2]["step"] == 5
        sink.emit(StepTimed(5, "s", 1.0, None, False))
        monkeypatch.setattr(writing, "FLUSH_S", 0.0)  # past the period: the next one flushes
        sink.emit(Progress(6, 0))
        assert [e["type"] for e in _lines(path)][-2:] == ["StepTimed", "Progress"]
    finally:
        sink.close()


def test_progress_from_the_boundary_is_made_only_when_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writing, "FLUSH_S", 1e9)
    made: list[tuple[int, int]] = []
    init = Progress.__init__

    def counting(self: Progress, step: int, total: int) -> None:
        made.append((step, total))
        init(self, step, total)

    monkeypatch.setattr(Progress, "__init__", counting)
    path = tmp_path / "e.jsonl"
    sink = writing.EventSink(str(path))
    try:
        for k in range(50):
            sink.progress(k + 1, 60)
        sink.emit(StepTimed(0, "s", 1.0, None, False))
        assert made == [] and path.read_text() == ""
        sink.emit(Progress(3, 60))  # an older kind of call: the newest of the two is kept
        sink.progress(51, 60)
        sink.emit(Finished({"ok": True}))
        lines = _lines(path)
        assert [e["type"] for e in lines] == ["StepTimed", "Progress", "Finished"]
        assert (lines[1]["step"], lines[1]["total"]) == (51, 60)
        assert made == [(3, 60), (51, 60)]  # the test's own, and the one written
        monkeypatch.setattr(writing, "FLUSH_S", 0.0)  # past the period: the call writes it out
        sink.progress(52, 60)
        assert _lines(path)[-1]["step"] == 52
    finally:
        sink.close()
    quiet = writing.EventSink()  # nowhere to write (a terminal run): nothing is kept
    quiet.progress(1, 0)
    assert not quiet.streaming and quiet._latest is None


def test_the_sink_is_written_out_before_a_fork(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A child's copy of unwritten buffers must hold nothing: the parent writes them first.
    monkeypatch.setattr(writing, "FLUSH_S", 1e9)
    path = tmp_path / "e.jsonl"
    sink = writing.EventSink(str(path))
    try:
        sink.emit(StepTimed(0, "s", 1.0, None, False))
        forking.watch(lambda: None, before=sink.flush)
        try:
            forking._before_fork()
        finally:
            forking.unwatch()
        assert [e["type"] for e in _lines(path)] == ["StepTimed"]
    finally:
        sink.close()


# -------------------------------------------------------------------- a real session's steps


def test_a_step_past_the_window_keeps_no_more_than_its_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # What gpuviz's own files hold on to after N steps past the window: the step's figures
    # (session.steps) and nothing that grows faster. tracemalloc counts bytes, not time.
    from gpuviz.engine.script.options import OutPlan, ProfileOptions
    from gpuviz.engine.script.session import ScriptSession
    from gpuviz.engine.script.target import resolve_target

    monkeypatch.setattr(writing, "FLUSH_S", 0.0)  # no events left in the buffers to count
    n = 400
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            f"""
            import sys, tracemalloc, torch
            p = torch.zeros(4, requires_grad=True)
            opt = torch.optim.SGD([p], lr=0.1)
            for _ in range(20):  # step 0 is the window; the rest warm up
                opt.step()
            root = {str(Path(gpuviz.__file__).parent)!r}
            only = [tracemalloc.Filter(True, root + "/*")]
            tracemalloc.start(1)
            before = tracemalloc.take_snapshot().filter_traces(only)
            for _ in range({n}):
                opt.step()
            after = tracemalloc.take_snapshot().filter_traces(only)
            tracemalloc.stop()
            sys.gpuviz_step_growth = [
                (str(d.traceback), d.size_diff, d.count_diff)
                for d in after.compare_to(before, "lineno") if d.size_diff > 0
            ]
            """
        )
    )
    options = ProfileOptions(
        script=str(script),
        skip=0,
        warmup=0,
        active=1,
        stack=False,
        out=str(tmp_path / "t.json.gz"),
        events=str(tmp_path / "e.jsonl"),
    )
    session = ScriptSession(
        options, resolve_target(str(script), None, []), OutPlan(tmp_path / "t.json.gz")
    )
    try:
        assert session.run() == 0, capsys.readouterr().err
        growth = sys.gpuviz_step_growth  # type: ignore[attr-defined]
    finally:
        if hasattr(sys, "gpuviz_step_growth"):
            del sys.gpuviz_step_growth  # type: ignore[attr-defined]
    assert session.step == 20 + n and session.traces
    per_step = sum(size for _, size, _ in growth) / n
    # A TimedStep (its step number and wall time) in session.steps: 180 bytes and 3.6 blocks
    # a step on CPython 3.11; another event kept per step would add about 200 and 2.
    assert per_step < 400, growth
    assert sum(count for _, _, count in growth) <= 5 * n, growth


def test_before_the_window_torch_profiler_step_runs_only_where_the_window_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # While the profiler waits, torch's prof.step() only closes and opens an unrecorded
    # "ProfilerStep#N" range (about 32 us a step on an H200 host): the session counts the
    # step itself, and the window's steps keep their numbers.
    import torch

    from gpuviz.engine.script.options import OutPlan, ProfileOptions
    from gpuviz.engine.script.session import ScriptSession
    from gpuviz.engine.script.target import resolve_target

    called_at: list[int] = []
    original = torch.profiler.profile.step

    def step(prof: Any) -> None:
        called_at.append(prof.step_num)
        original(prof)

    monkeypatch.setattr(torch.profiler.profile, "step", step)
    script = tmp_path / "train.py"
    script.write_text(
        "import torch\n"
        "p = torch.zeros(4, requires_grad=True)\n"
        "opt = torch.optim.SGD([p], lr=0.1)\n"
        "for _ in range(30):\n"
        "    opt.step()\n"
    )
    out = tmp_path / "t.json"
    options = ProfileOptions(
        script=str(script), skip=20, warmup=1, active=3, stack=False, out=str(out), events=None
    )
    session = ScriptSession(options, resolve_target(str(script), None, []), OutPlan(out))
    assert session.run() == 0, capsys.readouterr().err
    # prof.step() at the ends of steps 19 (into warm-up) to 23 (the window written), no more
    assert called_at == [19, 20, 21, 22, 23]
    names = sorted(
        e["name"]
        for e in json.loads(out.read_text())["traceEvents"]
        if str(e.get("name", "")).startswith("ProfilerStep#")
    )
    assert names == ["ProfilerStep#21", "ProfilerStep#22", "ProfilerStep#23"]


# ------------------------------------------------------------------------------ the sampler


def test_the_sampler_reads_rss_as_psutil_does_without_psutils_three_system_calls() -> None:
    import os

    import psutil
    import torch

    from gpuviz.engine.sampler import MemorySampler

    if not os.path.exists("/proc/self/statm"):
        pytest.skip("no /proc here: psutil is read")
    sampler = MemorySampler([torch.device("cpu")], 0.0)

    class Refuse:
        def memory_info(self) -> Any:
            raise AssertionError("psutil read at a tick")

    real = sampler._rss._proc
    sampler._rss._proc = Refuse()
    ours = sampler.sample()[0].rss_bytes
    theirs = psutil.Process().memory_info().rss
    assert abs(ours - theirs) < 16 << 20  # the same figure, give or take the memory in between
    sampler._rss._proc = real
    sampler.stop()  # never started: closes the file; later samples go through psutil
    assert sampler.sample()[0].rss_bytes > 0


def test_a_c_entry_point_that_fails_sends_every_call_through_the_helpers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Another torch may change an entry point under torch.cuda's helpers: the timer must fall
    # back to the helpers, not lose the GPU times.
    monkeypatch.setattr(step_timer, "READ_EVERY_S", 0.0)
    torch = _c_entry_points(_fake_torch([]))

    def changed(*_: Any) -> None:
        raise TypeError("record(): incompatible function arguments")

    torch._C._CudaEventBase.record = changed
    timer = _fake_timer(torch)
    _run_steps(timer, 10, read=False)
    assert not timer._cuda.direct
    steps = timer.flush()
    assert [s.step for s in steps] == list(range(10))
    assert all(s.gpu_ms == 1.0 for s in steps[1:])


def test_fast_steps_are_read_once_a_few_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    # Steps of microseconds: the period alone would hold an event for each step in it.
    monkeypatch.setattr(step_timer, "READ_EVERY_S", 3600.0)
    timer = _fake_timer(_c_entry_points(_fake_torch([])))
    out = _run_steps(timer, 300)
    assert _FakeEvent.made <= step_timer.READ_PENDING + 4  # the pool is reused
    assert len(out) >= 300 - step_timer.READ_PENDING - 2
    assert [s.step for s in out + timer.flush()] == list(range(300))
