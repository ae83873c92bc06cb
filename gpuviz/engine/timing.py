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

    ``between_steps``, when given (the memory sampler's
    :meth:`~gpuviz.engine.sampler.MemorySampler.between_steps`), is called after each step that
    returns, outside the timed region: the sampler's ticks land there, not inside a step.
    """

    def __init__(self, device: Any, between_steps: Callable[[], None] | None = None) -> None:
        import torch

        self.device = device
        self._between_steps = between_steps
        self.cuda = device.type == "cuda"
        self._torch = torch
        if self.cuda:
            self._start = torch.cuda.Event(enable_timing=True)
            self._end = torch.cuda.Event(enable_timing=True)

    def synchronize(self) -> None:
        """Wait for the device (no-op on the CPU)."""
        if self.cuda:
            self._torch.cuda.synchronize(self.device)

    def time(self, fn: Callable[[], Any]) -> tuple[float, float | None]:
        """Run ``fn`` once; return ``(wall_ms, gpu_ms)``.

        The step's result is dropped inside the timed region, as in a plain loop
        (``for _ in range(n): fn()``): its memory is freed in the step that made it, and is
        reused by the next one. Keeping it alive until the next step would change both (a
        10M-element step read 15% slower from the alternating blocks; a for loop's 10k
        small tensors were freed outside the timing).
        """
        if not self.cuda:
            t0 = time.perf_counter()
            fn()
            wall_ms, gpu_ms = (time.perf_counter() - t0) * 1e3, None
        else:
            sync = self._torch.cuda.synchronize
            sync(self.device)
            t0 = time.perf_counter()
            self._start.record()
            fn()
            self._end.record()
            sync(self.device)
            wall_ms = (time.perf_counter() - t0) * 1e3
            gpu_ms = float(self._start.elapsed_time(self._end))
        if self._between_steps is not None:
            self._between_steps()
        return wall_ms, gpu_ms
