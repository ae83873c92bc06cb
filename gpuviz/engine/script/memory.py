"""What a ``gpuviz profile`` session records of memory besides its trace.

- The memory sampler (:class:`~gpuviz.engine.sampler.MemorySampler`): RSS, and on CUDA the
  allocator's counters and NVML, every :data:`~gpuviz.engine.sampler.PROFILE_INTERVAL_S`, as
  ``MemorySample`` events; its peaks go into the run's result.
- With ``--memory-snapshot``, the CUDA allocator's history over the profiled windows
  (:class:`~gpuviz.engine.memory_history.MemoryHistory`), written beside the trace.

torch comes in through the session (this module imports neither it nor Qt).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuviz.engine.script.report import say


class SessionMemory:
    """A session's memory sampler and allocator history.

    Parameters
    ----------
    warnings : list of str
        The session's warnings: what goes wrong here is added to them.
    """

    def __init__(self, warnings: list[str]) -> None:
        self.warnings = warnings
        self.sampler: Any = None
        self.sampler_cuda = False
        self.history: Any = None
        self.history_done = False
        self.snapshot: str | None = None  # the allocator snapshot written

    @property
    def peaks(self) -> dict[str, dict[str, int]]:
        """The sampler's peaks by device (empty without a sampler)."""
        return self.sampler.peaks if self.sampler is not None else {}

    def start_sampler(
        self, torch: Any, device: Any, t0: float, emit: Callable[[Any], None]
    ) -> str | None:
        """(Re)start the sampler on ``device`` (None: the CPU, until a step shows the GPU).
        Returns ``cuda:N`` for a CUDA device."""
        from gpuviz.engine.sampler import PROFILE_INTERVAL_S, MemorySampler

        if os.environ.get("GPUVIZ_PROFILE_SAMPLER") == "0":
            return None  # an experiment switch (benchmarks/bench_profile.py): no samples
        if self.sampler is not None:
            self.sampler.stop()
        devices = [device] if device is not None else [torch.device("cpu")]
        self.sampler_cuda = device is not None
        label = None
        if device is not None:
            label = f"cuda:{device.index if device.index is not None else 0}"
        try:
            self.sampler = MemorySampler(devices, t0, emit=emit, interval_s=PROFILE_INTERVAL_S)
        except ImportError as exc:  # psutil missing: the run goes on without memory samples
            self.sampler = None
            if device is None:
                say(f"no memory samples: {exc}")
            return label
        self.sampler.start()
        return label

    def stop_sampler(self) -> None:
        """Stop the sampler's thread (it takes a last sample)."""
        if self.sampler is not None:
            self.sampler.stop()

    def start_history(self, torch: Any, path: Path, entries: int, cuda: bool) -> None:
        """Start recording the allocator's history (``--memory-snapshot``), or say why not."""
        from gpuviz.engine.memory_history import MemoryHistory

        self.history = MemoryHistory(path, entries)
        if not cuda:
            reason = "needs CUDA" + (
                " (the script has not used CUDA when profiling starts)"
                if torch.cuda.is_available()
                else ""
            )
        else:
            reason = self.history.start()
        if reason:
            say(f"--memory-snapshot: {reason}; no allocator snapshot")
            self.warnings.append(f"--memory-snapshot: {reason}")
            self.history_done = True

    def finish_history(self, error: BaseException | None = None) -> None:
        """Write the allocator snapshot (once; after ``error``, as it stood then)."""
        h = self.history
        if h is None or self.history_done:
            return
        self.history_done = True
        try:
            if error is not None:
                h.on_error(error)
            written = h.finish()
        except Exception as exc:
            say(f"--memory-snapshot: writing the snapshot failed: {exc}")
            return
        if written is not None:
            self.snapshot = str(written)
        if h.error:
            self.warnings.append(h.error)

    def detach(self) -> list[Any]:
        """Forget the sampler and the history without stopping them (a forked child's
        copies: the parent's threads do not exist in it); returns them, to keep alive."""
        out = [self.sampler, self.history]
        self.sampler = self.history = None
        self.history_done = True
        return out


__all__ = ["SessionMemory"]
