"""Trace's cached figures: the slices' end and the track offsets, and load_trace preparing them."""

from __future__ import annotations

from pathlib import Path

import numpy as np

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
