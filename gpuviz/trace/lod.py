"""Timeline lane layout and level of detail (LOD): pure numpy, no Qt.

The timeline (``gpuviz.gui.timeline.qt_timeline.QtTimeline``) draws a :class:`Trace` as rows of
rectangles. This module decides which rows there are (:func:`build_layout`) and, for a view
``[t0_ns, t1_ns)`` drawn ``width_px`` pixels wide, which rectangles to draw
(:meth:`TimelineLod.frame`), so that the cost of a frame grows with pixels × rows, not with
events (Perfetto's and Tracy's approach; see STYLE.md).

Layout
------
Rows are grouped rank → device (GPU streams, each stream's ``gpu_user_annotation`` row above
it), then rank → process (CPU threads: each thread's ``user_annotation`` row above its cpu ops
and runtime calls). Every group has a header row; every track with slices has one row per
depth (nesting on CPU threads, overflow rows for overlapping GPU slices); tracks without
slices are left out. A folded group, or a folded track, takes one row that shows all of its
slices merged.

Level of detail
---------------
A *level* ``L`` has buckets of ``2**L`` ns; a frame uses the level whose bucket is the pixel
width rounded down to a power of two, so a slightly changed zoom reuses the same level. At
level ``L`` a slice at least ``MIN_VIS_BUCKETS`` buckets long is kept as itself (a *big*
item). Shorter slices are folded into their start bucket: a bucket *entry* keeps the count of
slices in it, the end of the last one, and the longest one (its colour and hover text). Levels
are built bottom-up, each from the one below; a level is kept only when it has at most half the
items of the last kept one, so a pyramid costs O(n) memory, and a frame merges on the fly from
the nearest kept level below, which has at most about twice the items it needs. Overlapping
slices are never dropped: every slice is either drawn as itself or covered by its bucket.

Output of a frame: per colour key, an ``(N, 4)`` float64 array of ``(x_us, y_row, w_us,
h_row)`` rectangles, ``x`` in microseconds from the trace zero (small floats: bars at huge x
do not render), ``y`` in row units; the view maps them to pixels and paints them with
:func:`raster_rows` (one row of pixels per lane, then one image). Rectangles are clipped to the view (plus a margin), are at least one
pixel wide, and neighbours of one colour on one row less than half a pixel apart are joined
(drawing costs per rectangle, and a row of launches is one colour).

Building pyramids costs about half a second per million slices (measured here: 2.3M slices,
0.7-1.2 s on 2 busy cores); :meth:`TimelineLod.build_iter` does it in small steps (one row
and level at a time, tens of ms each) so a worker thread can run it without holding up the
GUI, and a row whose pyramid is not built yet is reported in :attr:`Frame.pending_rows`
instead of being drawn slowly.

Interface (the GUI relies on it; keep it stable)
------------------------------------------------
``build_layout(trace, folded_groups=(), folded_tracks=()) -> Layout``
    Rows top to bottom (``Layout.sources[row]`` names what a row draws; ``row_of``/``rows_of``
    map ``(track, depth)`` to a row).
``TimelineLod(trace, sync_build_max=SYNC_BUILD_MAX)``
    ``frame(layout, rows, t0_ns, t1_ns, width_px) -> Frame``; ``unbuilt(layout)``,
    ``is_ready(key, groups)``, ``build_iter(keys, groups)`` (worker thread);
    ``slices_near(layout, row, t_ns, tol_ns) -> (slice row, count)`` (hover, click);
    ``source(key, groups).rows`` (the slices a row shows); ``colours.of(rows)`` (colour keys).
``coarsen(level, shift)``, ``Level.raw(start, end, rows)``, ``level_for(t0, t1, width_px)``
    The LOD math itself.
``raster_rows(x0_px, x1_px, row, value, n_rows, width_px)``
    Paint a frame's rectangles (as pixel spans) into a grid of pixel values.

A frame keeps, per row, the items of a window three views wide at its level, so that a pan
within it only takes a window of that (Perfetto loads 3× the visible window for the same
reason); a zoom to another level queries the pyramid again.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import Kind, Trace, TrackKind

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
F64 = npt.NDArray[np.float64]

MIN_VIS_BUCKETS = 3
"""Slices shorter than this many buckets are folded into a bucket entry (Tracy's MinVisSize)."""

KEEP_RATIO = 0.5
"""A level is kept when it has at most this share of the items of the last kept level."""

SYNC_BUILD_MAX = 50_000
"""Rows with at most this many slices get their pyramid built on first use, on any thread."""

ROW_HEIGHT = 0.84
"""Height of a slice rectangle in row units (the rest is the gap between rows)."""

# Colour keys: kinds get one key each; kernels and cpu ops get a per-name hue.
N_KERNEL_HUES = 24
N_CPU_SHADES = 6
KERNEL_KEY0 = 16
CPU_KEY0 = KERNEL_KEY0 + N_KERNEL_HUES
N_COLOUR_KEYS = CPU_KEY0 + N_CPU_SHADES


# --------------------------------------------------------------------------------------------
# Layout


class RowKind(IntEnum):
    """What a display row is."""

    GROUP = 0  # a group's header (shows the whole group's slices when folded)
    TRACK = 1  # one depth of a track, or all of a folded track


SourceKey = tuple[int, int, int]
"""Names the slices a row shows: ``(0, track, depth)``, ``(1, track, -1)`` for all depths of
a track, ``(2, group, -1)`` for all tracks of a group."""


@dataclass(frozen=True)
class Group:
    """A foldable block of tracks: one GPU of one rank, or one CPU process of one rank.

    Attributes
    ----------
    label : str
        ``"rank 0 · GPU 1"``, ``"python3 (pid 1234)"``, ``"CPU pid 1234"``, ``"CPU · Spans"``.
    rank : int
        -1 for a lone file.
    gpu : bool
        GPU tracks (streams, annotations) or CPU tracks.
    tracks : tuple of int
        Its tracks in display order.
    """

    label: str
    rank: int
    gpu: bool
    tracks: tuple[int, ...]


@dataclass
class Layout:
    """The rows of a timeline, top to bottom.

    Attributes
    ----------
    groups : list of Group
        In display order.
    track_depths : int array
        Rows each track has when unfolded (max depth + 1; 1 for an empty track).
    kind, group, track, depth : int arrays
        Per display row: :class:`RowKind`, its group, its track (-1 for a header) and depth
        (-1 when it shows all depths).
    labels : list of str
        Per display row; empty for the second and later depth rows of a track.
    sources : list of SourceKey or None
        What each row draws; None for an unfolded group's header.
    folded_groups, folded_tracks : frozenset of int
        The fold state this layout was built with.
    """

    groups: list[Group]
    track_depths: I64
    kind: npt.NDArray[np.uint8]
    group: I32
    track: I32
    depth: I32
    labels: list[str]
    sources: list[SourceKey | None]
    folded_groups: frozenset[int] = frozenset()
    folded_tracks: frozenset[int] = frozenset()
    _row_of_unit: dict[tuple[int, int], int] = field(default_factory=dict, repr=False)
    _unit_row: tuple[I64, I64] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.kind)

    def row_of(self, track: int, depth: int) -> int:
        """The display row that shows ``(track, depth)``: its own row, its folded track's row,
        or its folded group's header; -1 for an unknown track."""
        return self._row_of_unit.get((int(track), max(int(depth), 0)), -1)

    def rows_of(self, tracks: npt.ArrayLike, depths: npt.ArrayLike) -> I64:
        """Vectorized :meth:`row_of`: the display rows of ``(tracks[i], depths[i])``."""
        if self._unit_row is None:
            base = np.concatenate(([0], np.cumsum(self.track_depths))).astype(np.int64)
            table = np.full(int(base[-1]), -1, dtype=np.int64)
            for (tk, dp), r in self._row_of_unit.items():
                if 0 <= dp < self.track_depths[tk]:
                    table[base[tk] + dp] = r
            self._unit_row = (base, table)
        base, table = self._unit_row
        t = np.asarray(tracks, dtype=np.int64)
        d = np.clip(np.asarray(depths, dtype=np.int64), 0, None)
        ok = (t >= 0) & (t < len(self.track_depths))
        out = np.full(len(t), -1, dtype=np.int64)
        tt, dd = t[ok], d[ok]
        dd = np.minimum(dd, self.track_depths[tt] - 1)
        out[ok] = table[base[tt] + dd]
        return out

    def foldable_track(self, track: int) -> bool:
        """Whether a track has more than one depth row."""
        return bool(self.track_depths[track] > 1)


def _track_order_key(trace: Trace, t: int) -> tuple[int, int, int, int, int]:
    tr = trace.tracks
    kind = int(tr.kind[t])
    gpu = kind in (TrackKind.GPU_STREAM, TrackKind.GPU_ANNOTATION)
    if gpu:
        # Per stream: the annotation row first, above the stream's slices.
        return (
            int(tr.rank[t]),
            0,
            int(tr.device[t]),
            int(tr.stream[t]),
            0 if kind == TrackKind.GPU_ANNOTATION else 1,
        )
    pid = int(tr.pid[t])
    # Real pids first; string and negative ids (Kineto's "Spans", "Traces") after them.
    return (
        int(tr.rank[t]),
        1 if pid >= 0 else 2,
        pid,
        int(tr.tid[t]),
        0 if kind == TrackKind.CPU_ANNOTATION else 1,
    )


def track_depths(trace: Trace) -> I64:
    """Rows per track when unfolded: max depth + 1, and 1 for a track with no slices."""
    n = len(trace.tracks)
    out = np.ones(n, dtype=np.int64)
    if len(trace.slices) == 0 or n == 0:
        return out
    off = trace.track_offsets
    nonempty = np.flatnonzero(off[1:] > off[:-1])
    if len(nonempty):
        mx = np.maximum.reduceat(trace.slices.depth, off[nonempty])
        out[nonempty] = mx.astype(np.int64) + 1
    return out


STRING_ID_BASE = -(1 << 40)
"""Ids at or below this are strings interned by the importer: ``STRING_ID_BASE - symbol id``."""


def id_text(trace: Trace, code: int) -> str:
    """A pid/tid as the file wrote it: the string for an interned string id, else the number."""
    if code <= STRING_ID_BASE and 0 <= STRING_ID_BASE - code < len(trace.symbols):
        return trace.symbols[STRING_ID_BASE - code]
    return str(code)


def process_names(trace: Trace) -> dict[tuple[int, str], str]:
    """``(rank code, pid text) -> process_name`` from the trace's metadata events."""
    out: dict[tuple[int, str], str] = {}
    for d in trace.metadata_events:
        if d.get("name") != "process_name":
            continue
        name = (d.get("args") or {}).get("name")
        rank = d.get("rank")
        if isinstance(name, str) and name:
            out[(-1 if rank is None else int(rank), str(d.get("pid")))] = name
    return out


def _group_label(
    trace: Trace, rank: int, gpu: bool, key: int, names: dict[tuple[int, str], str]
) -> str:
    prefix = f"rank {rank} · " if rank >= 0 else ""
    if gpu:
        return f"{prefix}GPU {key}"
    pid = id_text(trace, key)
    name = names.get((rank, pid))
    if not pid or key == -1:  # -1: the model's missing integer
        return f"{prefix}CPU (no pid)"
    if not pid.lstrip("-").isdigit():
        return f"{prefix}CPU · {pid}"
    return f"{prefix}{name} (pid {pid})" if name else f"{prefix}CPU pid {pid}"


def _track_label(trace: Trace, t: int) -> str:
    tr = trace.tracks
    kind = int(tr.kind[t])
    raw = trace.track_label(t) if 0 <= int(tr.label[t]) < len(trace.symbols) else ""
    if kind == TrackKind.GPU_STREAM:
        return f"stream {int(tr.stream[t])}"
    if kind == TrackKind.GPU_ANNOTATION:
        return f"stream {int(tr.stream[t])} · annotations"
    name = raw or f"thread {id_text(trace, int(tr.tid[t]))}"
    if kind == TrackKind.CPU_ANNOTATION:
        return f"{name} · annotations"
    return name


def build_layout(
    trace: Trace,
    folded_groups: Iterable[int] = (),
    folded_tracks: Iterable[int] = (),
    depths: I64 | None = None,
    show_empty: bool = False,
) -> Layout:
    """Lay out the rows of a trace's timeline.

    Parameters
    ----------
    trace : Trace
        The trace.
    folded_groups : iterable of int
        Groups (indices into the layout's ``groups``, which do not depend on folding) shown as
        one row.
    folded_tracks : iterable of int
        Tracks shown as one row whatever their depth.
    depths : int array, optional
        :func:`track_depths` of the trace, when the caller has it already.
    show_empty : bool
        Give tracks without slices a row too.

    Returns
    -------
    Layout
    """
    fg, ft = frozenset(int(g) for g in folded_groups), frozenset(int(t) for t in folded_tracks)
    depths = track_depths(trace) if depths is None else depths
    # Tracks without slices (thread names of GPU "processes", idle threads) get no row, as in
    # Perfetto: they would push the lanes that matter off screen.
    off = trace.track_offsets
    shown = [t for t in range(len(trace.tracks)) if off[t + 1] > off[t] or show_empty]
    order = sorted(shown, key=lambda t: _track_order_key(trace, t))
    names = process_names(trace)
    groups: list[Group] = []
    members: dict[tuple[int, int, int], list[int]] = {}
    for t in order:
        k = _track_order_key(trace, t)
        gk = (k[0], k[1], k[2])
        if gk not in members:
            members[gk] = []
        members[gk].append(t)
    for (rank, where, key), tracks in members.items():
        cpu = 0 if where == 0 else 1
        groups.append(
            Group(_group_label(trace, rank, cpu == 0, key, names), rank, cpu == 0, tuple(tracks))
        )

    kind: list[int] = []
    grp: list[int] = []
    trk: list[int] = []
    dep: list[int] = []
    labels: list[str] = []
    sources: list[SourceKey | None] = []
    row_of: dict[tuple[int, int], int] = {}
    for gi, g in enumerate(groups):
        folded = gi in fg
        header = len(kind)
        kind.append(RowKind.GROUP)
        grp.append(gi)
        trk.append(-1)
        dep.append(-1)
        labels.append(g.label)
        sources.append((2, gi, -1) if folded else None)
        for t in g.tracks:
            nd = int(depths[t])
            if folded:
                for d in range(nd):
                    row_of[(t, d)] = header
                continue
            label = _track_label(trace, t)
            if t in ft or nd == 1:
                row = len(kind)
                kind.append(RowKind.TRACK)
                grp.append(gi)
                trk.append(t)
                dep.append(-1 if nd > 1 else 0)
                labels.append(label)
                sources.append((1, t, -1) if nd > 1 else (0, t, 0))
                for d in range(nd):
                    row_of[(t, d)] = row
                continue
            for d in range(nd):
                row_of[(t, d)] = len(kind)
                kind.append(RowKind.TRACK)
                grp.append(gi)
                trk.append(t)
                dep.append(d)
                labels.append(label if d == 0 else "")
                sources.append((0, t, d))
    return Layout(
        groups=groups,
        track_depths=depths,
        kind=np.asarray(kind, dtype=np.uint8),
        group=np.asarray(grp, dtype=np.int32),
        track=np.asarray(trk, dtype=np.int32),
        depth=np.asarray(dep, dtype=np.int32),
        labels=labels,
        sources=sources,
        folded_groups=fg,
        folded_tracks=ft,
        _row_of_unit=row_of,
    )


# --------------------------------------------------------------------------------------------
# Levels


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


# --------------------------------------------------------------------------------------------
# Colours


def name_hues(names: Sequence[str], n: int) -> npt.NDArray[np.int16]:
    """A stable hue bucket in ``[0, n)`` for each name (crc32: the same in every run)."""
    return np.fromiter(
        (zlib.crc32(s.encode("utf-8", "replace")) % n for s in names),
        dtype=np.int16,
        count=len(names),
    )


# Plain ints: comparing arrays with IntEnum members goes through slow enum attribute lookups.
_KERNEL, _CPU_OP, _PYTHON_FUNCTION = int(Kind.KERNEL), int(Kind.CPU_OP), int(Kind.PYTHON_FUNCTION)


class ColourKeys:
    """Colour keys of slices: one per :class:`Kind`, a per-name hue for kernels and cpu ops.

    Keys ``0..15`` are ``Kind`` values; ``KERNEL_KEY0 + hue`` for kernels;
    ``CPU_KEY0 + shade`` for cpu ops and python functions. The GUI maps keys to colours.
    """

    TABLE_NOW_MAX = 300_000
    """Traces up to this many slices get the per-slice key table on first use, on any thread;
    bigger ones when :meth:`prepare` runs (the LOD worker calls it)."""

    def __init__(self, trace: Trace) -> None:
        self._trace = trace
        self._hue: npt.NDArray[np.int16] | None = None
        self._table: npt.NDArray[np.int16] | None = None

    def prepare(self) -> None:
        """Compute every slice's key once (about 20 ms per million slices)."""
        if self._table is None:
            n = len(self._trace.slices)
            table = np.empty(n, dtype=np.int16)
            step = 1 << 20
            for i in range(0, n, step):  # in steps: a worker thread stays interruptible
                table[i : i + step] = self._compute(np.arange(i, min(i + step, n)))
            self._table = table

    def _hues(self) -> npt.NDArray[np.int16]:
        if self._hue is None or len(self._hue) < len(self._trace.symbols):
            self._hue = name_hues(self._trace.symbols.strings, N_KERNEL_HUES * N_CPU_SHADES)
        return self._hue

    def of(self, rows: npt.ArrayLike) -> npt.NDArray[np.int16]:
        """Colour keys of slice rows."""
        rows = np.asarray(rows, dtype=np.int64)
        if self._table is None and len(self._trace.slices) <= self.TABLE_NOW_MAX:
            self.prepare()
        if self._table is not None:
            return self._table[rows]
        return self._compute(rows)

    def _compute(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int16]:
        s = self._trace.slices
        kind = s.kind[rows].astype(np.int16)
        out = kind.copy()
        kern = kind == _KERNEL
        cpu = (kind == _CPU_OP) | (kind == _PYTHON_FUNCTION)
        if kern.any() or cpu.any():
            hue = self._hues()[s.name[rows]]
            out[kern] = KERNEL_KEY0 + hue[kern] % N_KERNEL_HUES
            out[cpu] = CPU_KEY0 + hue[cpu] % N_CPU_SHADES
        return out


# --------------------------------------------------------------------------------------------
# Frames

RUN_GAP_PX = 0.5
"""Rectangles of one colour on one row closer than this (pixels) are drawn as one."""


def _one_per_pixel(
    start: I64, end: I64, row: I64, dur: I64, t0_ns: int, px_ns: float
) -> tuple[I64, I64, I64]:
    """Join entries (sorted by start) that begin in the same pixel column.

    Buckets are half a pixel to a pixel wide, so up to two entries share a column; the one
    drawn spans both and shows the longer slice (Perfetto: per pixel, the longest slice).
    """
    col = np.floor((start - t0_ns) / px_ns).astype(np.int64)
    new = np.empty(len(col), dtype=bool)
    new[0] = True
    np.not_equal(col[1:], col[:-1], out=new[1:])
    if new.all():
        return start, end, row
    first = np.flatnonzero(new)
    gid = np.cumsum(new) - 1
    dmax = np.maximum.reduceat(dur, first)
    cand = np.flatnonzero(dur == dmax[gid])
    cg = gid[cand]
    win = cand[np.concatenate(([True], cg[1:] != cg[:-1]))]
    return start[first], np.maximum.reduceat(end, first), row[win]


def _merge_runs(
    x_px: F64, w_px: F64, y: F64, key: npt.NDArray[np.int16], width_px: int
) -> tuple[F64, F64, F64, npt.NDArray[np.int16]]:
    """Sort rectangles by (colour, row, x) and join same-colour neighbours on a row.

    The input is sorted by (row, x), so a stable sort on the colour alone (a radix sort of
    int16) gives that order. Drawing costs per rectangle; runs of one colour (launches, one
    hot kernel) become one. Coordinates are pixels from the view's left edge, so offsets stay
    exact in float64.
    """
    order = np.argsort(key, kind="stable")
    x, e, yy, k = x_px[order], (x_px + w_px)[order], y[order], key[order]
    n = len(x)
    if n < 2:
        return x, e - x, yy, k
    change = (k[1:] != k[:-1]) | (yy[1:] != yy[:-1])
    gid = np.concatenate(([0], np.cumsum(change)))
    # Shift each (colour, row) group past the previous one so one running maximum serves all.
    span = 8.0 * (width_px + 64) + float(max(-x.min(), 0.0) + max(e.max(), 0.0))
    off = gid * span
    reach = np.maximum.accumulate(e + off)
    new = np.empty(n, dtype=bool)
    new[0] = True
    new[1:] = (x[1:] + off[1:] > reach[:-1] + RUN_GAP_PX) | change
    first = np.flatnonzero(new)
    last = np.concatenate((first[1:], [n])) - 1
    end = reach[last] - off[first]
    return x[first], end - x[first], yy[first], k[first]


def raster_rows(
    x0_px: npt.ArrayLike,
    x1_px: npt.ArrayLike,
    row: npt.ArrayLike,
    value: npt.ArrayLike,
    n_rows: int,
    width_px: int,
) -> npt.NDArray[np.uint32]:
    """Paint horizontal spans into a ``(n_rows, width_px)`` grid of pixel values.

    The timeline draws a frame's rectangles this way instead of one ``drawRects`` entry per
    rectangle: a rectangle one or two pixels wide and a row tall costs a fill call per scan
    line in Qt's raster engine (about 0.5 µs each, measured here: 10 ms for 18k), while this
    costs about a nanosecond per covered cell, and the scan lines of a row are then copied
    whole. Spans are rounded to whole pixels the way a non-antialiased fill rounds them (a
    pixel is covered when its centre is) and are at least one pixel wide; where spans
    overlap, the later one (in the order given) wins, as it would when drawn in that order.

    Parameters
    ----------
    x0_px, x1_px : float arrays
        Left and right edges in pixels from the grid's left edge.
    row : int array
        Grid row of each span (spans on rows outside ``[0, n_rows)`` are skipped).
    value : uint32 array
        Each span's pixel value (e.g. a premultiplied ARGB colour); 0 is left for "empty".
    n_rows, width_px : int
        The grid's size.

    Returns
    -------
    uint32 array (n_rows, width_px)
    """
    n_rows, width_px = max(int(n_rows), 0), max(int(width_px), 1)
    x0 = np.asarray(x0_px, dtype=np.float64)
    x1 = np.asarray(x1_px, dtype=np.float64)
    if len(x0) == 0 or n_rows == 0:
        return np.zeros((n_rows, width_px), dtype=np.uint32)
    # Clip before converting: far-off coordinates must not overflow.
    # Pixel i is covered when its centre i + 0.5 is in [x0, x1): i in [ceil(x0 - ½), ceil(x1 - ½)).
    a = np.ceil(np.clip(x0, -1.0, width_px + 1.0) - 0.5).astype(np.int64)
    b = np.maximum(np.ceil(np.clip(x1, -1.0, width_px + 1.0) - 0.5).astype(np.int64), a + 1)
    np.clip(a, 0, width_px, out=a)
    np.clip(b, 0, width_px, out=b)
    r = np.asarray(row, dtype=np.int64)
    ok = (b > a) & (r >= 0) & (r < n_rows)
    a, b, r = a[ok], b[ok], r[ok]
    val = np.asarray(value, dtype=np.uint32)[ok]
    n = len(a)
    if n == 0:
        return np.zeros((n_rows, width_px), dtype=np.uint32)
    length = b - a
    total = int(length.sum())
    # The cells of every span, concatenated: run k covers base[k] .. base[k] + length[k] - 1.
    base = r * width_px + a
    before = np.cumsum(length) - length
    cells = np.repeat(base - before, length) + np.arange(total, dtype=np.int64)
    # Last span wins, explicitly (plain fancy assignment does not promise an order).
    winner = np.full(n_rows * width_px, -1, dtype=np.int64)
    np.maximum.at(winner, cells, np.repeat(np.arange(n, dtype=np.int64), length))
    # Index -1 (no span) picks the 0 appended at the end.
    return np.append(val, np.uint32(0))[winner].reshape(n_rows, width_px)


def level_for(t0_ns: float, t1_ns: float, width_px: int) -> int:
    """The level of a view: ``floor(log2(ns per pixel))``, at least 0."""
    px_ns = (t1_ns - t0_ns) / max(int(width_px), 1)
    if px_ns < 2:
        return 0
    return int(np.floor(np.log2(px_ns)))


@dataclass
class Frame:
    """What to draw for one view.

    Attributes
    ----------
    t0_ns, t1_ns : int
        The view.
    width_px : int
        Its width in pixels.
    shift : int
        The level used.
    rects : dict of int to float64 array (N, 4)
        Per colour key, ``(x_us, y_row, w_us, h_row)`` rectangles, C-contiguous.
    label_x_us, label_w_us, label_y : float64 arrays
        Items wide enough to carry their name.
    label_rows : int64 array
        Their slice rows.
    pending_rows : list of int
        Display rows not drawn because their pyramid is still being built.
    count : int
        Rectangles in all.
    """

    t0_ns: int
    t1_ns: int
    width_px: int
    shift: int
    rects: dict[int, F64]
    label_x_us: F64
    label_w_us: F64
    label_y: F64
    label_rows: I64
    pending_rows: list[int]
    count: int


class TimelineLod:
    """Row sources and frames of one trace's timeline.

    Parameters
    ----------
    trace : Trace
        The trace; only read.
    sync_build_max : int
        Rows with at most this many slices build their pyramid on first use; bigger ones wait
        for :meth:`build_iter` (run it on a worker thread) and are pending until then.
    """

    def __init__(self, trace: Trace, sync_build_max: int = SYNC_BUILD_MAX) -> None:
        self.trace = trace
        self.sync_build_max = sync_build_max
        self.colours = ColourKeys(trace)
        self.depths = track_depths(trace)
        self._sources: dict[SourceKey, RowSource] = {}
        self._depth_order: dict[int, tuple[I64, I64]] = {}
        # Per row source: (level, lo_ns, hi_ns, items of that level in [lo, hi)): a window
        # three views wide, so frames that pan within it only slice it (Perfetto).
        self._windows: dict[SourceKey, tuple[int, int, int, Level]] = {}
        self.window_hits = 0  # frames' rows served from that cache (tests, benchmarks)

    # -- sources ------------------------------------------------------------------------------

    def _track_rows(self, track: int) -> I64:
        sl = self.trace.track_range(track)
        return np.arange(sl.start, sl.stop, dtype=np.int64)

    def _unit_rows(self, track: int, depth: int) -> I64:
        if self.depths[track] <= 1:
            return self._track_rows(track)
        got = self._depth_order.get(track)
        if got is None:
            sl = self.trace.track_range(track)
            d = self.trace.slices.depth[sl]
            # A stable sort keeps each depth's slices in start order.
            order = np.argsort(d, kind="stable").astype(np.int64) + sl.start
            bounds = np.searchsorted(d[order - sl.start], np.arange(int(self.depths[track]) + 1))
            got = (order, bounds.astype(np.int64))
            self._depth_order[track] = got
        order, bounds = got
        return order[bounds[depth] : bounds[depth + 1]]

    def _rows_of(self, key: SourceKey, groups: Sequence[Group]) -> I64:
        what, a, b = key
        if what == 0:
            return self._unit_rows(a, b)
        if what == 1:
            return self._track_rows(a)
        parts = [self._track_rows(t) for t in groups[a].tracks]
        rows = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        if len(parts) > 1:
            rows = rows[np.argsort(self.trace.slices.start_ns[rows], kind="stable")]
        return rows

    def source_size(self, key: SourceKey, groups: Sequence[Group], exact: bool = False) -> int:
        """Slices a row source holds (without building its pyramid).

        For one depth of a nested track this is the whole track's size unless ``exact`` (which
        sorts the track by depth once: worker-thread work for big tracks).
        """
        what, a, b = key
        off = self.trace.track_offsets
        if what == 0 and self.depths[a] > 1 and a not in self._depth_order and not exact:
            return int(off[a + 1] - off[a])  # an upper bound, good enough to decide sync vs async
        if what == 0 and self.depths[a] <= 1:
            return int(off[a + 1] - off[a])
        if what == 0:
            return len(self._unit_rows(a, b))
        if what == 1:
            return int(off[a + 1] - off[a])
        return int(sum(int(off[t + 1] - off[t]) for t in groups[a].tracks))

    def source(self, key: SourceKey, groups: Sequence[Group]) -> RowSource:
        """The row source of ``key`` (its slices found, its pyramid not necessarily built)."""
        src = self._sources.get(key)
        if src is None:
            src = RowSource(self._rows_of(key, groups), self.trace)
            self._sources[key] = src
        return src

    def is_ready(self, key: SourceKey, groups: Sequence[Group]) -> bool:
        """Whether a frame can draw ``key`` now without heavy work."""
        src = self._sources.get(key)
        if src is not None and src.built:
            return True
        return self.source_size(key, groups) <= self.sync_build_max

    def unbuilt(self, layout: Layout, rows: Iterable[int] | None = None) -> list[SourceKey]:
        """Keys of ``layout``'s rows (all rows by default) whose pyramids are not built."""
        rows = range(len(layout)) if rows is None else rows
        out = []
        for r in rows:
            k = layout.sources[r]
            if k is None:
                continue
            src = self._sources.get(k)
            if src is None or not src.built:
                out.append(k)
        return out

    def build_iter(
        self, keys: Sequence[SourceKey], groups: Sequence[Group]
    ) -> Iterator[tuple[int, int]]:
        """Build the pyramids of ``keys`` in small steps.

        Yields ``(done, total)`` in slices after each step (each a few ms of numpy work), so a
        worker thread can report progress and stop between steps.
        """
        total = sum(self.source_size(k, groups, exact=True) for k in keys)
        done = 0
        self.colours.prepare()
        yield done, total
        for k in keys:
            src = self.source(k, groups)
            if src.built:
                done += src.n
                yield done, total
                continue
            for _ in src.build_steps():
                yield done, total
            done += src.n
            yield done, total

    # -- frames -------------------------------------------------------------------------------

    def frame(
        self,
        layout: Layout,
        rows: Iterable[int],
        t0_ns: int,
        t1_ns: int,
        width_px: int,
        label_min_px: float = 40.0,
    ) -> Frame:
        """The rectangles of the display ``rows`` for the view ``[t0_ns, t1_ns)``.

        Parameters
        ----------
        layout : Layout
            The rows.
        rows : iterable of int
            The display rows to draw (the vertically visible ones); ``y`` is the row index.
        t0_ns, t1_ns : int
            The view, relative to the trace zero.
        width_px : int
            Pixels across the view.
        label_min_px : float
            Items at least this wide are listed for a name label.

        Returns
        -------
        Frame
        """
        t0_ns, t1_ns = int(t0_ns), int(t1_ns)
        width_px = max(int(width_px), 1)
        px_ns = max((t1_ns - t0_ns) / width_px, 1e-3)
        shift = level_for(t0_ns, t1_ns, width_px)
        # Clip to the view plus a margin: far-off coordinates make Qt's rasterizer misbehave.
        margin = int(np.ceil(4 * px_ns)) + (MIN_VIS_BUCKETS + 1 << shift)
        c0, c1 = t0_ns - margin, t1_ns + margin
        xs: list[npt.NDArray[np.int64]] = []
        ys: list[F64] = []
        ws: list[npt.NDArray[np.float64]] = []
        keys: list[npt.NDArray[np.int16]] = []
        lab_x: list[npt.NDArray[np.int64]] = []
        lab_w: list[npt.NDArray[np.int64]] = []
        lab_y: list[F64] = []
        lab_r: list[I64] = []
        pending: list[int] = []
        bucket = 1 << shift
        for r in rows:
            key = layout.sources[r]
            if key is None:
                continue
            if not self.is_ready(key, layout.groups):
                pending.append(int(r))
                continue
            src = self.source(key, layout.groups)
            lv = self._window(key, src, shift, c0, c1)
            n_parts = len(xs)
            # Big items: the slices themselves.
            if len(lv.big_start):
                vis = (lv.big_end > c0) & (lv.big_start < c1)
                bs, be, br = lv.big_start[vis], lv.big_end[vis], lv.big_row[vis]
                x0 = np.maximum(bs, c0)
                x1 = np.minimum(be, c1)
                xs.append(x0)
                ws.append(np.maximum(x1 - x0, px_ns))
                ys.append(np.full(len(x0), r, dtype=np.float64))
                keys.append(self.colours.of(br))
                wide = (x1 - x0) >= label_min_px * px_ns
                if wide.any():
                    lab_x.append(x0[wide])
                    lab_w.append((x1 - x0)[wide])
                    lab_y.append(np.full(int(wide.sum()), r, dtype=np.float64))
                    lab_r.append(br[wide])
            # Entries: one bucket each, from the bucket start to the last end in it.
            if len(lv.ent_bucket):
                es = lv.ent_bucket << lv.shift
                ee = np.maximum(lv.ent_end, es + bucket)
                vis = (ee > c0) & (es < c1)
                es, ee, er = es[vis], ee[vis], lv.ent_row[vis]
                if len(es) > 1:
                    es, ee, er = _one_per_pixel(es, ee, er, lv.ent_dur[vis], t0_ns, px_ns)
                x0 = np.maximum(es, c0)
                xs.append(x0)
                ws.append(np.maximum(np.minimum(ee, c1) - x0, px_ns))
                ys.append(np.full(len(x0), r, dtype=np.float64))
                keys.append(self.colours.of(er))
            if len(xs) - n_parts == 2:
                # Big items and entries are each sorted by x: a stable sort merges the two runs.
                x_row = np.concatenate(xs[n_parts:])
                o = np.argsort(x_row, kind="stable")
                xs[n_parts:] = [x_row[o]]
                ws[n_parts:] = [np.concatenate(ws[n_parts:])[o]]
                ys[n_parts:] = [np.concatenate(ys[n_parts:])]
                keys[n_parts:] = [np.concatenate(keys[n_parts:])[o]]
        rects: dict[int, F64] = {}
        count = 0
        if xs:
            xp, wp, y, k = _merge_runs(
                (np.concatenate(xs) - t0_ns) / px_ns,
                np.concatenate(ws) / px_ns,
                np.concatenate(ys),
                np.concatenate(keys),
                width_px,
            )
            count = len(xp)
        if count:
            buf = np.empty((count, 4), dtype=np.float64)
            buf[:, 0] = (t0_ns + xp * px_ns) * 1e-3
            buf[:, 1] = y + (1.0 - ROW_HEIGHT) / 2
            buf[:, 2] = wp * (px_ns * 1e-3)
            buf[:, 3] = ROW_HEIGHT
            cuts = np.flatnonzero(k[1:] != k[:-1]) + 1
            starts = np.concatenate(([0], cuts))
            ends = np.concatenate((cuts, [count]))
            for a, b in zip(starts.tolist(), ends.tolist()):
                rects[int(k[a])] = buf[a:b]  # row slices of a C array stay C-contiguous
        e = np.empty(0, dtype=np.float64)
        return Frame(
            t0_ns,
            t1_ns,
            width_px,
            shift,
            rects,
            np.concatenate(lab_x).astype(np.float64) * 1e-3 if lab_x else e,
            np.concatenate(lab_w).astype(np.float64) * 1e-3 if lab_w else e,
            np.concatenate(lab_y) if lab_y else e,
            np.concatenate(lab_r) if lab_r else np.empty(0, dtype=np.int64),
            pending,
            count,
        )

    def _window(self, key: SourceKey, src: RowSource, shift: int, c0: int, c1: int) -> Level:
        """``src.window_at(shift, c0, c1)``, served from a window three views wide when the view
        falls inside the one last computed at this level.

        Coarsening a window is exact except in the buckets at its two edges (items starting
        outside it are missing there), so the cached window is used only when the view stays
        ``MIN_VIS_BUCKETS + 2`` buckets inside it.
        """
        safety = (MIN_VIS_BUCKETS + 2) << max(shift, 0)
        got = self._windows.get(key)
        if got is not None:
            level, lo, hi, lv = got
            if level == shift and lo <= c0 - safety and c1 + safety <= hi:
                self.window_hits += 1
                return lv.window(c0, c1)
        span = c1 - c0
        lo, hi = c0 - span - safety, c1 + span + safety
        lv = src.window_at(shift, lo, hi, with_reach=True)
        if len(self._windows) > 4096:  # keys of rows long scrolled past
            self._windows.clear()
        self._windows[key] = (shift, lo, hi, lv)
        return lv.window(c0, c1)

    # -- hit testing --------------------------------------------------------------------------

    def slices_near(self, layout: Layout, row: int, t_ns: float, tol_ns: float) -> tuple[int, int]:
        """The slice under a point: ``(slice row, slices within tol)``, ``(-1, 0)`` if none.

        Picks the slice that contains ``t_ns`` (the shortest one, i.e. the innermost, when
        several do), else the longest one within ``tol_ns``.
        """
        key = layout.sources[row] if 0 <= row < len(layout) else None
        if key is None or not self.is_ready(key, layout.groups):
            return -1, 0
        src = self.source(key, layout.groups)
        lv = src.level_at(-1) if src.levels is None else src.levels[0]
        lo, hi = t_ns - tol_ns, t_ns + tol_ns
        i1 = int(np.searchsorted(lv.big_start, hi, side="right"))
        i0 = min(int(np.searchsorted(lv.big_reach, lo, side="right")), i1)
        s, e, r = lv.big_start[i0:i1], lv.big_end[i0:i1], lv.big_row[i0:i1]
        near = e > lo
        if not near.any():
            return -1, 0
        s, e, r = s[near], e[near], r[near]
        inside = (s <= t_ns) & (e > t_ns)
        if inside.any():
            d = (e - s)[inside]
            return int(r[inside][int(np.argmin(d))]), len(r)
        return int(r[int(np.argmax(e - s))]), len(r)


def visible_slices(trace: Trace, rows: npt.ArrayLike, t0_ns: int, t1_ns: int) -> I64:
    """The slice rows among ``rows`` that overlap ``[t0_ns, t1_ns)``."""
    rows = np.asarray(rows, dtype=np.int64)
    s = trace.slices.start_ns[rows]
    e = s + trace.slices.dur_ns[rows]
    return rows[(e > t0_ns) & (s < t1_ns)]


__all__ = [
    "MIN_VIS_BUCKETS",
    "ColourKeys",
    "Frame",
    "Group",
    "Layout",
    "Level",
    "RowKind",
    "RowSource",
    "SourceKey",
    "TimelineLod",
    "build_layout",
    "coarsen",
    "level_for",
    "raster_rows",
    "track_depths",
]
