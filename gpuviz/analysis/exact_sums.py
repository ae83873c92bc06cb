"""Exact integer sums of whole-number figures (FLOPs, bytes) held in float64 arrays.

A float64 sum of integers is exact only while it stays below 2**53 (about 9 PFLOP); past
that each addition rounds, so the total depends on the order of its terms, and a rank
folder's figure would not be the sum of its ranks' (a 1,000-rank job with big GEMMs passes
2**53 FLOPs in one op row). Here each whole number is split into three parts of
:data:`PART_BITS` bits; each part is below 2**21, so ``np.bincount`` sums any 2**32 of them
exactly in float64, and the parts' sums join into the exact total as a Python int, however
the terms are ordered or grouped. Where the total stays below 2**53 (:data:`EXACT`: every
trace of less than 9 PFLOP) one float64 ``bincount`` is already exact and is used instead.

Figures that are not whole numbers from 0 to below 2**63 (a Kineto ``flops`` arg of 1.5,
1e308, inf) have no exact int sum: the callers keep their float64 sums for those and say
the figure is not exact (a rank folder's merge then declines).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

PART_BITS = 21
"""Whole numbers are summed in three parts of this many bits (:func:`parts`)."""

EXACT = 2.0**53
"""Whole numbers add up exactly in float64, in any order, while their total stays below this."""

LIMIT = 2.0**63
"""Whole numbers from 0 to below this are split exactly (three parts of 21 bits)."""


def whole(values: F64) -> npt.NDArray[np.bool_]:
    """Which values are whole numbers from 0 to below :data:`LIMIT` (NaN, inf, negatives and
    fractions are not)."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(values) & (values >= 0) & (values < LIMIT) & (values == np.floor(values))


def parts(values: F64) -> list[F64] | None:
    """Each value as three parts of :data:`PART_BITS` bits (low first), NaN as 0, where every
    finite value is :func:`whole`; None otherwise.

    Parameters
    ----------
    values : float64 array
        Per-call figures; NaN where unknown.

    Returns
    -------
    list of three float64 arrays, or None
        Sum each part the same way (``np.bincount`` with it as weights), then
        :func:`joined` gives each sum's exact int.
    """
    ok = np.isfinite(values)
    if not bool(whole(values[ok]).all()):
        return None
    ints = np.zeros(len(values), dtype=np.int64)
    ints[ok] = values[ok].astype(np.int64)
    mask = (1 << PART_BITS) - 1
    return [((ints >> (PART_BITS * k)) & mask).astype(np.float64) for k in range(3)]


def joined(sums: Sequence[npt.NDArray[Any]], i: int) -> int:
    """The exact int total of entry ``i`` of the three parts' sums (:func:`parts`)."""
    return sum(int(part[i]) << (PART_BITS * k) for k, part in enumerate(sums))


def group_sums(values: F64, group: I64, n: int) -> list[int | None]:
    """Per group, the exact int sum of its known values (NaN is unknown: left out), or None
    for a group where some known value is not :func:`whole` (inf included): the caller keeps
    its float64 sum there, and says that figure is not exact.

    Parameters
    ----------
    values : float64 array
        Per-call figures; NaN where unknown.
    group : int64 array
        Each value's group, from 0 to ``n - 1``.
    n : int
        How many groups.

    Returns
    -------
    list of int or None
        ``n`` sums; 0 for a group with no known value.
    """
    ok = whole(values)
    bad = np.zeros(n, dtype=bool)
    bad[group[~ok & ~np.isnan(values)]] = True
    # The other groups' values only (a bad one would make parts() refuse them all).
    kept = np.where(ok, values, 0.0)
    if float(kept.sum()) < EXACT:
        # Every partial sum of these whole numbers is below 2**53: one float64 bincount is
        # exact in any order (the common case: a trace of less than 9 PFLOP or 9 PB).
        one = np.bincount(group, weights=kept, minlength=n)
        return [None if bad[i] else int(one[i]) for i in range(n)]
    split = parts(kept)
    assert split is not None  # every value left is whole
    sums = [np.bincount(group, weights=p, minlength=n) for p in split]
    return [None if bad[i] else joined(sums, i) for i in range(n)]


__all__ = ["EXACT", "LIMIT", "PART_BITS", "group_sums", "joined", "parts", "whole"]
