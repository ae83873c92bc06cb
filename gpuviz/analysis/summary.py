"""The figures of a whole trace: what ``gpuviz summary`` prints and the Summary view shows."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from gpuviz.analysis.activity import GpuActivity, gpu_activity
from gpuviz.analysis.kernels import KernelStats, kernel_table
from gpuviz.analysis.memory import MemorySeries, memory_series
from gpuviz.analysis.overlap import DeviceOverlap, device_overlap
from gpuviz.analysis.splits import SplitRow, find_splits
from gpuviz.analysis.streams import DeviceStats, StreamStats, device_stats, span_ns, stream_stats
from gpuviz.trace.model import Trace

TOP_KERNELS = 10


def _us(ns: float) -> float:
    return ns / 1000.0


@dataclass
class Summary:
    """Figures of one trace (all its ranks).

    Attributes
    ----------
    sources : list of str
        The files.
    events : int
        Events in the files, of every phase.
    warnings : int
        Events skipped on import.
    span_ns : int
        Earliest start to latest end of any event with a duration.
    ranks : list of int or None
        ``[None]`` for a lone file.
    streams, devices : lists
        See :mod:`gpuviz.analysis.streams`.
    top_kernels : list of KernelStats
        The 10 kernel names with the most total time.
    memory : list of MemorySeries
        GPU devices with ``[memory]`` events.
    overlap : list of DeviceOverlap
        Per-device overlap (the JSON sums them).
    splits : list of SplitRow
        DataParallel replicas, when the trace has DataParallel steps.
    warning_samples : list of str
        The first few import warnings, to show.
    """

    sources: list[str]
    events: int
    warnings: int
    span_ns: int
    ranks: list[int | None]
    streams: list[StreamStats] = field(default_factory=list)
    devices: list[DeviceStats] = field(default_factory=list)
    top_kernels: list[KernelStats] = field(default_factory=list)
    memory: list[MemorySeries] = field(default_factory=list)
    overlap: list[DeviceOverlap] = field(default_factory=list)
    splits: list[SplitRow] = field(default_factory=list)
    warning_samples: list[str] = field(default_factory=list)
    incomplete: dict[str, Any] | None = None
    """Set where ranks failed and were left out (``--cluster``: ``ranks_failed``, ``of`` and
    the ``failed`` lines); JSON ``incomplete``, absent for a whole summary."""

    @property
    def has_gpu_events(self) -> bool:
        """Whether any kernel, copy or set is in the trace."""
        return bool(self.streams)

    @property
    def compute_copy_ns(self) -> int:
        """Kernel/copy overlap summed over devices."""
        return sum(o.compute_copy_ns for o in self.overlap)

    @property
    def multi_stream_ns(self) -> int:
        """Multi-stream kernel overlap summed over devices."""
        return sum(o.multi_stream_ns for o in self.overlap)

    def to_json(self) -> dict[str, Any]:
        """The object ``gpuviz summary --json`` prints (DESIGN.md, "CLI contract")."""
        out: dict[str, Any] = {
            "sources": list(self.sources),
            "events": self.events,
            "warnings": self.warnings,
            "span_us": _us(self.span_ns),
            "ranks": list(self.ranks),
            "streams": [
                {
                    "rank": s.rank,
                    "device": s.device,
                    "stream": s.stream,
                    "kernels": s.kernels,
                    "kernel_us": _us(s.kernel_ns),
                    "memcpy": s.memcpy,
                    "memcpy_bytes": s.memcpy_bytes,
                    "memset": s.memset,
                    "busy_us": _us(s.busy_ns),
                }
                for s in self.streams
            ],
            "devices": [
                {
                    "rank": d.rank,
                    "device": d.device,
                    "busy_us": _us(d.busy_ns),
                    "utilization": d.utilization,
                }
                for d in self.devices
            ],
            "top_kernels": [
                {
                    "name": k.name,
                    "count": k.count,
                    "total_us": _us(k.total_ns),
                    "mean_us": _us(k.mean_ns),
                }
                for k in self.top_kernels
            ],
            "memory": [
                {
                    "rank": m.rank,
                    "device": m.device,
                    "peak_allocated_bytes": m.peak_allocated_bytes,
                    "peak_reserved_bytes": m.peak_reserved_bytes,
                    "from_deltas": m.from_deltas,
                }
                for m in self.memory
            ],
            "overlap": {
                "compute_copy_us": _us(self.compute_copy_ns),
                "multi_stream_us": _us(self.multi_stream_ns),
            },
        }
        if self.splits:
            out["splits"] = [r.to_json() for r in self.splits]
        if self.incomplete is not None:
            out["incomplete"] = dict(self.incomplete)
        return out


def summarize(
    trace: Trace,
    activity: GpuActivity | None = None,
    between: Callable[[], None] | None = None,
    executor: Executor | None = None,
) -> Summary:
    """Compute the figures of ``trace``.

    Parameters
    ----------
    trace : Trace
        The trace (one file or a folder of ranks).
    activity : GpuActivity, optional
        ``gpu_activity(trace)`` when the caller has it (``gpuviz summary`` shares it with the
        step windows of the MFU figures).
    between : callable, optional
        Called between the figures (``gpuviz summary`` under a memory limit gives the heap's
        freed pages back there, so that one figure's temporaries do not stay resident under
        the next's).
    executor : Executor, optional
        Where to compute the figures side by side (threads: they only read the trace, and
        most of their time is numpy work that lets go of the GIL); ``between`` is then not
        called. Default: one after the other, here.

    Returns
    -------
    Summary
    """
    if activity is None:
        activity = gpu_activity(trace)
    w = trace.warnings
    act = activity
    parts: list[Callable[[], Any]] = [
        lambda: stream_stats(trace, act),
        lambda: device_stats(trace, act),
        lambda: kernel_table(trace, limit=TOP_KERNELS, launch_info=False),
        lambda: memory_series(trace, gpu_only=True),
        lambda: device_overlap(trace, act),
    ]
    if executor is not None:
        futures = [executor.submit(part) for part in parts]
        figures = [f.result() for f in futures]
    else:
        then = between if between is not None else _nothing
        figures = []
        for part in parts:
            figures.append(part())
            then()
    streams, devices, top, memory, overlap = figures
    return Summary(
        sources=trace.sources,
        events=int(trace.event_count),
        warnings=int(getattr(w, "count", 0) or 0),
        span_ns=span_ns(trace),
        ranks=trace.rank_values(),
        streams=streams,
        devices=devices,
        top_kernels=top,
        memory=memory,
        overlap=overlap,
        splits=find_splits(trace),
        warning_samples=list(getattr(w, "samples", []) or []),
    )


def _nothing() -> None:
    pass
