"""The active memory timeline's LOD: columns keep peaks, the raster stacks exact heights."""

from __future__ import annotations

import numpy as np
import pytest

from gpuviz.analysis.allocator import live_bytes_curve
from gpuviz.trace.allocator_lod import ColumnPyramid, Columns, LiveRows, row_at, stack_raster
from gpuviz.trace.allocator_snapshot import snapshot_from_data
from gpuviz.trace.arrays import transposed
from gpuviz.trace.synthetic_snapshot import make_snapshot


@pytest.fixture(scope="module")
def model() -> tuple:
    raw, _ = make_snapshot(20_000, max_entries=12_000, seed=7)
    snap = snapshot_from_data(raw, "s")
    tr, al = snap.trace_columns(0), snap.device_allocations(0)
    base, live = live_bytes_curve(al, len(tr))
    t_ns = (tr.time_us - tr.time_us[0]) * 1000
    return t_ns, live, base, al


def test_columns_keep_the_peak_at_every_zoom(model: tuple) -> None:
    t_ns, live, _, _ = model
    pyr = ColumnPyramid(t_ns, live)
    span = int(t_ns[-1])
    for frac in (1.0, 0.1, 0.01, 0.0001):
        t0, t1 = span * 0.3, span * 0.3 + span * frac
        cols = pyr.columns(t0, t1, 800)
        assert cols.bucket_ns & (cols.bucket_ns - 1) == 0  # a power of two
        assert cols.x0_ns <= t0 and cols.x0_ns + len(cols) * cols.bucket_ns >= t1
        # brute force: every bucket's highest live entry (or the last one before it)
        for i in range(0, len(cols), max(1, len(cols) // 50)):
            a = cols.x0_ns + i * cols.bucket_ns
            lo = np.searchsorted(t_ns, a, "left")
            hi = np.searchsorted(t_ns, a + cols.bucket_ns, "left")
            want = lo + int(np.argmax(live[lo:hi])) if hi > lo else lo - 1
            assert cols.entry[i] == want


def test_raster_columns_are_exactly_as_tall_as_live_bytes(model: tuple) -> None:
    t_ns, live, _, al = model
    pyr = ColumnPyramid(t_ns, live)
    cols = pyr.columns(-1e6, float(t_ns[-1]) + 1e6, 600)
    height, y_max = 300, float(live.max()) * 1.1
    value = (np.arange(len(al)) % 250 + 1).astype(np.uint32)
    _assert_columns_as_tall_as_live_bytes(model, cols, value, height, y_max)


def _assert_columns_as_tall_as_live_bytes(
    model: tuple, cols: Columns, value: np.ndarray, height: int, y_max: float
) -> None:
    _, live, base, al = model
    grid = stack_raster(cols, al.start, al.end, al.block_bytes, value, height, y_max)
    assert grid.shape == (len(cols), height)
    px = height / y_max
    for c in range(len(cols)):
        filled = int((grid[c] != 0).sum())
        if not cols.shown[c]:
            assert filled == 0
            continue
        k = int(cols.entry[c])
        want = (live[k] if k >= 0 else base) * px
        assert abs(filled - want) <= 1.0
        # filled from the bottom up, with nothing above
        assert np.all(grid[c][height - filled :] != 0) and np.all(grid[c][: height - filled] == 0)


def test_raster_stacks_in_order(model: tuple) -> None:
    """Bottom up, a column shows live allocations in stacking order; every one at least two
    pixels tall shows."""
    t_ns, live, _, al = model
    pyr = ColumnPyramid(t_ns, live)
    cols = pyr.columns(0, float(t_ns[-1]), 200)
    height, y_max = 2000, float(live.max())
    value = np.arange(1, len(al) + 1, dtype=np.uint32)  # the row number + 1
    grid = stack_raster(cols, al.start, al.end, al.block_bytes, value, height, y_max)
    px = height / y_max
    checked = 0
    for c in np.flatnonzero(cols.shown)[::10].tolist():
        rows = al.live_at(int(cols.entry[c]))
        seen = grid[c][grid[c] != 0][::-1].astype(np.int64) - 1  # bottom up
        order = seen[np.r_[True, seen[1:] != seen[:-1]]]
        assert np.all(np.diff(order) > 0)
        assert set(order.tolist()) <= set(rows.tolist())
        assert set(rows[al.block_bytes[rows] * px >= 2].tolist()) <= set(order.tolist())
        checked += 1
    assert checked > 5


def test_row_at_finds_the_band(model: tuple) -> None:
    _, live, _, al = model
    k = int(np.argmax(live))
    rows = al.live_at(k)
    mid = int(len(rows) // 2)
    bottom = int(al.block_bytes[rows[:mid]].sum())
    hit, low = row_at(al.start, al.end, al.block_bytes, k, bottom + 1)
    assert hit == rows[mid] and low == bottom
    assert row_at(al.start, al.end, al.block_bytes, k, float(live[k]) + 1)[0] == -1


def test_empty_inputs() -> None:
    pyr = ColumnPyramid(np.empty(0, np.int64), np.empty(0, np.int64))
    cols = pyr.columns(0, 1000, 100)
    z = np.empty(0, np.int64)
    grid = stack_raster(cols, z, z, z, np.empty(0, np.uint32), 10, 100.0)
    assert grid.shape[1] == 10 and not grid.any()


@pytest.mark.parametrize("width", [5, 40, 600])
def test_raster_heights_hold_in_and_outside_the_window(model: tuple, width: int) -> None:
    """Every column as tall as its live bytes, whether all columns are shown and distinct (the
    raster is returned as laid out) or some are hidden or repeat an entry (gathered)."""
    t_ns, live, _, al = model
    pyr = ColumnPyramid(t_ns, live)
    end = float(t_ns[-1])
    height, y_max = 120, float(live.max()) * 1.05
    value = (np.arange(len(al)) % 250 + 1).astype(np.uint32)
    kinds = set()
    for t0, t1 in ((0.0, end), (end * 0.2, end * 0.6), (-end, end * 0.5), (end * 0.7, end * 2)):
        cols = pyr.columns(t0, t1, width)
        shown = np.flatnonzero(cols.shown)
        kinds.add(len(shown) == len(cols) and len(np.unique(cols.entry[shown])) == len(cols))
        _assert_columns_as_tall_as_live_bytes(model, cols, value, height, y_max)
    if width == 5:
        assert True in kinds  # the laid-out path ran
    assert False in kinds or width == 5  # and the gathering one


@pytest.mark.parametrize("zoom", [(0.0, 1.0), (0.4, 0.41), (0.95, 1.2), (-0.2, 0.001)])
def test_a_frame_from_the_rows_that_may_be_live_is_the_frame_from_every_row(
    model: tuple, zoom: tuple[float, float]
) -> None:
    # LiveRows hands stack_raster only the allocations that may be live in view; the pixels
    # must be those that every allocation gives, zoomed out, in, and past either end.
    t_ns, live, _, al = model
    pyr = ColumnPyramid(t_ns, live)
    span = float(t_ns[-1] - t_ns[0])
    cols = pyr.columns(t_ns[0] + zoom[0] * span, t_ns[0] + zoom[1] * span, 300)
    value = np.arange(1, len(al) + 1, dtype=np.uint32)
    height, y_max = 400, float(live.max())
    want = stack_raster(cols, al.start, al.end, al.block_bytes, value, height, y_max)
    index = LiveRows(al.start, al.end)
    got = stack_raster(cols, al.start, al.end, al.block_bytes, value, height, y_max, live=index)
    np.testing.assert_array_equal(got, want)
    assert want.any() or zoom[1] <= 0.001


def test_live_rows_hold_every_allocation_live_between_two_entries(model: tuple) -> None:
    _, _, _, al = model
    index = LiveRows(al.start, al.end)
    n = int(al.end.max())
    assert len(index.long) > 0 and len(index.short) > 0  # both halves of the index are used
    for k0, k1 in [(0, 0), (n // 3, n // 3 + 50), (n - 10, n), (-1, 5), (0, n)]:
        rows = index.between(k0, k1)
        live_any = np.flatnonzero((al.start <= k1) & (al.end > k0))
        assert set(live_any.tolist()) <= set(rows.tolist())
        assert np.all(np.diff(rows) > 0)


def test_live_rows_at_a_few_entries_hold_every_allocation_live_at_one_of_them(
    model: tuple,
) -> None:
    _, _, _, al = model
    index = LiveRows(al.start, al.end)
    n = int(al.end.max())
    assert len(index.tiers) >= 2 and sum(len(r) for _, r, _ in index.tiers) > 0
    rng = np.random.default_rng(5)
    for m in (1, 3, 40, 2000):  # far apart (a full view) to closer than a life (merged)
        ks = np.unique(rng.integers(-1, n + 2, m))
        rows = index.at(ks)
        start, end = al.start[:, None], al.end[:, None]
        live_any = np.flatnonzero(((start <= ks[None, :]) & (end > ks[None, :])).any(axis=1))
        assert set(live_any.tolist()) <= set(rows.tolist())
        assert np.all(np.diff(rows) > 0)
        assert len(rows) < len(al.start) or m == 2000  # the point: not every row
    assert len(index.at(np.empty(0, dtype=np.int64))) == 0


def test_row_major_raster_is_the_transpose_and_contiguous(model: tuple) -> None:
    t_ns, live, _, al = model
    pyr = ColumnPyramid(t_ns, live)
    value = (np.arange(len(al.start)) % 251 + 1).astype(np.uint32)
    span = float(t_ns[-1])
    # the whole run, a zoom, and a range past the end (hidden columns)
    for t0, t1, w in (
        (0.0, span, 300),
        (span * 0.4, span * 0.41, 97),
        (span * 0.9, span * 1.3, 50),
    ):
        cols = pyr.columns(t0, t1, w)
        y_max = float(live.max()) * 1.1
        want = stack_raster(cols, al.start, al.end, al.block_bytes, value, 37, y_max)
        got = stack_raster(cols, al.start, al.end, al.block_bytes, value, 37, y_max, row_major=True)
        assert got.flags.c_contiguous and got.dtype == np.uint32
        np.testing.assert_array_equal(got, want.T)
        assert want.any()


def test_transposed_copies_in_blocks_of_any_remainder() -> None:
    a = np.arange(131 * 5, dtype=np.uint32).reshape(131, 5)
    for block in (1, 7, 64, 500):
        t = transposed(a, block)
        assert t.flags.c_contiguous
        np.testing.assert_array_equal(t, a.T)
