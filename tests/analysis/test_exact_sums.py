"""FLOPs and bytes are exact int sums (issue 51, :mod:`gpuviz.analysis.exact_sums`, used by
the module, op and op-shape tables): each whole-number count split in three parts is summed in
float64 and joined, and the result is Python's int sum of the counts, in any order and per
group, where a float64 sum past 2**53 rounds; counts that are not whole numbers have none."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.analysis.exact_sums import group_sums, whole
from gpuviz.analysis.exact_sums import joined as _joined
from gpuviz.analysis.exact_sums import parts as _parts
from gpuviz.analysis.op_args import MAX_CALL_FLOPS

COUNTS = st.lists(st.integers(0, int(MAX_CALL_FLOPS)), min_size=1, max_size=300)


@settings(max_examples=200, deadline=None)
@given(COUNTS, st.randoms(use_true_random=False))
def test_the_parts_sum_to_the_exact_total_in_any_order(counts: list[int], rnd: object) -> None:
    flops = np.array(counts, dtype=np.float64)
    whole = [int(f) for f in flops]  # each count as float64 holds it (what the calls carry)
    parts = _parts(flops)
    assert parts is not None
    sums = [np.array([p.sum()]) for p in parts]
    assert _joined(sums, 0) == sum(whole)
    order = list(range(len(flops)))
    rnd.shuffle(order)  # type: ignore[attr-defined]
    shuffled = _parts(flops[order])
    assert shuffled is not None
    assert _joined([np.array([p.sum()]) for p in shuffled], 0) == sum(whole)


def test_a_float64_sum_past_2_53_rounds_where_the_parts_do_not() -> None:
    flops = np.array([2.0**53, 1.0, 1.0], dtype=np.float64)
    assert (flops[0] + flops[1]) + flops[2] == 2.0**53  # each 1 rounded away, in this order
    assert flops[0] + (flops[1] + flops[2]) == 2.0**53 + 2  # but not in that one
    parts = _parts(flops)
    assert parts is not None and _joined([np.array([p.sum()]) for p in parts], 0) == 2**53 + 2


def test_counts_that_are_not_whole_numbers_have_no_parts() -> None:
    assert _parts(np.array([1.0, 2.5])) is None
    assert _parts(np.array([-1.0])) is None
    assert _parts(np.array([np.nan, 3.0])) is not None  # unknown counts are left out


@settings(max_examples=200, deadline=None)
@given(COUNTS, st.integers(1, 7), st.randoms(use_true_random=False))
def test_group_sums_are_pythons_int_sums_per_group(counts: list[int], n: int, rnd: object) -> None:
    """Checked against Python's own int sums of each group's counts (as float64 holds them)."""
    values = np.array(counts, dtype=np.float64)
    group = np.array([rnd.randrange(n) for _ in counts], dtype=np.int64)  # type: ignore[attr-defined]
    want = [0] * n
    for v, g in zip(values.tolist(), group.tolist(), strict=True):
        want[g] += int(v)
    assert group_sums(values, group, n) == want


def test_group_sums_leave_unknowns_out_and_refuse_groups_of_what_is_not_whole() -> None:
    group = np.array([0, 0, 1, 1], dtype=np.int64)
    big = 2.0**60
    got = group_sums(np.array([big, big, np.nan, 3.0]), group, 3)
    assert got == [2**61, 3, 0]
    assert float(np.bincount(group, weights=[big, 1.0, 0.0, 0.0])[0]) == big  # float: 1 lost
    assert group_sums(np.array([big, 1.0, 0.0, 0.0]), group, 2) == [2**60 + 1, 0]
    for bad in (1.5, -1.0, np.inf, 1e308, 2.0**63):
        # Only the group that holds it has no exact sum; the other's stands.
        assert group_sums(np.array([1.0, bad, 2.0, 3.0]), group, 2) == [None, 5]
    assert whole(np.array([0.0, 2.0**63 - 1024, 2.0**63, np.nan, 0.5])).tolist() == [
        True,
        True,
        False,
        False,
        False,
    ]
