"""The columns of a CUDA allocator snapshot: trace entries, segments, blocks, annotations, stacks.

Built by :func:`gpuviz.trace.allocator_snapshot.load_snapshot`; see that module for the file
layout. Every table is a dataclass of equal-length numpy arrays; strings (file names, function
names, annotation names) are interned in one :class:`~gpuviz.trace.model.SymbolTable`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuviz.trace.model import SymbolTable

I64 = npt.NDArray[np.int64]
I32 = npt.NDArray[np.int32]
I8 = npt.NDArray[np.int8]
B = npt.NDArray[np.bool_]

NO_STACK = -1
"""The stack id of an entry or block recorded without frames."""


class Action(IntEnum):
    """A trace entry's ``action``."""

    ALLOC = 0
    FREE_REQUESTED = 1
    FREE_COMPLETED = 2
    SEGMENT_ALLOC = 3
    SEGMENT_FREE = 4
    SEGMENT_MAP = 5
    SEGMENT_UNMAP = 6
    OOM = 7
    SNAPSHOT = 8
    FREE = 9  # before torch 2.0: one entry for a free (requested and completed at once)
    OTHER = 10


ACTION_NAMES: dict[str, Action] = {
    "alloc": Action.ALLOC,
    "free_requested": Action.FREE_REQUESTED,
    "free_completed": Action.FREE_COMPLETED,
    "segment_alloc": Action.SEGMENT_ALLOC,
    "segment_free": Action.SEGMENT_FREE,
    "segment_map": Action.SEGMENT_MAP,
    "segment_unmap": Action.SEGMENT_UNMAP,
    "oom": Action.OOM,
    "snapshot": Action.SNAPSHOT,
    "free": Action.FREE,
}
_ACTION_TEXT = {v: k for k, v in ACTION_NAMES.items()} | {Action.OTHER: "other"}


class BlockState(IntEnum):
    """A block's ``state`` in a segment."""

    ACTIVE_ALLOCATED = 0  # held by a tensor
    ACTIVE_PENDING_FREE = 1  # freed, waiting for another stream's work (record_stream)
    INACTIVE = 2  # free, cached for reuse


BLOCK_STATE_NAMES = {
    "active_allocated": BlockState.ACTIVE_ALLOCATED,
    "active_pending_free": BlockState.ACTIVE_PENDING_FREE,
    "active_awaiting_free": BlockState.ACTIVE_PENDING_FREE,  # the name torch's docstring uses
    "inactive": BlockState.INACTIVE,
}


class AnnotationStage(IntEnum):
    """An external annotation's ``stage``."""

    START = 0
    END = 1
    OTHER = 2


# -- the columns -------------------------------------------------------------------------------


@dataclass
class TraceEntries:
    """One device's allocator history (``device_traces[d]``), oldest first.

    Attributes
    ----------
    action : int8
        :class:`Action`.
    addr : int64
        Block or segment address; for :attr:`Action.OOM` the bytes CUDA reported free
        (``device_free``), as in PyTorch's ``TraceEntry``.
    size_bytes : int64
        Requested bytes for alloc/free entries (PyTorch records the request, not the rounded
        block), segment bytes for segment entries, the failed request for OOM.
    stream : int64
    time_us : int64
        Unix time in µs (PyTorch converts its clock to the epoch; 0 when missing).
    stack : int32
        Stack id (:meth:`AllocatorSnapshot.stack_frames`), :data:`NO_STACK` without frames.
        Kept for every entry but frees, whose allocation's row carries the alloc's stack; a
        free of an allocation from before the window keeps its own (all there is of it).
    """

    action: I8
    addr: I64
    size_bytes: I64
    stream: I64
    time_us: I64
    stack: I32
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.action)

    def action_names(self) -> list[str]:
        """The actions as PyTorch's strings (for tests and debugging)."""
        return [_ACTION_TEXT[Action(int(a))] for a in self.action.tolist()]

    @classmethod
    def empty(cls) -> TraceEntries:
        """A trace with no entries."""
        z = np.empty(0, dtype=np.int64)
        return cls(
            np.empty(0, dtype=np.int8), z, z.copy(), z.copy(), z.copy(), np.empty(0, np.int32)
        )


@dataclass
class Segments:
    """The allocator's segments at the snapshot (memory from cudaMalloc or mapped pages).

    ``blocks`` of segment ``i`` are rows ``block_offsets[i]:block_offsets[i+1]`` of
    :class:`Blocks`, in address order.
    """

    device: I32
    address: I64
    total_size: I64
    allocated_size: I64
    active_size: I64
    requested_size: I64
    stream: I64
    is_large: B
    is_expandable: B
    stack: I32
    block_offsets: I64

    def __len__(self) -> int:
        return len(self.device)


@dataclass
class Blocks:
    """Every block of every segment, in segment order, then address order."""

    segment: I32
    address: I64
    size: I64
    requested_size: I64
    state: I8
    stack: I32

    def __len__(self) -> int:
        return len(self.segment)


@dataclass
class Annotations:
    """``external_annotations``: START/END marks such as ``ProfilerStep#3``, oldest first."""

    device: I32
    time_us: I64
    stage: I8
    name: I32

    def __len__(self) -> int:
        return len(self.device)


@dataclass
class Allocations:
    """One device's allocations, one row each, in stacking order (:mod:`gpuviz.trace.allocations`).

    Attributes
    ----------
    start, end, freed : int64
        Entry indices; ``start == -1`` before the window, ``end == n`` live at the snapshot.
    addr, size_bytes, block_bytes, stream : int64
        Address, requested bytes, block bytes, stream.
    stack : int32
        The stack that allocated it; for a row freed in the window but allocated before it, the
        stack of its free (``stack_of_free``), which is all the trace has.
    stack_of_free : bool
    """

    start: I64
    end: I64
    freed: I64
    addr: I64
    size_bytes: I64
    block_bytes: I64
    stream: I64
    stack: I32
    stack_of_free: B

    def __len__(self) -> int:
        return len(self.start)

    @classmethod
    def empty(cls) -> Allocations:
        """No allocations."""
        z = np.empty(0, dtype=np.int64)
        return cls(z, z, z, z, z, z, z, np.empty(0, np.int32), np.empty(0, bool))

    def live_at(self, k: int) -> npt.NDArray[np.intp]:
        """Rows live just after entry ``k`` (``k = -1``: when the window began), in stack order."""
        return np.flatnonzero((self.start <= k) & (self.end > k))


@dataclass
class AllocatorSnapshot:
    """A CUDA allocator snapshot as columns.

    Attributes
    ----------
    source : str
        The file it was read from.
    symbols : SymbolTable
        Interned file names, function names and annotation names.
    frame_filename, frame_name : int32
        Per frame: symbol ids. ``frame_line`` (int64): the line.
    stack_offsets : int64 (n_stacks + 1)
        Stack ``s`` is frames ``stack_frame_ids[stack_offsets[s]:stack_offsets[s+1]]``,
        innermost first.
    traces : list of TraceEntries
        Indexed by device (``device_traces``' order).
    segments, blocks, annotations : column tables
    allocations : list of Allocations
        Per device (as ``traces``): each allocation as an interval of entries
        (:mod:`gpuviz.trace.allocations`).
    allocator_settings : dict
        As recorded (plain data).
    """

    source: str
    symbols: SymbolTable
    frame_filename: I32
    frame_name: I32
    frame_line: I64
    stack_offsets: I64
    stack_frame_ids: I32
    traces: list[TraceEntries]
    segments: Segments
    blocks: Blocks
    annotations: Annotations
    allocations: list[Allocations] = field(default_factory=list)
    allocator_settings: dict[str, Any] = field(default_factory=dict)

    @property
    def n_stacks(self) -> int:
        """How many distinct stacks there are."""
        return len(self.stack_offsets) - 1

    def devices(self) -> list[int]:
        """Devices with segments or trace entries, ascending."""
        # a set, not np.unique: its first call imports numpy.ma (12-36 ms, more than the
        # figures of a 100k-entry snapshot take)
        seen = set(self.segments.device.tolist())
        seen |= {i for i, t in enumerate(self.traces) if len(t)}
        return sorted(seen)

    def trace_columns(self, device: int) -> TraceEntries:
        """The history of ``device`` (empty when it has none)."""
        if 0 <= device < len(self.traces):
            return self.traces[device]
        return TraceEntries.empty()

    def device_allocations(self, device: int) -> Allocations:
        """The allocation intervals of ``device`` (empty when it has none)."""
        if 0 <= device < len(self.allocations):
            return self.allocations[device]
        return Allocations.empty()

    def stack_text(self, stack: int) -> str:
        """A stack as lines ``file:line function``, innermost first ("" without frames)."""
        return "\n".join(f"{f}:{ln} {fn}" for f, ln, fn in self.stack_frames(stack))

    def device_segments(self, device: int) -> npt.NDArray[np.intp]:
        """Row numbers of ``device``'s segments, in address order."""
        rows = np.flatnonzero(self.segments.device == device)
        return rows[np.argsort(self.segments.address[rows], kind="stable")]

    def device_blocks(self, device: int) -> npt.NDArray[np.intp]:
        """Row numbers of ``device``'s blocks."""
        seg_dev = self.segments.device[self.blocks.segment] if len(self.blocks) else None
        if seg_dev is None:
            return np.empty(0, dtype=np.intp)
        return np.flatnonzero(seg_dev == device)

    def allocated_bytes(self, device: int) -> int:
        """Bytes of ``active_allocated`` blocks on ``device`` (block sizes)."""
        rows = self.device_blocks(device)
        alive = self.blocks.state[rows] == BlockState.ACTIVE_ALLOCATED
        return int(self.blocks.size[rows][alive].sum())

    def frame_info(self, frame: int) -> tuple[str, int, str]:
        """``(filename, line, function)`` of frame id ``frame``."""
        sym = self.symbols.strings
        return (
            sym[self.frame_filename[frame]],
            int(self.frame_line[frame]),
            sym[self.frame_name[frame]],
        )

    def stack_frames(self, stack: int) -> list[tuple[str, int, str]]:
        """``(filename, line, function)`` of each frame of ``stack``, innermost first."""
        if stack < 0 or stack >= self.n_stacks:
            return []
        ids = self.stack_frame_ids[self.stack_offsets[stack] : self.stack_offsets[stack + 1]]
        sym = self.symbols.strings
        fn, nm, ln = self.frame_filename, self.frame_name, self.frame_line
        return [(sym[fn[i]], int(ln[i]), sym[nm[i]]) for i in ids.tolist()]
