"""The wall and GPU time of each step of a ``gpuviz profile`` run, at a few µs a step.

:class:`StepTimer` times each step: wall time between boundaries (``perf_counter``), and GPU
time between CUDA events recorded on the current stream at each boundary. It never waits for
the GPU: an event is read once it has completed (``query()``), so a step's ``StepTimed`` comes
a step or two late, and the last ones when the run ends.

This runs on the script's own thread at every step, so its cost is the script's
(``benchmarks/step_cost.py``). Through ``torch.cuda``'s public helpers one boundary cost about
32 µs on an H100 host: ``current_stream()`` builds a new ``Stream`` object each time, and
``current_device()``, ``is_current_stream_capturing()``, ``Event.record``/``query`` each add a
Python layer. :class:`_CudaCalls` calls the C entry points under them once they are found (the
same ones those helpers call), keeps one ``Stream`` per stream, and reads the events only every
:data:`READ_EVERY_S`; a torch without them gets the public helpers.
"""

from __future__ import annotations

import math
import os
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

READ_EVERY_S = 0.05
"""Completed events are read at most this often (each read is a ``query`` per pending step);
the app's live plot redraws at ~30 Hz, so a step shows at most this much later."""

READ_PENDING = 8
"""...or once this many steps wait: steps of microseconds would otherwise hold a CUDA event
each for the whole period (the pool keeps what it made)."""


_NOT_YET = object()


@dataclass
class TimedStep:
    """One step's figures (``StepTimed``'s fields)."""

    step: int
    wall_ms: float
    gpu_ms: float | None
    profiled: bool


class _CudaCalls:
    """The CUDA calls of a boundary, through torch's C entry points where this torch has them."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        c = torch._C
        base = getattr(c, "_CudaEventBase", None)
        # Each is what the public helper calls after its checks (torch 2.x); any one missing
        # sends that call through the helper.
        self.get_device = getattr(c, "_cuda_getDevice", None)
        self.capturing = getattr(c, "_cuda_isCurrentStreamCapturing", None)
        self.get_stream = getattr(c, "_cuda_getCurrentStream", None)
        self.record_ = getattr(base, "record", None)
        self.query_ = getattr(base, "query", None)
        self.elapsed_ = getattr(base, "elapsed_time", None)
        self._streams: dict[Any, Any] = {}

    @property
    def direct(self) -> bool:
        """Whether any call goes to a C entry point."""
        return any(
            f is not None
            for f in (
                self.get_device,
                self.capturing,
                self.get_stream,
                self.record_,
                self.query_,
                self.elapsed_,
            )
        )

    def to_helpers(self) -> None:
        """Send every call through ``torch.cuda``'s helpers from now on (an entry point failed:
        another torch may have changed one; the helpers are the stable API)."""
        self.get_device = self.capturing = self.get_stream = None
        self.record_ = self.query_ = self.elapsed_ = None

    def current_device(self) -> int:
        f = self.get_device
        return int(f()) if f is not None else int(self.torch.cuda.current_device())

    def is_capturing(self) -> bool:
        f = self.capturing
        return bool(f()) if f is not None else bool(self.torch.cuda.is_current_stream_capturing())

    def current_stream(self, index: int) -> Any:
        f = self.get_stream
        if f is None:
            return self.torch.cuda.current_stream(index)
        key = f(index)  # (stream id, device index, device type): cheap, no Stream made
        stream = self._streams.get(key)
        if stream is None:
            stream = self._streams[key] = self.torch.cuda.Stream(
                stream_id=key[0], device_index=key[1], device_type=key[2]
            )
        return stream

    def record(self, event: Any, stream: Any) -> None:
        if self.record_ is not None:
            self.record_(event, stream)
        else:
            event.record(stream)

    def query(self, event: Any) -> bool:
        return bool(self.query_(event) if self.query_ is not None else event.query())

    def elapsed_ms(self, start: Any, end: Any) -> float:
        if self.elapsed_ is not None:
            return float(self.elapsed_(start, end))
        return float(start.elapsed_time(end))


class StepTimer:
    """Wall and GPU time of each step, read without waiting for the GPU.

    Call :meth:`end` at each boundary, then :meth:`ready` for the steps whose GPU time is
    known; :meth:`flush` at the end waits for the last ones.

    Parameters
    ----------
    t0 : float
        ``time.perf_counter()`` when the first step started.
    """

    def __init__(self, t0: float) -> None:
        self._last_t = t0
        self._start: tuple[Any, Any] | None = None  # (event, device index)
        self._pending: deque[tuple[int, float, Any, Any, bool]] = deque()
        self._free: dict[int, list[Any]] = {}
        self._cuda: _CudaCalls | None = None
        self._read_at = -math.inf  # the first boundary reads
        # GPUVIZ_PROFILE_EVENTS=0 (an experiment switch, benchmarks/bench_profile.py): no
        # CUDA events at the boundaries, so no GPU time per step.
        self._events = os.environ.get("GPUVIZ_PROFILE_EVENTS") != "0"

    def _cuda_event(self, device: Any) -> tuple[Any, Any] | None:
        """Record an event on ``device``'s current stream, or None (CPU, capture, no CUDA)."""
        if not self._events:
            return None
        cuda = self._cuda
        if cuda is None:
            import torch

            cuda = self._cuda = _CudaCalls(torch)
        try:
            return self._record(cuda, device)
        except Exception:  # never let timing break the script
            if not cuda.direct:
                return None
        cuda.to_helpers()
        try:
            return self._record(cuda, device)
        except Exception:
            return None

    def _record(self, cuda: _CudaCalls, device: Any) -> tuple[Any, Any] | None:
        if device is None:
            if not cuda.torch.cuda.is_initialized():
                return None
            index = cuda.current_device()
        elif getattr(device, "type", None) == "cuda":
            index = device.index if device.index is not None else cuda.current_device()
        else:
            return None
        if cuda.is_capturing():
            return None  # a CUDA graph being captured: timing events are not allowed
        stream = cuda.current_stream(index)
        free = self._free.get(index)
        ev = free.pop() if free else cuda.torch.cuda.Event(enable_timing=True)
        cuda.record(ev, stream)
        return ev, index

    def end(self, step: int, profiled: bool, device: Any) -> None:
        """Step ``step`` ended now."""
        now = time.perf_counter()
        wall_ms = (now - self._last_t) * 1e3
        self._last_t = now
        end = self._cuda_event(device)
        self._pending.append((step, wall_ms, self._start, end, profiled))
        self._start = end

    def restart(self, device: Any) -> None:
        """The next step starts now (after gpuviz's own work at a boundary: a trace export)."""
        self._last_t = time.perf_counter()
        if self._start is not None:
            fresh = self._cuda_event(device)
            if fresh is not None:
                self._start = fresh

    def ready(self) -> list[TimedStep]:
        """The steps whose times are known, in order; never blocks. Steps with CUDA events are
        read every :data:`READ_EVERY_S`, or sooner once :data:`READ_PENDING` wait."""
        pending = self._pending
        if pending and pending[0][3] is not None and len(pending) < READ_PENDING:
            now = time.perf_counter()
            if now - self._read_at < READ_EVERY_S:
                return []
            self._read_at = now
        return self._collect(block=False)

    def flush(self) -> list[TimedStep]:
        """Every step still pending (waits for the GPU)."""
        return self._collect(block=True)

    @staticmethod
    def _read(cuda: _CudaCalls, start: Any, end: Any, block: bool) -> Any:
        """The step's GPU ms, None (two devices), or _NOT_YET when not blocking."""
        if not cuda.query(end[0]):
            if not block:
                return _NOT_YET
            end[0].synchronize()
        return cuda.elapsed_ms(start[0], end[0]) if start[1] == end[1] else None

    def _collect(self, block: bool) -> list[TimedStep]:
        out: list[TimedStep] = []
        cuda = self._cuda
        while self._pending:
            step, wall_ms, start, end, profiled = self._pending[0]
            gpu_ms = None
            if start is not None and end is not None and cuda is not None:
                try:
                    gpu_ms = self._read(cuda, start, end, block)
                except Exception:
                    if cuda.direct:
                        cuda.to_helpers()
                        try:
                            gpu_ms = self._read(cuda, start, end, block)
                        except Exception:
                            gpu_ms = None
                if gpu_ms is _NOT_YET:
                    break
            self._pending.popleft()
            # The start event of a step is the end event of the one before: free to reuse
            # once both are read (an event is recorded again only after it was read).
            if start is not None and start is not self._start:
                if not any(p[2] is start for p in self._pending):
                    self._free.setdefault(start[1], []).append(start[0])
            out.append(TimedStep(step, wall_ms, gpu_ms, profiled))
        return out


__all__ = ["READ_EVERY_S", "READ_PENDING", "StepTimer", "TimedStep"]
