"""The allocator's state at any entry: segments rebuilt from the history, reserved bytes,
annotation ranges; checked on H100 snapshots and against the synthetic allocator."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuviz.analysis.allocator_state import (
    ALLOCATED,
    PENDING_FREE,
    annotation_ranges,
    reserved_bytes_curve,
    segments_at,
)
from gpuviz.analysis.allocator_timeline import build_timeline, clocks_match
from gpuviz.trace.allocator_snapshot import load_snapshot, snapshot_from_data
from gpuviz.trace.snapshot_pickle import load_snapshot_data
from gpuviz.trace.synthetic_snapshot import make_snapshot

SNAPS = Path(__file__).parents[1] / "data" / "snapshots"


@pytest.mark.parametrize(
    "name", ["snap_train.pickle.gz", "snap_oom.pickle", "snap_expandable.pickle.gz"]
)
def test_blocks_fit_their_segments_at_every_time(name: str) -> None:
    snap = load_snapshot(SNAPS / name)
    n = len(snap.trace_columns(0))
    for k in np.linspace(-1, n - 1, 12).astype(int).tolist():
        lay = segments_at(snap, 0, k)
        end = lay.block_offset + lay.block_size
        assert np.all(lay.block_offset >= 0)
        assert np.all(end <= lay.seg_size[lay.block_seg])
        # live blocks never overlap inside a segment
        order = np.lexsort((lay.block_offset, lay.block_seg))
        seg, off, e = lay.block_seg[order], lay.block_offset[order], end[order]
        same = seg[1:] == seg[:-1]
        assert np.all(off[1:][same] >= e[:-1][same])
        # and hold what was live then (all of it, within the segments known)
        al = snap.device_allocations(0)
        assert int(lay.block_size.sum()) <= int(al.block_bytes[al.live_at(k)].sum())


def test_the_last_entry_is_the_snapshot_itself() -> None:
    snap = load_snapshot(SNAPS / "snap_oom.pickle")
    lay = segments_at(snap, 0)
    assert lay.exact
    blocks = snap.blocks
    active = blocks.state != 2
    assert int(lay.block_size.sum()) == int(blocks.size[active].sum())
    runs = lay.free_runs()
    inactive = blocks.size[~active]
    assert sorted(runs.tolist()) == sorted(inactive.tolist())  # free runs = inactive blocks


def test_rebuilt_state_matches_the_synthetic_allocator() -> None:
    """Just before the snapshot, the rebuilt layout has the live blocks of the snapshot."""
    raw, truth = make_snapshot(6000, record_stream=True, seed=3)
    snap = snapshot_from_data(raw, "s")
    n = len(snap.trace_columns(0))
    lay = segments_at(snap, 0, n - 2)  # the last entry is the 'snapshot' marker
    assert not lay.exact
    held = lay.block_state == ALLOCATED
    assert int(lay.block_size[held].sum()) == truth.live_bytes
    assert (lay.block_state == PENDING_FREE).any()


def test_reserved_curve_ends_at_reserved_and_steps_with_segments() -> None:
    snap = load_snapshot(SNAPS / "snap_train.pickle.gz")
    tr = snap.trace_columns(0)
    res = reserved_bytes_curve(snap, 0)
    assert int(res[-1]) == int(snap.segments.total_size.sum())
    changes = np.flatnonzero(np.diff(res)) + 1
    assert set(tr.action_names()[i] for i in changes.tolist()) <= {"segment_alloc", "segment_free"}
    assert np.all(res >= 0)


def test_annotation_ranges_pair_start_and_end() -> None:
    snap = load_snapshot(SNAPS / "snap_train.pickle.gz")
    ranges = annotation_ranges(snap, 0)
    steps = [r for r in ranges if r.name.startswith("ProfilerStep#")]
    assert steps and all(r.end_us is None or r.end_us >= r.start_us for r in ranges)
    assert len({r.name for r in steps}) == len(steps)  # one range per step
    raw = load_snapshot_data(SNAPS / "snap_train.pickle.gz")
    starts = sum(1 for a in raw["external_annotations"] if a["stage"] == "START")
    assert len(ranges) == starts


def test_clocks() -> None:
    t_us = 1_795_459_333_000_000
    assert clocks_match(t_us, t_us + 10**6, t_us * 1000 - 5 * 10**9, 10**9)
    assert not clocks_match(t_us, t_us + 10**6, t_us * 1000 - 3600 * 10**9, 10**9)
    assert not clocks_match(t_us, t_us + 10**6, 0, 10**9)  # a trace with relative times


def test_timeline_model() -> None:
    snap = load_snapshot(SNAPS / "snap_wrapped.pickle.gz")
    tl = build_timeline(snap, 0)
    assert tl.t_ns[0] == 0 and not tl.on_trace_axis
    assert tl.live_at(-1) == tl.baseline == tl.figures.window_start_live_bytes
    assert int(tl.live.max()) == tl.figures.peak_allocated_bytes
    assert len(tl.row_site_index) == len(tl.allocations)
    assert np.array_equal(tl.site_ids[tl.row_site_index], tl.row_site)
    assert tl.lanes is not None and len(tl.lanes) == len(tl.annotations)


@pytest.mark.parametrize("time_us", [0, None, "jump"])
def test_timeline_of_times_that_step_back(time_us: int | str | None) -> None:
    # an entry without a time (0), or a clock that jumps ahead and back: drawn, not an
    # IndexError in the pyramid (it needs non-decreasing times)
    raw, _ = make_snapshot(2000, seed=3)
    entry = raw["device_traces"][0][5]
    if time_us is None:
        del entry["time_us"]
    elif time_us == "jump":
        entry["time_us"] += 10**13
    else:
        entry["time_us"] = time_us
    tl = build_timeline(snapshot_from_data(raw, "t"), 0)
    assert np.all(np.diff(tl.t_ns) >= 0)
    cols = tl.pyramid.columns(float(tl.t_ns[0]), float(tl.t_ns[-1]), 800)
    assert len(cols) > 0 and int(cols.entry.max()) < len(tl.t_ns)
