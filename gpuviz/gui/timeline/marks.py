"""Sets of slices the timeline marks: highlights, search matches, and the links of a selection.

Pure numpy (no Qt): the widget keeps the sets, its painter outlines those in view.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.trace.arrays import unique
from gpuviz.trace.model import GPU_ACTIVITY_KINDS, Kind, Trace, correlation_key

I64 = npt.NDArray[np.int64]


class RowSet:
    """Slice rows sorted by start, with what it takes to find those in a time range fast.

    Attributes
    ----------
    rows, start, end : int64 arrays
        The distinct valid rows, their starts and ends, in start order.
    reach : int64 array
        Running maximum of ``end``.
    """

    def __init__(self, trace: Trace, rows: npt.ArrayLike) -> None:
        rows = unique(np.asarray(rows, dtype=np.int64).ravel())
        rows = rows[(rows >= 0) & (rows < len(trace.slices))]
        s = trace.slices.start_ns[rows]
        order = np.argsort(s, kind="stable")
        self.rows, self.start = rows[order], s[order]
        self.end = self.start + trace.slices.dur_ns[self.rows]
        self.reach = np.maximum.accumulate(self.end) if len(self.end) else self.end

    def __len__(self) -> int:
        return len(self.rows)

    def in_view(self, t0: float, t1: float) -> I64:
        """The rows that overlap ``[t0, t1)``."""
        i1 = int(np.searchsorted(self.start, t1, side="left"))
        i0 = min(int(np.searchsorted(self.reach, t0, side="right")), i1)
        out: I64 = self.rows[i0:i1][self.end[i0:i1] > t0]
        return out


def search_rows(trace: Trace, text: str) -> I64:
    """Slice rows whose name contains ``text`` (already lower-cased; empty: none)."""
    if not text:
        return np.empty(0, dtype=np.int64)
    ids = [i for i, nm in enumerate(trace.symbols.strings) if text in nm.lower()]
    if not ids:
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(np.isin(trace.slices.name, np.asarray(ids, dtype=np.int32)))


class SliceLinks:
    """Launch ↔ GPU work links by correlation (a kernel's launch; a launch's kernels)."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._gpu_corr_index: dict[str, Any] | None = None

    def of(self, row: int) -> I64:
        """The slices linked to slice ``row`` (empty when none)."""
        s = self.trace.slices
        kind = int(s.kind[row])
        if kind in GPU_ACTIVITY_KINDS:
            got = self.trace.launches_of([row])
            out: I64 = got[got >= 0]
            return out
        if kind == Kind.RUNTIME and int(s.correlation[row]) >= 0:
            idx = self._gpu_corr()
            rank = self.trace.tracks.rank[s.track[row]]
            key = int(correlation_key(rank, s.correlation[row]))
            a = int(np.searchsorted(idx["keys"], key, side="left"))
            b = int(np.searchsorted(idx["keys"], key, side="right"))
            linked: I64 = idx["rows"][a:b].copy()
            return linked
        return np.empty(0, dtype=np.int64)

    def _gpu_corr(self) -> dict[str, Any]:
        if self._gpu_corr_index is None:
            s = self.trace.slices
            rows = np.flatnonzero(self.trace.gpu_activity_mask() & (s.correlation >= 0))
            key = correlation_key(self.trace.tracks.rank[s.track[rows]], s.correlation[rows])
            order = np.argsort(key, kind="stable")
            self._gpu_corr_index = {"keys": key[order], "rows": rows[order]}
        return self._gpu_corr_index


__all__ = ["RowSet", "SliceLinks", "search_rows", "unique"]
