"""Stacking rows (``Slices.depth``) for the slices of each track: nesting, and overlap rows.

Nothing is dropped, and overlapping slices of one track never share a row. A slice's row is
the count of slices of its track that started before it and are still running, computed for
all tracks at once with numpy; for properly nested slices (a CPU thread's call tree) that is the
nesting depth. Where slices overlap without nesting (GPU streams with concurrent kernels, odd
CPU threads), that count may put two overlapping slices on one row; the clusters of overlapping
slices where that happens are redone with a greedy loop (each slice on the lowest free row).
"""

from __future__ import annotations

import heapq

import numpy as np
import numpy.typing as npt

from gpuviz.trace.arrays import unique

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
        The row of each slice (at most the count of its track's slices running when it
        starts); overlapping slices of one track never share a row.
    """
    n = len(track)
    if n == 0:
        return np.zeros(0, np.int16)
    end = start_ns + np.maximum(dur_ns, 0)
    bounds = np.flatnonzero(track[1:] != track[:-1]) + 1
    first = np.concatenate([[0], bounds])
    last = np.concatenate([bounds, [n]])
    # Shifting each track's times into a range of its own lets one sorted array of ends serve
    # all tracks: key = track_index * span + (t - t_min). The ends at or before a slice's start
    # then count the slices before it (its track's and every earlier track's) that have ended,
    # so depth = index - that count. (Temporaries are freed early: this runs on every slice.)
    t_min = int(min(start_ns.min(), end.min()))
    span = int(max(start_ns.max(), end.max())) - t_min + 1
    if len(first) < (1 << 62) // max(span, 1):
        # Each slice's track offset by a cumulative sum over the track starts, not np.repeat:
        # np.repeat holds the GIL throughout (about 100 ms at 3M slices, in the loader thread
        # while the app's GUI thread waits for it); cumsum lets it go, and is 9x faster.
        offset = np.zeros(n, dtype=np.int64)
        offset[bounds] = span
        np.cumsum(offset, out=offset)
        offset -= t_min
        key = end + offset
        key.sort()
        offset += start_ns
        depth = np.arange(n, dtype=np.int64)
        depth -= np.searchsorted(key, offset, side="right")
        del key, offset
    else:  # pragma: no cover - spans beyond int64 when combined; do it track by track
        depth = np.empty(n, dtype=np.int64)
        for a, b in zip(first.tolist(), last.tolist()):
            e = np.sort(end[a:b])
            depth[a:b] = np.arange(b - a) - np.searchsorted(e, start_ns[a:b], side="right")
    np.maximum(depth, 0, out=depth)
    # Check: within one track and row, consecutive slices must not overlap. The slices are in
    # start order within each track, so a stable sort on (track, row) orders them by
    # (track, row, start): one argsort of an int64 key, 5x faster than lexsort of three.
    bits = max(int(depth.max()).bit_length(), 1)
    if int(track.max()) < (1 << (62 - bits)):
        order = np.argsort((track.astype(np.int64) << bits) | depth, kind="stable")
    else:  # pragma: no cover - more tracks than int64 holds beside the rows
        order = np.lexsort((start_ns, depth, track))
    t_o = track[order]
    same = t_o[1:] == t_o[:-1]
    del t_o
    d_o = depth[order]
    same &= d_o[1:] == d_o[:-1]
    del d_o
    s_o = start_ns[order]
    e_o = end[order]
    same &= s_o[1:] < e_o[:-1]
    del s_o, e_o
    clashing = order[1:][same]
    del order, same
    track_idx = np.searchsorted(first, clashing, side="right") - 1
    for t in unique(track_idx).tolist():
        a, b = int(first[t]), int(last[t])
        # Only the clusters of overlapping slices that hold a clash need the loop: a cluster
        # starts where a slice starts after every earlier slice of the track has ended.
        s, e = start_ns[a:b], end[a:b]
        reach = np.maximum.accumulate(e)
        new = np.concatenate([[True], s[1:] >= reach[:-1]])
        cluster = np.cumsum(new) - 1
        starts = np.flatnonzero(new)
        stops = np.append(starts[1:], b - a)
        rows = clashing[(clashing >= a) & (clashing < b)] - a
        for c in unique(cluster[rows]).tolist():
            i, j = int(starts[c]), int(stops[c])
            depth[a + i : a + j] = _greedy(s[i:j], e[i:j])
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
