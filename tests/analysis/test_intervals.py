"""Interval arithmetic against a brute-force reference on small integer grids."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.analysis.intervals import (
    clip,
    covered_by_at_least,
    covered_length_at_least,
    intersection_length,
    merge,
    union_length,
)

GRID = 60


def _cells(pairs: list[tuple[int, int]]) -> np.ndarray:
    """Which unit cells [x, x+1) of the grid a set of intervals covers."""
    on = np.zeros(GRID, dtype=bool)
    for s, e in pairs:
        on[max(s, 0) : max(e, 0)] = True
    return on


intervals = st.lists(
    st.tuples(st.integers(0, GRID), st.integers(0, GRID)).map(lambda p: (min(p), max(p))),
    max_size=12,
)


def _arrays(pairs: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    return (
        np.array([p[0] for p in pairs], dtype=np.int64),
        np.array([p[1] for p in pairs], dtype=np.int64),
    )


@settings(max_examples=300, deadline=None)
@given(intervals)
def test_union_length_matches_brute_force(pairs: list[tuple[int, int]]) -> None:
    assert union_length(*_arrays(pairs)) == int(_cells(pairs).sum())


@settings(max_examples=300, deadline=None)
@given(intervals)
def test_merge_is_sorted_disjoint_and_covers_the_same(pairs: list[tuple[int, int]]) -> None:
    s, e = merge(*_arrays(pairs))
    assert (e > s).all()
    assert (s[1:] > e[:-1]).all()  # disjoint and not touching
    assert np.array_equal(_cells(list(zip(s.tolist(), e.tolist()))), _cells(pairs))


@settings(max_examples=300, deadline=None)
@given(intervals, intervals)
def test_intersection_matches_brute_force(
    a: list[tuple[int, int]], b: list[tuple[int, int]]
) -> None:
    expected = int((_cells(a) & _cells(b)).sum())
    assert intersection_length(_arrays(a), _arrays(b)) == expected


@settings(max_examples=300, deadline=None)
@given(st.lists(intervals, min_size=1, max_size=5), st.integers(1, 4))
def test_covered_by_at_least_k_sets(sets: list[list[tuple[int, int]]], k: int) -> None:
    depth = np.sum([_cells(p) for p in sets], axis=0)
    expected = _cells([])  # all False
    expected |= depth >= k
    got_s, got_e = covered_by_at_least([_arrays(p) for p in sets], k)
    assert np.array_equal(_cells(list(zip(got_s.tolist(), got_e.tolist()))), expected)
    assert covered_length_at_least([_arrays(p) for p in sets], k) == int(expected.sum())


def test_a_set_overlapping_itself_counts_once() -> None:
    # Two kernels of one stream overlapping (stacked rows) are not "two streams at once".
    one = (np.array([0, 5]), np.array([10, 15]))
    assert covered_length_at_least([one], 2) == 0
    assert covered_length_at_least([one, (np.array([12]), np.array([20]))], 2) == 3


def test_empty_and_zero_length_intervals() -> None:
    assert union_length([], []) == 0
    assert union_length([5, 7], [5, 7]) == 0
    assert (
        intersection_length(
            (np.array([0]), np.array([10])), (np.array([], np.int64), np.array([], np.int64))
        )
        == 0
    )


def test_large_values_stay_exact() -> None:
    base = 1_790_857_026_000_000_000  # ns since 1970: beyond float64's exact integers
    assert union_length([base, base + 3], [base + 5, base + 9]) == 9


def test_clip() -> None:
    s, e = clip([0, 10, 30], [20, 15, 40], 12, 35)
    assert s.tolist() == [12, 12, 30] and e.tolist() == [20, 15, 35]


def test_union_is_fast_enough_for_a_million_intervals() -> None:
    rng = np.random.default_rng(0)
    s = rng.integers(0, 10**12, 1_000_000)
    e = s + rng.integers(0, 10**6, 1_000_000)
    import time

    t = time.perf_counter()
    union_length(s, e)
    assert time.perf_counter() - t < 2.0
