"""Figures of a time range of a trace (the GUI's range selection)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gpuviz.analysis.activity import gpu_activity, groups, rank_value
from gpuviz.analysis.intervals import union_length
from gpuviz.analysis.overlap import device_overlap
from gpuviz.trace.model import Kind, Trace


@dataclass(frozen=True)
class DeviceRange:
    """One GPU's figures inside a time range.

    Attributes
    ----------
    rank : int or None
        None for a lone file.
    device : int
        The GPU.
    busy_ns : int
        Union of its kernel, copy and set intervals, cut to the range.
    utilization : float
        ``busy_ns / duration_ns``.
    """

    rank: int | None
    device: int
    busy_ns: int
    utilization: float


@dataclass(frozen=True)
class RangeStats:
    """Figures of ``[t0_ns, t1_ns)``.

    Attributes
    ----------
    t0_ns, t1_ns : int
        The range, relative to the trace zero.
    duration_ns : int
        ``t1_ns - t0_ns``.
    kernels : int
        Kernels that overlap the range (even partly).
    kernel_ns : int
        Their durations, cut to the range, summed.
    memcpy, memset : int
        Copies and sets that overlap the range.
    busy_ns : int
        Per-device busy time in the range, summed over devices.
    compute_copy_ns, multi_stream_ns : int
        Overlap inside the range, summed over devices (see :mod:`gpuviz.analysis.overlap`).
    devices : list of DeviceRange
        Per-device figures.
    """

    t0_ns: int
    t1_ns: int
    duration_ns: int
    kernels: int
    kernel_ns: int
    memcpy: int
    memset: int
    busy_ns: int
    compute_copy_ns: int
    multi_stream_ns: int
    devices: list[DeviceRange] = field(default_factory=list)


def range_stats(trace: Trace, t0_ns: int, t1_ns: int) -> RangeStats:
    """Figures of the GPU work inside ``[t0_ns, t1_ns)``.

    Parameters
    ----------
    trace : Trace
        The trace.
    t0_ns, t1_ns : int
        The range, relative to the trace zero; swapped when given backwards.

    Returns
    -------
    RangeStats
    """
    t0, t1 = (int(t0_ns), int(t1_ns)) if t0_ns <= t1_ns else (int(t1_ns), int(t0_ns))
    duration = t1 - t0
    a = gpu_activity(trace).clipped(t0, t1)
    kern = a.kind == Kind.KERNEL
    devices = []
    for (rank, device), idx in groups(a.rank, a.device):
        busy = union_length(a.start_ns[idx], a.end_ns[idx])
        devices.append(
            DeviceRange(rank_value(rank), device, busy, busy / duration if duration else 0.0)
        )
    ov = device_overlap(trace, a)
    return RangeStats(
        t0_ns=t0,
        t1_ns=t1,
        duration_ns=duration,
        kernels=int(kern.sum()),
        kernel_ns=int((a.end_ns[kern] - a.start_ns[kern]).sum()),
        memcpy=int((a.kind == Kind.MEMCPY).sum()),
        memset=int((a.kind == Kind.MEMSET).sum()),
        busy_ns=int(np.sum([d.busy_ns for d in devices], dtype=np.int64)),
        compute_copy_ns=sum(o.compute_copy_ns for o in ov),
        multi_stream_ns=sum(o.multi_stream_ns for o in ov),
        devices=devices,
    )
