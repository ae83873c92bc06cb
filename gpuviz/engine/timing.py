"""Step timing: host wall time between device synchronizations, and CUDA-event GPU time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class StepTimer:
    """Times one step at a time on ``device``.

    On CUDA, the device is synchronized before and after the step (so ``wall_ms`` covers the
    work, not only its launch), and two reusable CUDA events recorded on the current stream
    give ``gpu_ms``. On the CPU there is nothing to synchronize and ``gpu_ms`` is None.
    """

    def __init__(self, device: Any) -> None:
        import torch

        self.device = device
        self.cuda = device.type == "cuda"
        self._torch = torch
        if self.cuda:
            self._start = torch.cuda.Event(enable_timing=True)
            self._end = torch.cuda.Event(enable_timing=True)

    def synchronize(self) -> None:
        """Wait for the device (no-op on the CPU)."""
        if self.cuda:
            self._torch.cuda.synchronize(self.device)

    def time(self, fn: Callable[[], Any]) -> tuple[Any, float, float | None]:
        """Run ``fn`` once; return ``(result, wall_ms, gpu_ms)``."""
        if not self.cuda:
            t0 = time.perf_counter()
            result = fn()
            return result, (time.perf_counter() - t0) * 1e3, None
        sync = self._torch.cuda.synchronize
        sync(self.device)
        t0 = time.perf_counter()
        self._start.record()
        result = fn()
        self._end.record()
        sync(self.device)
        wall_ms = (time.perf_counter() - t0) * 1e3
        return result, wall_ms, float(self._start.elapsed_time(self._end))
