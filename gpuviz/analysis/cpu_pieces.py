"""A CPU thread's time inside a step, cut into pieces a dependency graph can hold.

The ops of a thread nest (``aten::linear`` > ``aten::addmm`` > ``cudaLaunchKernel``), and a
launch or a synchronize call sits deep inside its op: a graph whose nodes were whole top-level
ops could not say that a kernel waits for the *middle* of one. So each thread's time is cut at
every start and end of its slices (cpu ops, ``record_function`` ranges, runtime calls) into
*pieces*: consecutive intervals, each inside the same slices from start to end. A piece knows
its innermost slice (the runtime call it is, or the op whose own time it is) and its outermost
op (the top-level op it belongs to; step markers such as ``ProfilerStep#N`` are not ops).

A piece inside no slice at all is *idle*. On the step's main thread that is the program's own
Python time between ops (kept as CPU work); on other threads (the autograd engine's, gloo's,
a data loader's) it is time spent waiting for work, which is not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.names import HARNESS_STEP, PROFILER_STEP, name_mask
from gpuviz.trace.model import Kind, Trace, TrackKind

I64 = npt.NDArray[np.int64]
Bool = npt.NDArray[np.bool_]

CPU_KINDS = (Kind.CPU_OP, Kind.USER_ANNOTATION, Kind.RUNTIME)
"""Slice kinds that cut a thread's time (Python frames do not: there are too many of them, and
what they hold is found by time when a what-if names one)."""


@dataclass
class ThreadPieces:
    """One CPU thread's pieces in a step window, in time order.

    Attributes
    ----------
    rank : int
    pid, tid : int
        The thread (its ops and its ``record_function`` ranges are on two tracks).
    start_ns, end_ns : int64
    inner : int64
        The innermost slice row of each piece (-1: idle).
    outer : int64
        The outermost op or range row of each piece, step markers aside (-1: none).
    busy_ns : int
        Time inside some slice, step markers included: the thread that holds the step's
        marker, or else the one busiest in ops, is the step's main thread.
    """

    rank: int
    pid: int
    tid: int
    start_ns: I64
    end_ns: I64
    inner: I64
    outer: I64
    busy_ns: int

    def __len__(self) -> int:
        return len(self.start_ns)


def step_marker_mask(trace: Trace) -> Bool:
    """Per symbol: the names of step markers (``ProfilerStep#N``, gpuviz's own step ranges)."""
    return name_mask(
        trace.symbols,
        lambda n: PROFILER_STEP.match(n) is not None or HARNESS_STEP.match(n) is not None,
    )


def thread_pieces(trace: Trace, rank: int, w0: int, w1: int, marker: Bool) -> list[ThreadPieces]:
    """The pieces of every CPU thread of ``rank`` inside the window ``[w0, w1)``.

    Parameters
    ----------
    trace : Trace
    rank : int
        The rank (-1 for a lone file).
    w0, w1 : int
        The step window (ns from the trace zero).
    marker : bool array per symbol
        :func:`step_marker_mask`.
    """
    s, t = trace.slices, trace.tracks
    cpu_tracks = np.flatnonzero(
        np.isin(t.kind, [int(TrackKind.CPU_THREAD), int(TrackKind.CPU_ANNOTATION)])
        & (t.rank == rank)
    )
    by_thread: dict[tuple[int, int], list[I64]] = {}
    kinds = np.asarray([int(k) for k in CPU_KINDS], dtype=np.uint8)
    for tr in cpu_tracks.tolist():
        sl = trace.track_range(tr)
        start = s.start_ns[sl]
        rows = np.arange(sl.start, sl.stop, dtype=np.int64)
        keep = (start < w1) & (start + s.dur_ns[sl] > w0) & np.isin(s.kind[sl], kinds)
        if keep.any():
            by_thread.setdefault((int(t.pid[tr]), int(t.tid[tr])), []).append(rows[keep])
    out = []
    for (pid, tid), parts in sorted(by_thread.items()):
        rows = np.concatenate(parts)
        out.append(_sweep(trace, rank, pid, tid, rows, w0, w1, marker))
    return out


def _sweep(
    trace: Trace, rank: int, pid: int, tid: int, rows: I64, w0: int, w1: int, marker: Bool
) -> ThreadPieces:
    s = trace.slices
    start = np.maximum(s.start_ns[rows], w0)
    end = np.minimum(s.start_ns[rows] + s.dur_ns[rows], w1)
    # Parents first: by start, then the longer one (it encloses the other).
    order = np.lexsort((-(end - start), start))
    is_marker = marker[s.name[rows]]
    p_start: list[int] = []
    p_end: list[int] = []
    p_inner: list[int] = []
    p_outer: list[int] = []
    busy = 0
    stack: list[tuple[int, int, int, bool]] = []  # (end, row, outer row, marker)
    cur = int(start[order[0]]) if len(order) else w0

    def emit(a: int, b: int) -> None:
        nonlocal busy
        if b <= a:
            return
        p_start.append(a)
        p_end.append(b)
        if stack:
            top = stack[-1]
            p_inner.append(top[1])
            p_outer.append(top[2])
            busy += b - a
        else:
            p_inner.append(-1)
            p_outer.append(-1)

    def advance(to: int) -> None:
        nonlocal cur
        while stack and stack[-1][0] <= to:
            e = stack[-1][0]
            emit(cur, e)
            cur = max(cur, e)
            stack.pop()
        emit(cur, to)
        cur = max(cur, to)

    for i in order.tolist():
        a, b, row, mk = int(start[i]), int(end[i]), int(rows[i]), bool(is_marker[i])
        advance(a)
        if stack:  # a slice that outlives its parent (damaged nesting) ends with it
            b = min(b, stack[-1][0])
        if b <= a:
            continue
        parent_outer = stack[-1][2] if stack else -1
        outer = parent_outer if parent_outer >= 0 else (-1 if mk else row)
        stack.append((b, row, outer, mk))
    advance(max(stack[0][0], cur) if stack else cur)
    return ThreadPieces(
        rank=rank,
        pid=pid,
        tid=tid,
        start_ns=np.asarray(p_start, dtype=np.int64),
        end_ns=np.asarray(p_end, dtype=np.int64),
        inner=np.asarray(p_inner, dtype=np.int64),
        outer=np.asarray(p_outer, dtype=np.int64),
        busy_ns=busy,
    )


def stretches(pieces: ThreadPieces) -> list[tuple[int, int]]:
    """The busy stretches of a thread: ``(first, last)`` piece indices of each maximal run of
    pieces that are not idle."""
    busy = pieces.inner >= 0
    if not busy.any():
        return []
    edges = np.diff(np.concatenate(([0], busy.astype(np.int8), [0])))
    firsts = np.flatnonzero(edges == 1)
    lasts = np.flatnonzero(edges == -1) - 1
    return list(zip(firsts.tolist(), lasts.tolist(), strict=True))
