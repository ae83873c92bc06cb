"""Interval arithmetic on numpy arrays: union, intersection, time covered by several sets.

Every function takes half-open intervals ``[start, end)`` as two equal-length integer arrays
(nanoseconds in practice) and runs in O(n log n): a sort, then cumulative maxima or a sweep over
sorted boundaries. Empty intervals (``end <= start``) cover nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
Intervals = tuple[I64, I64]


def _as_pair(start: npt.ArrayLike, end: npt.ArrayLike) -> Intervals:
    s = np.asarray(start, dtype=np.int64).ravel()
    e = np.asarray(end, dtype=np.int64).ravel()
    if s.shape != e.shape:
        raise ValueError(f"start and end differ in length: {s.shape} vs {e.shape}")
    keep = e > s
    if not keep.all():
        s, e = s[keep], e[keep]
    return s, e


def merge(start: npt.ArrayLike, end: npt.ArrayLike) -> Intervals:
    """Merge intervals into sorted, disjoint ones.

    Parameters
    ----------
    start, end : array_like of int
        Interval bounds, ``[start, end)``; any order, overlapping or not.

    Returns
    -------
    (starts, ends) : tuple of int64 arrays
        Sorted disjoint intervals covering the same time. Touching intervals are joined.
    """
    s, e = _as_pair(start, end)
    if len(s) == 0:
        return s, e
    if len(s) > 1 and not (s[1:] >= s[:-1]).all():  # one track's slices come sorted: no sort
        order = np.argsort(s, kind="stable")
        s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    # A new run starts where an interval begins after everything before it has ended.
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(s) - 1)
    return s[first], reach[last]


def union_length(start: npt.ArrayLike, end: npt.ArrayLike) -> int:
    """Total time covered by at least one interval.

    Parameters
    ----------
    start, end : array_like of int
        Interval bounds, ``[start, end)``.

    Returns
    -------
    int
        The length of the union.

    Examples
    --------
    >>> union_length([0, 5, 20], [10, 12, 25])
    17
    """
    s, e = merge(start, end)
    return int((e - s).sum())


def covered_by_at_least(sets: Sequence[Intervals], k: int) -> Intervals:
    """Time covered by at least ``k`` of the interval sets.

    Each set counts once, however many of its own intervals overlap there.

    Parameters
    ----------
    sets : sequence of (start, end) array pairs
        The interval sets.
    k : int
        How many sets must cover a moment, 1 or more.

    Returns
    -------
    (starts, ends) : tuple of int64 arrays
        Sorted disjoint intervals.
    """
    if k < 1:
        raise ValueError(f"k must be 1 or more, got {k}")
    merged = [merge(s, e) for s, e in sets]
    merged = [m for m in merged if len(m[0])]
    if len(merged) < k:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty.copy()
    if k == 1:
        return merge(np.concatenate([m[0] for m in merged]), np.concatenate([m[1] for m in merged]))
    starts = np.concatenate([m[0] for m in merged])
    ends = np.concatenate([m[1] for m in merged])
    points = np.concatenate([starts, ends])
    delta = np.concatenate([np.ones(len(starts), np.int64), -np.ones(len(ends), np.int64)])
    order = np.argsort(points, kind="stable")
    points, delta = points[order], delta[order]
    depth = np.cumsum(delta)
    # Segment i runs from points[i] to points[i + 1] with depth[i] sets open; ties make
    # zero-length segments, which merge() drops.
    hit = depth[:-1] >= k
    return merge(points[:-1][hit], points[1:][hit])


def covered_length_at_least(sets: Sequence[Intervals], k: int) -> int:
    """Length of the time covered by at least ``k`` of the interval sets."""
    s, e = covered_by_at_least(sets, k)
    return int((e - s).sum())


def intersect(a: Intervals, b: Intervals) -> Intervals:
    """Time covered by both interval sets ``a`` and ``b``, as sorted disjoint intervals."""
    return covered_by_at_least([a, b], 2)


def intersection_length(a: Intervals, b: Intervals) -> int:
    """Length of the time covered by both interval sets."""
    s, e = intersect(a, b)
    return int((e - s).sum())


def clip(start: npt.ArrayLike, end: npt.ArrayLike, t0: int, t1: int) -> Intervals:
    """Intervals cut to the window ``[t0, t1)``; those left empty are dropped."""
    s = np.maximum(np.asarray(start, dtype=np.int64), t0)
    e = np.minimum(np.asarray(end, dtype=np.int64), t1)
    return _as_pair(s, e)
