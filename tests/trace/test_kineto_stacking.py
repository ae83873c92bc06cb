"""Stacking rows of slices (``gpuviz.trace.stacking``), used by the Kineto importer."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.trace.slice_sort import slice_order
from gpuviz.trace.stacking import stack_depths


def _sorted(track: list[int], start: list[int], dur: list[int]) -> tuple[np.ndarray, ...]:
    t, s, d = (np.asarray(x, dtype=np.int64) for x in (track, start, dur))
    order = np.lexsort((-d, s, t))
    return t[order].astype(np.int32), s[order], d[order]


_SLICES = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 60), st.integers(0, 25)), min_size=1, max_size=60
)


@settings(max_examples=150, deadline=None)
@given(_SLICES)
def test_rows_never_overlap_and_stay_compact(slices: list[tuple[int, int, int]]) -> None:
    track, start, dur = _sorted(*zip(*slices))
    depth = stack_depths(track, start, dur).tolist()
    end = (start + dur).tolist()
    rows: dict[tuple[int, int], int] = {}
    for i, (t, s, e, d) in enumerate(zip(track.tolist(), start.tolist(), end, depth)):
        assert rows.get((t, d), s) <= s, "two slices overlap on one row"
        rows[(t, d)] = e
        # no deeper than the number of slices of its track still running when it starts
        running = sum(1 for j in range(i) if track[j] == t and end[j] > s)
        assert 0 <= d <= running


def _nested(rng: np.random.Generator, t0: int, t1: int, level: int, out: list, depth: int) -> None:
    t = t0
    while t < t1 and level < 6:
        length = int(rng.integers(1, max(2, (t1 - t) // 2 + 1)))
        out.append((t, length, depth))
        _nested(rng, t, t + length, level + 1, out, depth + 1)
        t += length + int(rng.integers(0, 3))


def test_nesting_depth_of_a_call_tree() -> None:
    rng = np.random.default_rng(7)
    out: list[tuple[int, int, int]] = []
    _nested(rng, 0, 5000, 0, out, 0)
    start, dur, expected = (np.asarray(x, dtype=np.int64) for x in zip(*out))
    track, start_s, dur_s = _sorted([0] * len(start), start.tolist(), dur.tolist())
    order = np.lexsort((-dur, start))
    assert stack_depths(track, start_s, dur_s).tolist() == expected[order].tolist()


@settings(max_examples=150, deadline=None)
@given(_SLICES)
def test_the_importers_slice_order_is_track_start_then_longest_first(
    slices: list[tuple[int, int, int]],
) -> None:
    t, s, d = (np.asarray(x, dtype=np.int64) for x in zip(*slices))
    got = slice_order(t.astype(np.int32), s, d)
    # Equal (track, start, dur) keep their order: a stable sort, as lexsort over the index.
    want = np.lexsort((np.arange(len(t)), -d, s, t))
    np.testing.assert_array_equal(got, want)
