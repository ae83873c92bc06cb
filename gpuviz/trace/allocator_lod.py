"""Level of detail for the active memory timeline: a stacked raster whose cost grows with pixels.

The timeline draws every live allocation as a band stacked over time, like memory_viz's
"Active Memory Timeline": after entry ``k`` the live allocations (:mod:`gpuviz.trace.allocations`,
in stacking order) are piled up from zero, each as tall as its block. memory_viz draws one SVG
polygon per allocation and gives up past some thousands (the rest becomes one "summarized"
band). Here a frame is a raster of the pixels that are shown, with the Timeline's LOD rules
(STYLE.md, :func:`gpuviz.trace.lod.level_for`):

1. Columns. A level ``L`` cuts time into buckets of ``2**L`` ns; a frame uses the level whose
   bucket is the pixel width rounded down to a power of two, so a slightly changed zoom or a
   pan reuses it. A bucket shows the state after its entry with the highest live bytes (so no
   peak is lost at any zoom), an empty bucket the state after the last entry before it.
   :class:`ColumnPyramid` keeps, per level, each nonempty bucket's peak entry and last entry;
   it is built once (O(entries)), each level from the one below.
2. Pairs (:func:`stack_raster`). An allocation is live in a contiguous run of columns (the
   columns' entries only grow), found by two binary searches; the (column, allocation) pairs,
   grouped by column in stacking order (a stable radix sort on the column), give each band's
   bottom by one cumulative sum.
3. Pixels. A band covers the pixel rows between its rounded bottom and top, so the bands of a
   column tile it exactly; a band thinner than half a pixel takes no row of its own (its bytes
   still count: the column's height is exact). With one filler band per column that makes it
   exactly as tall as the image, a single ``np.repeat`` lays out every pixel, column-major.

The raster has one column per bucket; the view stretches it over the buckets' time range.
Cost per frame: O(buckets in view) for the columns, O(allocations that may be live in view)
for the binary searches (:class:`LiveRows`; O(allocations) without it), O(pairs + pixels) for
the rest (``benchmarks/bench_memory.py`` measures it at 1M entries).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuviz.trace.arrays import transposed
from gpuviz.trace.lod import level_for

I64 = npt.NDArray[np.int64]
U32 = npt.NDArray[np.uint32]

FINEST_BUCKETS = 1 << 16
"""The pyramid's finest level has about this many buckets over the whole window; views zoomed
in further take their columns from the entries directly (there are few of them)."""


@dataclass
class Columns:
    """What each column of a frame shows.

    Attributes
    ----------
    entry : int64 (n,)
        The entry whose state the column shows (``-1``: the state when the window began).
    shown : bool (n,)
        False outside the recorded window (drawn empty).
    x0_ns, bucket_ns : int
        Column ``i`` spans ``[x0_ns + i * bucket_ns, x0_ns + (i + 1) * bucket_ns)``.
    """

    entry: I64
    shown: npt.NDArray[np.bool_]
    x0_ns: int
    bucket_ns: int

    def __len__(self) -> int:
        return len(self.entry)


def _ranges(lo: I64, counts: I64) -> I64:
    """``concatenate([arange(l, l + c) for l, c in zip(lo, counts)])`` without a loop."""
    total = int(counts.sum())
    offs = np.cumsum(counts) - counts
    return np.repeat(lo - offs, counts) + np.arange(total, dtype=np.int64)


def _pack(live: I64, entry: I64) -> I64:
    """Keys whose max is the highest live bytes, and among equals the earliest entry."""
    top = int(live.max()) if len(live) else 0
    shift = max(0, top.bit_length() - 38)  # live bytes in 38 bits, the entry in 24
    mask = (1 << 24) - 1
    return ((live >> shift) << 24) | (mask - np.minimum(entry, mask))


@dataclass
class _Level:
    bucket: I64  # nonempty bucket ids, ascending
    peak: I64  # entry with the highest live bytes in the bucket
    last: I64  # last entry in the bucket


@dataclass
class ColumnPyramid:
    """Per level, each nonempty bucket's peak entry and last entry (see the module docstring).

    Parameters
    ----------
    t_ns
        Entry times in ns from the view's origin, non-decreasing.
    live
        Live bytes just after each entry.
    """

    t_ns: I64
    live: I64
    levels: dict[int, _Level] = field(default_factory=dict)
    finest: int = 0

    def __post_init__(self) -> None:
        n = len(self.t_ns)
        if n == 0:
            return
        span = max(int(self.t_ns[-1] - self.t_ns[0]), 1)
        self.finest = level_for(0, span, FINEST_BUCKETS)
        # the finest level from the entries; keys pack (live, entry) for a max-reduce
        b = self.t_ns >> self.finest
        starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
        ends = np.r_[starts[1:], n] - 1
        idx = np.arange(n, dtype=np.int64)
        # entries beyond 2**24 wrap in the key: compare within a bucket only (offsets)
        local = idx - np.repeat(starts, np.diff(np.r_[starts, n]))
        key = _pack(self.live, local)
        best = np.maximum.reduceat(key, starts)
        peak = starts + ((1 << 24) - 1 - (best & ((1 << 24) - 1)))
        level = _Level(b[starts], peak.astype(np.int64), ends.astype(np.int64))
        self.levels[self.finest] = level
        top = level_for(0, span, 1) + 1
        for L in range(self.finest + 1, top + 1):
            level = self._coarsen(level)
            self.levels[L] = level
            if len(level.bucket) == 1:
                break

    def _coarsen(self, fine: _Level) -> _Level:
        b = fine.bucket >> 1
        starts = np.flatnonzero(np.r_[True, b[1:] != b[:-1]])
        ends = np.r_[starts[1:], len(b)] - 1
        # the higher live of the (at most two) children; the earlier on a tie
        key = _pack(
            self.live[fine.peak],
            np.arange(len(b), dtype=np.int64) - np.repeat(starts, np.diff(np.r_[starts, len(b)])),
        )
        best = np.maximum.reduceat(key, starts)
        child = starts + ((1 << 24) - 1 - (best & ((1 << 24) - 1)))
        return _Level(b[starts], fine.peak[child], fine.last[ends])

    def columns(self, t0_ns: float, t1_ns: float, width_px: int) -> Columns:
        """The columns of the view ``[t0_ns, t1_ns)`` drawn ``width_px`` wide."""
        n = len(self.t_ns)
        L = level_for(t0_ns, t1_ns, width_px)
        if n == 0:
            return Columns(
                np.full(1, -1, np.int64), np.zeros(1, bool), int(t0_ns), max(int(t1_ns - t0_ns), 1)
            )
        L = min(L, max(self.levels)) if self.levels else L
        size = 1 << L
        b0 = int(np.floor(t0_ns / size))
        b1 = max(int(np.ceil(t1_ns / size)), b0 + 1)
        ids = np.arange(b0, b1, dtype=np.int64)
        if L >= self.finest and L in self.levels:
            lv = self.levels[L]
            lo = np.searchsorted(lv.bucket, b0, "left")
            hi = np.searchsorted(lv.bucket, b1, "left")
            entry = np.empty(len(ids), dtype=np.int64)
            # an empty bucket: the last entry before it
            prev = np.searchsorted(lv.bucket, ids, "left") - 1
            entry[:] = np.where(prev >= 0, lv.last[np.maximum(prev, 0)], -1)
            hit = lv.bucket[lo:hi] - b0
            entry[hit] = lv.peak[lo:hi]
        else:  # zoomed in below the pyramid: from the entries in view
            edges = ids * size
            e_lo = np.searchsorted(self.t_ns, edges, "left")
            e_hi = np.searchsorted(self.t_ns, edges + size, "left")
            entry = e_lo - 1
            full = np.flatnonzero(e_hi > e_lo)
            if len(full):
                counts = e_hi[full] - e_lo[full]
                idx = _ranges(e_lo[full], counts)
                local = idx - np.repeat(e_lo[full], counts)
                best = np.maximum.reduceat(_pack(self.live[idx], local), np.cumsum(counts) - counts)
                entry[full] = e_lo[full] + ((1 << 24) - 1 - (best & ((1 << 24) - 1)))
        first, last = int(self.t_ns[0]), int(self.t_ns[-1])
        shown = ((ids + 1) * size > first) & (ids * size <= last)
        return Columns(entry.astype(np.int64), shown, b0 * size, size)


class LiveRows:
    """Which allocations may be live at some of a few entries, without a pass over all of them.

    A frame shows one entry per column: a few thousand of millions. A pass over every
    allocation for each frame cost more than the rest of the raster (35 ms a frame at 3M
    entries on 2 cores, a pan), and so did sorting them all (226 ms of a full-view frame of
    12M entries). The allocations are split into tiers by how many entries they live (at most
    64, 1024, 16384, ... up to ``span``; most live a few dozen); one that lives at most ``S``
    entries and is live at entry ``k`` starts in ``(k - S, k]``, so a tier's candidates for
    the entries shown are slices of it sorted by start. The long-lived rest (at most a few
    per long stretch of entries, such as a model's weights) are checked one by one.

    Parameters
    ----------
    row_start, row_end
        The allocations in stacking order: live after entry ``k`` when
        ``row_start <= k < row_end``.
    """

    TIER_GROWTH = 16
    """Each tier's longest life is this many times the one before (the first: 64)."""

    def __init__(self, row_start: I64, row_end: I64) -> None:
        n = int(row_end.max()) if len(row_end) else 0
        self.span = max(n // 64, 1024)
        lives = row_end - row_start
        self.start, self.end = row_start, row_end
        self.tiers: list[tuple[int, I64, I64]] = []  # (longest life, rows by start, starts)
        below = 0
        limit = 64
        while True:
            top = min(limit, self.span)
            rows = np.flatnonzero((lives > below) & (lives <= top))
            rows = rows[np.argsort(row_start[rows], kind="stable")]
            self.tiers.append((top, rows, row_start[rows]))
            if top >= self.span:
                break
            below, limit = top, limit * self.TIER_GROWTH
        # lives of 0 or less (a free before its alloc: damaged input) are never live
        self.long = np.flatnonzero(lives > self.span)

    @property
    def short(self) -> I64:
        """The rows of every tier (all but :attr:`long` and those never live)."""
        return np.concatenate([rows for _, rows, _ in self.tiers])

    def between(self, k0: int, k1: int) -> I64:
        """Rows (ascending: stacking order) that may be live after some entry in ``[k0, k1]``;
        every row that is live there is among them."""
        rows = self._candidates(np.array([k0], dtype=np.int64), np.array([k1], dtype=np.int64))
        return rows[(self.start[rows] <= k1) & (self.end[rows] > k0)]

    def at(self, ks: I64) -> I64:
        """Rows (ascending) that may be live after some entry of ``ks`` (sorted, distinct);
        every row that is live after one of them is among them."""
        if len(ks) == 0:
            return np.empty(0, dtype=np.int64)
        return self._candidates(ks, ks)

    def _candidates(self, lo_k: I64, hi_k: I64) -> I64:
        """Rows that may be live after an entry in one of the ranges ``[lo_k[i], hi_k[i]]``
        (sorted, apart), ascending."""
        parts = [self.long]
        for life, rows, starts in self.tiers:
            if len(rows) == 0:
                continue
            # ranges closer than a life share their start slices: merge them
            new = np.ones(len(lo_k), dtype=bool)
            new[1:] = lo_k[1:] - life > hi_k[:-1]
            first = np.flatnonzero(new)
            last = np.append(first[1:], len(lo_k)) - 1
            a = np.searchsorted(starts, lo_k[first] - life, "right")
            b = np.searchsorted(starts, hi_k[last], "right")
            parts.append(rows[_ranges(a, b - a)])
        cand = np.concatenate(parts)
        n = len(self.start)
        if len(cand) > n // 32:
            # many (a full view): a mask over every row gives them in order, a sort would not
            keep = np.zeros(n, dtype=bool)
            keep[cand] = True
            return np.flatnonzero(keep)
        cand.sort()
        return cand


def stack_raster(
    columns: Columns,
    row_start: I64,
    row_end: I64,
    row_bytes: I64,
    row_value: U32,
    height: int,
    y_max_bytes: float,
    live: LiveRows | None = None,
    row_major: bool = False,
) -> U32:
    """Each column's stacked live allocations as pixels: a ``(len(columns), height)`` grid.

    Column-major: row ``c`` of the result is column ``c`` from the top pixel down (one
    ``np.repeat`` lays out every pixel so). ``row_major``: the ``(height, len(columns))``
    transpose instead, C-contiguous, as an image that Qt blits (copied in blocks:
    :func:`~gpuviz.trace.arrays.transposed`).

    Parameters
    ----------
    columns
        From :meth:`ColumnPyramid.columns`.
    row_start, row_end, row_bytes
        The allocations in stacking order: live after entry ``k`` when
        ``row_start <= k < row_end``, ``row_bytes`` tall.
    row_value
        The value (a premultiplied ARGB colour) painted for each allocation; 0 is empty.
    height, y_max_bytes
        Pixel rows, and the bytes the top row reaches. Row 0 is the top.
    live
        A :class:`LiveRows` of the same allocations: only those that may be live in view are
        looked at (a view keeps one for its frames). Without it, every allocation is.
    """
    height = max(int(height), 1)
    width = len(columns)
    shown = np.flatnonzero(columns.shown)
    if len(row_start) == 0 or len(shown) == 0 or y_max_bytes <= 0:
        return np.zeros((height, width) if row_major else (width, height), dtype=np.uint32)
    # the distinct entries the shown columns show (neighbours often show the same one)
    ks, col_of = np.unique(columns.entry[shown], return_inverse=True)
    n_ks = len(ks)
    # columns where each allocation is live: [#ks < start, #ks < end), by binary searches
    # over the distinct entries shown (entry k shows the state after k: start <= k < end)
    cand = live.at(ks) if live is not None else None
    c_lo = np.searchsorted(ks, row_start if cand is None else row_start[cand], "left")
    count = np.searchsorted(ks, row_end if cand is None else row_end[cand], "left") - c_lo
    hit = np.flatnonzero(count > 0)
    rows = hit if cand is None else cand[hit]
    # one band per (column, allocation), stacked in order; then, per column, a filler band
    # that makes it exactly ``height`` pixels tall (so one np.repeat lays out every pixel)
    if len(rows):
        cnt = count[hit]
        col = _ranges(c_lo[hit], cnt)
        row = np.repeat(rows, cnt)
        order = np.argsort(col.astype(np.int16 if n_ks < 32768 else np.int32), kind="stable")
        col, row = col[order], row[order]
    else:
        col = np.empty(0, dtype=np.int64)
        row = np.empty(0, dtype=np.int64)
    size = row_bytes[row]
    top = np.cumsum(size)
    col_first = np.searchsorted(col, np.arange(n_ks + 1), side="left")
    before = np.concatenate([[0], top])[col_first]
    px = height / float(y_max_bytes)
    # pixel boundaries of each band, from the bottom of its column, clipped to the height
    edge = np.minimum(np.rint((top - before[col]) * px).astype(np.int64), height)
    low = np.empty_like(edge)
    low[1:] = edge[:-1]
    low[col_first[:-1][col_first[:-1] < len(col)]] = 0  # the first band of a column starts at 0
    span = edge - low
    filled = np.zeros(n_ks, dtype=np.int64)
    last_band = col_first[1:] - 1
    has = last_band >= col_first[:-1]
    filled[has] = edge[last_band[has]]
    # Top-down pixel order per column: its filler (empty), then its bands from the top one
    # down. Bands under a pixel tall draw nothing: most of them when zoomed out (at 12M
    # entries, 2 MB a pixel). Each kept band's slot is computed, not sorted for: col is in
    # column order, so a band's rank in its column is its index less the column's first.
    keep = np.flatnonzero(span > 0)
    col_k = col[keep]
    per = np.bincount(col_k, minlength=n_ks)
    first_k = np.cumsum(per) - per
    filler_at = first_k + np.arange(n_ks)
    rank = np.arange(len(keep)) - first_k[col_k]
    slot = filler_at[col_k] + per[col_k] - rank  # filler_at + 1 + (per - 1 - rank)
    values = np.zeros(len(keep) + n_ks, dtype=np.uint32)
    values[slot] = row_value[row[keep]]
    spans = np.empty(len(keep) + n_ks, dtype=np.int64)
    spans[filler_at] = height - filled
    spans[slot] = span[keep]
    per_col = np.repeat(values, spans).reshape(n_ks, height)
    if len(shown) == width and n_ks == width:
        # every column shown, each its own entry: nothing to gather
        return transposed(per_col) if row_major else per_col
    # One gather of whole columns (a few MB at full width); hidden columns are then cleared.
    # Neither a flipped view nor an extra all-zero row is copied first: at 1M entries those
    # copies took two thirds of the raster's time.
    which = np.zeros(width, dtype=np.int64)
    which[shown] = col_of
    hidden = None
    if len(shown) < width:
        hidden = np.ones(width, dtype=bool)
        hidden[shown] = False
    out = np.take(per_col, which, axis=0)  # whole rows at a time; per_col[which] is 7x slower
    if hidden is not None:
        out[hidden] = 0
    # Gathering and transposing block by block in one pass measured slower (9.5 against 8.7
    # ms a frame at 3M entries on the VM) than the whole gather and then the blocked copy.
    return transposed(out) if row_major else out


def row_at(
    row_start: I64, row_end: I64, row_bytes: I64, k: int, level_bytes: float
) -> tuple[int, float]:
    """The allocation (row) whose band holds ``level_bytes`` after entry ``k``, and its bottom.

    Returns ``(-1, 0.0)`` above the stack.
    """
    live = np.flatnonzero((row_start <= k) & (row_end > k))
    if len(live) == 0 or level_bytes < 0:
        return -1, 0.0
    top = np.cumsum(row_bytes[live])
    i = int(np.searchsorted(top, level_bytes, side="right"))
    if i >= len(live):
        return -1, 0.0
    return int(live[i]), float(top[i] - row_bytes[live[i]])
