"""kernel_table's grouping by name: counting over the symbol ids gives what np.unique gives."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.analysis.kernels import _by_name

DATA = Path(__file__).parent.parent / "data"


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


@pytest.mark.parametrize(
    "name", ["tl__h100__gaunernst_bert-small-uncased__1016001.json.gz", "ddp_nccl_4rank"]
)
def test_kernel_table_sums_in_blocks_what_np_unique_gives(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Summed per symbol id a block of slices at a time (blocks of 7: many blocks, a short
    # last one) or through np.unique of every kernel's name: the same table, launch
    # configurations (read from each name's first launch) included.
    from gpuviz.analysis import kernels
    from gpuviz.trace.kineto import load_trace

    trace = load_trace(DATA / name)
    whole = kernels.kernel_table(trace)
    assert len(whole) > 3
    monkeypatch.setattr(kernels, "KERNEL_BLOCK", 7)
    assert len(trace.slices) % 7
    assert kernels.kernel_table(trace) == whole
    monkeypatch.setattr(kernels, "_counted", lambda *_: False)
    assert kernels.kernel_table(trace) == whole
    assert sum(k.count for k in whole) == int((trace.slices.kind == kernels.Kind.KERNEL).sum())
