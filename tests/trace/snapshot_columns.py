"""Every column a loaded allocator snapshot holds, for tests that compare two ways of reading."""

from __future__ import annotations

from typing import Any


def snapshot_columns(snap: Any) -> list[Any]:
    """Device 0's history, the stack tables, the segments' and blocks' stacks, the allocations."""
    tr = snap.trace_columns(0)
    al = snap.allocations[0]
    return [
        tr.action,
        tr.addr,
        tr.size_bytes,
        tr.stream,
        tr.time_us,
        tr.stack,
        snap.stack_offsets,
        snap.stack_frame_ids,
        snap.segments.stack,
        snap.blocks.stack,
        al.start,
        al.end,
        al.stack,
    ]
