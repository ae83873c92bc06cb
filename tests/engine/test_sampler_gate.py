"""The memory sampler stays out of timed steps: StepTimer closes its gate, the sampler waits."""

from __future__ import annotations

import time

import pytest
import torch

from gpuviz.engine import sampler as sampler_mod
from gpuviz.engine.sampler import MemorySampler
from gpuviz.engine.timing import StepTimer


def _wait_for(pred, timeout_s: float = 10.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.005)
    return False


def test_step_timer_closes_the_gate_during_the_step_only() -> None:
    s = MemorySampler([torch.device("cpu")], time.perf_counter())
    timer = StepTimer(torch.device("cpu"), gate=s.gate)
    seen = []
    timer.time(lambda: seen.append(s.gate.is_set()))
    assert seen == [False]
    assert s.gate.is_set()


def test_the_gate_reopens_when_the_step_raises() -> None:
    s = MemorySampler([torch.device("cpu")], time.perf_counter())
    timer = StepTimer(torch.device("cpu"), gate=s.gate)

    def boom() -> None:
        raise ValueError("step failed")

    with pytest.raises(ValueError):
        timer.time(boom)
    assert s.gate.is_set()


def test_no_tick_while_the_gate_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    # A deferral far longer than the test: a closed gate must hold every tick back.
    monkeypatch.setattr(sampler_mod, "MAX_DEFER_S", 30.0)
    s = MemorySampler([torch.device("cpu")], time.perf_counter(), interval_s=0.005)
    s.gate.clear()
    s.start()  # takes one sample at once, in this thread
    try:
        time.sleep(0.2)  # about 40 periods
        assert len(s.drain()) == 1
        s.gate.set()
        assert _wait_for(lambda: len(s._queue) > 0), "the sampler did not resume"
    finally:
        s.gate.set()
        s.stop()


def test_a_long_step_is_still_sampled(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the gate closed for good, ticks still come, one per period plus the deferral.
    monkeypatch.setattr(sampler_mod, "MAX_DEFER_S", 0.01)
    s = MemorySampler([torch.device("cpu")], time.perf_counter(), interval_s=0.005)
    s.gate.clear()
    s.start()
    try:
        assert _wait_for(lambda: len(s._queue) >= 4), "no samples during a long step"
    finally:
        s.stop()
