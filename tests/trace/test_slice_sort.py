"""Slices sorted and stacked file by file on threads (``gpuviz.trace.slice_sort``)."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.trace import slice_sort
from gpuviz.trace.slice_sort import SliceSorter, file_spans, slice_order
from gpuviz.trace.stacking import stack_depths

# Files of up to 3 tracks each, slices in any order within a file (as a file's chunks give
# them), nested, overlapping, and equal starts.
_FILE = st.lists(
    st.tuples(st.integers(0, 2), st.integers(0, 60), st.integers(0, 25)), min_size=0, max_size=40
)


def _join(files: list[list[tuple[int, int, int]]], interleave: bool) -> tuple[np.ndarray, ...]:
    """Joined columns; file i's tracks are 3i..3i+2, or (interleave) all files share 0..2."""
    rows = [(t + (0 if interleave else 3 * i), s, d) for i, f in enumerate(files) for t, s, d in f]
    if not rows:
        rows = [(0, 0, 0)]
        files = [[(0, 0, 0)]]
    t, s, d = (np.asarray(x, dtype=np.int64) for x in zip(*rows))
    return t.astype(np.int32), s, d, np.asarray([len(f) for f in files])


@settings(max_examples=120, deadline=None)
@given(st.lists(_FILE, min_size=1, max_size=5), st.booleans(), st.integers(1, 4))
def test_file_by_file_on_threads_gives_what_one_sort_of_everything_gives(
    files: list[list[tuple[int, int, int]]], interleave: bool, threads: int
) -> None:
    track, start, dur, counts = _join(files, interleave)
    want_order = slice_order(track, start, dur)
    t, s, d = track[want_order], start[want_order], dur[want_order]
    want_depth = stack_depths(t, s, d)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(slice_sort, "PARALLEL_MIN_ROWS", 0)  # tiny inputs take the threaded path
        sorter = SliceSorter(track, start, dur, counts.tolist(), threads)
    # Files apart only where every file's tracks lie above all earlier files' (else sorted
    # together): checked from the tracks each file was given.
    given = [[t + (0 if interleave else 3 * i) for t, _, _ in f] for i, f in enumerate(files)]
    given = [g for g in given if g]
    apart = all(min(b) > max(x for a in given[:j] for x in a) for j, b in enumerate(given) if j)
    assert (sorter.spans is not None) == apart
    np.testing.assert_array_equal(sorter.order, want_order)
    np.testing.assert_array_equal(sorter.take(start), s)
    np.testing.assert_array_equal(sorter.take(track), t)
    np.testing.assert_array_equal(sorter.depths(t, s, d), want_depth)


def test_file_spans_skip_empty_files_and_refuse_interleaved_tracks() -> None:
    track = np.array([0, 1, 0, 5, 4, 9], dtype=np.int32)
    assert file_spans(track, [3, 0, 2, 1]) == [(0, 3), (3, 5), (5, 6)]
    assert file_spans(track, [2, 4]) is None  # the second file's track 0 is below track 1
    assert file_spans(track[:0], []) == []


def test_threads_are_used_only_for_large_imports() -> None:
    track, start, dur = (np.zeros(10, dtype=t) for t in (np.int32, np.int64, np.int64))
    sorter = SliceSorter(track, start, dur, [5, 5], threads=8)
    assert sorter.spans is None and sorter.threads == 1


@settings(max_examples=150, deadline=None)
@given(st.lists(_FILE, min_size=1, max_size=5), st.booleans(), st.integers(2, 6))
def test_sorted_and_stacked_track_by_track_is_what_one_sort_and_one_stacking_give(
    files: list[list[tuple[int, int, int]]], interleave: bool, threads: int
) -> None:
    """``by_track``: grouped by track, then sorted, reordered and stacked in runs of whole
    tracks on threads; the same order (ties of start and length included), columns and rows
    as one sort of everything and one stacking pass."""
    track, start, dur, counts = _join(files, interleave)
    want_order = slice_order(track, start, dur)
    t, s, d = track[want_order], start[want_order], dur[want_order]
    sorter = SliceSorter(track, start, dur, counts.tolist(), 16, by_track=threads)
    assert sorter.stacked is not None
    np.testing.assert_array_equal(sorter.order, want_order)
    got_t, got_s, got_d, got_depth = sorter.stacked
    np.testing.assert_array_equal(got_t, t)
    np.testing.assert_array_equal(got_s, s)
    np.testing.assert_array_equal(got_d, d)
    np.testing.assert_array_equal(got_depth, stack_depths(t, s, d))
    np.testing.assert_array_equal(sorter.take(dur), d)


def test_by_track_groups_track_ids_past_16_bits_too() -> None:
    track = np.array([70000, 3, 70000, 3], dtype=np.int32)
    start = np.array([5, 1, 2, 1], dtype=np.int64)
    dur = np.array([1, 1, 1, 2], dtype=np.int64)
    sorter = SliceSorter(track, start, dur, [4], 16, by_track=4)
    assert sorter.stacked is not None
    np.testing.assert_array_equal(sorter.order, [3, 1, 2, 0])
    np.testing.assert_array_equal(sorter.stacked[0], [3, 3, 70000, 70000])
    np.testing.assert_array_equal(sorter.stacked[3], [0, 1, 0, 0])


def test_track_runs_cut_only_where_a_track_begins() -> None:
    track = np.array([0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 3, 3], dtype=np.int32)
    runs = slice_sort.track_runs(track, 3)
    # Cover every row once, in order, each run's first row a track's first.
    assert runs[0][0] == 0 and runs[-1][1] == len(track)
    assert all(b == c for (_, b), (c, _) in pairwise(runs))
    for a, _ in runs:
        assert a == 0 or track[a - 1] != track[a]
    assert runs == [(0, 6), (6, 8), (8, 12)]
    # One track only: one run, whatever is asked.
    assert slice_sort.track_runs(np.zeros(10, np.int32), 4) == [(0, 10)]
