"""Stacking rows (``Slices.depth``) for the slices of each track: nesting, and overlap rows.

Nothing is dropped: every slice gets the lowest row that is free at its start (greedy interval
colouring). For properly nested slices (a CPU thread's call tree) that row is the nesting depth,
and it is computed for all tracks at once with numpy: a slice's depth is the count of slices of
its track that started before it and are still running. Where slices overlap without nesting
(GPU streams with concurrent kernels, odd CPU threads), that count may put two overlapping
slices on one row; those tracks are redone with the exact greedy loop.
"""

from __future__ import annotations

import heapq

import numpy as np
import numpy.typing as npt

_MAX_DEPTH = np.iinfo(np.int16).max


def stack_depths(
    track: npt.NDArray[np.int32], start_ns: npt.NDArray[np.int64], dur_ns: npt.NDArray[np.int64]
) -> npt.NDArray[np.int16]:
    """Rows for slices sorted by ``(track, start_ns, -dur_ns)``.

    Parameters
    ----------
    track, start_ns, dur_ns : arrays
        The slices' columns, sorted by track, then start, then longest first.

    Returns
    -------
    int16 array
        The row of each slice; overlapping slices of one track never share a row.
    """
    n = len(track)
    if n == 0:
        return np.zeros(0, np.int16)
    end = start_ns + np.maximum(dur_ns, 0)
    bounds = np.flatnonzero(np.diff(track)) + 1
    first = np.concatenate([[0], bounds])
    last = np.concatenate([bounds, [n]])
    # Per track, ends sorted; shifting each track's times into its own range lets one
    # searchsorted serve all tracks: key = track_index * span + (t - t_min).
    t_min = int(min(start_ns.min(), end.min()))
    span = int(max(start_ns.max(), end.max())) - t_min + 1
    track_idx = np.repeat(np.arange(len(first), dtype=np.int64), last - first)
    depth = np.empty(n, dtype=np.int64)
    if len(first) < (1 << 62) // max(span, 1):
        s_key = track_idx * span + (start_ns - t_min)
        e_key = np.sort(track_idx * span + (end - t_min))
        ended = np.searchsorted(e_key, s_key, side="right") - np.repeat(first, last - first)
        before = np.arange(n, dtype=np.int64) - np.repeat(first, last - first)
        depth[:] = before - ended
    else:  # pragma: no cover - spans beyond int64 when combined; do it track by track
        for a, b in zip(first.tolist(), last.tolist()):
            e = np.sort(end[a:b])
            depth[a:b] = np.arange(b - a) - np.searchsorted(e, start_ns[a:b], side="right")
    np.maximum(depth, 0, out=depth)
    # Check: within one track and row, consecutive slices must not overlap.
    order = np.lexsort((start_ns, depth, track_idx))
    t_o, d_o, s_o, e_o = track_idx[order], depth[order], start_ns[order], end[order]
    same = (t_o[1:] == t_o[:-1]) & (d_o[1:] == d_o[:-1])
    clash = same & (s_o[1:] < e_o[:-1])
    for t in np.unique(t_o[1:][clash]).tolist():
        a, b = int(first[t]), int(last[t])
        depth[a:b] = _greedy(start_ns[a:b], end[a:b])
    return np.minimum(depth, _MAX_DEPTH).astype(np.int16)


def _greedy(start: npt.NDArray[np.int64], end: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Lowest free row at each start; slices given in start order."""
    out = np.empty(len(start), dtype=np.int64)
    busy: list[tuple[int, int]] = []  # (end, row) of rows in use
    free: list[int] = []
    rows = 0
    for i, (s, e) in enumerate(zip(start.tolist(), end.tolist())):
        while busy and busy[0][0] <= s:
            heapq.heappush(free, heapq.heappop(busy)[1])
        if free:
            r = heapq.heappop(free)
        else:
            r = rows
            rows += 1
        out[i] = r
        heapq.heappush(busy, (e, r))
    return out
