"""The per-rank groupings that replaced per-pair scans over ranks (issue 51): each equals the
naive definition it replaced (a mask of every row per rank), on random inputs. (How they
scale is measured in docs/performance.md, "Clusters": a timing test on a shared 2-core VM
could not tell 7x from 17x reliably.)"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.analysis.advisor.exposed_comm import _by_rank_device
from gpuviz.analysis.collectives import _Parts, _rows_by_seq, _split_by
from gpuviz.analysis.ranks import _group_rows

keys = st.lists(st.integers(-1, 6), min_size=0, max_size=60)


@settings(max_examples=60, deadline=None)
@given(keys)
def test_split_by_rank_is_the_mask_per_rank(ks: list[int]) -> None:
    k = np.asarray(ks, dtype=np.int64)
    rows = np.arange(len(k), dtype=np.int64) * 3 + 1
    naive = {int(r): rows[k == r] for r in np.unique(k).tolist()}
    for got in (_split_by(k, rows), _group_rows(k, rows)):
        assert list(got) == list(naive)  # ascending keys
        for r in naive:
            assert np.array_equal(got[r], naive[r])  # ascending rows


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(-1, 2), st.booleans()), max_size=60))
def test_gaps_by_rank_and_device_are_the_mask_per_pair(
    cells: list[tuple[int, int, bool]],
) -> None:
    rank = np.asarray([c[0] for c in cells], dtype=np.int64)
    device = np.asarray([c[1] for c in cells], dtype=np.int64)
    rows = np.flatnonzero(np.asarray([c[2] for c in cells], dtype=bool))
    got = _by_rank_device(rank, device, rows)
    on = np.zeros(len(cells), dtype=bool)
    on[rows] = True
    for r in range(5):
        for d in range(-1, 3):
            naive = np.flatnonzero(on & (rank == r) & (device == d))
            assert np.array_equal(got.get((r, d), np.empty(0, np.int64)), naive)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 7)), min_size=1, max_size=80))
def test_rows_by_seq_are_the_naive_match(pairs: list[tuple[int, int]]) -> None:
    rank = np.asarray([p[0] for p in pairs], dtype=np.int64)
    seq = np.asarray([p[1] for p in pairs], dtype=np.int64)
    n = len(pairs)
    parts = _Parts(
        rank=rank,
        group=["g"] * n,
        name=[f"c{i}" for i in range(n)],
        seq=seq,
        start_ns=np.zeros(n, np.int64),
        end_ns=np.zeros(n, np.int64),
        row=np.arange(n, dtype=np.int64),
    )
    in_g = np.arange(n, dtype=np.int64)
    col_of = {r: 10 + r for r in range(6)}
    # What align_collectives did before: per sequence number, per rank, a scan.
    per_rank = {int(r): in_g[rank == r] for r in np.unique(rank).tolist()}
    naive = []
    for s in np.unique(seq).tolist():
        cells = {
            col_of[r]: int(i[seq[i] == s][0]) for r, i in per_rank.items() if (seq[i] == s).any()
        }
        first = next(iter(cells.values()))
        naive.append(("g", parts.name[first], int(s), cells))
    got = _rows_by_seq("g", parts, in_g, col_of)
    assert got == naive
    assert [list(c[3]) for c in got] == [list(c[3]) for c in naive]  # cells in rank order
