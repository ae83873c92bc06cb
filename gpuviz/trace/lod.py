"""Timeline level of detail (LOD): what to draw of a trace's rows for one view (pure numpy, no Qt).

The timeline (``gpuviz.gui.timeline.qt_timeline.QtTimeline``) draws a :class:`Trace` as rows of
rectangles. :mod:`gpuviz.trace.lanes` decides which rows there are (:func:`build_layout`);
:mod:`gpuviz.trace.lod_levels` holds the LOD math (levels, :func:`coarsen`, a row's pyramid);
this module decides, for a view ``[t0_ns, t1_ns)`` drawn ``width_px`` pixels wide, which
rectangles to draw (:meth:`TimelineLod.frame`), so that the cost of a frame grows with
pixels × rows, not with events (Perfetto's and Tracy's approach; see STYLE.md).

Output of a frame: per colour key, an ``(N, 4)`` float64 array of ``(x_us, y_row, w_us,
h_row)`` rectangles, ``x`` in microseconds from the trace zero (small floats: bars at huge x
do not render), ``y`` in row units; the view maps them to pixels and paints them with
:func:`raster_rows` (one row of pixels per lane, then one image). Rectangles are clipped to the
view (plus a margin), are at least one pixel wide, and neighbours of one colour on one row less
than half a pixel apart are joined (drawing costs per rectangle, and a row of launches is one
colour).

Building pyramids costs about half a second per million slices (measured here: 2.3M slices,
0.7-1.2 s on 2 busy cores); :meth:`TimelineLod.build_iter` does it in small steps (one row
and level at a time, tens of ms each) so a worker thread can run it without holding up the
GUI, and a row whose pyramid is not built yet is reported in :attr:`Frame.pending_rows`
instead of being drawn slowly.

The colour keys are :mod:`gpuviz.trace.lod_colours`'s, the pixel-level joins and
:func:`raster_rows` :mod:`gpuviz.trace.lod_pixels`'s, and a rank's summary lane
(:class:`RankSource`) :mod:`gpuviz.trace.lod_ranks`'s.

Interface (the GUI relies on it; keep it stable; the layout, level, colour, pixel and rank-lane
names are re-exported here from the modules above)
------------------------------------------------------------------------------------------------
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
``TimelineLod(trace, comm_names=mask)``, ``RankSource``, ``Frame.density_*``
    A rank's summary lane (``(3, rank, -1)`` keys, :mod:`gpuviz.trace.lanes`): its GPU work
    merged into busy and compute profiles (:mod:`gpuviz.trace.density`); a frame gives each
    such row's busy and compute share per pixel column (``density_rows``, ``density_busy``,
    ``density_compute``) instead of rectangles.

A frame keeps, per row, the items of a window three views wide at its level, so that a pan
within it only takes a window of that (Perfetto loads 3× the visible window for the same
reason); a zoom to another level queries the pyramid again.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuviz.trace.density import column_edges
from gpuviz.trace.lanes import (
    RANK_SOURCE,
    Group,
    Layout,
    RowKind,
    SourceKey,
    build_layout,
    id_text,
    track_depths,
)
from gpuviz.trace.lod_colours import (
    CPU_KEY0,
    KERNEL_KEY0,
    N_COLOUR_KEYS,
    N_CPU_SHADES,
    N_KERNEL_HUES,
    ColourKeys,
    name_hues,
)
from gpuviz.trace.lod_levels import MIN_VIS_BUCKETS, Level, RowSource, coarsen, level_for
from gpuviz.trace.lod_pixels import RUN_GAP_PX, merge_runs, one_per_pixel, raster_rows
from gpuviz.trace.lod_ranks import RankSource
from gpuviz.trace.model import Kind, Trace, TrackKind

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
_CPU_OP = int(Kind.CPU_OP)

SYNC_BUILD_MAX = 50_000
"""Rows with at most this many slices get their pyramid built on first use, on any thread."""

ROW_HEIGHT = 0.84
"""Height of a slice rectangle in row units (the rest is the gap between rows)."""


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
    density_rows : int64 array (K,)
        Display rows drawn as a busy density (ranks' summary lanes).
    density_busy, density_compute : float64 arrays (K, width_px)
        Per such row and pixel column, the busy share and the compute share of the column's
        time (``compute <= busy``).
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
    density_rows: I64 = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    density_busy: F64 = field(default_factory=lambda: np.empty((0, 0), dtype=np.float64))
    density_compute: F64 = field(default_factory=lambda: np.empty((0, 0), dtype=np.float64))


class TimelineLod:
    """Row sources and frames of one trace's timeline.

    Parameters
    ----------
    trace : Trace
        The trace; only read.
    sync_build_max : int
        Rows with at most this many slices build their pyramid on first use; bigger ones wait
        for :meth:`build_iter` (run it on a worker thread) and are pending until then.
    comm_names : bool array, optional
        Per symbol id: the name of a communication slice (NCCL kernel, gloo range). Ranks'
        summary lanes tell compute from communication by it; without it all work is compute.
    """

    def __init__(
        self,
        trace: Trace,
        sync_build_max: int = SYNC_BUILD_MAX,
        comm_names: npt.NDArray[np.bool_] | None = None,
    ) -> None:
        self.trace = trace
        self.sync_build_max = sync_build_max
        self.comm_names = comm_names
        self._rank_tracks: dict[int, list[int]] | None = None
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

    def rank_tracks(self, rank: int) -> list[int]:
        """The tracks a rank's summary lane draws: its GPU streams, or, on a rank without GPU
        work, its CPU threads."""
        if self._rank_tracks is None:
            tr = self.trace.tracks
            off = self.trace.track_offsets
            filled = off[1:] > off[:-1]
            gpu = tr.kind == TrackKind.GPU_STREAM
            cpu = (tr.kind == TrackKind.CPU_THREAD) | (tr.kind == TrackKind.CPU_ANNOTATION)
            out: dict[int, list[int]] = {}
            # Not np.unique: its first call imports numpy.ma (about 90 ms on the GUI thread).
            for r in sorted(set(tr.rank.tolist())):
                mine = (tr.rank == r) & filled
                pick = np.flatnonzero(mine & gpu)
                out[int(r)] = (pick if len(pick) else np.flatnonzero(mine & cpu)).tolist()
            self._rank_tracks = out
        return self._rank_tracks.get(int(rank), [])

    def _merged_rows(self, tracks: Sequence[int]) -> I64:
        parts = [self._track_rows(t) for t in tracks]
        rows = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        if len(parts) > 1:
            rows = rows[np.argsort(self.trace.slices.start_ns[rows], kind="stable")]
        return rows

    def _rank_rows(self, rank: int) -> I64:
        rows = self._merged_rows(self.rank_tracks(rank))
        s = self.trace.slices
        track_kind = self.trace.tracks.kind[s.track[rows]]
        if len(rows) and int(track_kind[0]) != TrackKind.GPU_STREAM:
            # A rank without GPU work: its threads' top-level ops (nested ones lie inside
            # them; runtime calls are not work), and its gloo ranges, which Kineto files as
            # user annotations (step annotations span everything, so only the comm ones).
            top_op = (track_kind == TrackKind.CPU_THREAD) & (s.depth[rows] == 0)
            top_op &= s.kind[rows] == _CPU_OP
            comm = np.zeros(len(rows), dtype=bool)
            if self.comm_names is not None:
                comm = (track_kind == TrackKind.CPU_ANNOTATION) & self.comm_names[s.name[rows]]
            rows = rows[top_op | comm]
        return rows

    def _rows_of(self, key: SourceKey, groups: Sequence[Group]) -> I64:
        what, a, b = key
        if what == 0:
            return self._unit_rows(a, b)
        if what == 1:
            return self._track_rows(a)
        if what == RANK_SOURCE:
            return self._rank_rows(a)
        return self._merged_rows(groups[a].tracks)

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
        tracks = self.rank_tracks(a) if what == RANK_SOURCE else groups[a].tracks
        return int(sum(int(off[t + 1] - off[t]) for t in tracks))

    def source(self, key: SourceKey, groups: Sequence[Group]) -> RowSource:
        """The row source of ``key`` (its slices found, its pyramid not necessarily built);
        a :class:`RankSource` for a rank's summary lane."""
        src = self._sources.get(key)
        if src is None:
            rows = self._rows_of(key, groups)
            if key[0] == RANK_SOURCE:
                comm = (
                    None
                    if self.comm_names is None
                    else self.comm_names[self.trace.slices.name[rows]]
                )
                src = RankSource(rows, self.trace, comm)
            else:
                src = RowSource(rows, self.trace)
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
        d_rows: list[int] = []
        d_busy: list[F64] = []
        d_compute: list[F64] = []
        bucket = 1 << shift
        edges: F64 | None = None
        for r in rows:
            key = layout.sources[r]
            if key is None:
                continue
            if not self.is_ready(key, layout.groups):
                pending.append(int(r))
                continue
            src = self.source(key, layout.groups)
            if isinstance(src, RankSource):
                if edges is None:
                    edges = column_edges(t0_ns, t1_ns, width_px)
                busy, compute = src.shares_at(edges)
                d_rows.append(int(r))
                d_busy.append(busy)
                d_compute.append(compute)
                continue
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
                    es, ee, er = one_per_pixel(es, ee, er, lv.ent_dur[vis], t0_ns, px_ns)
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
            xp, wp, y, k = merge_runs(
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
            np.asarray(d_rows, dtype=np.int64),
            np.stack(d_busy) if d_busy else np.empty((0, width_px), dtype=np.float64),
            np.stack(d_compute) if d_compute else np.empty((0, width_px), dtype=np.float64),
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


__all__ = [
    "CPU_KEY0",
    "KERNEL_KEY0",
    "MIN_VIS_BUCKETS",
    "N_COLOUR_KEYS",
    "N_CPU_SHADES",
    "N_KERNEL_HUES",
    "ROW_HEIGHT",
    "RUN_GAP_PX",
    "ColourKeys",
    "Frame",
    "Group",
    "Layout",
    "Level",
    "RankSource",
    "RowKind",
    "RowSource",
    "SourceKey",
    "TimelineLod",
    "build_layout",
    "coarsen",
    "id_text",
    "level_for",
    "name_hues",
    "raster_rows",
    "track_depths",
]
