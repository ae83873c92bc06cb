"""Module rows' FLOPs are exact int sums (issue 51): each whole-number count split in three
parts (``module_flops._parts``) is summed in float64 and joined, and the result is Python's
int sum of the counts, in any order, where a float64 sum past 2**53 rounds."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.analysis.module_flops import _joined, _parts
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
