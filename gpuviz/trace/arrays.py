"""Small numpy helpers that the trace model and its views share."""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np


def unique(a: np.ndarray) -> np.ndarray:
    """The sorted distinct values of ``a``.

    Not ``np.unique``: its first plain call imports ``numpy.ma`` (about 90 ms on the app's GUI
    thread, 20 ms of a 100k-kernel import's assembly on a 2-core box).
    """
    a = np.sort(a)
    if len(a) > 1:
        a = a[np.concatenate(([True], a[1:] != a[:-1]))]
    return a


TRANSPOSE_BLOCK = 64
"""Rows of the source copied at a time by :func:`transposed` (see there)."""


def transposed(a: np.ndarray, block: int = TRANSPOSE_BLOCK) -> np.ndarray:
    """A C-contiguous copy of the 2-D ``a``'s transpose, made ``block`` rows of ``a`` at a time.

    ``np.ascontiguousarray(a.T)`` walks the source in columns and misses the cache at every
    element: 2.4-3.4 ms for a 2349 x 703 uint32 raster on a 2-core VM, against 0.8-0.95 ms in
    blocks of 64 rows (32 was no faster than the plain copy there; 128 and 256 about as fast).
    """
    rows, cols = a.shape
    out = np.empty((cols, rows), dtype=a.dtype)
    for i in range(0, rows, block):
        out[:, i : i + block] = a[i : i + block].T
    return out


MAPPED_MIN_BYTES = 1 << 20
""":func:`mapped_empty` maps arrays of at least this many bytes; smaller ones come from malloc."""


def mapped_empty(n: int, dtype: Any) -> np.ndarray:
    """An uninitialised array of ``n`` items of ``dtype``, in pages mapped for it alone where
    it is large (:data:`MAPPED_MIN_BYTES`), and unmapped when it is freed.

    Not ``np.empty``: after an import has freed thousands of small column parts, glibc's
    malloc spent 36-56 ms of CPU finding room for each 6-12 MB column among the freed chunks
    (measured on 32 ranks of 100k kernels), holding the GIL, so that the app's GUI thread
    stalled that long. An anonymous ``mmap`` costs a system call, whatever the heap holds.

    Where Linux allows, the pages are made present by the same call (``MAP_POPULATE``), which
    releases the GIL: written one by one, their faults were half of a 100k-kernel import's
    assembly on the 2-core VM (21k faults, 0.07 s of system time in 0.14 s); made present up
    front, a 3.2 MB column cost 2.1 ms instead of 4.2.
    """
    dt = np.dtype(dtype)
    nbytes = n * dt.itemsize
    if nbytes < MAPPED_MIN_BYTES:
        return np.empty(n, dt)
    if _POPULATE:
        return np.frombuffer(mmap.mmap(-1, nbytes, flags=_POPULATE), dtype=dt)
    return np.frombuffer(mmap.mmap(-1, nbytes), dtype=dt)  # pragma: no cover - not Linux


_POPULATE = (
    mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE
    if hasattr(mmap, "MAP_POPULATE")
    else 0
)
