"""Level of detail and lane layout (gpuviz.trace.lod), checked against brute-force references."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.trace import lod, lod_levels
from gpuviz.trace.lod import MIN_VIS_BUCKETS, Level, RowKind, TimelineLod, build_layout, coarsen
from gpuviz.trace.model import Kind, TrackKind
from gpuviz.trace.synthetic import make_trace

# ---------------------------------------------------------------------------------------------
# helpers: plain-python references


def _raw(start, dur):
    start = np.asarray(start, dtype=np.int64)
    end = start + np.asarray(dur, dtype=np.int64)
    order = np.argsort(start, kind="stable")
    return Level.raw(start[order], end[order], order.astype(np.int64))


def _drawn(level: Level) -> list[tuple[int, int]]:
    """Every rectangle a level draws, in ns: big items as they are, entries as their bucket
    start to max(their last end, the bucket's end)."""
    out = [(int(s), int(e)) for s, e in zip(level.big_start, level.big_end)]
    b = 1 << max(level.shift, 0)
    for k, e in zip(level.ent_bucket.tolist(), level.ent_end.tolist()):
        out.append((k * b, max(e, (k + 1) * b)))
    return out


def _covered(point_lo: int, point_hi: int, rects: list[tuple[int, int]]) -> bool:
    """Whether [lo, hi) lies inside the union of rects (closed at touching ends)."""
    if point_hi <= point_lo:
        return any(s <= point_lo <= e for s, e in rects)
    pos = point_lo
    for s, e in sorted(rects):
        if s > pos:
            break
        pos = max(pos, e)
        if pos >= point_hi:
            return True
    return pos >= point_hi


intervals = st.lists(
    st.tuples(st.integers(0, 200_000), st.integers(0, 30_000)), min_size=1, max_size=120
)


# ---------------------------------------------------------------------------------------------
# coarsen: one level


@settings(max_examples=150, deadline=None)
@given(intervals, st.integers(0, 16))
def test_every_slice_is_covered_and_none_is_lost(iv, shift):
    start, dur = zip(*iv)
    lv = coarsen(_raw(start, dur), shift)
    rects = _drawn(lv)
    for s, d in iv:
        assert _covered(s, s + d, rects), (s, d)
    # Nothing dropped: big items plus the counts of entries account for every slice.
    assert len(lv.big_start) + int(lv.ent_count.sum()) == len(iv)


@settings(max_examples=150, deadline=None)
@given(intervals, st.integers(0, 16))
def test_drawn_area_stays_within_a_bucket_of_the_slices(iv, shift):
    start, dur = zip(*iv)
    b = 1 << shift
    lv = coarsen(_raw(start, dur), shift)
    grown = [(s - b, s + d + b) for s, d in iv]
    for lo, hi in _drawn(lv):
        assert _covered(lo, hi, grown), (lo, hi)


@settings(max_examples=150, deadline=None)
@given(intervals, st.integers(0, 16))
def test_long_slices_stay_themselves_and_entries_keep_the_longest(iv, shift):
    start, dur = zip(*iv)
    b = 1 << shift
    raw = _raw(start, dur)
    lv = coarsen(raw, shift)
    long_rows = sorted(i for i, (s, d) in enumerate(iv) if d >= MIN_VIS_BUCKETS * b)
    assert sorted(lv.big_row.tolist()) == long_rows
    for r, s, e in zip(lv.big_row.tolist(), lv.big_start.tolist(), lv.big_end.tolist()):
        assert (s, e - s) == iv[r]
    # Brute force: short slices grouped by start bucket.
    groups: dict[int, list[int]] = {}
    for i, (s, d) in enumerate(iv):
        if d < MIN_VIS_BUCKETS * b:
            groups.setdefault(s >> shift, []).append(i)
    assert lv.ent_bucket.tolist() == sorted(groups)
    for k, cnt, row, dmax, end in zip(
        lv.ent_bucket.tolist(),
        lv.ent_count.tolist(),
        lv.ent_row.tolist(),
        lv.ent_dur.tolist(),
        lv.ent_end.tolist(),
    ):
        members = groups[k]
        assert cnt == len(members)
        assert dmax == max(iv[i][1] for i in members)
        assert iv[row][1] == dmax and row in members
        assert end == max(iv[i][0] + iv[i][1] for i in members)


@settings(max_examples=100, deadline=None)
@given(intervals, st.integers(0, 10), st.integers(0, 8))
def test_level_by_level_equals_straight_to_the_level(iv, a, extra):
    start, dur = zip(*iv)
    raw = _raw(start, dur)
    direct = coarsen(raw, a + extra)
    stepped = coarsen(coarsen(raw, a), a + extra)
    for f in ("big_start", "big_end", "big_row", "ent_bucket", "ent_end", "ent_count", "ent_dur"):
        assert getattr(direct, f).tolist() == getattr(stepped, f).tolist(), f
    # Ties between equally long slices may pick either, but always one of that length.
    assert [iv[r][1] for r in direct.ent_row.tolist()] == [
        iv[r][1] for r in stepped.ent_row.tolist()
    ]


def test_coarsen_refuses_a_finer_level():
    lv = coarsen(_raw([0, 10], [5, 5]), 4)
    with pytest.raises(ValueError):
        coarsen(lv, 3)


def test_known_small_case():
    # Three 10 ns slices in the bucket [0, 64) and one long slice: at level 6 (64 ns buckets)
    # the three fold into one entry holding the longest (row 1: 12 ns), the long one stays.
    lv = coarsen(_raw([0, 20, 40, 100], [10, 12, 10, 1000]), 6)
    assert lv.big_row.tolist() == [3]
    assert lv.ent_bucket.tolist() == [0]
    assert lv.ent_count.tolist() == [3]
    assert lv.ent_row.tolist() == [1]
    assert lv.ent_end.tolist() == [50]


# ---------------------------------------------------------------------------------------------
# pyramids and frames on a trace


@pytest.fixture(scope="module")
def synth():
    return make_trace(3000, devices=2, streams=2, cpu_threads=2, seed=3)


def _frame_rows(tl, layout, r, t0, t1, width):
    f = tl.frame(layout, [r], t0, t1, width)
    rects = np.concatenate(list(f.rects.values())) if f.rects else np.empty((0, 4))
    return f, rects


def _all_track_rows(layout):
    return [r for r in range(len(layout)) if layout.kind[r] == RowKind.TRACK]


@pytest.mark.parametrize("zoom", [1, 7, 50, 400])
def test_every_slice_a_pixel_wide_is_drawn(synth, zoom):
    tl = TimelineLod(synth)
    layout = build_layout(synth, depths=tl.depths)
    s = synth.slices
    end = int(s.end_ns.max())
    width = 1000
    span = end // zoom
    t0 = (end - span) // 3
    t1 = t0 + span
    px_ns = (t1 - t0) / width
    for r in _all_track_rows(layout):
        _, rects = _frame_rows(tl, layout, r, t0, t1, width)
        x0 = rects[:, 0] * 1e3
        x1 = x0 + rects[:, 2] * 1e3
        spans = sorted(zip(x0.tolist(), x1.tolist()))
        key = layout.sources[r]
        rows = tl.source(key, layout.groups).rows
        st_, en = s.start_ns[rows], s.start_ns[rows] + s.dur_ns[rows]
        vis = (en > t0) & (st_ < t1) & (s.dur_ns[rows] >= px_ns)
        for a, b in zip(st_[vis].tolist(), en[vis].tolist()):
            lo, hi = max(a, t0), min(b, t1)
            # float µs round trip: allow a thousandth of a pixel
            assert _covered(lo + px_ns * 1e-3, hi - px_ns * 1e-3, spans), (r, a, b)


def test_zoomed_in_fully_nothing_is_merged(synth):
    tl = TimelineLod(synth)
    layout = build_layout(synth, depths=tl.depths)
    s = synth.slices
    t0 = int(s.start_ns[len(s) // 2])
    t1 = t0 + 20_000  # 20 µs over 2000 px: 10 ns a pixel, far below any slice here
    assert int(s.dur_ns.min()) >= 3 * 16
    for r in _all_track_rows(layout):
        _, rects = _frame_rows(tl, layout, r, t0, t1, 2000)
        rows = tl.source(layout.sources[r], layout.groups).rows
        a, e = s.start_ns[rows], s.start_ns[rows] + s.dur_ns[rows]
        vis = (e > t0) & (a < t1)
        # Same-colour neighbours that touch are joined into one run; count them as one.
        want = sorted(zip(np.maximum(a[vis], t0).tolist(), np.minimum(e[vis], t1).tolist()))
        # Drawn rectangles reach a few pixels past the view (clipped there by the painter).
        got = sorted(
            zip(
                np.maximum(rects[:, 0] * 1e3, t0).tolist(),
                np.minimum((rects[:, 0] + rects[:, 2]) * 1e3, t1).tolist(),
            )
        )
        assert len(got) <= len(want)
        for lo, hi in want:
            assert _covered(lo + 1e-3, hi - 1e-3, got)
        for lo, hi in got:
            assert _covered(lo + 1e-3, hi - 1e-3, [(x - 1e-6, y + 1e-6) for x, y in want])


def test_pyramid_and_direct_merge_agree(synth):
    tl = TimelineLod(synth)
    layout = build_layout(synth, depths=tl.depths)
    end = int(synth.slices.end_ns.max())
    for r in _all_track_rows(layout)[:6]:
        src = tl.source(layout.sources[r], layout.groups)
        src.build()
        raw = src.levels[0]
        for shift in (6, 10, 13, 17, 30):
            got = src.window_at(shift, 0, end + 1)
            want = coarsen(raw, shift)
            assert got.ent_bucket.tolist() == want.ent_bucket.tolist()
            assert got.ent_count.tolist() == want.ent_count.tolist()
            assert got.big_row.tolist() == want.big_row.tolist()


def test_pyramid_keeps_levels_that_halve(synth):
    tl = TimelineLod(synth)
    layout = build_layout(synth, depths=tl.depths)
    for r in _all_track_rows(layout):
        src = tl.source(layout.sources[r], layout.groups)
        src.build()
        sizes = [len(lv) for lv in src.levels]
        assert src.levels[0].shift == -1 and sizes[0] == src.n
        for a, b in zip(sizes, sizes[1:-1]):  # noqa: RUF007 (the top level is always kept)
            assert b <= a * lod_levels.KEEP_RATIO
        # Total memory is O(n): the kept levels add up to at most about twice the slices.
        assert sum(sizes) <= 2 * src.n + len(sizes)


def test_the_bucket_is_the_pixel_rounded_down_to_a_power_of_two():
    assert lod.level_for(0, 1000 * 1024, 1000) == 10
    assert lod.level_for(0, 1000 * 1023, 1000) == 9
    assert lod.level_for(0, 1000 * 1030, 1000) == 10  # a slightly changed zoom: the same level
    assert lod.level_for(0, 100, 1000) == 0


def test_rects_are_c_contiguous_quad_float64_within_the_view(synth):
    tl = TimelineLod(synth)
    layout = build_layout(synth, depths=tl.depths)
    end = int(synth.slices.end_ns.max())
    f = tl.frame(layout, range(len(layout)), end // 4, end // 2, 800)
    assert f.rects and f.count == sum(len(a) for a in f.rects.values())
    for key, arr in f.rects.items():
        assert arr.dtype == np.float64 and arr.shape[1] == 4 and arr.flags.c_contiguous
        assert 0 <= key < lod.N_COLOUR_KEYS
        px_us = (end // 2 - end // 4) / 800 * 1e-3
        assert (arr[:, 2] >= px_us * 0.999).all()  # at least a pixel wide
        assert (arr[:, 0] >= end / 4 * 1e-3 - 20 * px_us).all()  # clipped near the view
        assert (arr[:, 0] + arr[:, 2] <= end / 2 * 1e-3 + 20 * px_us).all()


def test_frame_cost_follows_pixels_not_events():
    small = make_trace(2_000, seed=1)
    big = make_trace(60_000, seed=1)
    counts = []
    for tr in (small, big):
        tl = TimelineLod(tr)
        layout = build_layout(tr, depths=tl.depths)
        f = tl.frame(layout, range(len(layout)), 0, int(tr.slices.end_ns.max()), 500)
        counts.append(f.count)
    # 30× the events, yet at most as many rectangles as pixels × rows allow.
    rows = len(build_layout(big))
    assert counts[1] <= 2 * 500 * rows
    assert counts[1] < len(big.slices) / 10


def test_large_rows_wait_for_the_worker_and_build_in_small_steps():
    tr = make_trace(20_000, devices=1, streams=1, cpu_threads=1)
    tl = TimelineLod(tr, sync_build_max=1_000)
    layout = build_layout(tr, depths=tl.depths)
    f = tl.frame(layout, range(len(layout)), 0, int(tr.slices.end_ns.max()), 800)
    assert f.pending_rows  # the big rows are not built on this thread
    keys = tl.unbuilt(layout)
    steps = list(tl.build_iter(keys, layout.groups))
    assert steps[-1][0] == steps[-1][1] == sum(tl.source_size(k, layout.groups) for k in keys)
    assert len(steps) > len(keys)
    f = tl.frame(layout, range(len(layout)), 0, int(tr.slices.end_ns.max()), 800)
    assert not f.pending_rows


def test_hit_testing_finds_the_slice_under_a_point(synth):
    tl = TimelineLod(synth)
    layout = build_layout(synth, depths=tl.depths)
    s = synth.slices
    for row in (0, len(s) // 3, len(s) - 1):
        r = layout.row_of(int(s.track[row]), int(s.depth[row]))
        mid = int(s.start_ns[row]) + int(s.dur_ns[row]) // 2
        got, n = tl.slices_near(layout, r, mid, 0.5)
        assert got == row and n >= 1
    assert tl.slices_near(layout, 0, -10_000_000, 1.0) == (-1, 0)


# ---------------------------------------------------------------------------------------------
# layout


def test_layout_groups_rank_device_stream_then_cpu_threads():
    tr = make_trace(2_000, devices=2, streams=3, ranks=2, cpu_threads=2)
    layout = build_layout(tr)
    labels = [g.label for g in layout.groups]
    assert labels == [
        "rank 0 · GPU 0",
        "rank 0 · GPU 1",
        "rank 0 · CPU pid 1000",
        "rank 1 · GPU 0",
        "rank 1 · GPU 1",
        "rank 1 · CPU pid 1001",
    ]
    t = tr.tracks
    first_gpu = layout.groups[0].tracks
    # Per stream: its annotation row (stream 7 only here) above its slices, streams in order.
    kinds = [int(t.kind[i]) for i in first_gpu]
    streams = [int(t.stream[i]) for i in first_gpu]
    assert kinds[0] == TrackKind.GPU_ANNOTATION and streams == [7, 7, 8, 9]
    cpu = layout.groups[2].tracks
    assert [int(t.kind[i]) for i in cpu] == [TrackKind.CPU_ANNOTATION, TrackKind.CPU_THREAD] * 2
    # Every (track, depth) is on exactly one row.
    for tk in range(len(t)):
        for d in range(int(layout.track_depths[tk])):
            r = layout.row_of(tk, d)
            assert layout.sources[r] == (0, tk, d)


def test_rows_cover_every_slice_once():
    tr = make_trace(3_000)
    tl = TimelineLod(tr)
    layout = build_layout(tr, depths=tl.depths)
    rows = np.concatenate(
        [tl.source(k, layout.groups).rows for k in layout.sources if k is not None]
    )
    assert np.array_equal(np.sort(rows), np.arange(len(tr.slices)))


def test_folding_a_group_or_a_track_takes_one_row():
    tr = make_trace(2_000, devices=2, streams=2, cpu_threads=1)
    tl = TimelineLod(tr)
    full = build_layout(tr, depths=tl.depths)
    cpu_group = next(i for i, g in enumerate(full.groups) if not g.gpu)
    cpu_thread = next(
        t for t in full.groups[cpu_group].tracks if tr.tracks.kind[t] == TrackKind.CPU_THREAD
    )
    assert full.track_depths[cpu_thread] == 3
    ft = build_layout(tr, folded_tracks=[cpu_thread], depths=tl.depths)
    assert len(ft) == len(full) - 2
    r = ft.row_of(cpu_thread, 2)
    assert ft.sources[r] == (1, cpu_thread, -1) and ft.row_of(cpu_thread, 0) == r
    fg = build_layout(tr, folded_groups=[cpu_group], depths=tl.depths)
    n_group_rows = sum(int(full.track_depths[t]) for t in full.groups[cpu_group].tracks)
    assert len(fg) == len(full) - n_group_rows
    header = fg.row_of(cpu_thread, 1)
    assert fg.kind[header] == RowKind.GROUP and fg.sources[header] == (2, cpu_group, -1)
    src = tl.source(fg.sources[header], fg.groups)
    want = sum(
        len(range(*tr.track_range(t).indices(len(tr.slices))))
        for t in full.groups[cpu_group].tracks
    )
    assert src.n == want
    assert np.all(np.diff(tr.slices.start_ns[src.rows]) >= 0)


def test_colour_keys_are_stable_per_name_and_kind():
    tr = make_trace(1_000)
    keys = lod.ColourKeys(tr).of(np.arange(len(tr.slices)))
    s = tr.slices
    kern = s.kind == Kind.KERNEL
    # One key per kernel name, derived from the name only (crc32), so stable across runs.
    for nid in np.unique(s.name[kern]):
        k = np.unique(keys[kern & (s.name == nid)])
        assert len(k) == 1
        import zlib

        want = (
            lod.KERNEL_KEY0
            + zlib.crc32(tr.symbols[int(nid)].encode())
            % (lod.N_KERNEL_HUES * lod.N_CPU_SHADES)
            % lod.N_KERNEL_HUES
        )
        assert int(k[0]) == want
    assert set(keys[s.kind == Kind.RUNTIME].tolist()) == {int(Kind.RUNTIME)}
    assert set(keys[s.kind == Kind.MEMCPY].tolist()) <= {int(Kind.MEMCPY)}


# ---------------------------------------------------------------------------------------------
# the synthetic trace itself


def test_synthetic_trace_keeps_the_model_invariants():
    tr = make_trace(5_000, devices=2, streams=3, ranks=2, cpu_threads=2, seed=7)
    s = tr.slices
    key = s.track.astype(np.int64) * (1 << 40) + s.start_ns
    assert np.all(np.diff(key) >= 0)  # sorted by (track, start)
    assert set(np.unique(tr.tracks.rank).tolist()) == {0, 1}
    # Slices of one (track, depth) row never overlap, except GPU overflow rows' own.
    for t in range(len(tr.tracks)):
        r = tr.track_range(t)
        for d in np.unique(s.depth[r]):
            m = s.depth[r] == d
            a, e = s.start_ns[r][m], s.end_ns[r][m]
            if tr.tracks.kind[t] == TrackKind.GPU_ANNOTATION:
                continue
            assert np.all(a[1:] >= e[:-1]), (t, d)
    gpu = np.flatnonzero(tr.gpu_activity_mask() & (s.correlation >= 0))
    launches = tr.launches_of(gpu)
    assert (launches >= 0).all()
    assert np.array_equal(s.correlation[launches], s.correlation[gpu])
    assert (s.start_ns[launches] < s.start_ns[gpu]).all()  # launched before it ran
    overlaps = (s.kind == Kind.KERNEL) & (s.depth == 1)
    assert 0 < overlaps.sum() <= 5 * 2
    assert len(tr.memory) > 0 and (tr.memory.total_allocated >= 0).all()
    assert tr.args.get(int(s.args[gpu[0]]))["grid"] == [128, 1, 1]


def test_synthetic_million_kernels_is_quick():
    t = time.perf_counter()
    tr = make_trace(200_000)
    assert len(tr.slices) > 200_000
    assert time.perf_counter() - t < 10  # about 0.5 s here; generous for a busy CI box


@pytest.mark.bench
def test_bench_lod_frame_1m():
    tr = make_trace(1_000_000)
    tl = TimelineLod(tr, sync_build_max=0)
    layout = build_layout(tr, depths=tl.depths)
    t = time.perf_counter()
    for _ in tl.build_iter(tl.unbuilt(layout), layout.groups):
        pass
    build = time.perf_counter() - t
    end = int(tr.slices.end_ns.max())
    t = time.perf_counter()
    for i in range(10):
        tl.frame(layout, range(len(layout)), i * 1000, end + i * 1000, 1390)
    per_frame = (time.perf_counter() - t) / 10
    print(f"pyramid build {build:.2f} s, frame {per_frame * 1e3:.1f} ms")
    assert per_frame < 0.05


def test_rows_of_matches_row_of_when_folded():
    tr = make_trace(1_500, devices=2, streams=2, cpu_threads=2)
    full = build_layout(tr)
    cpu_group = next(i for i, g in enumerate(full.groups) if not g.gpu)
    thread = next(t for t in full.groups[0].tracks)
    for lay in (full, build_layout(tr, folded_groups=[cpu_group], folded_tracks=[thread])):
        s = tr.slices
        got = lay.rows_of(s.track, s.depth)
        want = [lay.row_of(int(t), int(d)) for t, d in zip(s.track.tolist(), s.depth.tolist())]
        assert got.tolist() == want
        assert (got >= 0).all()


def _one_lane_trace(iv):
    """A trace of one GPU stream holding kernels at the given (start, dur) pairs."""
    from gpuviz.trace.model import (
        ArgsStore,
        Flows,
        Instants,
        MemoryEvents,
        Slices,
        SymbolTable,
        Trace,
        Tracks,
    )

    iv = sorted(iv)
    n = len(iv)
    sym = SymbolTable(["k0", "k1", "k2", "stream 7"])
    start = np.array([s for s, _ in iv], dtype=np.int64)
    dur = np.array([d for _, d in iv], dtype=np.int64)
    neg = np.full(n, -1, dtype=np.int64)
    slices = Slices(
        start_ns=start,
        dur_ns=dur,
        track=np.zeros(n, np.int32),
        depth=np.zeros(n, np.int16),
        name=(np.arange(n) % 3).astype(np.int32),
        cat=np.zeros(n, np.int32),
        kind=np.full(n, Kind.KERNEL, np.uint8),
        correlation=neg,
        external_id=neg,
        bytes=neg,
        args=np.full(n, -1, np.int32),
    )
    tracks = Tracks(
        kind=np.array([TrackKind.GPU_STREAM], np.uint8),
        rank=np.array([-1], np.int32),
        device=np.array([0], np.int32),
        stream=np.array([7]),
        pid=np.array([0]),
        tid=np.array([7]),
        label=np.array([3], np.int32),
    )
    return Trace(
        symbols=sym,
        slices=slices,
        tracks=tracks,
        flows=Flows.empty(),
        memory=MemoryEvents.empty(),
        instants=Instants.empty(),
        args=ArgsStore(),
        ranks=[],
    )


@settings(max_examples=120, deadline=None)
@given(
    intervals,
    st.integers(0, 150_000),
    st.integers(50, 400_000),
    st.integers(50, 2_000),
)
def test_frames_represent_every_slice_a_pixel_wide(iv, t0, span, width):
    tr = _one_lane_trace(iv)
    tl = TimelineLod(tr)
    layout = build_layout(tr, depths=tl.depths)
    row = layout.row_of(0, 0)
    t1 = t0 + span
    f = tl.frame(layout, [row], t0, t1, width)
    px_ns = span / width
    rects = np.concatenate(list(f.rects.values())) if f.rects else np.empty((0, 4))
    spans = list(zip((rects[:, 0] * 1e3).tolist(), ((rects[:, 0] + rects[:, 2]) * 1e3).tolist()))
    assert (rects[:, 2] * 1e3 >= px_ns * (1 - 1e-9)).all()  # nothing thinner than a pixel
    tol = px_ns * 1e-6 + 1e-6
    for s, d in iv:
        lo, hi = max(s, t0), min(s + d, t1)
        if hi - lo >= px_ns:  # at least a pixel of it is in view
            assert _covered(lo + tol, hi - tol, spans), (s, d)
    # Nothing is drawn where there is no slice within a bucket (plus the 1 px minimum width).
    b = 1 << f.shift
    grown = [(s - b - px_ns, s + d + b + px_ns) for s, d in iv]
    for lo, hi in spans:
        lo, hi = max(lo, t0), min(hi, t1)
        if hi > lo:
            assert _covered(lo + tol, hi - tol, grown), (lo, hi)


@settings(max_examples=80, deadline=None)
@given(intervals)
def test_zoomed_in_fully_every_slice_is_drawn_as_itself(iv):
    tr = _one_lane_trace([(s, max(d, 1)) for s, d in iv])
    tl = TimelineLod(tr)
    layout = build_layout(tr, depths=tl.depths)
    t0 = 0
    t1 = 240_000
    f = tl.frame(layout, [0 if layout.kind[0] != RowKind.GROUP else 1], t0, t1, 2_000_000)
    assert f.shift == 0  # 0.12 ns a pixel: every slice is at least 3 buckets long
    rects = np.concatenate(list(f.rects.values()))
    got = sorted(
        zip(
            (rects[:, 0] * 1e3).round(3).tolist(),
            ((rects[:, 0] + rects[:, 2]) * 1e3).round(3).tolist(),
        )
    )
    s = tr.slices
    want = list(zip(s.start_ns.tolist(), s.end_ns.tolist()))
    # Same-colour neighbours that touch or overlap are joined; every slice is inside one rect
    # of its own colour and no rect reaches past its slices.
    for a, e in want:
        assert _covered(a, e, got)
    for lo, hi in got:
        assert _covered(lo + 1e-3, hi - 1e-3, [(a - 1e-3, e + 1e-3) for a, e in want])
    assert len(got) <= len(want)


def test_tracks_without_slices_get_no_row():
    from gpuviz.trace.model import Tracks

    tr = make_trace(500, devices=1, streams=1, cpu_threads=1)
    t = tr.tracks
    extra = Tracks(
        kind=np.array([TrackKind.CPU_THREAD], np.uint8),
        rank=np.array([-1], np.int32),
        device=np.array([-1], np.int32),
        stream=np.array([-1]),
        pid=np.array([0]),
        tid=np.array([0]),
        label=np.array([t.label[0]], np.int32),
    )
    tr.tracks = Tracks.concat([t, extra])
    tr._track_offsets = None
    empty = len(tr.tracks) - 1
    lay = build_layout(tr)
    assert empty not in lay.track.tolist()
    assert all(empty not in g.tracks for g in lay.groups)
    assert len(lay.groups) == 2  # GPU 0 and the launching process; no group for pid 0
    full = build_layout(tr, show_empty=True)
    assert empty in full.track.tolist() and len(full.groups) == 3


# ---------------------------------------------------------------------------------------------
# the panning window cache and the pixel rasterizer


def _pixels(f, width):
    """A frame painted into one row of pixels: colour key + 1 per pixel, 0 where empty."""
    parts = [(k, a) for k, a in f.rects.items() if len(a)]
    if not parts:
        return np.zeros(width, dtype=np.uint32)
    buf = np.concatenate([a for _, a in parts])
    keys = np.concatenate([np.full(len(a), k + 1) for k, a in parts]).astype(np.uint32)
    px_us = (f.t1_ns - f.t0_ns) * 1e-3 / f.width_px
    x0 = (buf[:, 0] - f.t0_ns * 1e-3) / px_us
    return lod.raster_rows(x0, x0 + buf[:, 2] / px_us, np.zeros(len(buf), int), keys, 1, width)[0]


@settings(max_examples=60, deadline=None)
@given(
    intervals,
    st.integers(0, 150_000),
    st.integers(50, 400_000),
    st.integers(50, 1_000),
    st.lists(st.floats(-1.2, 1.2), min_size=1, max_size=4),
)
def test_panned_frames_from_the_window_cache_equal_fresh_ones(iv, t0, span, width, pans):
    tr = _one_lane_trace(iv)
    cached = TimelineLod(tr)
    layout = build_layout(tr, depths=cached.depths)
    row = layout.row_of(0, 0)
    cached.frame(layout, [row], t0, t0 + span, width)
    for p in pans:
        a = t0 + int(p * span)
        got = cached.frame(layout, [row], a, a + span, width)
        want = TimelineLod(tr).frame(layout, [row], a, a + span, width)
        assert got.shift == want.shift
        assert _pixels(got, width).tolist() == _pixels(want, width).tolist(), (a, p)


def test_small_pans_are_served_from_the_window_cache(synth):
    tl = TimelineLod(synth)
    layout = build_layout(synth, depths=tl.depths)
    rows = _all_track_rows(layout)
    end = int(synth.slices.end_ns.max())
    span = end // 20
    tl.frame(layout, rows, end // 2, end // 2 + span, 1000)
    assert tl.window_hits == 0
    tl.frame(layout, rows, end // 2 + span // 10, end // 2 + span + span // 10, 1000)
    assert tl.window_hits == len(rows)
    # Another level (zoomed out 4×) is a new query.
    tl.frame(layout, rows, end // 4, end // 4 + 4 * span, 1000)
    assert tl.window_hits == len(rows)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(-30, 130, allow_nan=False),
            st.floats(0, 60, allow_nan=False),
            st.integers(-1, 3),
        ),
        max_size=40,
    ),
    st.integers(1, 100),
)
def test_raster_rows_paints_like_a_fill_in_order(spans, width):
    import math

    n_rows = 3
    want = [[0] * width for _ in range(n_rows)]
    for i, (x, w, r) in enumerate(spans):
        if not 0 <= r < n_rows:
            continue
        # A pixel is painted when its centre is inside; a span paints at least one pixel.
        cells = [c for c in range(width) if x <= c + 0.5 < x + w]
        first = math.ceil(x - 0.5)
        if not any(x <= c + 0.5 < x + w for c in range(first, first + 1)):
            cells = [first] if 0 <= first < width else []
        for c in cells:
            want[r][c] = i + 1
    got = lod.raster_rows(
        [x for x, _, _ in spans],
        [x + w for x, w, _ in spans],
        [r for _, _, r in spans],
        np.arange(1, len(spans) + 1, dtype=np.uint32),
        n_rows,
        width,
    )
    assert got.shape == (n_rows, width)
    assert got.tolist() == want
