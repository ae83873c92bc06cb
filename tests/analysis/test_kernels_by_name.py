"""kernel_table's grouping by name: counting over the symbol ids gives what np.unique gives."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuviz.analysis import kernels

DATA = Path(__file__).parent.parent / "data"


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 10**12), st.booleans()), max_size=200),
    st.integers(41, 100),
    st.integers(1, 9),
)
def test_grouping_by_counting_is_np_unique(
    rows: list[tuple[int, int, bool]], n_symbols: int, block: int
) -> None:
    # Summing per symbol id, a block of slices at a time, gives what np.unique of the
    # kernels' names gives: the names, counts, sums, extremes and first rows.
    names = np.asarray([r[0] for r in rows], dtype=np.int32)
    trace = SimpleNamespace(
        slices=SimpleNamespace(name=names, dur_ns=np.asarray([r[1] for r in rows], np.int64)),
        symbols=range(n_symbols),
    )
    is_kernel = np.asarray([r[2] for r in rows], dtype=bool)
    want = kernels._sums_by_unique(trace, np.flatnonzero(is_kernel))  # type: ignore[arg-type]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(kernels, "KERNEL_BLOCK", block)
        got = kernels._sums_by_symbol(trace, is_kernel)  # type: ignore[arg-type]
    for g, w in zip(got, want, strict=True):
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
