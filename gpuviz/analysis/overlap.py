"""Overlap on each GPU: copies hidden behind compute, and kernels of several streams at once.

- compute/copy: the time during which, on one device, a kernel and a copy run at once.
- multi-stream: the time during which kernels of two or more streams of one device run at once.

Both come per device and as sums over devices (``gpuviz summary``'s ``overlap``).
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuviz.analysis.activity import GpuActivity, gpu_activity, groups, rank_value
from gpuviz.analysis.intervals import covered_length_at_least, intersection_length
from gpuviz.trace.model import Kind, Trace


@dataclass(frozen=True)
class DeviceOverlap:
    """Overlap figures of one GPU.

    Attributes
    ----------
    rank : int or None
        None for a lone file.
    device : int
        The GPU.
    compute_copy_ns : int
        Time during which a kernel and a copy run at once on it.
    multi_stream_ns : int
        Time during which kernels of two or more of its streams run at once.
    """

    rank: int | None
    device: int
    compute_copy_ns: int
    multi_stream_ns: int


def device_overlap(
    trace: Trace,
    activity: GpuActivity | None = None,
    window_ns: tuple[int, int] | None = None,
) -> list[DeviceOverlap]:
    """Overlap figures of every GPU that ran anything, ordered by (rank, device).

    Parameters
    ----------
    trace : Trace
        The trace.
    activity : GpuActivity, optional
        ``gpu_activity(trace)`` when the caller already has it.
    window_ns : (t0_ns, t1_ns), optional
        Count only the time inside this window.

    Returns
    -------
    list of DeviceOverlap
    """
    a = gpu_activity(trace) if activity is None else activity
    if window_ns is not None:
        a = a.clipped(*window_ns)
    out = []
    for (rank, device), idx in groups(a.rank, a.device):
        # Only the columns used, of only the kernels and copies (taking every column of the
        # device's rows, then of each kind, was a third of the summary's overlap time).
        kind = a.kind[idx]
        k, c = idx[kind == Kind.KERNEL], idx[kind == Kind.MEMCPY]
        k_start, k_end = a.start_ns[k], a.end_ns[k]
        compute_copy = intersection_length((k_start, k_end), (a.start_ns[c], a.end_ns[c]))
        per_stream = [(k_start[i], k_end[i]) for _, i in groups(a.stream[k])]
        multi = covered_length_at_least(per_stream, 2) if len(per_stream) > 1 else 0
        out.append(DeviceOverlap(rank_value(rank), device, compute_copy, multi))
    return out


def overlap_totals(trace: Trace, activity: GpuActivity | None = None) -> tuple[int, int]:
    """``(compute_copy_ns, multi_stream_ns)`` summed over devices."""
    rows = device_overlap(trace, activity)
    return sum(r.compute_copy_ns for r in rows), sum(r.multi_stream_ns for r in rows)
