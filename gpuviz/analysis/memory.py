"""Allocator memory over time, per (rank, device), from ``[memory]`` events.

Newer traces carry ``Total Allocated``/``Total Reserved`` after each event. 2021-era traces carry
only ``Bytes`` deltas: there, allocated memory is the running sum of the deltas from the trace
start (what was allocated before the trace began is unknown), and reserved memory is unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.activity import groups, rank_value
from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]

DEVICE_TYPE_CPU = 0
DEVICE_TYPE_GPU = 1  # CUDA, and ROCm too


@dataclass
class MemorySeries:
    """Allocator memory of one device over time.

    Attributes
    ----------
    rank : int or None
        None for a lone file.
    device_type : int
        0 CPU, 1 GPU.
    device : int
        ``Device Id``.
    ts_ns : int64 array
        Event times, relative to the trace zero, ascending.
    allocated_bytes : int64 array
        Allocated memory after each event.
    reserved_bytes : int64 array or None
        Reserved memory after each event; None when the trace does not say (2021 era).
    from_deltas : bool
        True when ``allocated_bytes`` is the running sum of ``Bytes`` deltas.
    peak_allocated_bytes : int
        The largest allocated figure (0 for a running sum that never rises above its start).
    peak_reserved_bytes : int or None
        The largest reserved figure, or None.
    """

    rank: int | None
    device_type: int
    device: int
    ts_ns: I64
    allocated_bytes: I64
    reserved_bytes: I64 | None
    from_deltas: bool
    peak_allocated_bytes: int
    peak_reserved_bytes: int | None


def memory_series(trace: Trace, gpu_only: bool = True) -> list[MemorySeries]:
    """Memory over time of each device that has ``[memory]`` events.

    Parameters
    ----------
    trace : Trace
        The trace.
    gpu_only : bool
        Keep only GPU devices (``Device Type`` 1), as ``gpuviz summary`` does.

    Returns
    -------
    list of MemorySeries
        Ordered by (rank, device type, device).
    """
    m = trace.memory
    if len(m) == 0:
        return []
    keep = np.ones(len(m), dtype=bool)
    if gpu_only:
        keep &= m.device_type == DEVICE_TYPE_GPU
    idx_all = np.flatnonzero(keep)
    out = []
    for (rank, dtype, device), sub in groups(
        m.rank[idx_all], m.device_type[idx_all], m.device_id[idx_all]
    ):
        idx = idx_all[sub]
        idx = idx[np.argsort(m.ts_ns[idx], kind="stable")]
        ts = m.ts_ns[idx].astype(np.int64)
        alloc = m.total_allocated[idx].astype(np.int64)
        has_total = alloc >= 0
        if has_total.any():
            ts, alloc = ts[has_total], alloc[has_total]
            res = m.total_reserved[idx][has_total].astype(np.int64)
            reserved: I64 | None = res if (res >= 0).any() else None
            peak_res = int(res[res >= 0].max()) if reserved is not None else None
            out.append(
                MemorySeries(
                    rank_value(rank),
                    dtype,
                    device,
                    ts,
                    alloc,
                    reserved,
                    False,
                    int(alloc.max()),
                    peak_res,
                )
            )
        else:
            running = np.cumsum(m.bytes[idx].astype(np.int64))
            peak = max(0, int(running.max()))
            out.append(
                MemorySeries(rank_value(rank), dtype, device, ts, running, None, True, peak, None)
            )
    return out
