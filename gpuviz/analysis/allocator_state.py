"""The allocator's state at any entry of its history: segments and their blocks, reserved bytes,
and the annotation ranges, for the Memory view's snapshot mode.

At the snapshot itself (the last entry) the segments and blocks are the snapshot's own, exact.
At an earlier entry ``k`` they are rebuilt from the history: the segments that existed then
(the snapshot's, less those the window allocated after ``k``, plus those it freed after ``k``;
segment entries carry address and size), and in them the allocations live after ``k``
(:mod:`gpuviz.trace.allocations`), placed by address. What lies between is free, cached memory.
For expandable segments the snapshot's (virtual) segments are used at every entry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gpuviz.trace.allocations import pair_by_address
from gpuviz.trace.allocator_columns import (
    Action,
    AllocatorSnapshot,
    AnnotationStage,
    BlockState,
)

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
I8 = npt.NDArray[np.int8]

ALLOCATED, PENDING_FREE = 0, 1
"""Block states in a :class:`SegmentLayout` (free memory is what no block covers)."""


@dataclass
class SegmentLayout:
    """Segments and their live blocks at one entry.

    Attributes
    ----------
    entry : int
        The entry (``len(trace) - 1`` or more: the snapshot itself).
    exact : bool
        True when taken from the snapshot's own blocks.
    seg_addr, seg_size, seg_stream : int64
        One row per segment, largest first.
    block_seg : int32
        The segment row of each block.
    block_offset, block_size : int64
        Where in its segment, and how big.
    block_state : int8
        :data:`ALLOCATED` or :data:`PENDING_FREE`.
    block_stack : int32
        The stack that allocated it (``-1`` without one).
    block_row : int64
        Its allocation row (:mod:`gpuviz.trace.allocations`), ``-1`` when not known.
    """

    entry: int
    exact: bool
    seg_addr: I64
    seg_size: I64
    seg_stream: I64
    block_seg: I32
    block_offset: I64
    block_size: I64
    block_state: I8
    block_stack: I32
    block_row: I64

    def free_bytes(self) -> I64:
        """Per segment, the bytes no live block covers."""
        used = np.bincount(self.block_seg, weights=self.block_size, minlength=len(self.seg_addr))
        return self.seg_size - np.rint(used).astype(np.int64)

    def free_runs(self) -> I64:
        """The sizes of the free runs between live blocks (the allocator merges free
        neighbours, so each run is one free block)."""
        n = len(self.seg_addr)
        order = np.lexsort((self.block_offset, self.block_seg))
        seg, off, size = self.block_seg[order], self.block_offset[order], self.block_size[order]
        # per segment: [0, first block), between blocks, [last end, segment end)
        starts = np.concatenate([np.zeros(n, dtype=np.int64), off + size])
        seg_of_start = np.concatenate([np.arange(n), seg])
        ends = np.concatenate([off, self.seg_size])
        seg_of_end = np.concatenate([seg, np.arange(n)])
        s_order = np.lexsort((starts, seg_of_start))
        e_order = np.lexsort((ends, seg_of_end))
        gaps = ends[e_order] - starts[s_order]
        return gaps[gaps > 0]


def _largest_first(addr: I64, size: I64, stream: I64) -> tuple[I64, I64, I64, npt.NDArray[np.intp]]:
    order = np.lexsort((addr, -size))
    return addr[order], size[order], stream[order], order


def _place(seg_addr: I64, seg_size: I64, addr: I64) -> tuple[I64, npt.NDArray[np.bool_]]:
    """The segment row holding each address (by address), and whether one does."""
    by_addr = np.argsort(seg_addr, kind="stable")
    sa = seg_addr[by_addr]
    pos = np.searchsorted(sa, addr, side="right") - 1
    ok = pos >= 0
    ok[ok] &= addr[ok] < sa[pos[ok]] + seg_size[by_addr][pos[ok]]
    return by_addr[np.maximum(pos, 0)], ok


def segments_at(snap: AllocatorSnapshot, device: int, entry: int | None = None) -> SegmentLayout:
    """Segments and live blocks of ``device`` after ``entry`` (default: at the snapshot)."""
    tr = snap.trace_columns(device)
    n = len(tr)
    k = n - 1 if entry is None else int(entry)
    seg_rows = snap.device_segments(device)
    segs = snap.segments
    expandable = bool(segs.is_expandable[seg_rows].any()) if len(seg_rows) else False
    if k >= n - 1:
        return _exact(snap, device, max(k, n - 1))
    alloc = snap.device_allocations(device)
    if expandable:
        s_addr, s_size, s_stream = (
            segs.address[seg_rows],
            segs.total_size[seg_rows],
            segs.stream[seg_rows],
        )
    else:
        s_addr, s_size, s_stream = _segments_alive(snap, device, k)
    s_addr, s_size, s_stream, _ = _largest_first(s_addr, s_size, s_stream)
    live = alloc.live_at(k)
    where, ok = _place(s_addr, s_size, alloc.addr[live])
    live, where = live[ok], where[ok]
    state = np.where(alloc.freed[live] > k, ALLOCATED, PENDING_FREE).astype(np.int8)
    return SegmentLayout(
        entry=k,
        exact=False,
        seg_addr=s_addr,
        seg_size=s_size,
        seg_stream=s_stream,
        block_seg=where.astype(np.int32),
        block_offset=alloc.addr[live] - s_addr[where],
        block_size=alloc.block_bytes[live],
        block_state=state,
        block_stack=alloc.stack[live].astype(np.int32),
        block_row=live.astype(np.int64),
    )


def _exact(snap: AllocatorSnapshot, device: int, k: int) -> SegmentLayout:
    seg_rows = snap.device_segments(device)
    segs, blocks = snap.segments, snap.blocks
    s_addr, s_size, s_stream, order = _largest_first(
        segs.address[seg_rows], segs.total_size[seg_rows], segs.stream[seg_rows]
    )
    row_of_seg = np.full(len(segs), -1, dtype=np.int64)
    row_of_seg[seg_rows[order]] = np.arange(len(order))
    brows = snap.device_blocks(device)
    brows = brows[blocks.state[brows] != BlockState.INACTIVE]
    seg = row_of_seg[blocks.segment[brows]]
    state = np.where(
        blocks.state[brows] == BlockState.ACTIVE_ALLOCATED, ALLOCATED, PENDING_FREE
    ).astype(np.int8)
    # the allocation rows these blocks are (live at the snapshot, by address)
    alloc = snap.device_allocations(device)
    live = np.flatnonzero(alloc.end == len(snap.trace_columns(device)))
    row = np.full(len(brows), -1, dtype=np.int64)
    if len(live):
        by_addr = live[np.argsort(alloc.addr[live], kind="stable")]
        pos = np.minimum(
            np.searchsorted(alloc.addr[by_addr], blocks.address[brows]), len(by_addr) - 1
        )
        hit = alloc.addr[by_addr][pos] == blocks.address[brows]
        row[hit] = by_addr[pos[hit]]
    return SegmentLayout(
        entry=k,
        exact=True,
        seg_addr=s_addr,
        seg_size=s_size,
        seg_stream=s_stream,
        block_seg=seg.astype(np.int32),
        block_offset=blocks.address[brows] - s_addr[seg],
        block_size=blocks.size[brows],
        block_state=state,
        block_stack=blocks.stack[brows].astype(np.int32),
        block_row=row,
    )


def _segments_alive(snap: AllocatorSnapshot, device: int, k: int) -> tuple[I64, I64, I64]:
    """Segments that existed after entry ``k``: (address, size, stream).

    Segment entries are paired by address like allocations: a segment lives from its
    ``segment_alloc`` (or from before the window) to its ``segment_free`` (or the snapshot).
    """
    tr = snap.trace_columns(device)
    n = len(tr)
    a = tr.action
    made = (a == Action.SEGMENT_ALLOC) | (a == Action.SEGMENT_MAP)
    sel = np.flatnonzero(made | (a == Action.SEGMENT_FREE) | (a == Action.SEGMENT_UNMAP))
    starts, ends, orphans = pair_by_address(tr.addr[sel], sel, made[sel])
    ends = np.where(ends >= 0, ends, n)
    seg_rows = snap.device_segments(device)
    segs = snap.segments
    # snapshot segments that no segment entry of the window made: there from before it
    open_addr = np.sort(tr.addr[starts[ends == n]])
    s_addr = segs.address[seg_rows]
    if len(open_addr):
        pos = np.minimum(np.searchsorted(open_addr, s_addr), len(open_addr) - 1)
        old = open_addr[pos] != s_addr
    else:
        old = np.ones(len(seg_rows), dtype=bool)
    alive_new = (starts <= k) & (ends > k)
    alive_orphan = orphans > k
    return (
        np.concatenate([s_addr[old], tr.addr[starts[alive_new]], tr.addr[orphans[alive_orphan]]]),
        np.concatenate(
            [
                segs.total_size[seg_rows][old],
                tr.size_bytes[starts[alive_new]],
                tr.size_bytes[orphans[alive_orphan]],
            ]
        ),
        np.concatenate(
            [
                segs.stream[seg_rows][old],
                tr.stream[starts[alive_new]],
                tr.stream[orphans[alive_orphan]],
            ]
        ),
    )


def reserved_bytes_curve(snap: AllocatorSnapshot, device: int) -> I64:
    """Reserved bytes (all segments) just after each entry, from the snapshot backwards."""
    tr = snap.trace_columns(device)
    a = tr.action
    up = (a == Action.SEGMENT_ALLOC) | (a == Action.SEGMENT_MAP)
    down = (a == Action.SEGMENT_FREE) | (a == Action.SEGMENT_UNMAP)
    delta = np.where(up, tr.size_bytes, 0) - np.where(down, tr.size_bytes, 0)
    end = int(snap.segments.total_size[snap.device_segments(device)].sum())
    run = np.cumsum(delta)
    return end - (int(run[-1]) if len(run) else 0) + run


@dataclass
class AnnotationRange:
    """A START/END pair of ``external_annotations`` (an open one ends at ``end_us = None``)."""

    name: str
    start_us: int
    end_us: int | None


def annotation_ranges(snap: AllocatorSnapshot, device: int) -> list[AnnotationRange]:
    """The annotation ranges of a device, paired by name (the latest START closes first)."""
    ann = snap.annotations
    rows = np.flatnonzero(ann.device == device)
    rows = rows[np.argsort(ann.time_us[rows], kind="stable")]
    open_: dict[int, list[int]] = {}
    out: list[AnnotationRange] = []
    sym = snap.symbols.strings
    for i in rows.tolist():
        name, stage, t = int(ann.name[i]), int(ann.stage[i]), int(ann.time_us[i])
        if stage == AnnotationStage.START:
            open_.setdefault(name, []).append(t)
        elif stage == AnnotationStage.END and open_.get(name):
            out.append(AnnotationRange(sym[name], open_[name].pop(), t))
    for name, starts in open_.items():
        out += [AnnotationRange(sym[name], t, None) for t in starts]
    out.sort(key=lambda r: r.start_us)
    return out
