"""Timeline lane layout: which display rows a trace's timeline has, and their labels (pure numpy).

Rows are grouped rank → device (GPU streams, each stream's ``gpu_user_annotation`` row above
it), then rank → process (CPU threads: each thread's ``user_annotation`` row above its cpu ops
and runtime calls). Every group has a header row; every track with slices has one row per
depth (nesting on CPU threads, overflow rows for overlapping GPU slices); tracks without
slices are left out. A folded group, or a folded track, takes one row that shows all of its
slices merged.

A trace of several ranks also has one *rank row* above each rank's groups: its summary lane
(the rank's GPU busy time as a density strip, :mod:`gpuviz.trace.density`). A collapsed rank
is that row alone, so 64 ranks fit on a screen; a rank filter leaves the other ranks out.

``build_layout(trace, folded_groups=(), folded_tracks=(), collapsed_ranks=(),
rank_filter=None) -> Layout``: rows top to bottom (``Layout.sources[row]`` names what a row
draws; ``row_of``/``rows_of`` map ``(track, depth)`` to a row). :mod:`gpuviz.trace.lod` draws
the rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import Trace, TrackKind

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]


class RowKind(IntEnum):
    """What a display row is."""

    GROUP = 0  # a group's header (shows the whole group's slices when folded)
    TRACK = 1  # one depth of a track, or all of a folded track
    RANK = 2  # a rank's summary lane (its GPU busy density), above its groups


COLLAPSE_RANKS_ABOVE = 4
"""Traces with more ranks than this open with every rank collapsed to its summary lane."""


SourceKey = tuple[int, int, int]
"""Names the slices a row shows: ``(0, track, depth)``, ``(1, track, -1)`` for all depths of
a track, ``(2, group, -1)`` for all tracks of a group, ``(3, rank, -1)`` for a rank's summary
(its GPU work, drawn as a busy density)."""

RANK_SOURCE = 3
"""``SourceKey[0]`` of a rank's summary lane."""


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
        Per display row: :class:`RowKind`, its group (-1 for a rank row), its track (-1 for a
        header) and depth (-1 when it shows all depths).
    labels : list of str
        Per display row; empty for the second and later depth rows of a track.
    sources : list of SourceKey or None
        What each row draws; None for an unfolded group's header.
    folded_groups, folded_tracks : frozenset of int
        The fold state this layout was built with.
    row_rank : int array
        Per display row, the rank it belongs to (-1 for a lone file).
    ranks : tuple of int
        Every rank of the trace with a row, in display order, filtered out or not.
    collapsed_ranks : frozenset of int
        Ranks shown as their summary lane alone.
    rank_filter : frozenset of int or None
        The ranks shown (None: all).
    rank_rows : bool
        Whether ranks have summary rows (traces of several ranks).
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
    row_rank: I32 = field(default_factory=lambda: np.empty(0, dtype=np.int32))
    ranks: tuple[int, ...] = ()
    collapsed_ranks: frozenset[int] = frozenset()
    rank_filter: frozenset[int] | None = None
    rank_rows: bool = False
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

    def rank_row(self, rank: int) -> int:
        """The summary row of ``rank``, or -1 (no rank rows, or the rank is filtered out)."""
        hit = np.flatnonzero((self.kind == RowKind.RANK) & (self.row_rank == int(rank)))
        return int(hit[0]) if len(hit) else -1

    def shown_ranks(self) -> list[int]:
        """The ranks that have rows, in display order (all of :attr:`ranks` unless filtered)."""
        if self.rank_filter is None:
            return list(self.ranks)
        return [r for r in self.ranks if r in self.rank_filter]


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
    """Rows per track when unfolded: max depth + 1, and 1 for a track with no slices.

    Computed once per trace and kept in ``trace.derived`` (read-only): the app computes it on
    its loading thread, so that the Timeline's first build on the GUI thread finds it (a pass
    over every slice's depth: 21M slices of a 64-rank folder, part of a 69 ms stall there).
    """
    kept = trace.derived.get("track_depths")
    if kept is not None:
        return kept
    n = len(trace.tracks)
    out = np.ones(n, dtype=np.int64)
    if len(trace.slices) and n:
        off = trace.track_offsets
        nonempty = np.flatnonzero(off[1:] > off[:-1])
        if len(nonempty):
            mx = np.maximum.reduceat(trace.slices.depth, off[nonempty])
            out[nonempty] = mx.astype(np.int64) + 1
    out.flags.writeable = False
    trace.derived["track_depths"] = out
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


def lane_titles(trace: Trace) -> list[str]:
    """Every track's whole name, as the Timeline labels its group and row.

    ``rank 1 · GPU 0 · stream 7``, ``python (pid 12) · MainThread``: one string per track
    (names from the file, unescaped: escape them where they are shown).
    """
    tr = trace.tracks
    names = process_names(trace)
    out = []
    for t in range(len(tr)):
        rank, where, key = _track_order_key(trace, t)[:3]
        group = _group_label(trace, rank, where == 0, key, names)
        out.append(f"{group} · {_track_label(trace, t)}")
    return out


def rank_label(rank: int) -> str:
    """A rank row's label: ``rank 3`` (``no rank`` for a lone file's -1)."""
    return f"rank {rank}" if rank >= 0 else "no rank"


def trace_ranks(trace: Trace) -> list[int]:
    """The distinct ranks of a trace's tracks, sorted (``[-1]`` for a lone file)."""
    if len(trace.tracks) == 0:
        return []
    r = np.sort(trace.tracks.rank.astype(np.int64))
    return r[np.concatenate(([True], r[1:] != r[:-1]))].tolist()


def default_collapsed_ranks(ranks: Iterable[int]) -> frozenset[int]:
    """Every rank when there are more than :data:`COLLAPSE_RANKS_ABOVE`, else none."""
    rs = frozenset(int(r) for r in ranks)
    return rs if len(rs) > COLLAPSE_RANKS_ABOVE else frozenset()


def build_layout(
    trace: Trace,
    folded_groups: Iterable[int] = (),
    folded_tracks: Iterable[int] = (),
    depths: I64 | None = None,
    show_empty: bool = False,
    collapsed_ranks: Iterable[int] = (),
    rank_filter: Iterable[int] | None = None,
    hidden_tracks: Iterable[int] = (),
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
    collapsed_ranks : iterable of int
        Ranks shown as their summary row alone (traces of several ranks).
    rank_filter : iterable of int, optional
        The ranks to show; None shows all. A filtered-out rank has no rows, and its slices
        map to row -1.
    hidden_tracks : iterable of int
        Tracks left out (the Timeline's quiet lanes); their slices map to row -1.

    Returns
    -------
    Layout
    """
    fg, ft = frozenset(int(g) for g in folded_groups), frozenset(int(t) for t in folded_tracks)
    cr = frozenset(int(r) for r in collapsed_ranks)
    rf = None if rank_filter is None else frozenset(int(r) for r in rank_filter)
    depths = track_depths(trace) if depths is None else depths
    # Tracks without slices (thread names of GPU "processes", idle threads) get no row, as in
    # Perfetto: they would push the lanes that matter off screen.
    off = trace.track_offsets
    hidden = frozenset(int(t) for t in hidden_tracks)
    shown = [
        t
        for t in range(len(trace.tracks))
        if (off[t + 1] > off[t] or show_empty) and t not in hidden
    ]
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
    rnk: list[int] = []
    labels: list[str] = []
    sources: list[SourceKey | None] = []
    row_of: dict[tuple[int, int], int] = {}
    ranks = tuple(dict.fromkeys(g.rank for g in groups))
    rank_rows = len(ranks) > 1
    current_rank: int | None = None
    rank_header = -1
    for gi, g in enumerate(groups):
        if rank_rows and rf is not None and g.rank not in rf:
            continue
        if rank_rows and g.rank != current_rank:
            current_rank = g.rank
            rank_header = len(kind)
            kind.append(RowKind.RANK)
            grp.append(-1)
            trk.append(-1)
            dep.append(-1)
            rnk.append(g.rank)
            labels.append(rank_label(g.rank))
            sources.append((RANK_SOURCE, g.rank, -1))
        if rank_rows and g.rank in cr:
            for t in g.tracks:
                for d in range(int(depths[t])):
                    row_of[(t, d)] = rank_header
            continue
        folded = gi in fg
        header = len(kind)
        kind.append(RowKind.GROUP)
        grp.append(gi)
        trk.append(-1)
        dep.append(-1)
        rnk.append(g.rank)
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
                rnk.append(g.rank)
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
                rnk.append(g.rank)
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
        row_rank=np.asarray(rnk, dtype=np.int32),
        ranks=ranks,
        collapsed_ranks=cr & frozenset(ranks) if rank_rows else frozenset(),
        rank_filter=rf if rank_rows else None,
        rank_rows=rank_rows,
        _row_of_unit=row_of,
    )


__all__ = [
    "COLLAPSE_RANKS_ABOVE",
    "RANK_SOURCE",
    "Group",
    "Layout",
    "RowKind",
    "SourceKey",
    "build_layout",
    "default_collapsed_ranks",
    "id_text",
    "process_names",
    "rank_label",
    "trace_ranks",
    "track_depths",
]
