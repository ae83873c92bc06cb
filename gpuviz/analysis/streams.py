"""Per-stream and per-device figures: counts, kernel time, copied bytes, busy time.

``busy`` is the union of kernel, copy and set intervals (DESIGN.md, ``gpuviz summary``), so
overlapping work is counted once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuviz.analysis.activity import GpuActivity, gpu_activity, groups, rank_value
from gpuviz.analysis.intervals import union_length
from gpuviz.trace.model import Kind, Trace


@dataclass(frozen=True)
class StreamStats:
    """Figures of one GPU stream.

    Attributes
    ----------
    rank : int or None
        None for a lone file.
    device, stream : int
        The GPU and the stream id.
    kernels, memcpy, memset : int
        How many kernels, copies (peer-to-peer included) and sets ran on it.
    kernel_ns : int
        Sum of kernel durations.
    memcpy_bytes : int
        Sum of the copies' ``bytes`` (those that have it).
    busy_ns : int
        Union of its kernel, copy and set intervals.
    """

    rank: int | None
    device: int
    stream: int
    kernels: int
    kernel_ns: int
    memcpy: int
    memcpy_bytes: int
    memset: int
    busy_ns: int


@dataclass(frozen=True)
class DeviceStats:
    """Figures of one GPU (all its streams).

    Attributes
    ----------
    rank : int or None
        None for a lone file.
    device : int
        The GPU.
    busy_ns : int
        Union of its kernel, copy and set intervals on every stream.
    utilization : float
        ``busy_ns / span_ns`` of the whole trace (0 when the span is 0).
    """

    rank: int | None
    device: int
    busy_ns: int
    utilization: float


def span_ns(trace: Trace) -> int:
    """Time from the earliest start to the latest end of any slice (0 when there is none)."""
    s = trace.slices
    if len(s) == 0:
        return 0
    return trace.slices_end_ns - int(s.start_ns.min())  # the end: found once, in blocks


def stream_stats(trace: Trace, activity: GpuActivity | None = None) -> list[StreamStats]:
    """Figures of every GPU stream, ordered by (rank, device, stream).

    Parameters
    ----------
    trace : Trace
        The trace.
    activity : GpuActivity, optional
        ``gpu_activity(trace)`` when the caller already has it.

    Returns
    -------
    list of StreamStats
    """
    a = gpu_activity(trace) if activity is None else activity
    nbytes = trace.slices.bytes  # read for the copies only: 8 bytes a kernel less at the peak
    out = []
    for (rank, device, stream), idx in groups(a.rank, a.device, a.stream):
        kind = a.kind[idx]
        kern = kind == Kind.KERNEL
        copy = kind == Kind.MEMCPY
        b = nbytes[a.rows[idx[copy]]].astype(np.int64)
        out.append(
            StreamStats(
                rank=rank_value(rank),
                device=device,
                stream=stream,
                kernels=int(kern.sum()),
                kernel_ns=int((a.end_ns[idx][kern] - a.start_ns[idx][kern]).sum()),
                memcpy=int(copy.sum()),
                memcpy_bytes=int(b[b >= 0].sum()),
                memset=int((kind == Kind.MEMSET).sum()),
                busy_ns=union_length(a.start_ns[idx], a.end_ns[idx]),
            )
        )
    return out


def device_stats(trace: Trace, activity: GpuActivity | None = None) -> list[DeviceStats]:
    """Busy time and utilization of every GPU, ordered by (rank, device).

    Parameters
    ----------
    trace : Trace
        The trace.
    activity : GpuActivity, optional
        ``gpu_activity(trace)`` when the caller already has it.

    Returns
    -------
    list of DeviceStats
    """
    a = gpu_activity(trace) if activity is None else activity
    span = span_ns(trace)
    out = []
    for (rank, device), idx in groups(a.rank, a.device):
        busy = union_length(a.start_ns[idx], a.end_ns[idx])
        out.append(DeviceStats(rank_value(rank), device, busy, busy / span if span else 0.0))
    return out
