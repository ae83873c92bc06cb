"""Trace.with_rank: a one-file trace as another rank (issue 51: a folder's file imported alone
takes its folder rank before it is advised)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuviz.trace.files import trace_files
from gpuviz.trace.kineto import load_trace

DATA = Path(__file__).resolve().parents[1] / "data"


def test_with_rank_relabels_lanes_memory_and_info() -> None:
    t = load_trace(str(DATA / "advisor" / "adv_fp32_matmul.json.gz"))
    assert t.ranks[0].rank is None and set(t.tracks.rank.tolist()) == {-1}
    gpu = np.flatnonzero(t.gpu_activity_mask())
    before = t.launches_of(gpu)  # builds the launch lookup keyed by rank -1
    r = t.with_rank(3)
    assert r.ranks[0].rank == 3 and r.rank_values() == [3]
    assert set(r.tracks.rank.tolist()) == {3}
    assert set(r.memory.rank.tolist()) <= {3}
    assert r.tracks.rank.dtype == t.tracks.rank.dtype
    # the original is untouched, and the launch lookup is rebuilt for the new rank
    assert set(t.tracks.rank.tolist()) == {-1} and t.ranks[0].rank is None
    assert (before >= 0).any()
    np.testing.assert_array_equal(r.launches_of(gpu), before)
    assert r.derived == {}


def test_with_rank_of_read_only_columns() -> None:
    t = load_trace(str(trace_files(DATA / "ddp_2rank")[0]))
    t.tracks.rank.setflags(write=False)  # as a cache-loaded trace's columns are
    assert set(t.with_rank(7).tracks.rank.tolist()) == {7}


def test_with_rank_takes_one_file() -> None:
    with pytest.raises(ValueError, match="one file"):
        load_trace(str(DATA / "ddp_2rank")).with_rank(0)
