"""The kernel table: kernels grouped by exact name, with time figures and launch configuration."""

from __future__ import annotations

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
        ``est. achieved occupancy %`` of the first launch.
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
    s = trace.slices
    rows = np.flatnonzero(s.kind == Kind.KERNEL)
    if len(rows) == 0:
        return []
    names = s.name[rows]
    dur = s.dur_ns[rows].astype(np.int64)
    uniq, first, inverse = _by_name(names, len(trace.symbols))
    count = np.bincount(inverse, minlength=len(uniq))
    total = np.bincount(inverse, weights=dur, minlength=len(uniq))
    # Integer sums: bincount's float weights are exact only below 2**53 ns (104 days).
    total_i = np.zeros(len(uniq), dtype=np.int64)
    np.add.at(total_i, inverse, dur)
    mx = np.full(len(uniq), np.iinfo(np.int64).min, dtype=np.int64)
    np.maximum.at(mx, inverse, dur)
    mn = np.full(len(uniq), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(mn, inverse, dur)
    del total
    all_ns = int(total_i.sum())
    label = trace.symbols.lookup(uniq)
    order = sorted(range(len(uniq)), key=lambda i: (-int(total_i[i]), label[i]))
    if limit is not None:
        order = order[:limit]
    out = []
    for i in order:
        extra: dict[str, Any] = {}
        if launch_info:
            extra = _launch_info(trace.args.get(int(s.args[rows[first[i]]])))
        out.append(
            KernelStats(
                name=label[i],
                count=int(count[i]),
                total_ns=int(total_i[i]),
                mean_ns=int(total_i[i]) / int(count[i]),
                min_ns=int(mn[i]),
                max_ns=int(mx[i]),
                share=int(total_i[i]) / all_ns if all_ns else 0.0,
                **extra,
            )
        )
    return out


def _by_name(names: npt.NDArray[Any], n_symbols: int) -> tuple[I64, I64, I64]:
    """``np.unique(names, return_index=True, return_inverse=True)``, by counting where the
    symbol table is small next to the rows (it nearly always is): no sort of every kernel row
    (10 ms of a 300k-kernel summary)."""
    if n_symbols > 4 * len(names) + (1 << 16) or len(names) == 0:
        return np.unique(names, return_index=True, return_inverse=True)
    ids = names.astype(np.int64)
    seen = np.bincount(ids, minlength=n_symbols) > 0
    uniq = np.flatnonzero(seen)
    slot = np.full(len(seen), -1, dtype=np.int64)
    slot[uniq] = np.arange(len(uniq))
    inverse = slot[ids]
    first = np.full(len(uniq), len(ids), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(ids), dtype=np.int64))
    return uniq.astype(names.dtype), first, inverse


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
        "occupancy_pct": num(args.get("est. achieved occupancy %")),
    }
