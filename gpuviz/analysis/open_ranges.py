"""CPU ranges left open at the trace's end, clipped to their step.

A ``record_function`` range or op that had not ended when the profiler stopped (an
``Optimizer.step`` whose exit was never recorded) is written by Kineto with a duration to the
trace's end: 77.6 ms for a ~15 ms optimizer step, which inflated the op table's CPU total and
made the later steps' ops its children, with no word said. Such a range:

- is an op or a ``record_function`` range on a CPU thread (not a step marker itself);
- ends at the rank's last CPU event end (within :data:`END_SLACK_NS`) or after it;
- begins inside a step (:func:`gpuviz.analysis.steps.find_steps`, its CPU range up to the next
  step's start) whose CPU range ended before that, by more than :data:`END_SLACK_NS`.

It is clipped to its step's CPU end (never before its own start), and the trace's warnings
say so (``N ranges left open at the trace's end were clipped to their step: …``), which the
commands print with the import's warnings. A trace whose last step runs to its end (or with
no steps, one step of the whole trace) has nothing to clip.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.analysis.names import HARNESS_STEP, OPTIMIZER_STEP_PREFIX, PROFILER_STEP, name_mask
from gpuviz.trace.model import Kind, Trace, TrackKind

I64 = npt.NDArray[np.int64]

END_SLACK_NS = 1_000
"""A range ending this close to the rank's last CPU event end ends with the trace."""

SHOWN = 3
"""Ranges named in the warning."""


@dataclass
class OpenRanges:
    """The ranges left open, with the ends they are clipped to.

    Attributes
    ----------
    rows : int64
        Slice rows, ascending.
    end_ns : int64
        Each one's clipped end (its step's CPU end).
    message : str or None
        The warning, or None when there are none.
    """

    rows: I64
    end_ns: I64
    message: str | None

    def __len__(self) -> int:
        return len(self.rows)


_memo: dict[int, tuple[Any, OpenRanges]] = {}


def open_ranges(trace: Trace) -> OpenRanges:
    """The ranges of ``trace`` left open at its end (see the module docstring); computed once
    per trace, and its warning added to ``trace.warnings`` (not counted as a skipped event)."""
    held = _memo.get(id(trace))
    if held is not None and held[0]() is trace:
        return held[1]
    found = _find(trace)
    if found.message is not None and found.message not in trace.warnings.samples:
        trace.warnings.samples.append(found.message)
    key = id(trace)
    _memo[key] = (weakref.ref(trace, lambda _: _memo.pop(key, None)), found)
    return found


def clipped_durations(trace: Trace, rows: I64, dur: I64) -> I64:
    """``dur`` of slice ``rows`` with the ranges left open clipped to their step."""
    found = open_ranges(trace)
    if not len(found):
        return dur
    at = np.searchsorted(found.rows, rows)
    hit = (at < len(found.rows)) & (found.rows[np.minimum(at, len(found.rows) - 1)] == rows)
    if not hit.any():
        return dur
    out = dur.copy()
    start = trace.slices.start_ns[rows[hit]]
    out[hit] = np.maximum(found.end_ns[at[hit]] - start, 0)
    return out


def _find(trace: Trace) -> OpenRanges:
    s, t = trace.slices, trace.tracks
    none = OpenRanges(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), None)
    marker = name_mask(
        trace.symbols,
        lambda n: PROFILER_STEP.match(n) is not None or HARNESS_STEP.match(n) is not None,
    )
    opt = name_mask(trace.symbols, lambda n: n.startswith(OPTIMIZER_STEP_PREFIX))
    o = trace.track_offsets
    cpu_tracks = [
        k
        for k in np.flatnonzero(
            np.isin(t.kind, [int(TrackKind.CPU_THREAD), int(TrackKind.CPU_ANNOTATION)])
        ).tolist()
        if o[k + 1] > o[k]
    ]
    # One track's slices at a time (slices are stored by track): arrays over every CPU slice
    # were 8 bytes a slice each, hundreds of MB on a large folder, for a handful of rows.
    last: dict[int, int] = {}
    for k in cpu_tracks:
        r = int(t.rank[k])
        top = int((s.start_ns[o[k] : o[k + 1]] + s.dur_ns[o[k] : o[k + 1]]).max())
        last[r] = max(last.get(r, top), top)
    cand: list[int] = []
    m_rank: list[int] = []
    m_end: list[int] = []
    for k in cpu_tracks:
        r, lo, hi = int(t.rank[k]), int(o[k]), int(o[k + 1])
        e = s.start_ns[lo:hi] + s.dur_ns[lo:hi]
        names, kind = s.name[lo:hi], s.kind[lo:hi]
        is_marker = marker[names] | opt[names]
        m_rank += [r] * int(is_marker.sum())
        m_end += e[is_marker].astype(np.int64).tolist()
        ok = (e >= last[r] - END_SLACK_NS) & ~marker[names]
        ok &= (kind == Kind.CPU_OP) | (kind == Kind.USER_ANNOTATION)
        cand += (lo + np.flatnonzero(ok)).tolist()
    # Cheap before the steps are found: a candidate is suspect only where a step marker of
    # its rank ended inside it, before its end (every trace has ranges ending at its end).
    marker_ends: dict[int, list[int]] = {}
    for mr, me in zip(m_rank, m_end):  # per rank once, not a scan of all ranks' per candidate
        marker_ends.setdefault(int(mr), []).append(int(me))
    of_rank = {k: np.asarray(v, dtype=np.int64) for k, v in marker_ends.items()}
    no_ends = np.empty(0, dtype=np.int64)
    suspect = []
    for row in cand:
        r, c0 = int(t.rank[s.track[row]]), int(s.start_ns[row])
        c1 = c0 + int(s.dur_ns[row])
        mine = of_rank.get(r, no_ends)
        if ((mine > c0) & (mine < c1 - END_SLACK_NS)).any():
            suspect.append(row)
    if not suspect:
        return none
    from gpuviz.analysis.steps import find_steps

    steps = find_steps(trace)
    rows: list[int] = []
    ends: list[int] = []
    for row in suspect:
        r = int(t.rank[s.track[row]])
        row_end = int(s.start_ns[row]) + int(s.dur_ns[row])
        mine = steps.of_rank(r)
        if len(mine) == 0:
            continue
        start = int(s.start_ns[row])
        # The step whose CPU range, up to the next step's start, holds the range's start.
        k = int(np.searchsorted(steps.cpu_start_ns[mine], start, side="right")) - 1
        if k < 0:
            continue
        cpu_end = int(steps.cpu_end_ns[mine[k]])
        if start >= cpu_end or cpu_end >= row_end - END_SLACK_NS:
            continue  # after its step's range (between steps), or its step ran on as long
        rows.append(row)
        ends.append(cpu_end)
    if not rows:
        return none
    order = np.argsort(rows)
    r_arr = np.array(rows, dtype=np.int64)[order]
    e_arr = np.array(ends, dtype=np.int64)[order]
    return OpenRanges(r_arr, e_arr, _message(trace, r_arr, e_arr))


def _message(trace: Trace, rows: I64, ends: I64) -> str:
    s = trace.slices
    longest = np.argsort(-(s.dur_ns[rows].astype(np.int64)), kind="stable")[:SHOWN]
    named = ", ".join(
        f"{trace.name_of(int(rows[i]))} ({int(s.dur_ns[rows[i]]) / 1e6:.1f} ms -> "
        f"{(int(ends[i]) - int(s.start_ns[rows[i]])) / 1e6:.1f} ms)"
        for i in longest.tolist()
    )
    more = f" and {len(rows) - SHOWN} more" if len(rows) > SHOWN else ""
    n = len(rows)
    return (
        f"{n} range{'s' if n != 1 else ''} left open at the trace's end "
        f"{'were' if n != 1 else 'was'} clipped to {'their' if n != 1 else 'its'} step: "
        f"{named}{more}"
    )
