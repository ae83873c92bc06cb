"""The kernel table: kernels grouped by exact name, with time figures and launch configuration."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import Kind, Trace

I64 = npt.NDArray[np.int64]


@dataclass(frozen=True)
class KernelStats:
    """One row of the kernel table: every kernel of one exact name.

    Attributes
    ----------
    name : str
        The kernel's name, as in the trace.
    count : int
        How many times it ran (all ranks, devices and streams).
    total_ns, mean_ns, min_ns, max_ns : int or float
        Sum, mean, shortest and longest duration.
    share : float
        ``total_ns`` over the time of all kernels (0 to 1).
    grid, block : list of int or None
        Launch configuration of the first launch of that name, from its args.
    registers_per_thread : int or None
        ``registers per thread`` of the first launch.
    shared_memory_bytes : int or None
        ``shared memory`` of the first launch.
    occupancy_pct : float or None
        ``est. achieved occupancy %`` of the first launch; None where Kineto wrote none or 0
        (unknown: see :func:`known_occupancy`).
    """

    name: str
    count: int
    total_ns: int
    mean_ns: float
    min_ns: int
    max_ns: int
    share: float
    grid: list[int] | None = None
    block: list[int] | None = None
    registers_per_thread: int | None = None
    shared_memory_bytes: int | None = None
    occupancy_pct: float | None = None


def kernel_table(
    trace: Trace, limit: int | None = None, launch_info: bool = True
) -> list[KernelStats]:
    """Kernels grouped by exact name, largest total time first.

    Parameters
    ----------
    trace : Trace
        The trace.
    limit : int, optional
        Keep only the first ``limit`` rows.
    launch_info : bool
        Read grid, block, registers and occupancy from the args of each name's first launch.

    Returns
    -------
    list of KernelStats
        Sorted by total time (largest first), then by name, so equal traces give equal tables.
    """
    sums, first = KernelSums.with_first_rows(trace)
    args = trace.slices.args

    def launch(i: int) -> dict[str, Any]:
        return _launch_info(trace.args.get(int(args[first[i]])))

    return sums.rows(limit, launch if launch_info else None)


@dataclass(frozen=True)
class KernelSums:
    """Per kernel name, the figures the kernel table is made of; those of several traces (the
    ranks of a folder, summarized one at a time) add up with :meth:`merge`.

    Attributes
    ----------
    names : list of str
        Distinct kernel names.
    count, total_ns, min_ns, max_ns : int64 arrays
        Per name: launches, summed, shortest and longest duration.
    """

    names: list[str]
    count: I64
    total_ns: I64
    min_ns: I64
    max_ns: I64

    @classmethod
    def of(cls, trace: Trace) -> KernelSums:
        """The sums of ``trace``'s kernels."""
        return cls.with_first_rows(trace)[0]

    @classmethod
    def with_first_rows(cls, trace: Trace) -> tuple[KernelSums, I64]:
        """The sums of ``trace``'s kernels, and each name's first slice row."""
        is_kernel = trace.slices.kind == Kind.KERNEL
        n = int(np.count_nonzero(is_kernel))
        if n == 0:
            z = np.zeros(0, dtype=np.int64)
            return cls([], z, z, z, z), z
        if _counted(len(trace.symbols), n):
            uniq, count, total, mn, mx, first = _sums_by_symbol(trace, is_kernel)
        else:
            uniq, count, total, mn, mx, first = _sums_by_unique(trace, np.flatnonzero(is_kernel))
        return cls(trace.symbols.lookup(uniq), count, total, mn, mx), first

    @classmethod
    def merge(cls, parts: Sequence[KernelSums]) -> KernelSums:
        """One table of several: a name's counts and totals added, its extremes kept."""
        index: dict[str, int] = {}
        for p in parts:
            for name in p.names:
                index.setdefault(name, len(index))
        n = len(index)
        count = np.zeros(n, dtype=np.int64)
        total = np.zeros(n, dtype=np.int64)
        mn = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        mx = np.full(n, np.iinfo(np.int64).min, dtype=np.int64)
        for p in parts:
            at = np.fromiter((index[name] for name in p.names), dtype=np.int64, count=len(p.names))
            count[at] += p.count
            total[at] += p.total_ns
            np.minimum.at(mn, at, p.min_ns)
            np.maximum.at(mx, at, p.max_ns)
        return cls(list(index), count, total, mn, mx)

    def rows(
        self, limit: int | None = None, extra: Callable[[int], dict[str, Any]] | None = None
    ) -> list[KernelStats]:
        """The table: largest total first, then by name (``extra(i)``: more fields of name
        ``i``, the launch configuration)."""
        total, label = self.total_ns, self.names
        all_ns = int(total.sum())
        order = sorted(range(len(label)), key=lambda i: (-int(total[i]), label[i]))
        if limit is not None:
            order = order[:limit]
        out = []
        for i in order:
            out.append(
                KernelStats(
                    name=label[i],
                    count=int(self.count[i]),
                    total_ns=int(total[i]),
                    mean_ns=int(total[i]) / int(self.count[i]),
                    min_ns=int(self.min_ns[i]),
                    max_ns=int(self.max_ns[i]),
                    share=int(total[i]) / all_ns if all_ns else 0.0,
                    **(extra(i) if extra is not None else {}),
                )
            )
        return out


KERNEL_BLOCK = 1 << 20
"""Slices :func:`_sums_by_symbol` reads at a time."""

_Sums = tuple[npt.NDArray[Any], I64, I64, I64, I64, I64]


def _counted(n_symbols: int, n_rows: int) -> bool:
    """Whether the figures are summed per symbol id (a table as long as the symbols), which
    is where the symbol table is small next to the rows (it nearly always is)."""
    return n_symbols <= 4 * n_rows + (1 << 16)


def _sums_by_symbol(trace: Trace, is_kernel: npt.NDArray[np.bool_]) -> _Sums:
    """Per kernel name: the name's symbol id, count, total, shortest, longest and first slice
    row, summed into tables indexed by symbol id a block of slices at a time.

    For every kernel at once, the rows, names, durations and their grouping took about 45
    bytes a kernel (270 MB of 64 ranks, beside the summary's other figures at its peak).
    """
    s = trace.slices
    n_sym = len(trace.symbols)
    count = np.zeros(n_sym, dtype=np.int64)
    # Integer sums: bincount's float weights are exact only below 2**53 ns (104 days).
    total = np.zeros(n_sym, dtype=np.int64)
    mx = np.full(n_sym, np.iinfo(np.int64).min, dtype=np.int64)
    mn = np.full(n_sym, np.iinfo(np.int64).max, dtype=np.int64)
    first = np.full(n_sym, np.iinfo(np.int64).max, dtype=np.int64)
    for a in range(0, len(is_kernel), KERNEL_BLOCK):
        rows = np.flatnonzero(is_kernel[a : a + KERNEL_BLOCK])
        if not len(rows):
            continue
        rows += a
        ids = s.name[rows]
        dur = s.dur_ns[rows].astype(np.int64)
        count += np.bincount(ids, minlength=n_sym)
        np.add.at(total, ids, dur)
        np.maximum.at(mx, ids, dur)
        np.minimum.at(mn, ids, dur)
        np.minimum.at(first, ids, rows)
    uniq = np.flatnonzero(count)
    return uniq.astype(s.name.dtype), count[uniq], total[uniq], mn[uniq], mx[uniq], first[uniq]


def _sums_by_unique(trace: Trace, rows: I64) -> _Sums:
    """:func:`_sums_by_symbol`'s figures through ``np.unique`` of the kernels' names (for a
    symbol table much longer than the kernels)."""
    s = trace.slices
    names = s.name[rows]
    dur = s.dur_ns[rows].astype(np.int64)
    uniq, first, inverse = np.unique(names, return_index=True, return_inverse=True)
    count = np.bincount(inverse, minlength=len(uniq))
    total = np.zeros(len(uniq), dtype=np.int64)
    np.add.at(total, inverse, dur)
    mx = np.full(len(uniq), np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(mx, inverse, dur)
    mn = np.full(len(uniq), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(mn, inverse, dur)
    return uniq, count, total, mn, mx, rows[first]


def _launch_info(args: dict[str, Any]) -> dict[str, Any]:
    """Launch configuration fields of a kernel's args (absent ones are None)."""

    def ints(v: Any) -> list[int] | None:
        return (
            [int(x) for x in v]
            if isinstance(v, list) and all(isinstance(x, int | float) for x in v)
            else None
        )

    def num(v: Any) -> Any:
        return v if isinstance(v, int | float) and not isinstance(v, bool) else None

    return {
        "grid": ints(args.get("grid")),
        "block": ints(args.get("block")),
        "registers_per_thread": num(args.get("registers per thread")),
        "shared_memory_bytes": num(args.get("shared memory")),
        "occupancy_pct": known_occupancy(
            args.get("est. achieved occupancy %"), args.get("warps per SM")
        ),
    }


def known_occupancy(value: Any, warps_per_sm: Any = None) -> float | None:
    """Kineto's ``est. achieved occupancy %`` where it is a figure, else None.

    Kineto writes a whole percent. A 0 is a figure (under 1 %) where fewer than one warp per SM
    was resident (``warps per SM`` below 1: a grid of one block); with a warp or more per SM it
    is no figure but what CUPTI writes where it computed none (kernels launched through the
    driver API, such as cuBLASLt's ``nvjet`` GEMMs launched by ``cuLaunchKernelEx``, and cuDNN's
    generated kernels), and so is a 0 without ``warps per SM``.
    """
    if not isinstance(value, int | float) or isinstance(value, bool) or not value >= 0:
        return None
    if value == 0:
        warps = warps_per_sm
        if not isinstance(warps, int | float) or isinstance(warps, bool) or not warps < 1:
            return None
    return float(value)
