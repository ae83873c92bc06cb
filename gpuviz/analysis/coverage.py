"""How much of a window a set of intervals covers, for many windows at once.

:class:`Coverage` merges a set of intervals once; then the time it covers inside any number of
windows ``[t0, t1)`` is two binary searches per window, over a prefix sum of the merged
lengths. The step breakdown, the idle-gap causes and the rank × step measures all ask this
question for every step (or gap) of a trace, so none of them loops over events in Python.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.intervals import merge

I64 = npt.NDArray[np.int64]


class Coverage:
    """Sorted, disjoint intervals with a prefix sum of their lengths.

    Parameters
    ----------
    start, end : array_like of int
        Interval bounds ``[start, end)``, in any order, overlapping or not (they are merged).
    """

    __slots__ = ("_cum", "ends", "starts")

    def __init__(self, start: npt.ArrayLike, end: npt.ArrayLike) -> None:
        self.starts, self.ends = merge(start, end)
        self._cum = np.concatenate(([0], np.cumsum(self.ends - self.starts))).astype(np.int64)

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def total_ns(self) -> int:
        """The length of the union."""
        return int(self._cum[-1])

    def before(self, t: npt.ArrayLike) -> I64:
        """Time covered in ``(-inf, t)``, for each ``t``."""
        t = np.asarray(t, dtype=np.int64)
        if len(self.starts) == 0:
            return np.zeros(t.shape, dtype=np.int64)
        # i: how many intervals end at or before t; the next one may be partly before t.
        i = np.searchsorted(self.ends, t, side="right")
        nxt = np.minimum(i, len(self.starts) - 1)
        partial = np.where(i < len(self.starts), np.maximum(t - self.starts[nxt], 0), 0)
        return self._cum[i] + partial

    def covered(self, t0: npt.ArrayLike, t1: npt.ArrayLike) -> I64:
        """Time covered inside each window ``[t0, t1)`` (0 for empty or reversed windows).

        Parameters
        ----------
        t0, t1 : array_like of int
            Window bounds, broadcast together.

        Returns
        -------
        int64 array
        """
        t0 = np.asarray(t0, dtype=np.int64)
        t1 = np.maximum(np.asarray(t1, dtype=np.int64), t0)
        return self.before(t1) - self.before(t0)

    def gaps(self, t0: int, t1: int) -> tuple[I64, I64]:
        """The uncovered stretches inside ``[t0, t1)``, as (starts, ends)."""
        s, e = self.starts, self.ends
        lo = np.searchsorted(e, t0, side="right")
        hi = np.searchsorted(s, t1, side="left")
        s, e = s[lo:hi], e[lo:hi]
        g0 = np.concatenate(([t0], e))
        g1 = np.concatenate((s, [t1]))
        g0 = np.maximum(g0, t0)
        g1 = np.minimum(g1, t1)
        keep = g1 > g0
        return g0[keep], g1[keep]
