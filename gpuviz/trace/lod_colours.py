"""The timeline's colour keys: one per kind, a per-name hue for kernels and CPU ops (no Qt).

A frame (:mod:`gpuviz.trace.lod`) groups its rectangles by colour key; the GUI's palette
(:mod:`gpuviz.gui.timeline.palette`) maps keys to colours. A name's hue is its crc32 bucket, so
a kernel has the same colour in every run.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import Kind, Trace

# Colour keys: kinds get one key each; kernels and cpu ops get a per-name hue.
N_KERNEL_HUES = 24
N_CPU_SHADES = 6
KERNEL_KEY0 = 16
CPU_KEY0 = KERNEL_KEY0 + N_KERNEL_HUES
N_COLOUR_KEYS = CPU_KEY0 + N_CPU_SHADES


def name_hues(names: Sequence[str], n: int) -> npt.NDArray[np.int16]:
    """A stable hue bucket in ``[0, n)`` for each name (crc32: the same in every run)."""
    try:  # map at C speed (a generator costs 3x: this runs on the GUI thread's first paint)
        crc = np.fromiter(map(zlib.crc32, map(str.encode, names)), np.int64, len(names))
    except UnicodeEncodeError:  # a lone surrogate (JSON may escape one): replaced, as before
        crc = np.fromiter(
            (zlib.crc32(s.encode("utf-8", "replace")) for s in names), np.int64, len(names)
        )
    return (crc % n).astype(np.int16)


# Plain ints: comparing arrays with IntEnum members goes through slow enum attribute lookups.
_KERNEL, _CPU_OP, _PYTHON_FUNCTION = int(Kind.KERNEL), int(Kind.CPU_OP), int(Kind.PYTHON_FUNCTION)


class ColourKeys:
    """Colour keys of slices: one per :class:`Kind`, a per-name hue for kernels and cpu ops.

    Keys ``0..15`` are ``Kind`` values; ``KERNEL_KEY0 + hue`` for kernels;
    ``CPU_KEY0 + shade`` for cpu ops and python functions. The GUI maps keys to colours.
    """

    TABLE_NOW_MAX = 300_000
    """Traces up to this many slices get the per-slice key table on first use, on any thread;
    bigger ones when :meth:`prepare` runs (the LOD worker calls it)."""

    def __init__(self, trace: Trace) -> None:
        self._trace = trace
        self._hue: npt.NDArray[np.int16] | None = None
        self._table: npt.NDArray[np.int16] | None = None

    def prepare(self) -> None:
        """Compute every slice's key once (about 20 ms per million slices)."""
        if self._table is None:
            n = len(self._trace.slices)
            table = np.empty(n, dtype=np.int16)
            step = 1 << 20
            for i in range(0, n, step):  # in steps: a worker thread stays interruptible
                table[i : i + step] = self._compute(np.arange(i, min(i + step, n)))
            self._table = table

    def _hues(self) -> npt.NDArray[np.int16]:
        if self._hue is None or len(self._hue) < len(self._trace.symbols):
            self._hue = name_hues(self._trace.symbols.strings, N_KERNEL_HUES * N_CPU_SHADES)
        return self._hue

    def of(self, rows: npt.ArrayLike) -> npt.NDArray[np.int16]:
        """Colour keys of slice rows."""
        rows = np.asarray(rows, dtype=np.int64)
        if self._table is None and len(self._trace.slices) <= self.TABLE_NOW_MAX:
            self.prepare()
        if self._table is not None:
            return self._table[rows]
        return self._compute(rows)

    def _compute(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int16]:
        s = self._trace.slices
        kind = s.kind[rows].astype(np.int16)
        out = kind.copy()
        kern = kind == _KERNEL
        cpu = (kind == _CPU_OP) | (kind == _PYTHON_FUNCTION)
        if kern.any() or cpu.any():
            hue = self._hues()[s.name[rows]]
            out[kern] = KERNEL_KEY0 + hue[kern] % N_KERNEL_HUES
            out[cpu] = CPU_KEY0 + hue[cpu] % N_CPU_SHADES
        return out


__all__ = [
    "CPU_KEY0",
    "KERNEL_KEY0",
    "N_COLOUR_KEYS",
    "N_CPU_SHADES",
    "N_KERNEL_HUES",
    "ColourKeys",
    "name_hues",
]
