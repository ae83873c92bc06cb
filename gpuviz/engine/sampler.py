"""The memory sampler: a light daemon thread that reads memory at 10 Hz or more.

Each tick makes one :class:`~gpuviz.engine.events.MemorySample` per device of the run: host RSS
(psutil) always; the caching allocator's allocated/reserved/peak bytes for CUDA devices; NVML's
used memory and utilization where ``nvidia-ml-py`` finds the GPU. The thread only reads
counters, so it holds the GIL for well under a millisecond a tick.

Samples go to ``emit`` from the sampler thread (it must be thread-safe: the child process
writes them to its pipe at once), or, without ``emit``, into a queue that the Runner drains
between steps (:meth:`MemorySampler.drain`).

Keeping out of the measurement: a tick that lands inside a timed step delays it (the tick
takes the GIL while the step's thread waits in a CUDA synchronize, and NVML goes through the
same driver). Measured on an H100 (``benchmarks/overhead_probe.py``), the sampler was most of
the Runner's overhead on a 55 µs step: 1.12x bare with it, 1.06x without. A gate that held the
thread back while a step ran was not enough: the thread woke as the gate opened between two
steps, and its tick then took the GIL inside the next step. So while timed steps run
(:meth:`MemorySampler.stepping`), the ticks move to the step's own thread, between two steps
(:meth:`MemorySampler.between_steps`, which the :class:`~gpuviz.engine.timing.StepTimer` calls
outside its timing), and the thread only samples when no tick came for a period plus
:data:`MAX_DEFER_S`: inside a step that long, so that long steps are still sampled at 10 Hz or
more. Each tick also reads the allocator's figures in one call, not three.
"""

from __future__ import annotations

import collections
import contextlib
import math
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from gpuviz.engine.events import MemorySample

DEFAULT_INTERVAL_S = 0.05
"""20 Hz: twice DESIGN.md's minimum, still far below a millisecond of GIL a second."""

PROFILE_INTERVAL_S = 0.1
"""``gpuviz profile``'s rate, 10 Hz (DESIGN.md's minimum; the ticks keep to their schedule, so
it is 10 Hz on average). There nothing keeps the ticks out of the script's steps: each tick
takes the GIL from the script's thread once when it wakes and once more after each system call
it makes (the RSS read, NVML's two calls, a write of the events). Where the cores are busy a
hand-off waits for a core as well: on a loaded 2-core machine a busy loop beside the thread
lost about 8% at 20 Hz, 3% at 10 Hz (``benchmarks/step_cost.py``; noisy there)."""

MAX_DEFER_S = 0.04
"""While timed steps run, how long past its period a tick waits for a step boundary before the
thread takes it inside the step: period + deferral is under 0.1 s, so long steps keep 10 Hz."""


def _allocator_bytes(torch: Any, index: int) -> tuple[int, int, int]:
    """(allocated, reserved, peak allocated) bytes of one CUDA device, read once.

    ``torch.cuda.memory_allocated`` and its siblings each build and flatten the allocator's whole
    statistics dict in Python; one nested read gives all three for a third of the GIL time.
    """
    read = getattr(torch._C, "_cuda_memoryStats", None)
    if read is not None:
        try:
            stats = read(index)
            alloc, reserved = stats["allocated_bytes"]["all"], stats["reserved_bytes"]["all"]
            return int(alloc["current"]), int(reserved["current"]), int(alloc["peak"])
        except (KeyError, TypeError, RuntimeError):
            pass
    flat = torch.cuda.memory_stats(index)
    return (
        int(flat.get("allocated_bytes.all.current", 0)),
        int(flat.get("reserved_bytes.all.current", 0)),
        int(flat.get("allocated_bytes.all.peak", 0)),
    )


class _Rss:
    """The process's resident bytes, as psutil gives them (``statm``'s resident pages times the
    page size).

    On Linux one ``pread`` of ``/proc/self/statm``, kept open: 2 µs and one system call. psutil
    opens, reads and closes the file at each call (20 µs here), and each of those system calls
    lets the script's thread take the GIL and then hand it back to this thread.
    """

    def __init__(self, proc: Any) -> None:
        self._proc = proc
        self._fd: int | None = None
        self._page = 0
        try:
            fd = os.open(f"/proc/{os.getpid()}/statm", os.O_RDONLY)
        except (OSError, AttributeError):
            return  # not Linux: psutil
        try:
            self._page = os.sysconf("SC_PAGE_SIZE")
            int(os.pread(fd, 256, 0).split()[1])
        except (OSError, ValueError, IndexError, AttributeError):
            os.close(fd)
            return
        self._fd = fd
        self._closer = weakref.finalize(self, os.close, fd)

    def read(self) -> int:
        fd = self._fd
        if fd is not None:
            try:
                return int(os.pread(fd, 256, 0).split()[1]) * self._page
            except (OSError, ValueError, IndexError):
                self.close()
        return int(self._proc.memory_info().rss)

    def close(self) -> None:
        if self._fd is not None:
            self._fd = None
            self._closer()


class _Nvml:
    """NVML handles of the run's CUDA devices, or nothing where NVML is not available."""

    def __init__(self, cuda_indices: list[int]) -> None:
        self.handles: dict[int, Any] = {}
        if not cuda_indices:
            return
        try:
            import pynvml

            pynvml.nvmlInit()
        except Exception:  # no nvidia-ml-py, or no driver: the NVML fields are omitted
            return
        self._nvml = pynvml
        import torch

        for i in cuda_indices:
            handle = None
            try:
                uuid = str(torch.cuda.get_device_properties(i).uuid)
                handle = pynvml.nvmlDeviceGetHandleByUUID(
                    uuid if uuid.startswith("GPU-") else "GPU-" + uuid
                )
            except Exception:
                try:  # without a UUID, trust the index when no remapping is set
                    if not os.environ.get("CUDA_VISIBLE_DEVICES"):
                        handle = pynvml.nvmlDeviceGetHandleByIndex(i)
                except Exception:
                    handle = None
            if handle is not None:
                self.handles[i] = handle

    def read(self, index: int) -> tuple[int | None, float | None]:
        handle = self.handles.get(index)
        if handle is None:
            return None, None
        used: int | None
        util: float | None
        try:
            used = int(self._nvml.nvmlDeviceGetMemoryInfo(handle).used)
        except Exception:
            used = None
        try:
            util = float(self._nvml.nvmlDeviceGetUtilizationRates(handle).gpu)
        except Exception:
            util = None
        return used, util

    def close(self) -> None:
        if self.handles:
            try:
                self._nvml.nvmlShutdown()
            except Exception:
                pass
            self.handles = {}


class MemorySampler:
    """Samples memory of ``devices`` (``torch.device`` objects) every ``interval_s`` seconds.

    Parameters
    ----------
    devices : list of torch.device
        The run's devices; CPU devices get RSS only.
    t0 : float
        ``time.perf_counter()`` at ``Started``; ``t_s`` counts from it.
    emit : callable, optional
        Called with each sample from the sampler thread (thread-safe sinks only).
    interval_s : float
        Seconds between ticks.
    """

    def __init__(
        self,
        devices: list[Any],
        t0: float,
        emit: Callable[[MemorySample], None] | None = None,
        interval_s: float = DEFAULT_INTERVAL_S,
    ) -> None:
        import psutil

        self._rss = _Rss(psutil.Process())
        self._devices = devices
        self._t0 = t0
        self._emit = emit
        self._interval_s = interval_s
        self._queue: collections.deque[MemorySample] = collections.deque()
        self._stop = threading.Event()
        # One tick at a time: the thread's, or the step thread's between two steps.
        self._lock = threading.Lock()
        self._last = -math.inf  # time.monotonic() of the last tick
        self._stepping = 0  # nested stepping() contexts
        self._thread: threading.Thread | None = None
        self._cuda = [d.index if d.index is not None else 0 for d in devices if d.type == "cuda"]
        self._nvml: _Nvml | None = None
        self.peaks: dict[str, dict[str, int]] = {}

    def start(self) -> None:
        """Start the thread (takes one sample at once)."""
        self._nvml = _Nvml(self._cuda)
        self.sample()
        self._thread = threading.Thread(
            target=self._loop, name="gpuviz-memory-sampler", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and wait for it (idempotent); takes a last sample."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
            self.sample()
        if self._nvml is not None:
            self._nvml.close()
            self._nvml = None
        self._rss.close()  # a later sample() reads through psutil

    @property
    def running(self) -> bool:
        """Whether the thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    @contextlib.contextmanager
    def stepping(self) -> Iterator[None]:
        """While timed steps run: ticks are taken between steps, by :meth:`between_steps`.

        The thread then takes a tick only when none came for a period plus
        :data:`MAX_DEFER_S` (a step that long is sampled inside).
        """
        self._stepping += 1
        try:
            yield
        finally:
            self._stepping -= 1

    def between_steps(self) -> None:
        """Take a tick now if one is due (call it from the steps' thread, outside timing)."""
        if time.monotonic() - self._last < self._interval_s:
            return
        if self._lock.acquire(blocking=False):  # else the thread is sampling right now
            try:
                self._sample_locked()
            except Exception:  # a failing read must never fail the run
                pass
            finally:
                self._lock.release()

    def _loop(self) -> None:
        wait = self._interval_s
        while not self._stop.wait(wait):
            due = self._last + self._interval_s + (MAX_DEFER_S if self._stepping else 0.0)
            # At most a period: the steps may end meanwhile, and the deferral with them.
            wait = min(due - time.monotonic(), self._interval_s)
            if wait > 0:  # a tick came meanwhile, or steps run and may take it yet
                continue
            try:
                self.sample()
            except Exception:  # a failing read must never kill the run
                pass
            # From the tick's start: the rate is the interval's, however long the tick took.
            wait = max(self._last + self._interval_s - time.monotonic(), 0.0)

    def sample(self) -> list[MemorySample]:
        """Take one sample of every device now and deliver it."""
        with self._lock:
            return self._sample_locked()

    def _sample_locked(self) -> list[MemorySample]:
        self._last = time.monotonic()
        t_s = time.perf_counter() - self._t0
        rss = self._rss.read()
        out: list[MemorySample] = []
        for d in self._devices:
            name = str(d)
            if d.type == "cuda":
                import torch

                i = d.index if d.index is not None else 0
                used, util = self._nvml.read(i) if self._nvml is not None else (None, None)
                allocated, reserved, peak = _allocator_bytes(torch, i)
                s = MemorySample(
                    t_s=t_s,
                    device=f"cuda:{i}",
                    rss_bytes=rss,
                    allocated_bytes=allocated,
                    reserved_bytes=reserved,
                    peak_allocated_bytes=peak,
                    nvml_used_bytes=used,
                    utilization_pct=util,
                )
            else:
                s = MemorySample(t_s=t_s, device=name, rss_bytes=rss)
            self._track_peaks(s)
            out.append(s)
        for s in out:
            if self._emit is not None:
                self._emit(s)
            else:
                self._queue.append(s)
        return out

    def _track_peaks(self, s: MemorySample) -> None:
        peaks = self.peaks.setdefault(s.device, {})
        for key, value in (
            ("peak_rss_bytes", s.rss_bytes),
            ("peak_allocated_bytes", s.peak_allocated_bytes),
            ("peak_reserved_bytes", s.reserved_bytes),
            ("peak_nvml_used_bytes", s.nvml_used_bytes),
        ):
            if value is not None and value > peaks.get(key, -1):
                peaks[key] = value

    def drain(self) -> list[MemorySample]:
        """The samples queued since the last drain (when there is no ``emit``)."""
        out = []
        while self._queue:
            out.append(self._queue.popleft())
        return out
