"""Busy density of a rank's summary lane (gpuviz.trace.density), against brute-force references."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.trace.density import (
    BUSY_LEVELS,
    MIX_LEVELS,
    BusyProfile,
    density_codes,
    merge_intervals,
)

intervals = st.lists(st.tuples(st.integers(0, 5_000), st.integers(0, 800)), min_size=0, max_size=60)


def _covered_cells(iv: list[tuple[int, int]], horizon: int) -> np.ndarray:
    """One boolean per ns in [0, horizon): covered by some interval (the plain reference)."""
    cells = np.zeros(horizon, dtype=bool)
    for s, d in iv:
        cells[s : s + d] = True
    return cells


@settings(max_examples=150, deadline=None)
@given(intervals)
def test_merged_intervals_cover_exactly_the_same_time(iv):
    start = [s for s, _ in iv]
    end = [s + d for s, d in iv]
    ms, me = merge_intervals(start, end)
    horizon = 6_000
    cells = np.zeros(horizon, dtype=bool)
    for a, b in zip(ms.tolist(), me.tolist()):
        assert b > a
        cells[a:b] = True
    assert (cells == _covered_cells(iv, horizon)).all()
    # Sorted, disjoint and not touching (touching runs are joined).
    assert (ms[1:] > me[:-1]).all()


@settings(max_examples=150, deadline=None)
@given(intervals, st.integers(-300, 5_500), st.integers(1, 60), st.integers(1, 97))
def test_shares_equal_the_covered_fraction_of_each_column(iv, t0, per_col, width):
    # Columns of whole ns (per_col each), so the reference counts covered nanoseconds.
    prof = BusyProfile([s for s, _ in iv], [s + d for s, d in iv])
    got = prof.shares(t0, t0 + per_col * width, width)
    assert got.shape == (width,)
    horizon = 6_000
    cells = _covered_cells(iv, horizon)
    for i in range(width):
        a = t0 + i * per_col
        lo, hi = min(max(a, 0), horizon), min(max(a + per_col, 0), horizon)
        assert got[i] == pytest.approx(cells[lo:hi].sum() / per_col, abs=1e-9)


def test_total_and_known_case():
    prof = BusyProfile([0, 5, 20, 100], [10, 12, 25, 100])
    assert prof.total_ns == 17
    np.testing.assert_allclose(prof.shares(0, 40, 4), [1.0, 0.2, 0.5, 0.0])
    empty = BusyProfile([], [])
    assert empty.total_ns == 0
    assert (empty.shares(0, 10, 3) == 0).all()


def test_codes_shade_by_busy_and_hue_by_compute():
    busy = np.array([0.0, 1e-6, 0.5, 1.0, 1.0, 1.0])
    compute = np.array([0.0, 0.0, 0.5, 1.0, 0.0, 0.5])
    codes = density_codes(busy, compute)
    level, mix = codes // MIX_LEVELS, codes % MIX_LEVELS
    assert level.tolist() == [0, 1, round(0.5 * (BUSY_LEVELS - 1)), 15, 15, 15]
    assert codes[0] == 0  # idle: the transparent code
    assert mix[2] == MIX_LEVELS - 1 and mix[3] == MIX_LEVELS - 1  # all compute
    assert mix[4] == 0  # all communication
    assert mix[5] == round(0.5 * (MIX_LEVELS - 1))
    assert codes.max() < BUSY_LEVELS * MIX_LEVELS


def test_shares_of_many_intervals_integrate_to_the_covered_time():
    rng = np.random.default_rng(3)
    start = rng.integers(0, 10**7, 20_000)
    dur = rng.integers(1, 3_000, len(start))
    prof = BusyProfile(start, start + dur)
    cells = np.zeros(10**7 + 3_000, dtype=bool)
    for a, d in zip(start.tolist(), dur.tolist()):
        cells[a : a + d] = True
    assert prof.total_ns == int(cells.sum())
    got = prof.shares(0, 2 * 10**7, 1390)
    assert got.sum() * (2 * 10**7 / 1390) == pytest.approx(cells.sum(), rel=1e-9)
