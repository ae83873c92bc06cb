"""``gpuviz.analysis.activity``: the distinct (rank, device) pairs of the GPU rows."""

from __future__ import annotations

import numpy as np

from gpuviz.analysis.activity import rank_device_pairs


def test_rank_device_pairs_are_the_sorted_distinct_pairs() -> None:
    rng = np.random.default_rng(3)
    rank = rng.integers(-1, 64, 100_000).astype(np.int32)
    device = rng.integers(-1, 8, 100_000).astype(np.int32)
    device[:5] = np.iinfo(np.int32).max - 1  # the largest a device index can be
    expected = sorted(set(zip(rank.tolist(), device.tolist())))
    got = rank_device_pairs(rank, device)
    assert got == expected
    assert all(type(r) is int and type(d) is int for r, d in got)
    assert rank_device_pairs(rank[:0], device[:0]) == []
