"""``gpuviz profile``'s memory recording beside the trace (:mod:`gpuviz.engine.script.memory`)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch

from gpuviz.engine.events import MemorySample
from gpuviz.engine.script.memory import SessionMemory


def test_the_sampler_samples_the_cpu_until_a_step_shows_the_device() -> None:
    warnings: list[str] = []
    mem = SessionMemory(warnings)
    got: list[Any] = []
    try:
        assert mem.start_sampler(torch, None, time.perf_counter(), got.append) is None
        assert mem.sampler is not None and not mem.sampler_cuda
        assert mem.sampler.running
    finally:
        mem.stop_sampler()
    samples = [e for e in got if isinstance(e, MemorySample)]
    assert samples and all(s.device == "cpu" and s.rss_bytes > 0 for s in samples)
    assert "cpu" in mem.peaks and not warnings


def test_without_cuda_the_history_is_refused_once_with_the_reason(tmp_path: Path) -> None:
    warnings: list[str] = []
    mem = SessionMemory(warnings)
    mem.start_history(torch, tmp_path / "s.memory.pickle", 1000, cuda=False)
    assert warnings and warnings[0].startswith("--memory-snapshot: needs CUDA")
    mem.finish_history()  # nothing recorded: nothing written, no second warning
    assert mem.snapshot is None and len(warnings) == 1


def test_a_forked_childs_copy_forgets_the_parents_threads() -> None:
    mem = SessionMemory([])
    try:
        mem.start_sampler(torch, None, time.perf_counter(), lambda e: None)
        sampler = mem.sampler
        kept = mem.detach()
        assert kept[0] is sampler and mem.sampler is None and mem.history_done
        mem.stop_sampler()  # the child's stop touches nothing of the parent's
        assert sampler.running
    finally:
        sampler.stop()
