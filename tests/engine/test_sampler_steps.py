"""The memory sampler stays out of timed steps: ticks move between steps while steps run."""

from __future__ import annotations

import math
import threading
import time
from pathlib import Path

import pytest
import torch

from gpuviz.engine import inprocess
from gpuviz.engine import sampler as sampler_mod
from gpuviz.engine.events import Finished, StepTimed
from gpuviz.engine.runner import Runner, RunRequest
from gpuviz.engine.sampler import MemorySampler
from gpuviz.engine.timing import StepTimer


def _wait_for(pred, timeout_s: float = 10.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.005)
    return False


def test_step_timer_calls_between_steps_after_the_step_only() -> None:
    calls: list[str] = []
    timer = StepTimer(torch.device("cpu"), between_steps=lambda: calls.append("between"))
    timer.time(lambda: calls.append("step"))
    timer.time(lambda: calls.append("step"))
    assert calls == ["step", "between", "step", "between"]


def test_between_steps_samples_only_when_a_tick_is_due() -> None:
    s = MemorySampler([torch.device("cpu")], time.perf_counter(), interval_s=3600.0)
    s.sample()
    s.drain()
    s.between_steps()
    assert s.drain() == []  # the last tick is recent
    s._last = -math.inf
    s.between_steps()
    assert len(s.drain()) == 1


def test_no_thread_tick_while_steps_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # A deferral far longer than the test: while steps run, only between_steps may sample.
    monkeypatch.setattr(sampler_mod, "MAX_DEFER_S", 30.0)
    s = MemorySampler([torch.device("cpu")], time.perf_counter(), interval_s=0.005)
    ticks_from: list[str] = []
    real = s._sample_locked

    def spy() -> list:
        ticks_from.append(threading.current_thread().name)
        return real()

    monkeypatch.setattr(s, "_sample_locked", spy)
    try:
        with s.stepping():
            s.start()  # one sample at once, in this thread
            time.sleep(0.2)  # about 40 periods
            s.between_steps()  # due: taken here, in the steps' thread
    except BaseException:
        s.stop()
        raise
    assert ticks_from == [threading.current_thread().name] * 2
    try:  # steps over: the thread samples again
        assert _wait_for(lambda: len(ticks_from) > 2), "the sampler did not resume"
        assert "gpuviz-memory-sampler" in ticks_from[2:]
    finally:
        s.stop()


def test_a_long_step_is_still_sampled(monkeypatch: pytest.MonkeyPatch) -> None:
    # Steps run but no boundary comes: the thread ticks after a period plus the deferral.
    monkeypatch.setattr(sampler_mod, "MAX_DEFER_S", 0.01)
    s = MemorySampler([torch.device("cpu")], time.perf_counter(), interval_s=0.005)
    with s.stepping():
        s.start()
        try:
            assert _wait_for(lambda: len(s._queue) >= 4), "no samples during a long step"
        finally:
            s.stop()


def _plan_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "countplan.py").write_text(
        "from gpuviz.workloads.base import Plan, Strategy\n"
        "calls = {'pure': 0, 'counted': 0}\n"
        "def step(name):\n"
        "    def f():\n"
        "        calls[name] += 1\n"
        "    return f\n"
        "def build(ctx):\n"
        "    return Plan([Strategy('pure', step('pure'), repeatable=True),\n"
        "                 Strategy('counted', step('counted'))], warmup_steps=2)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))


def _run_counting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: bool) -> dict:
    import importlib

    from gpuviz.workloads.registry import WorkloadSpec

    _plan_module(tmp_path, monkeypatch)
    mod = importlib.import_module("countplan")
    mod.calls.update(pure=0, counted=0)
    spec = WorkloadSpec(name="count", title="t", entry="countplan:build")
    req = RunRequest(
        "count", device="cpu", steps=3, profile=profile, out=str(tmp_path / "t.json.gz")
    )
    events = list(Runner(req, spec=spec))
    assert isinstance(events[-1], Finished), events[-1]
    assert [e.label for e in events if isinstance(e, StepTimed) and not e.profiled] == (
        ["pure"] * 3 + ["counted"] * 3
    )
    return dict(mod.calls)


@pytest.mark.parametrize("profile", [False, True])
def test_a_repeatable_step_is_warmed_again_right_before_its_timed_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, profile: bool
) -> None:
    calls = _run_counting(tmp_path, monkeypatch, profile)
    profiled = 1 if profile else 0
    # 2 warm-ups, the profiled step, 1 more warm-up, 3 timed; the counted one has no extra call
    assert calls == {"pure": 2 + profiled + 1 + 3, "counted": 2 + profiled + 3}


def test_no_warm_up_again_after_a_long_warm_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inprocess, "REWARM_MAX_S", 0.0)
    assert _run_counting(tmp_path, monkeypatch, False) == {"pure": 5, "counted": 5}
