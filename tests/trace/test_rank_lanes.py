"""Rank rows of the timeline layout (gpuviz.trace.lanes), rank filters, and ranks' summary lanes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gpuviz.trace.density import BusyProfile
from gpuviz.trace.lanes import (
    COLLAPSE_RANKS_ABOVE,
    RANK_SOURCE,
    RowKind,
    build_layout,
    default_collapsed_ranks,
    trace_ranks,
    track_depths,
)
from gpuviz.trace.lod import RankSource, TimelineLod
from gpuviz.trace.model import Kind, TrackKind
from gpuviz.trace.rank_filter import format_ranks, parse_rank_filter
from gpuviz.trace.synthetic import make_trace


@pytest.fixture(scope="module")
def r8():
    return make_trace(8 * 3000, ranks=8, devices=2)


# ---------------------------------------------------------------------------------------------
# rank filters


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("0-7,12", [0, 1, 2, 3, 4, 5, 6, 7, 12]),
        (" 3 ", [3]),
        ("60-", [60, 61, 62, 63]),
        ("-2, 63", [0, 1, 2, 63]),
        ("5,5,4-5", [4, 5]),
        ("100-200", []),
        ("0-63", list(range(64))),
        ("1,,2,", [1, 2]),
    ],
)
def test_rank_filters_select_the_named_ranks(text, want):
    assert sorted(parse_rank_filter(text, range(64))) == want


def test_blank_filter_is_no_filter_and_bad_ones_say_which_part():
    assert parse_rank_filter("", range(4)) is None
    assert parse_rank_filter("  ", range(4)) is None
    for bad, part in (("a", "'a'"), ("1-2-3", "'1-2-3'"), ("3 4", "'3 4'"), ("-", "'-'")):
        with pytest.raises(ValueError, match=part):
            parse_rank_filter(bad, range(8))
    with pytest.raises(ValueError, match="backwards"):
        parse_rank_filter("7-2", range(8))


def test_format_ranks_round_trips():
    for ranks in ([0, 1, 2, 3, 7], [5], [], [0, 2, 4, 5, 6, 63]):
        text = format_ranks(ranks)
        got = parse_rank_filter(text, range(64))
        assert sorted(got or []) == ranks
    assert format_ranks([0, 1, 2, 3, 7, 9, 10]) == "0-3,7,9-10"


# ---------------------------------------------------------------------------------------------
# layout


def test_each_rank_gets_a_summary_row_above_its_groups(r8):
    lay = build_layout(r8)
    assert lay.rank_rows and lay.ranks == tuple(range(8))
    rank_rows = np.flatnonzero(lay.kind == RowKind.RANK)
    assert [lay.labels[r] for r in rank_rows] == [f"rank {r}" for r in range(8)]
    assert [lay.sources[r] for r in rank_rows] == [(RANK_SOURCE, r, -1) for r in range(8)]
    # Every row between rank r's summary row and the next belongs to rank r.
    bounds = [*rank_rows.tolist(), len(lay)]
    for r, (a, b) in enumerate(itertools.pairwise(bounds)):
        assert (lay.row_rank[a:b] == r).all()
        assert b - a > 1  # expanded: its groups follow
        assert lay.rank_row(r) == a


def test_a_lone_file_has_no_rank_rows():
    tr = make_trace(2000)
    lay = build_layout(tr, collapsed_ranks=[-1])
    assert not lay.rank_rows
    assert (lay.kind != RowKind.RANK).all()
    assert lay.collapsed_ranks == frozenset()


def test_collapsed_ranks_take_one_row_and_their_slices_map_to_it(r8):
    lay = build_layout(r8, collapsed_ranks=[1, 2, 3, 4, 5, 6, 7])
    full = build_layout(r8)
    n_rank0 = full.rank_row(1) - full.rank_row(0)
    assert len(lay) == n_rank0 + 7
    s, tr = r8.slices, r8.tracks
    rows = lay.rows_of(s.track, s.depth)
    rank = tr.rank[s.track]
    for r in range(1, 8):
        assert (rows[rank == r] == lay.rank_row(r)).all()
    # Rank 0's slices keep their own rows, as in the full layout.
    np.testing.assert_array_equal(rows[rank == 0], full.rows_of(s.track, s.depth)[rank == 0])


def test_a_rank_filter_leaves_other_ranks_out(r8):
    lay = build_layout(r8, collapsed_ranks=range(8), rank_filter={2, 5})
    assert lay.labels == ["rank 2", "rank 5"]
    assert lay.shown_ranks() == [2, 5]
    s = r8.slices
    rows = lay.rows_of(s.track, s.depth)
    rank = r8.tracks.rank[s.track]
    assert (rows[(rank != 2) & (rank != 5)] == -1).all()
    assert (rows[rank == 5] == 1).all()
    # The groups do not depend on the filter: fold state by group index stays valid.
    assert [g.label for g in lay.groups] == [g.label for g in build_layout(r8).groups]


def test_many_ranks_open_collapsed_few_do_not():
    assert default_collapsed_ranks(range(COLLAPSE_RANKS_ABOVE)) == frozenset()
    assert default_collapsed_ranks(range(COLLAPSE_RANKS_ABOVE + 1)) == frozenset(range(5))
    tr = make_trace(64 * 200, ranks=64, devices=1)
    assert trace_ranks(tr) == list(range(64))
    lay = build_layout(tr, collapsed_ranks=default_collapsed_ranks(trace_ranks(tr)))
    assert len(lay) == 64 and (lay.kind == RowKind.RANK).all()


# ---------------------------------------------------------------------------------------------
# summary lanes


def test_summary_lane_density_is_the_ranks_gpu_busy_share(r8):
    s, tr = r8.slices, r8.tracks
    comm = np.array(["nccl" in n.lower() for n in r8.symbols.strings])
    lod = TimelineLod(r8, comm_names=comm)
    lay = build_layout(r8, depths=lod.depths, collapsed_ranks=range(8))
    end = int(s.end_ns.max())
    width = 400
    f = lod.frame(lay, range(len(lay)), 0, end, width)
    assert f.density_rows.tolist() == list(range(8))
    assert f.density_busy.shape == (8, width)
    gpu = (s.kind == Kind.KERNEL) | (s.kind == Kind.MEMCPY) | (s.kind == Kind.MEMSET)
    on_stream = tr.kind[s.track] == TrackKind.GPU_STREAM
    for r in range(8):
        mine = np.flatnonzero(gpu & on_stream & (tr.rank[s.track] == r))
        # Reference: covered ns per column by a boolean array of nanoseconds.
        cells = np.zeros(end + 1, dtype=bool)
        comp = np.zeros(end + 1, dtype=bool)
        for row in mine.tolist():
            a, b = int(s.start_ns[row]), int(s.start_ns[row] + s.dur_ns[row])
            cells[a:b] = True
            if not comm[s.name[row]]:
                comp[a:b] = True
        edges = np.linspace(0, end, width + 1)
        col = end / width
        for i in (0, 17, width // 2, width - 1):
            a, b = edges[i], edges[i + 1]
            lo, hi = int(np.ceil(a)), int(np.floor(b))
            ref = cells[lo:hi].sum() / col
            ref_c = comp[lo:hi].sum() / col
            # Whole-ns counting misses at most a ns at each edge.
            assert f.density_busy[r, i] == pytest.approx(ref, abs=2.0 / col)
            assert f.density_compute[r, i] == pytest.approx(ref_c, abs=2.0 / col)
        src = lod.source((RANK_SOURCE, r, -1), lay.groups)
        assert isinstance(src, RankSource)
        assert src.busy is not None and src.busy.total_ns == int(cells.sum())
        assert src.compute is not None and src.compute.total_ns == int(comp.sum())
    assert (f.density_compute <= f.density_busy + 1e-12).all()
    assert f.count == 0  # collapsed ranks draw no rectangles


def test_a_cpu_only_rank_summarizes_its_top_level_ops(data_dir):
    from gpuviz.trace.kineto import load_trace

    tr = load_trace(str(data_dir / "gloo_4rank_cpu"))
    assert not tr.gpu_activity_mask().any()
    comm = np.array([n.startswith("gloo:") for n in tr.symbols.strings])
    lod = TimelineLod(tr, comm_names=comm)
    lay = build_layout(tr, depths=lod.depths, collapsed_ranks=range(4))
    s, t = tr.slices, tr.tracks
    for r in range(4):
        src = lod.source((RANK_SOURCE, r, -1), lay.groups)
        assert isinstance(src, RankSource)
        src.build()
        on_cpu = (t.kind[s.track] == TrackKind.CPU_THREAD) & (t.rank[s.track] == r)
        tops = np.flatnonzero(on_cpu & (s.depth == 0) & (s.kind == Kind.CPU_OP))
        ref = BusyProfile(s.start_ns[tops], s.start_ns[tops] + s.dur_ns[tops])
        gloo = np.flatnonzero(comm[s.name] & (t.rank[s.track] == r))
        assert len(gloo) and set(gloo.tolist()) <= set(src.rows.tolist())
        assert src.compute is not None and src.compute.total_ns == ref.total_ns > 0
        both = BusyProfile(
            np.concatenate([s.start_ns[tops], s.start_ns[gloo]]),
            np.concatenate([s.end_ns[tops], s.end_ns[gloo]]),
        )
        assert src.busy is not None and src.busy.total_ns == both.total_ns > ref.total_ns


def test_track_depths_are_computed_once_per_trace_and_kept_read_only(r8):
    # The app computes them on its loading thread; the Timeline's first build, on the GUI
    # thread, must find them rather than pass over every slice again.
    depths = track_depths(r8)
    assert track_depths(r8) is depths
    assert not depths.flags.writeable  # a caller that wrote into them would change them for all
    off = r8.track_offsets
    for t in range(len(r8.tracks)):
        rows = r8.slices.depth[off[t] : off[t + 1]]
        assert depths[t] == (int(rows.max()) + 1 if len(rows) else 1)
    other = make_trace(300, ranks=2)  # another trace: its own
    assert track_depths(other) is not depths
