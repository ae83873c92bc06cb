"""Trace's cached figures: the slices' end and the track offsets, and load_trace preparing them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuviz.trace.kineto import load_trace
from gpuviz.trace.synthetic import make_trace

DATA = Path(__file__).resolve().parents[1] / "data"


def test_slices_end_and_track_offsets_match_a_direct_computation() -> None:
    trace = make_trace(120_000)  # over 2**18 slices: the end is taken in several blocks
    s = trace.slices
    assert len(s) > 1 << 18
    assert trace.slices_end_ns == int((s.start_ns + s.dur_ns).max())
    offsets = trace.track_offsets
    assert offsets.dtype == np.int64 and len(offsets) == len(trace.tracks) + 1
    for t in range(len(trace.tracks)):
        rows = np.flatnonzero(s.track == t)
        assert offsets[t + 1] - offsets[t] == len(rows)
        if len(rows):
            assert offsets[t] == rows[0] and offsets[t + 1] == rows[-1] + 1


def test_load_trace_hands_over_a_prepared_trace(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = DATA / "streams_overlap.json.gz"
    for cache in (False, True, True):  # imported, stored in the cache, mapped back from it
        trace = load_trace(path, cache=cache)
        assert trace._track_offsets is not None and trace._slices_end_ns is not None
        assert trace.prepare() is trace
        s = trace.slices
        assert trace.slices_end_ns == int((s.start_ns + s.dur_ns).max())


def _sorted_launches(trace, rows: np.ndarray) -> np.ndarray:  # type: ignore[no-untyped-def]
    """launches_of through the sorted keys alone (the path for sparse or repeated ids)."""
    from gpuviz.trace import model

    saved = model._dense_correlation_table
    model._dense_correlation_table = lambda *a: None
    try:
        trace._correlation_index = None
        return trace.launches_of(rows)
    finally:
        model._dense_correlation_table = saved
        trace._correlation_index = None


@pytest.mark.parametrize("block", [None, 5], ids=["one block", "table filled in blocks of 5"])
def test_launches_by_table_are_the_launches_by_sorted_keys(block, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # One rank and several (a folder, whose correlation ids repeat across ranks).
    from gpuviz.trace import model

    if block is not None:
        monkeypatch.setattr(model, "LOOKUP_BLOCK", block)
    for name in ["streams_overlap.json.gz", "ddp_nccl_4rank"]:
        trace = load_trace(DATA / name)
        s = trace.slices
        rows = np.flatnonzero(trace.gpu_activity_mask())
        assert len(rows)
        trace._correlation_index = None
        got = trace.launches_of(rows)
        assert trace._correlation_index["dense"] is not None, "the table should serve here"
        want = _sorted_launches(trace, rows)
        assert (got >= 0).sum() > len(rows) // 2
        np.testing.assert_array_equal(got, want)
        # Rows that are not GPU work, with ids of their own or -1, find what the keys find.
        every = np.arange(len(s), dtype=np.int64)
        trace._correlation_index = None
        np.testing.assert_array_equal(trace.launches_of(every), _sorted_launches(trace, every))


@pytest.mark.parametrize("block", [None, 5], ids=["one block", "table filled in blocks of 5"])
def test_a_repeated_correlation_id_gives_the_first_launch_as_before(block, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from gpuviz.trace import model

    if block is not None:  # the repeat then lies in another block than its first
        monkeypatch.setattr(model, "LOOKUP_BLOCK", block)

    trace = load_trace(DATA / "streams_overlap.json.gz")
    s = trace.slices
    rt = np.flatnonzero((s.kind == model.Kind.RUNTIME) & (s.correlation >= 0))
    rows = np.flatnonzero(trace.gpu_activity_mask())
    first = int(trace.launches_of(rows)[0])  # a launch that GPU work points to
    corr = s.correlation.copy()
    corr[rt[-1]] = corr[first]  # a later runtime call with its id: the table steps aside
    trace.slices.correlation = corr
    trace._correlation_index = None
    got = trace.launches_of(rows)
    assert trace._correlation_index["dense"] is None
    np.testing.assert_array_equal(got, _sorted_launches(trace, rows))
    assert got[0] == first and rt[-1] > first


def test_a_lookup_in_blocks_finds_what_one_lookup_finds(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # launches_of takes a long row list in blocks (its temporaries are ~60 bytes a row).
    from gpuviz.trace import model

    trace = load_trace(DATA / "ddp_nccl_4rank")
    rows = np.flatnonzero(trace.gpu_activity_mask())
    every = np.arange(len(trace.slices), dtype=np.int64)[::-1].copy()  # any order, any rows
    whole = [trace.launches_of(rows), trace.launches_of(every)]
    assert (whole[0] >= 0).sum() > len(rows) // 2
    monkeypatch.setattr(model, "LOOKUP_BLOCK", 7)  # blocks, and a last one that is short
    assert len(rows) % 7 and len(every) % 7
    np.testing.assert_array_equal(trace.launches_of(rows), whole[0])
    np.testing.assert_array_equal(trace.launches_of(every), whole[1])
    sorted_keys = [_sorted_launches(trace, rows), _sorted_launches(trace, every)]
    np.testing.assert_array_equal(sorted_keys[0], whole[0])  # the keys' path in blocks too
    np.testing.assert_array_equal(sorted_keys[1], whole[1])


def test_correlation_keys_are_the_same_from_int32_and_int64_columns() -> None:
    from gpuviz.trace.model import correlation_key

    rank = np.array([-1, 0, 63, 2**31 - 2], dtype=np.int32)
    corr = np.array([0, 5, 2**31 - 1, 7], dtype=np.int32)
    wide = correlation_key(rank.astype(np.int64), corr.astype(np.int64))
    assert correlation_key(rank, corr).tolist() == wide.tolist()
    assert wide.dtype == np.int64 and len(set(wide.tolist())) == 4
    assert int(correlation_key(rank[2], corr[2])) == int(wide[2])  # one slice, as the views ask
