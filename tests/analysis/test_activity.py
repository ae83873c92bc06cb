"""``gpuviz.analysis.activity``: the distinct (rank, device) pairs of the GPU rows, and the
rows grouped by key."""

from __future__ import annotations

import numpy as np
import pytest

from gpuviz.analysis import activity
from gpuviz.analysis.activity import groups, rank_device_pairs


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


def _reference_groups(*keys: np.ndarray) -> list[tuple[tuple[int, ...], list[int]]]:
    out: dict[tuple[int, ...], list[int]] = {}
    for i, key in enumerate(zip(*(k.tolist() for k in keys))):
        out.setdefault(key, []).append(i)
    return sorted(out.items())


@pytest.mark.parametrize("ordered", [True, False], ids=["rows in key order", "shuffled"])
@pytest.mark.parametrize("n_keys", [1, 2, 3])
def test_groups_are_each_keys_rows_in_order(ordered: bool, n_keys: int) -> None:
    """Rows already in key order (a trace's GPU rows) are grouped without a sort; either way
    each group is its key's rows, in their order, and the keys ascend."""
    rng = np.random.default_rng(n_keys)
    rank = rng.integers(-1, 4, 5000).astype(np.int32)
    device = rng.integers(0, 3, 5000).astype(np.int32)
    stream = rng.integers(-1, 1 << 40, 5000)  # int64, as a stream id may be
    stream[::7] = 7  # repeated values within a (rank, device)
    keys = (rank, device, stream)[:n_keys]
    if ordered:
        order = np.lexsort(tuple(reversed(keys)))
        keys = tuple(k[order] for k in keys)
    got = [(key, idx.tolist()) for key, idx in groups(*keys)]
    assert got == _reference_groups(*keys)
    assert all(type(v) is int for key, _ in got for v in key)


def test_groups_of_ordered_rows_skip_the_sort(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_sort(*_: object) -> None:
        raise AssertionError("sorted rows that were already in order")

    monkeypatch.setattr(activity.np, "lexsort", no_sort)
    rank = np.array([0, 0, 0, 1, 1, 2], dtype=np.int32)
    device = np.array([0, 1, 1, 0, 0, 5], dtype=np.int32)
    got = [(key, idx.tolist()) for key, idx in groups(rank, device)]
    assert got == [((0, 0), [0]), ((0, 1), [1, 2]), ((1, 0), [3, 4]), ((2, 5), [5])]
    assert [(k, i.tolist()) for k, i in groups(rank[:1])] == [((0,), [0])]
    assert list(groups(rank[:0])) == []
