"""Launches that share a correlation id, and which of them each GPU slice of that id belongs to.

A kernel, copy or set is tied to the CPU call that launched it by its correlation id
(:meth:`~gpuviz.trace.model.Trace.launches_of`). CUPTI gives each call of a process its own id,
so two launches with one id come only from a damaged, edited or merged file (no trace in
tests/data has one). Looked up by id alone, every kernel of such an id went to the first of its
launches, silently: the second launch's op was charged nothing and the first's twice.

Where time tells them apart, the kernels are matched to their own launches (a GPU slice starts
after the call that launched it, and one stream runs its work in launch order):

- as many kernels as launches, each starting after the launch of its rank in time order: the
  k-th kernel is the k-th launch's;
- otherwise a kernel that starts after exactly one of the launches is that one's;
- any other kernel belongs to no launch (so to no op): it is counted as unplaced, and the
  import's warning (:func:`shared_id_warning`) says so.

One launch with many kernels (a CUDA graph's replay) is not a shared id: only launches count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

# No gpuviz import: Trace.launches_of (gpuviz.trace.model) uses this module, and the model
# builds the arrays (Trace.shared_launches).

I64 = npt.NDArray[np.int64]
_ID_BITS = 44
"""``correlation_key``'s layout: ``(rank + 1) << 44 | id``."""


@dataclass(frozen=True)
class SharedIds:
    """The launches of a trace whose (rank, correlation id) another launch has too.

    Attributes
    ----------
    ids : int
        How many (rank, id) pairs are shared.
    launches : int
        The launches that have them.
    gpu_rows : int64
        The GPU slices (kernels, copies, sets) with those ids, ascending.
    launch_rows : int64
        Each one's launch, matched by time; -1 where time cannot tell.
    example : tuple of (int or None, int)
        The first shared pair, as (rank, id), for the message.
    """

    ids: int
    launches: int
    gpu_rows: I64
    launch_rows: I64
    example: tuple[int | None, int]

    @property
    def unplaced(self) -> int:
        """GPU slices of a shared id that no launch could be matched to."""
        return int((self.launch_rows < 0).sum())


def match_shared(
    launch_rows: I64, launch_key: I64, launch_ns: I64, gpu_rows: I64, gpu_key: I64, gpu_ns: I64
) -> SharedIds | None:
    """The launches whose key repeats, and their GPU work matched to them by time.

    Parameters
    ----------
    launch_rows, launch_key, launch_ns
        Every launch (a runtime or driver call with a correlation id): its slice row, its
        ``correlation_key`` (rank and id) and its start.
    gpu_rows, gpu_key, gpu_ns
        The same of every GPU slice with a correlation id.

    Returns
    -------
    SharedIds or None
        None when every launch has a key of its own (the usual case: one sort of the keys,
        no more).
    """
    if len(launch_key) < 2:
        return None
    sorted_key = np.sort(launch_key)  # (1M launches: about 10 ms; an argsort is 5 times that)
    repeat = sorted_key[1:] == sorted_key[:-1]
    if not repeat.any():
        return None
    shared = np.unique(sorted_key[1:][repeat])
    in_shared = np.isin(launch_key, shared)
    mine, mine_key, mine_ns = launch_rows[in_shared], launch_key[in_shared], launch_ns[in_shared]
    on_shared = np.isin(gpu_key, shared)
    gpu, g_key, g_ns = gpu_rows[on_shared], gpu_key[on_shared], gpu_ns[on_shared]
    matched = _match(
        np.searchsorted(shared, mine_key), mine_ns, mine, np.searchsorted(shared, g_key), g_ns
    )
    order = np.argsort(gpu, kind="stable")  # ascending rows, for the lookup
    first = int(shared[0])
    rank = (first >> _ID_BITS) - 1
    example = (None if rank < 0 else rank, first & ((1 << _ID_BITS) - 1))
    return SharedIds(len(shared), len(mine), gpu[order], matched[order], example)


def _match(l_group: I64, l_ns: I64, l_rows: I64, g_group: I64, g_ns: I64) -> I64:
    """The launch row of each GPU slice, by the rules above, for all shared ids at once.

    Groups are the shared ids (0 to G-1). Times become their ranks among all the times, so
    that (group, time) packs into one int64 (a loop over the ids, each a pass over every
    launch, was quadratic: a hand-merged trace shares every id).
    """
    out = np.full(len(g_ns), -1, dtype=np.int64)
    if len(g_ns) == 0:
        return out
    times = np.concatenate([l_ns, g_ns])
    sorted_times = np.sort(times)
    width = len(times) + 1
    l_code = l_group * width + np.searchsorted(sorted_times, l_ns)
    g_code = g_group * width + np.searchsorted(sorted_times, g_ns)
    l_order = np.argsort(l_code, kind="stable")
    l_sorted, l_rows_sorted = l_code[l_order], l_rows[l_order]
    g_order = np.argsort(g_code, kind="stable")
    g_sorted, grp = g_code[g_order], g_group[g_order]
    # for each GPU slice (in (group, time) order): its group's first launch, how many of the
    # group's launches start at or before it, and its place among the group's GPU slices
    l_first = np.searchsorted(l_sorted, grp * width)
    n_before = np.searchsorted(l_sorted, g_sorted, side="right") - l_first
    g_first = np.searchsorted(g_sorted, grp * width)
    place = np.arange(len(g_sorted)) - g_first
    n_groups = int(max(l_group.max(initial=0), g_group.max(initial=0))) + 1
    n_launch = np.bincount(l_group, minlength=n_groups)
    n_gpu = np.bincount(g_group, minlength=n_groups)
    late = np.bincount(grp[n_before < place + 1], minlength=n_groups)  # starts before its k-th
    one_for_one = ((n_launch == n_gpu) & (late == 0))[grp]
    got = np.full(len(g_sorted), -1, dtype=np.int64)
    got[one_for_one] = l_rows_sorted[(l_first + place)[one_for_one]]
    only = ~one_for_one & (n_before == 1)  # after exactly one launch of its id
    got[only] = l_rows_sorted[l_first[only]]
    out[g_order] = got
    return out


def shared_id_warning(shared: SharedIds) -> str:
    """The import's warning about shared ids: how many, and what became of their GPU work."""
    rank, cid = shared.example
    where = f"id {cid}" if rank is None else f"rank {rank}'s id {cid}"
    head = (
        f"{shared.launches} launches share {shared.ids} correlation "
        f"id{'s' if shared.ids != 1 else ''} (e.g. {where}): a damaged or merged file"
    )
    n = len(shared.gpu_rows)
    placed = n - shared.unplaced
    tail = f"; {placed} of their {n} GPU slices matched to their launches by time"
    if shared.unplaced:
        tail += f", {shared.unplaced} that time cannot place belong to no op"
    return head + tail


def warn_shared_ids(trace: Any) -> None:
    """Put the warning of shared ids first among a Trace's import warnings (none when no id
    is shared): no list of skipped events may push it out of the samples."""
    shared = trace.shared_launches()
    if shared is not None:
        w = trace.warnings
        w.samples.insert(0, shared_id_warning(shared))
        del w.samples[w.limit :]


def apply_shared(out: I64, rows: I64, shared: tuple[I64, I64]) -> None:
    """Set ``out`` (the launches of GPU ``rows``, looked up by id) to the launches matched by
    time where a row's id is shared."""
    gpu_rows, launch_rows = shared
    if len(gpu_rows) == 0:  # ids shared by calls with no GPU work (syncs)
        return
    at = np.minimum(np.searchsorted(gpu_rows, rows), len(gpu_rows) - 1)
    hit = gpu_rows[at] == rows
    out[hit] = launch_rows[at[hit]]
