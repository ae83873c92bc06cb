"""A cheap upper bound on the slices that trace files will import as, without importing them.

``advise DIR --cluster`` reads a folder within the advisor's replay limits (16 ranks, 400k
slices) whole; deciding that from the ranks' imports (pass 0 on the workers) costs an import of
every rank before the folder is read whole anyway. :func:`slices_at_most` decides it from the
files' text instead, where it can: a slice is an ``X`` event or a ``B``/``E`` pair, so

- each slice has its own ``"ph"`` key (a key spelled with ``\\u`` escapes is counted by its
  ``\\u``, and text inside strings only counts more): the count of ``"ph"`` and ``\\u`` is at
  least the slices;
- the shortest slice the importer keeps, ``{"ph":"X","ts":0,"dur":0}``, is
  :data:`MIN_SLICE_BYTES` bytes: the JSON's length over that is at least the slices too.

The text is read (``.gz`` decompressed) a block at a time, and the reading stops as soon as
both bounds pass the limit, so a large folder costs at most the text of about ``cap`` events.
Checked on the rank files of tests/data: 270 to 560 bytes of JSON per imported slice.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Sequence

MIN_SLICE_BYTES = 25
"""``{"ph":"X","ts":0,"dur":0}``: the shortest event the importer makes a slice of (without
``dur`` it is skipped; a ``B``/``E`` pair takes 34)."""

_BLOCK = 4 << 20
_KEYS = (b'"ph"', b"\\u")


def slices_at_most(paths: Sequence[str | os.PathLike[str]], cap: int) -> bool:
    """Whether the trace files ``paths`` surely import as at most ``cap`` slices in all.

    False where that is not shown (more text than ``cap`` slices could take, or a file that
    cannot be read here: its import will say why); never True for files that hold more.
    """
    if cap < 0:
        return False
    size_bound = 0  # the text's bytes over MIN_SLICE_BYTES, summed over the files
    key_bound = 0  # the "ph" keys and \u escapes, summed over the files
    for path in paths:
        try:
            opened = (
                gzip.open(path, "rb") if str(path).lower().endswith(".gz") else open(path, "rb")
            )
            with opened as f:
                tail = b""
                text_bytes = 0
                while True:
                    block = f.read(_BLOCK)
                    if not block:
                        break
                    text_bytes += len(block)
                    # 3 bytes of the block before: a key cut by the block's edge is counted
                    # (one that fits in them is counted twice: more, never less)
                    both = tail + block
                    key_bound += sum(both.count(k) for k in _KEYS)
                    tail = block[-3:]
                    if min(size_bound + text_bytes // MIN_SLICE_BYTES, key_bound) > cap:
                        return False
                size_bound += text_bytes // MIN_SLICE_BYTES
        except (OSError, EOFError, gzip.BadGzipFile):
            return False
    return min(size_bound, key_bound) <= cap


__all__ = ["MIN_SLICE_BYTES", "slices_at_most"]
