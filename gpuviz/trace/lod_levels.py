"""Level-of-detail levels of one timeline row: the LOD math (pure numpy).

A *level* ``L`` has buckets of ``2**L`` ns; a frame uses the level whose bucket is the pixel
width rounded down to a power of two (:func:`level_for`), so a slightly changed zoom reuses the
same level. At level ``L`` a slice at least ``MIN_VIS_BUCKETS`` buckets long is kept as itself
(a *big* item). Shorter slices are folded into their start bucket: a bucket *entry* keeps the
count of slices in it, the end of the last one, and the longest one (its colour and hover
text). Levels are built bottom-up, each from the one below (:func:`coarsen`); a level is kept
only when it has at most half the items of the last kept one, so a pyramid
(:class:`RowSource`) costs O(n) memory, and a frame merges on the fly from the nearest kept
level below, which has at most about twice the items it needs. Overlapping slices are never
dropped: every slice is either drawn as itself or covered by its bucket.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import Trace

I64 = npt.NDArray[np.int64]

MIN_VIS_BUCKETS = 3
"""Slices shorter than this many buckets are folded into a bucket entry (Tracy's MinVisSize)."""

KEEP_RATIO = 0.5
"""A level is kept when it has at most this share of the items of the last kept level."""


@dataclass
class Level:
    """The items of one row at one level of detail.

    Attributes
    ----------
    shift : int
        ``L``: buckets are ``2**L`` ns; -1 for the raw slices.
    big_start, big_end, big_row : int64 arrays
        Slices drawn as themselves, sorted by start; ``big_row`` are slice rows.
    big_reach : int64 array
        Running maximum of ``big_end`` (to find the first item that reaches a time).
    ent_bucket : int64 array
        Bucket index (``start >> L``) of each entry, sorted, distinct.
    ent_end : int64 array
        The latest end of the slices folded into the entry.
    ent_count : int64 array
        How many slices it holds.
    ent_row, ent_dur : int64 arrays
        Its longest slice and that slice's duration.
    """

    shift: int
    big_start: I64
    big_end: I64
    big_row: I64
    big_reach: I64
    ent_bucket: I64
    ent_end: I64
    ent_count: I64
    ent_row: I64
    ent_dur: I64

    def __len__(self) -> int:
        return len(self.big_start) + len(self.ent_bucket)

    @classmethod
    def raw(cls, start: I64, end: I64, row: I64) -> Level:
        """The level of the slices themselves (nothing folded)."""
        e = np.empty(0, dtype=np.int64)
        reach = np.maximum.accumulate(end) if len(end) else e
        return cls(-1, start, end, row, reach, e, e, e, e, e)

    def window(self, t0_ns: int, t1_ns: int) -> Level:
        """The items that may be visible in ``[t0_ns, t1_ns)`` (a superset, cheap to find)."""
        i1 = int(np.searchsorted(self.big_start, t1_ns, side="left"))
        i0 = int(np.searchsorted(self.big_reach, t0_ns, side="right"))
        i0 = min(i0, i1)
        if self.shift >= 0 and len(self.ent_bucket):
            # An entry spans less than MIN_VIS_BUCKETS + 1 buckets from its bucket's start.
            b0 = (t0_ns >> self.shift) - MIN_VIS_BUCKETS - 1
            b1 = t1_ns >> self.shift
            j0 = int(np.searchsorted(self.ent_bucket, b0, side="left"))
            j1 = int(np.searchsorted(self.ent_bucket, b1, side="right"))
        else:
            j0 = j1 = 0
        return Level(
            self.shift,
            self.big_start[i0:i1],
            self.big_end[i0:i1],
            self.big_row[i0:i1],
            self.big_reach[i0:i1],
            self.ent_bucket[j0:j1],
            self.ent_end[j0:j1],
            self.ent_count[j0:j1],
            self.ent_row[j0:j1],
            self.ent_dur[j0:j1],
        )


def coarsen(level: Level, shift: int, with_reach: bool = True) -> Level:
    """The items of ``level`` at the coarser level ``shift`` (``shift >= level.shift``).

    Big items shorter than ``MIN_VIS_BUCKETS`` buckets become entries of their start bucket;
    entries falling in one bucket merge (counts add, the longest slice wins; ties go to the
    earlier one). Merging straight to ``shift`` gives the same result as merging level by level.

    Parameters
    ----------
    level : Level
        A finer level (or the raw slices), or a window of one.
    shift : int
        The target level ``L >= 0``.
    with_reach : bool
        Compute ``big_reach`` (needed to take windows of the result).

    Returns
    -------
    Level
    """
    if shift < level.shift:
        raise ValueError(f"cannot coarsen level {level.shift} to the finer level {shift}")
    if shift < 0:
        return level
    limit = MIN_VIS_BUCKETS << shift
    dur = level.big_end - level.big_start
    small = dur < limit
    if small.any():
        keep = ~small
        bs, be, br = level.big_start[keep], level.big_end[keep], level.big_row[keep]
        ns = level.big_start[small]
        keys = [ns >> shift]
        ends = [level.big_end[small]]
        counts = [np.ones(len(ns), dtype=np.int64)]
        rows = [level.big_row[small]]
        durs = [dur[small]]
    else:
        bs, be, br = level.big_start, level.big_end, level.big_row
        keys, ends, counts, rows, durs = [], [], [], [], []
    if len(level.ent_bucket):
        keys.append(level.ent_bucket >> (shift - max(level.shift, 0)))
        ends.append(level.ent_end)
        counts.append(level.ent_count)
        rows.append(level.ent_row)
        durs.append(level.ent_dur)
    reach = (np.maximum.accumulate(be) if len(be) else be) if with_reach else be
    if not keys:
        e = np.empty(0, dtype=np.int64)
        return Level(shift, bs, be, br, reach, e, e, e, e, e)
    if len(keys) == 1:
        key, end, cnt, row, du = keys[0], ends[0], counts[0], rows[0], durs[0]
    else:
        key = np.concatenate(keys)
        # Both parts are sorted: a stable sort of two runs is a merge.
        order = np.argsort(key, kind="stable")
        key = key[order]
        end = np.concatenate(ends)[order]
        cnt = np.concatenate(counts)[order]
        row = np.concatenate(rows)[order]
        du = np.concatenate(durs)[order]
    n = len(key)
    if n > 1:
        change = key[1:] != key[:-1]
        if change.all():
            return Level(shift, bs, be, br, reach, key, end, cnt, row, du)
        first = np.flatnonzero(np.concatenate(([True], change)))
        gid = np.cumsum(np.concatenate(([0], change)))
        gmax = np.maximum.reduceat(du, first)
        cand = np.flatnonzero(du == gmax[gid])
        cg = gid[cand]
        win = cand[np.concatenate(([True], cg[1:] != cg[:-1]))]
        return Level(
            shift,
            bs,
            be,
            br,
            reach,
            key[first],
            np.maximum.reduceat(end, first),
            np.add.reduceat(cnt, first),
            row[win],
            gmax,
        )
    return Level(shift, bs, be, br, reach, key, end, cnt, row, du)


def _first_small_shift(dur: I64) -> int:
    """The lowest level at which some slice is shorter than MIN_VIS_BUCKETS buckets."""
    if len(dur) == 0:
        return 63
    m = int(dur.min())
    shift = 0
    while (MIN_VIS_BUCKETS << shift) <= m:
        shift += 1
    return shift


class RowSource:
    """The slices one display row shows, sorted by start, with their level-of-detail pyramid.

    Parameters
    ----------
    rows : int64 array
        Slice rows, sorted by start.
    trace : Trace
        The trace they belong to.
    """

    def __init__(self, rows: I64, trace: Trace) -> None:
        self.rows = rows
        self.n = len(rows)
        self._trace = trace
        self.levels: list[Level] | None = None  # kept levels, ascending shift; [0] is raw
        self.first_small = 63

    @property
    def built(self) -> bool:
        """Whether the pyramid exists (frames of this row are then cheap)."""
        return self.levels is not None

    def build_steps(self) -> Iterator[int]:
        """Build the pyramid one level at a time, yielding the slices processed per step.

        The pyramid is published (``levels`` set) only at the end, in one assignment, so
        another thread reading :attr:`levels` sees either nothing or all of it.
        """
        s = self._trace.slices
        start = s.start_ns[self.rows]
        end = start + s.dur_ns[self.rows]
        raw = Level.raw(start, end, self.rows)
        yield self.n
        levels = [raw]
        first = _first_small_shift(end - start)
        top = max(int(end.max()).bit_length() + 1 if self.n else 0, first)
        cur = raw
        shift = first
        while shift <= top and len(cur) > 1:
            nxt = coarsen(cur, shift)
            yield len(cur)
            if len(nxt) <= KEEP_RATIO * len(levels[-1]):
                levels.append(nxt)
            cur = nxt
            shift += 1
        if cur is not levels[-1] and cur.shift > levels[-1].shift:
            levels.append(cur)
        self.first_small = first
        self.levels = levels

    def build(self) -> None:
        """Build the pyramid now."""
        for _ in self.build_steps():
            pass

    def level_at(self, shift: int) -> Level:
        """The items at level ``shift`` that may be visible anywhere (built if needed)."""
        if self.levels is None:
            self.build()
        assert self.levels is not None
        best = self.levels[0]
        for lv in self.levels:
            if lv.shift <= shift:
                best = lv
            else:
                break
        if shift < self.first_small:
            return best
        return coarsen(best, shift)

    def window_at(self, shift: int, t0_ns: int, t1_ns: int, with_reach: bool = False) -> Level:
        """The items at level ``shift`` that may be visible in ``[t0_ns, t1_ns)``.

        ``with_reach`` also computes ``big_reach``, so that windows of the result can be taken.
        """
        if self.levels is None:
            self.build()
        assert self.levels is not None
        best = self.levels[0]
        for lv in self.levels:
            if lv.shift <= shift:
                best = lv
            else:
                break
        w = best.window(t0_ns, t1_ns)
        if shift < self.first_small or best.shift == shift:
            return w
        return coarsen(w, shift, with_reach=with_reach)


def level_for(t0_ns: float, t1_ns: float, width_px: int) -> int:
    """The level of a view: ``floor(log2(ns per pixel))``, at least 0."""
    px_ns = (t1_ns - t0_ns) / max(int(width_px), 1)
    if px_ns < 2:
        return 0
    return int(np.floor(np.log2(px_ns)))


__all__ = ["KEEP_RATIO", "MIN_VIS_BUCKETS", "Level", "RowSource", "coarsen", "level_for"]
