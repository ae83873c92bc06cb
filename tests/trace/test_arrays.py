"""The trace's small numpy helpers."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from gpuviz.trace.arrays import MAPPED_MIN_BYTES, mapped_empty, unique


@pytest.mark.parametrize("values", [[], [3], [5, 1, 5, 2, 1, 9], [-4, -4, 0, 7, 7, 7]])
def test_unique_is_numpys(values: list[int]) -> None:
    a = np.asarray(values, dtype=np.int64)
    got = unique(a)
    assert got.tolist() == np.unique(a).tolist() and got.dtype == np.int64


def test_unique_leaves_numpy_ma_unimported() -> None:
    code = (
        "import sys, numpy as np; from gpuviz.trace.arrays import unique; "
        "unique(np.array([2, 1, 2])); print('numpy.ma' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("n", [0, 10, MAPPED_MIN_BYTES // 8 + 1, 3 << 20])
def test_mapped_empty_is_a_writable_array_of_its_size(n: int) -> None:
    a = mapped_empty(n, np.int64)
    assert a.shape == (n,) and a.dtype == np.int64 and a.flags.writeable
    a[:] = np.arange(n)
    assert int(a.sum()) == n * (n - 1) // 2
    small = n * 8 < MAPPED_MIN_BYTES
    assert (a.base is None) == small  # a large one lives in its own mapping
