"""Allocations as intervals: each alloc paired with its free, and what lived before the window.

PyTorch's allocator history is a ring buffer (``max_entries``): a long run keeps only its last
entries, so some frees have no alloc in the window (the tensor was allocated before it) and
some blocks live at the snapshot were allocated before it too. :func:`pair_allocations` turns
one device's entries into one row per allocation, with

- ``start``: the entry index of its ``alloc``, or ``-1`` when it was allocated before the window;
- ``end``: the entry index of its ``free_completed`` (or legacy ``free``), or ``n`` (the number
  of entries) when it is still live at the snapshot;
- ``freed``: the index of its ``free_requested`` (``end`` when there is none);
- its block bytes (:func:`block_sizes`).

Rows come in stacking order: allocations from before the window first (the longest-lived at the
bottom), then the window's allocations in the order they happened; memory_viz stacks them the
same way. The live bytes at entry ``k`` are the block bytes of rows with ``start <= k < end``.

Block bytes: the trace records the *requested* size, but ``memory_allocated`` and
``max_memory_allocated`` count blocks. :func:`block_sizes` rounds requests as the allocator does
(at least 512 bytes, a multiple of 512), takes the exact size from the snapshot's blocks for
allocations still live, and the whole segment when the allocation came with a fresh segment
whose remainder was too small to split off (large pool: 1 MiB or less). Rows from before the
window that are still live get their block from the snapshot.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from gpuviz.trace.allocator_columns import Action, Allocations, TraceEntries

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
B = npt.NDArray[np.bool_]

MIN_BLOCK = 512
SMALL_SIZE = 1 << 20  # kSmallSize: requests up to this come from the small pool
LARGE_BUFFER = 20 << 20  # kLargeBuffer: how much bigger an oversize block may be
"""Requests up to 1 MiB come from the small pool; a large block's remainder of 1 MiB or less
is not split off (PyTorch's ``kSmallSize``)."""


def round_block(size: npt.ArrayLike) -> I64:
    """Requested bytes rounded as the caching allocator does: >= 512, a multiple of 512."""
    s = np.asarray(size, dtype=np.int64)
    return np.maximum((s + (MIN_BLOCK - 1)) // MIN_BLOCK * MIN_BLOCK, MIN_BLOCK)


def pair_by_address(addr: I64, idx: I64, is_alloc: B) -> tuple[I64, I64, I64]:
    """Pair each alloc (or segment allocation) with the next event at its address.

    ``idx`` are entry indices (ascending), ``is_alloc`` tells allocs from frees. Returns the
    alloc indices, the index of the event that ends each (``-1`` for none), and the frees that
    follow no alloc (their allocation was before the window).
    """
    order = np.lexsort((idx, addr))
    a_sorted = addr[order]
    i_sorted = idx[order]
    k_sorted = is_alloc[order]
    same_next = np.zeros(len(order), dtype=bool)
    same_next[:-1] = a_sorted[1:] == a_sorted[:-1]
    alloc_pos = np.flatnonzero(k_sorted)
    ends = np.full(len(alloc_pos), -1, dtype=np.int64)
    # an alloc ends at the next event at its address: its free, or (a free that was not
    # recorded) the next alloc there, since two blocks cannot both start at one address
    has_next = same_next[alloc_pos]
    ends[has_next] = i_sorted[alloc_pos[has_next] + 1]
    prev_alloc_same = np.zeros(len(order), dtype=bool)
    prev_alloc_same[1:] = k_sorted[:-1] & same_next[:-1]
    orphan_frees = i_sorted[~k_sorted & ~prev_alloc_same]
    return i_sorted[alloc_pos], ends, np.sort(orphan_frees)


def pair_allocations(
    tr: TraceEntries,
    live_block_addr: I64,
    live_block_size: I64,
    live_block_requested: I64,
    live_block_stream: I64,
    live_block_stack: I32,
    seg_addr: I64 | None = None,
    seg_size: I64 | None = None,
    expandable: bool = False,
    max_split_size: int = -1,
) -> Allocations:
    """One device's allocation intervals (see the module docstring).

    Parameters
    ----------
    tr
        The device's trace entries.
    live_block_addr, live_block_size, live_block_requested, live_block_stream, live_block_stack
        The snapshot's active blocks on this device (allocated or pending free).
    seg_addr, seg_size
        The snapshot's segments on this device (where blocks end).
    expandable
        Expandable segments split every block exactly (no unsplit remainders).
    max_split_size
        The allocator setting (``-1``: none); larger requests are never split.
    """
    n = len(tr)
    if seg_addr is None or seg_size is None:
        seg_addr = seg_size = np.empty(0, dtype=np.int64)
    a = tr.action
    is_alloc = a == Action.ALLOC
    is_req = (a == Action.FREE_REQUESTED) | (a == Action.FREE)

    alloc_idx, ends, orphans = lifetimes(tr)
    in_order = np.argsort(alloc_idx, kind="stable")  # the window's rows in the order they ran
    alloc_idx, ends = alloc_idx[in_order], ends[in_order]
    # a pair is only an alloc followed by a free; an alloc followed by an alloc ended unrecorded
    ended = ends >= 0
    ends = np.where(ended, ends, n)

    sel_r = np.flatnonzero(is_alloc | is_req)
    alloc_r, req_ends, _ = pair_by_address(tr.addr[sel_r], sel_r, is_alloc[sel_r])
    freed = np.where(req_ends >= 0, req_ends, n)
    # both pairings list the same allocs in the same (address, index) order
    freed_by_alloc = np.full(n + 1, n, dtype=np.int64)
    freed_by_alloc[alloc_r] = freed
    freed = np.minimum(freed_by_alloc[alloc_idx], ends)

    # blocks live at the snapshot that no alloc in the window made: allocated before it
    live_in_window = alloc_idx[ends == n]
    in_window_addr = np.sort(tr.addr[live_in_window])
    if len(in_window_addr):
        pos = np.searchsorted(in_window_addr, live_block_addr)
        pos = np.minimum(pos, len(in_window_addr) - 1)
        made_in_window = in_window_addr[pos] == live_block_addr
    else:
        made_in_window = np.zeros(len(live_block_addr), dtype=bool)
    old_live = np.flatnonzero(~made_in_window)

    # the rows: before the window (longest-lived first), then the window's, in order
    n_old_live, n_orphan = len(old_live), len(orphans)
    orphan_order = np.argsort(-orphans, kind="stable")
    orphans = orphans[orphan_order]
    start = np.concatenate(
        [np.full(n_old_live + n_orphan, -1, dtype=np.int64), alloc_idx.astype(np.int64)]
    )
    end = np.concatenate([np.full(n_old_live, n, dtype=np.int64), orphans, ends])
    addr = np.concatenate([live_block_addr[old_live], tr.addr[orphans], tr.addr[alloc_idx]])
    size = np.concatenate(
        [live_block_requested[old_live], tr.size_bytes[orphans], tr.size_bytes[alloc_idx]]
    )
    stream = np.concatenate([live_block_stream[old_live], tr.stream[orphans], tr.stream[alloc_idx]])
    stack = np.concatenate(
        [live_block_stack[old_live], tr.stack[orphans], tr.stack[alloc_idx]]
    ).astype(np.int32)
    stack_of_free = np.zeros(len(start), dtype=bool)
    stack_of_free[n_old_live : n_old_live + n_orphan] = True
    freed_all = np.concatenate(
        [np.full(n_old_live, n, dtype=np.int64), _orphan_requested(tr, orphans, is_req), freed]
    )
    block = block_sizes(
        tr,
        start,
        end,
        size,
        addr,
        live_block_addr,
        live_block_size,
        seg_addr,
        seg_size,
        expandable,
        max_split_size,
    )
    return Allocations(start, end, freed_all, addr, size, block, stream, stack, stack_of_free)


def _orphan_requested(tr: TraceEntries, orphans: I64, is_req: B) -> I64:
    """For frees of allocations from before the window: the free_requested just before, if any."""
    out = orphans.copy()
    req_idx = np.flatnonzero(is_req & (tr.action != Action.FREE))
    if len(orphans) == 0 or len(req_idx) == 0:
        return out
    # one sortable key per (address, index): the address's rank, then the index
    _, rank = np.unique(np.concatenate([tr.addr[req_idx], tr.addr[orphans]]), return_inverse=True)
    span = len(tr) + 1
    key_r = rank[: len(req_idx)].astype(np.int64) * span + req_idx
    key_o = rank[len(req_idx) :].astype(np.int64) * span + orphans
    order = np.argsort(key_r, kind="stable")
    key_r = key_r[order]
    pos = np.searchsorted(key_r, key_o) - 1
    ok = pos >= 0
    ok[ok] = key_r[pos[ok]] // span == key_o[ok] // span
    out[ok] = key_r[pos[ok]] % span
    return out


def lifetimes(tr: TraceEntries) -> tuple[I64, I64, I64]:
    """Allocs paired with their ``free_completed`` (or legacy ``free``): the alloc entries, the
    entry that ends each (``-1``: none), and the frees of allocations from before the window.
    Computed once per trace (the loader and :func:`pair_allocations` both need it)."""
    cached = tr.cache.get("lifetimes")
    if cached is None:
        a = tr.action
        is_alloc = a == Action.ALLOC
        sel = np.flatnonzero(is_alloc | (a == Action.FREE_COMPLETED) | (a == Action.FREE))
        cached = pair_by_address(tr.addr[sel], sel, is_alloc[sel])
        tr.cache["lifetimes"] = cached
    return cached


def orphan_frees(tr: TraceEntries) -> I64:
    """Entry indices of frees whose alloc is not in the window (it came before)."""
    return lifetimes(tr)[2]


def _segment_ends(tr: TraceEntries, seg_addr: I64, seg_size: I64, at: I64) -> I64:
    """The end of the segment holding each address of ``at`` (``2**62`` where none is known).

    Segments are the snapshot's and those the window allocated or freed (their entries carry
    address and size); the latest-starting range that holds an address wins.
    """
    seg_ev = np.flatnonzero(
        (tr.action == Action.SEGMENT_ALLOC) | (tr.action == Action.SEGMENT_FREE)
    )
    starts = np.concatenate([seg_addr, tr.addr[seg_ev]])
    ends = starts + np.concatenate([seg_size, tr.size_bytes[seg_ev]])
    out = np.full(len(at), np.int64(1) << 62, dtype=np.int64)
    if len(starts) == 0:
        return out
    order = np.lexsort((ends, starts))
    starts, ends = starts[order], ends[order]
    pos = np.searchsorted(starts, at, side="right") - 1
    ok = pos >= 0
    hold = np.zeros(len(at), dtype=bool)
    hold[ok] = ends[pos[ok]] > at[ok]
    out[hold] = ends[pos[hold]]
    return out


def block_sizes(
    tr: TraceEntries,
    start: I64,
    end: I64,
    size: I64,
    addr: I64,
    live_block_addr: I64,
    live_block_size: I64,
    seg_addr: I64,
    seg_size: I64,
    expandable: bool,
    max_split_size: int = -1,
) -> I64:
    """Block bytes of each allocation row.

    A request gets ``round_block(size)`` bytes, unless the free block it was carved from left
    a remainder too small to split off: PyTorch splits a large-pool block (requests over
    1 MiB) only when more than 1 MiB would remain (20 MiB for requests of ``max_split_size``
    or more, which are never split), and then the allocation gets the whole free block. That
    free block starts at the allocation's address and ends at the next live block (free
    neighbours are always merged) or at the segment's end. So, for each large allocation in
    the window: the first live allocation that starts within the remainder window after it
    (or the segment end within it) ends its block. Expandable segments split every block
    exactly. Rows live at the snapshot take the exact size of their block.
    """
    n = len(tr)
    block = round_block(size)
    if not expandable and n:
        _widen_unsplit(tr, start, end, addr, block, seg_addr, seg_size, max_split_size)
    # exact: rows live at the snapshot, from the snapshot's blocks
    if len(live_block_addr):
        order = np.argsort(live_block_addr, kind="stable")
        sa, ss = live_block_addr[order], live_block_size[order]
        live_rows = np.flatnonzero(end == n)
        pos = np.minimum(np.searchsorted(sa, addr[live_rows]), len(sa) - 1)
        hit = sa[pos] == addr[live_rows]
        block[live_rows[hit]] = ss[pos[hit]]
    return block


def _widen_unsplit(
    tr: TraceEntries,
    start: I64,
    end: I64,
    addr: I64,
    block: I64,
    seg_addr: I64,
    seg_size: I64,
    max_split_size: int,
) -> None:
    """Give large allocations whose remainder was not split off their whole free block.

    Rows allocated before the window are checked when it began: a large segment holds only
    blocks over 1 MiB, so a live block (or the segment's end) less than 1 MiB after the
    request's end can only mean that the allocation's own block reaches it.
    """
    large = np.flatnonzero(block > SMALL_SIZE)
    if len(large) == 0:
        return
    mine = large
    oversize = (max_split_size > 0) & (block[mine] >= max_split_size)
    reach = np.where(oversize, LARGE_BUFFER, SMALL_SIZE)
    lo = addr[mine] + block[mine]  # the remainder starts here
    hi = lo + reach  # ... and is kept whole when the next block starts by here
    seg_end = _segment_ends(tr, seg_addr, seg_size, addr[mine])
    # every large row, by (address, start): at one address, rows never overlap in time
    span = np.int64(len(tr) + 2)
    uniq, rank = np.unique(addr[large], return_inverse=True)
    keys = rank.astype(np.int64) * span + (start[large] + 1)
    order = np.argsort(keys, kind="stable")
    keys, row_end = keys[order], end[large][order]
    # the distinct addresses inside each row's remainder window, before its segment's end
    first = np.searchsorted(uniq, lo, side="left")
    last = np.searchsorted(uniq, np.minimum(hi + 1, seg_end), side="left")
    count = np.maximum(last - first, 0)
    owner = np.repeat(np.arange(len(mine)), count)
    cand = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
    cand += np.repeat(first, count)
    # is a row at that address live when this one is allocated?
    k = start[mine][owner]
    q = cand.astype(np.int64) * span + (k + 1)
    pos = np.searchsorted(keys, q, side="right") - 1
    ok = pos >= 0
    ok[ok] &= keys[pos[ok]] // span == cand[ok]
    ok[ok] &= row_end[pos[ok]] > k[ok]
    next_start = np.full(len(mine), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(next_start, owner[ok], uniq[cand[ok]])
    bound = np.minimum(next_start, seg_end)
    whole = (bound > lo) & (bound <= hi)
    rows = mine[whole]
    block[rows] = bound[whole] - addr[rows]
