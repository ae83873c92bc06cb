"""Allocation intervals: pairing allocs with frees, what lived before the window, block bytes."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuviz.trace.allocations import round_block
from gpuviz.trace.allocator_snapshot import snapshot_from_data

MB = 1 << 20
A, B, C, D = 0x1000_0000, 0x1001_0000, 0x1002_0000, 0x1003_0000


def e(action: str, addr: int, size: int, t: int) -> dict[str, Any]:
    return {
        "action": action,
        "addr": addr,
        "size": size,
        "stream": 0,
        "time_us": t,
        "frames": [{"filename": f"/u/{action}.py", "line": t, "name": "f"}],
    }


def block(addr: int, size: int, req: int, state: str = "active_allocated") -> dict[str, Any]:
    return {
        "address": addr,
        "size": size,
        "requested_size": req,
        "state": state,
        "frames": [{"filename": "/u/old.py", "line": addr % 97, "name": "g"}],
    }


def snapshot(entries: list[dict[str, Any]], blocks: list[dict[str, Any]]) -> Any:
    seg = {"device": 0, "address": A, "total_size": 64 * MB, "stream": 0, "blocks": blocks}
    segs = [seg] if blocks else []
    return snapshot_from_data({"segments": segs, "device_traces": [entries]}, "s")


def test_pairs_and_window_start() -> None:
    entries = [
        e("free_requested", A, 1000, 0),  # A was allocated before the window
        e("free_completed", A, 1000, 1),
        e("alloc", B, 3000, 2),
        e("alloc", C, 700, 3),
        e("free_requested", B, 3000, 4),
        e("free_completed", B, 3000, 5),
        e("alloc", A, 5000, 6),  # A's address reused
    ]
    blocks = [
        block(A, 5120, 5000),
        block(C, 1024, 700),
        block(D, 4096, 4000),  # live the whole window: allocated before it
    ]
    snap = snapshot(entries, blocks)
    al = snap.device_allocations(0)
    n = len(entries)
    rows = list(zip(al.start.tolist(), al.end.tolist(), al.freed.tolist(), al.addr.tolist()))
    assert rows == [(-1, n, n, D), (-1, 1, 0, A), (2, 5, 4, B), (3, n, n, C), (6, n, n, A)]
    # block bytes: exact from the snapshot for live rows, rounded for the others
    assert al.block_bytes.tolist() == [4096, 1024, 3072, 1024, 5120]
    assert al.size_bytes.tolist() == [4000, 1000, 3000, 700, 5000]
    assert al.stack_of_free.tolist() == [False, True, False, False, False]
    # the pre-window free keeps its own stack; the old live block its block's stack
    assert snap.stack_frames(int(al.stack[1]))[0][0] == "/u/free_completed.py"
    assert snap.stack_frames(int(al.stack[0]))[0][0] == "/u/old.py"
    # live just after each entry, computed by hand
    live_at = {k: sorted(al.addr[al.live_at(k)].tolist()) for k in range(-1, n)}
    assert live_at[-1] == [A, D]
    assert live_at[1] == [D]
    assert live_at[3] == [B, C, D]
    assert live_at[6] == [A, C, D]


def test_alloc_after_alloc_at_one_address_ends_the_first() -> None:
    entries = [e("alloc", A, 512, 0), e("alloc", A, 512, 1)]  # a free that was not recorded
    al = snapshot(entries, [block(A, 512, 512)]).device_allocations(0)
    assert al.start.tolist() == [0, 1] and al.end.tolist() == [1, 2]


def test_block_rounding() -> None:
    assert round_block([1, 511, 512, 513, 1000, 0]).tolist() == [512, 512, 512, 1024, 1024, 512]


def test_fresh_segment_with_a_small_remainder_is_one_block() -> None:
    s1, s2, s3 = 0x2000_0000, 0x3000_0000, 0x4000_0000
    entries = [
        e("segment_alloc", s1, 20 * MB, 0),
        e("alloc", s1, 19 * MB + 600 * 1024, 1),  # 400 KiB left: not split off
        e("free_requested", s1, 0, 2),
        e("free_completed", s1, 0, 3),
        e("segment_alloc", s2, 20 * MB, 4),
        e("alloc", s2, 2 * MB, 5),  # 18 MiB left: split
        e("free_requested", s2, 0, 6),
        e("free_completed", s2, 0, 7),
        e("alloc", s3, 100, 8),  # small pool: split at 512
        e("free_requested", s3, 0, 9),
        e("free_completed", s3, 0, 10),
    ]
    al = snapshot(entries, []).device_allocations(0)
    assert al.block_bytes.tolist() == [20 * MB, 2 * MB, 512]


def test_reused_block_keeps_a_small_remainder() -> None:
    # a 4 MiB block is freed; a 3 MiB request takes it: 1 MiB would remain, so it is not split
    # off while the next block (at +4 MiB) is live; once that one is gone, the 3 MiB request
    # is carved from a bigger free region and split exactly
    s1 = 0x2000_0000
    entries = [
        e("segment_alloc", s1, 20 * MB, 0),
        e("alloc", s1, 4 * MB, 1),
        e("alloc", s1 + 4 * MB, 4 * MB, 2),
        e("free_requested", s1, 0, 3),
        e("free_completed", s1, 0, 4),
        e("alloc", s1, 3 * MB, 5),  # block: 4 MiB (the next block starts 1 MiB after)
        e("free_requested", s1, 0, 6),
        e("free_completed", s1, 0, 7),
        e("free_requested", s1 + 4 * MB, 0, 8),
        e("free_completed", s1 + 4 * MB, 0, 9),
        e("alloc", s1, 3 * MB, 10),  # block: 3 MiB (17 MiB remain, split off)
        e("free_requested", s1, 0, 11),
        e("free_completed", s1, 0, 12),
    ]
    al = snapshot(entries, []).device_allocations(0)
    got = dict(zip(al.start.tolist(), al.block_bytes.tolist()))
    assert got == {1: 4 * MB, 2: 4 * MB, 5: 4 * MB, 10: 3 * MB}


def test_live_bytes_curve_counts_the_window_start() -> None:
    from gpuviz.analysis.allocator import live_bytes_curve

    entries = [
        e("free_completed", A, 1000, 0),
        e("alloc", B, 2048, 1),
        e("alloc", C, 4096, 2),
        e("free_completed", B, 2048, 3),
    ]
    snap = snapshot(entries, [block(C, 4096, 4096), block(D, 512, 512)])
    base, live = live_bytes_curve(snap.device_allocations(0), len(entries))
    assert base == 1024 + 512  # A (rounded) and D were live when the window began
    assert live.tolist() == [512, 512 + 2048, 512 + 2048 + 4096, 512 + 4096]
    assert np.all(live >= 0)
