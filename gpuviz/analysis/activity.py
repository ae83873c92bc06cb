"""The GPU activity of a trace (kernels, copies, sets) as flat columns, with grouping helpers.

Several analyses (streams, overlap, ranges, splits) start from the same selection: every
kernel/copy/set slice with its rank, device and stream taken from its track. This module makes
that selection once per call and groups it without a Python loop over events.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.trace.arrays import unique
from gpuviz.trace.model import NONE, Kind, Trace

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]


@dataclass
class GpuActivity:
    """Kernels, copies and sets of a trace, one row each.

    Attributes
    ----------
    rows : int64
        The slice rows in ``trace.slices``.
    rank, device : int32
        From the slice's track (-1 where missing; a lone file's rank is -1), in the track
        table's own type (int64 copies were 8 bytes a GPU row more: 150 MB on 64 ranks).
    stream : int64
        From the slice's track (-1 where missing).
    kind : uint8
        :class:`~gpuviz.trace.model.Kind` (KERNEL, MEMCPY or MEMSET).
    start_ns, end_ns : int64
        Relative to the trace zero.
    """

    rows: I64
    rank: I32
    device: I32
    stream: I64
    kind: npt.NDArray[np.uint8]
    start_ns: I64
    end_ns: I64

    def __len__(self) -> int:
        return len(self.rows)

    def take(self, index: Any) -> GpuActivity:
        """The rows ``index`` (an index array or a boolean mask)."""
        return GpuActivity(
            self.rows[index],
            self.rank[index],
            self.device[index],
            self.stream[index],
            self.kind[index],
            self.start_ns[index],
            self.end_ns[index],
        )

    def of_kind(self, *kinds: Kind) -> GpuActivity:
        """The rows of the given kinds."""
        return self.take(np.isin(self.kind, np.asarray([int(k) for k in kinds], dtype=np.uint8)))

    def clipped(self, t0_ns: int, t1_ns: int) -> GpuActivity:
        """The rows that overlap ``[t0_ns, t1_ns)``, their bounds cut to that window."""
        a = self.take((self.end_ns > t0_ns) & (self.start_ns < t1_ns))
        a.start_ns = np.maximum(a.start_ns, t0_ns)
        a.end_ns = np.minimum(a.end_ns, t1_ns)
        return a


def gpu_activity(trace: Trace) -> GpuActivity:
    """Select every kernel, copy and set slice of ``trace``.

    Parameters
    ----------
    trace : Trace
        The trace.

    Returns
    -------
    GpuActivity
        One row per GPU slice, in slice order.
    """
    s, t = trace.slices, trace.tracks
    rows = np.flatnonzero(trace.gpu_activity_mask()).astype(np.int64, copy=False)
    track = s.track[rows]
    start = s.start_ns[rows].astype(np.int64, copy=False)
    return GpuActivity(
        rows=rows,
        rank=t.rank[track].astype(np.int32, copy=False),
        device=t.device[track].astype(np.int32, copy=False),
        stream=t.stream[track].astype(np.int64, copy=False),
        kind=s.kind[rows],
        start_ns=start,
        end_ns=start + s.dur_ns[rows].astype(np.int64),
    )


def rank_device_pairs(
    rank: npt.NDArray[np.integer], device: npt.NDArray[np.integer]
) -> list[tuple[int, int]]:
    """The distinct ``(rank, device)`` pairs of two columns of ranks and devices (each at least
    -1 and below 2^31), in ascending order.

    Without a Python object per row: ``sorted(set(zip(rank.tolist(), device.tolist())))`` of
    6M kernels held the GIL for 160-330 ms (the app's GUI thread stalled that long while the
    advisor ran on 32-64 ranks of 100k kernels).
    """
    if len(rank) == 0:
        return []
    key = (rank.astype(np.int64) + 1) << 32 | (device.astype(np.int64) + 1)
    pairs = unique(key)
    return list(zip(((pairs >> 32) - 1).tolist(), ((pairs & 0xFFFFFFFF) - 1).tolist()))


def groups(*keys: npt.NDArray[np.integer]) -> Iterator[tuple[tuple[int, ...], I64]]:
    """Group rows by equal key columns, in ascending key order.

    Parameters
    ----------
    *keys : integer arrays of equal length
        The key columns, most significant first.

    Yields
    ------
    (key, index) : tuple of (tuple of int, int64 array)
        One group's key values and its row indices.
    """
    if not keys or len(keys[0]) == 0:
        return
    bounds = _ordered_bounds([np.asarray(k) for k in keys])
    if bounds is not None:
        # Already in key order (a trace's GPU rows are: slices sort by track, tracks by rank,
        # device and stream): no sort, no sorted copies of the keys. The summary's three
        # groupings of 6.4M kernels on 64 ranks, on threads at once, each held about 25 bytes
        # a row of those (some 400 MB at the peak of its memory).
        for a, b in itertools.pairwise(bounds.tolist()):
            yield tuple(int(k[a]) for k in keys), np.arange(a, b, dtype=np.int64)
        return
    order = np.lexsort(tuple(reversed(keys)))
    sorted_keys = [np.asarray(k)[order] for k in keys]
    change = np.zeros(len(order), dtype=bool)
    change[0] = True
    for k in sorted_keys:
        change[1:] |= k[1:] != k[:-1]
    bounds = np.append(np.flatnonzero(change), len(order))
    for a, b in itertools.pairwise(bounds):
        yield tuple(int(k[a]) for k in sorted_keys), order[a:b]


def _ordered_bounds(keys: list[npt.NDArray[np.integer]]) -> I64 | None:
    """Where the groups of equal keys start (and the length, last), when the rows are already
    in ascending key order; None when they are not."""
    n = len(keys[0])
    tied = np.ones(n - 1, dtype=bool)  # each pair of neighbours: equal in every key so far
    for k in keys:
        prev, nxt = k[:-1], k[1:]
        if np.any(tied & (nxt < prev)):
            return None
        tied &= nxt == prev
    return np.concatenate(([0], np.flatnonzero(~tied) + 1, [n])).astype(np.int64)


def rank_value(code: int) -> int | None:
    """The rank as reports give it: None for a lone file's -1."""
    return None if code == NONE else int(code)
