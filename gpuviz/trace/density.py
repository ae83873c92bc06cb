"""Busy density of a set of slices per pixel column: the math of a rank's summary lane (pure numpy).

A collapsed rank shows one strip: for each pixel column of the view, the share of that
column's time during which the rank's GPUs were busy, and how much of that was compute. The
slices are merged once into sorted disjoint intervals with a prefix sum of their lengths
(:class:`BusyProfile`); after that, the busy time in any window is two binary searches, so a
strip costs O(pixels · log intervals) at every zoom, exactly (no sampling, no per-slice
drawing). This is the level-of-detail idea of :mod:`gpuviz.trace.lod_levels` taken to its
end: the "pyramid" of a busy share is a prefix sum, which answers every bucket size at once.

:func:`density_codes` quantizes a strip (busy share and the compute share of it) into small
integer codes, which the timeline maps to colours with one table lookup per pixel.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

BUSY_LEVELS = 16
"""Shades of the busy share (0 is "idle", ``BUSY_LEVELS - 1`` is "busy all the time")."""

MIX_LEVELS = 8
"""Steps between "all communication" (0) and "all compute" (``MIX_LEVELS - 1``)."""


def merge_intervals(start: npt.ArrayLike, end: npt.ArrayLike) -> tuple[I64, I64]:
    """Sorted, disjoint intervals covering the same time as ``[start, end)`` (any order).

    Empty intervals are dropped and touching ones are joined.
    """
    s = np.asarray(start, dtype=np.int64).ravel()
    e = np.asarray(end, dtype=np.int64).ravel()
    keep = e > s
    s, e = s[keep], e[keep]
    if len(s) == 0:
        return s, e
    if len(s) > 1 and (s[1:] < s[:-1]).any():
        order = np.argsort(s, kind="stable")
        s, e = s[order], e[order]
    reach = np.maximum.accumulate(e)
    # A run starts where an interval begins after everything before it has ended.
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    np.greater(s[1:], reach[:-1], out=new[1:])
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(s) - 1)
    return s[first], reach[last]


class BusyProfile:
    """The time covered by a set of intervals, queryable for any windows.

    Parameters
    ----------
    start, end : array_like of int
        ``[start, end)`` in ns, any order, overlapping or not.

    Attributes
    ----------
    starts, ends : int64 arrays
        The merged intervals.
    """

    __slots__ = ("_cum", "_fp", "_xp", "ends", "starts")

    def __init__(self, start: npt.ArrayLike, end: npt.ArrayLike) -> None:
        self.starts, self.ends = merge_intervals(start, end)
        self._cum = np.concatenate(([0], np.cumsum(self.ends - self.starts))).astype(np.int64)
        # The covered time before t is piecewise linear in t: slope 1 inside an interval, flat
        # between them. As knots for np.interp (strictly increasing: the intervals are
        # disjoint and do not touch), in float64, once: a query then is one C call, which
        # for sorted queries walks on from the last knot it found.
        n = len(self.starts)
        self._xp = np.empty(2 * n, dtype=np.float64)
        self._xp[0::2] = self.starts
        self._xp[1::2] = self.ends
        self._fp = np.empty(2 * n, dtype=np.float64)
        self._fp[0::2] = self._cum[:-1]
        self._fp[1::2] = self._cum[1:]

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def total_ns(self) -> int:
        """The covered time in all."""
        return int(self._cum[-1])

    def covered_before(self, t: npt.ArrayLike) -> F64:
        """Covered time in ``(-inf, t)`` for each ``t`` (float ns: pixel edges are fractional)."""
        t = np.asarray(t, dtype=np.float64)
        if len(self.starts) == 0:
            return np.zeros(t.shape, dtype=np.float64)
        out: F64 = np.interp(t, self._xp, self._fp, left=0.0, right=float(self._cum[-1]))
        return out

    def shares_at(self, edges: F64) -> F64:
        """The covered share of each column between consecutive ``edges`` (sorted, float ns)."""
        got = np.diff(self.covered_before(edges))
        col = np.diff(edges)
        np.divide(got, col, out=got, where=col > 0)
        got[col <= 0] = 0.0
        out: F64 = np.clip(got, 0.0, 1.0, out=got)
        return out

    def shares(self, t0_ns: float, t1_ns: float, width_px: int) -> F64:
        """The covered share of each of ``width_px`` equal columns of ``[t0_ns, t1_ns)``.

        Returns
        -------
        float64 array (width_px,)
            In ``[0, 1]``.
        """
        return self.shares_at(column_edges(t0_ns, t1_ns, width_px))


def column_edges(t0_ns: float, t1_ns: float, width_px: int) -> F64:
    """The ``width_px + 1`` edges of equal pixel columns across ``[t0_ns, t1_ns)``."""
    width_px = max(int(width_px), 1)
    step = (float(t1_ns) - float(t0_ns)) / width_px
    out: F64 = float(t0_ns) + step * np.arange(width_px + 1, dtype=np.float64)
    return out


def density_codes(busy: F64, compute: F64) -> npt.NDArray[np.int64]:
    """Colour codes of a strip's columns: ``busy_level * MIX_LEVELS + mix_level``.

    Parameters
    ----------
    busy : float array
        Busy share of each column, ``[0, 1]``.
    compute : float array
        Compute share of each column (at most ``busy``).

    Returns
    -------
    int64 array
        Codes in ``[0, BUSY_LEVELS * MIX_LEVELS)``. A column with any busy time gets at least
        busy level 1, so a single short kernel stays visible; an idle one gets code 0.
    """
    b = np.clip(np.asarray(busy, dtype=np.float64), 0.0, 1.0)
    c = np.clip(np.asarray(compute, dtype=np.float64), 0.0, None)
    level = np.rint(b * (BUSY_LEVELS - 1)).astype(np.int64)
    level = np.where(b > 0, np.maximum(level, 1), 0)
    mix_share = np.divide(np.minimum(c, b), b, out=np.ones_like(b), where=b > 0)
    mix = np.rint(mix_share * (MIX_LEVELS - 1)).astype(np.int64)
    out: npt.NDArray[np.int64] = np.where(b > 0, level * MIX_LEVELS + mix, 0)
    return out


__all__ = [
    "BUSY_LEVELS",
    "MIX_LEVELS",
    "BusyProfile",
    "column_edges",
    "density_codes",
    "merge_intervals",
]
