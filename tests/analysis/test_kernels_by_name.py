"""kernel_table's grouping by name: counting over the symbol ids gives what np.unique gives."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.analysis.kernels import _by_name


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 40), max_size=200), st.integers(41, 100))
def test_grouping_by_counting_is_np_unique(ids: list[int], n_symbols: int) -> None:
    names = np.asarray(ids, dtype=np.int32)
    want = np.unique(names, return_index=True, return_inverse=True)
    for n in (n_symbols, 10**9):  # a small table (counted), a huge one (np.unique)
        got = _by_name(names, n)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        assert got[0].dtype == names.dtype
