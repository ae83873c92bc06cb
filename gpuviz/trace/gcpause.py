"""Pausing the cyclic garbage collector while a reader builds millions of objects, and giving
the heap pages they leave freed back to the system."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (restored to its previous state on exit).

    For readers that make millions of short-lived or reachable objects and no reference
    cycles (the Kineto import, the snapshot unpickler): a collection there frees nothing and
    costs about a third of their time.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def release_freed_memory() -> None:
    """Give the heap's freed pages back to the system (glibc's ``malloc_trim``; a no-op
    elsewhere)."""
    # Each chunk's short-lived objects leave freed heap pages behind; glibc keeps them (they
    # count in RSS) unless asked to give them back. Not having glibc is fine: skip. (Trimming
    # only every 32 MiB freed saved 1.5 ms a trim but raised the peak of 64 ranks by 12 %.)
    libc = _libc()
    if libc:
        libc.malloc_trim(0)


FIXED_BY = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_")
"""glibc's settings whose presence in the environment fixes its thresholds."""
MMAP_MAX = 32 * 2**20
"""The largest mmap threshold glibc's dynamic thresholds reach (64-bit); its trim threshold
then is twice that."""
DEFAULT_THRESHOLD = 128 * 1024
"""glibc's mmap and trim thresholds where nothing sets them."""
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameters (malloc.h)


@contextmanager
def heap_thresholds_raised() -> Iterator[None]:
    """Within the block, glibc keeps blocks of up to 32 MiB on its heap, as its dynamic
    thresholds let it, where the environment had fixed its thresholds (restored on exit; a
    no-op elsewhere, and where nothing fixed them).

    Dask's nanny starts each worker with ``MALLOC_TRIM_THRESHOLD_=65536``
    (``distributed.nanny.pre-spawn-environ``). A threshold set so also stops glibc's mmap
    threshold from growing past 128 KiB: every block over that is mapped and unmapped anew and
    its pages fault in each time. A rank of 10k kernels took 1.2-1.45x as long to import (16
    ranks, one worker, on the 2-core VM). For a cluster's task that imports a rank; the
    task gives the freed pages back itself (:func:`release_freed_memory`). Tasks on threads
    of one worker nest: the first raises, the last restores.
    """
    global _RAISED
    libc = _libc()
    if not libc or not any(os.environ.get(k) for k in FIXED_BY):
        yield
        return
    with _LOCK:
        if _RAISED == 0:
            libc.mallopt(M_MMAP_THRESHOLD, MMAP_MAX)
            libc.mallopt(M_TRIM_THRESHOLD, 2 * MMAP_MAX)
        _RAISED += 1
    try:
        yield
    finally:
        with _LOCK:
            _RAISED -= 1
            if _RAISED == 0:
                libc.mallopt(M_TRIM_THRESHOLD, _env_int(FIXED_BY[0]))
                libc.mallopt(M_MMAP_THRESHOLD, _env_int(FIXED_BY[1]))


def _env_int(name: str) -> int:
    """A threshold as the environment fixed it, else glibc's default."""
    try:
        value = int(os.environ.get(name, ""))
    except ValueError:
        return DEFAULT_THRESHOLD
    return value if value >= 0 else DEFAULT_THRESHOLD


def _libc() -> Any:
    """glibc, or False where there is none (then nothing here does anything)."""
    global _LIBC
    if _LIBC is None:
        try:
            import ctypes

            lib = ctypes.CDLL("libc.so.6")
            _LIBC = lib if hasattr(lib, "malloc_trim") and hasattr(lib, "mallopt") else False
        except OSError:
            _LIBC = False
    return _LIBC


_LIBC: Any = None
_LOCK = threading.Lock()
_RAISED = 0
