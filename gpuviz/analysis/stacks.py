"""The ops around a CPU event: which op (and which op inside it) made a runtime call.

On a CPU thread, slices nest: the importer gives each its ``depth``. The ancestors of a slice
are, at each smaller depth, the last slice of its track that starts at or before it and ends
at or after it. :func:`enclosing_ops` finds them with one binary search per track and depth,
for any number of slices.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import Kind, Trace


def enclosing_ops(trace: Trace, rows: npt.ArrayLike) -> list[list[int]]:
    """The CPU ops enclosing each slice row, outermost first.

    Parameters
    ----------
    trace : Trace
    rows : array_like of int
        Slice rows (typically runtime calls on CPU threads).

    Returns
    -------
    list of list of int
        For each row, the rows of the ``cpu_op`` slices that enclose it on its thread.
    """
    s = trace.slices
    rows = np.asarray(rows, dtype=np.int64)
    out: list[list[int]] = [[] for _ in range(len(rows))]
    if len(rows) == 0:
        return out
    tracks = s.track[rows]
    for track in np.unique(tracks).tolist():
        mine = np.flatnonzero(tracks == track)
        span = trace.track_range(int(track))
        t_start = s.start_ns[span]
        t_end = t_start + s.dur_ns[span]
        t_depth = s.depth[span]
        t_op = s.kind[span] == Kind.CPU_OP
        q_start = s.start_ns[rows[mine]]
        q_end = q_start + s.dur_ns[rows[mine]]
        q_depth = s.depth[rows[mine]]
        for d in range(int(q_depth.max())):
            at = np.flatnonzero(t_depth == d)
            if len(at) == 0:
                continue
            k = np.searchsorted(t_start[at], q_start, side="right") - 1
            kk = at[np.maximum(k, 0)]
            ok = (k >= 0) & (d < q_depth) & (t_end[kk] >= q_end) & t_op[kk]
            for j in np.flatnonzero(ok).tolist():
                out[int(mine[j])].append(int(span.start + kk[j]))
    return out
