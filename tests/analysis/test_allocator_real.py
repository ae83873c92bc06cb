"""Allocator figures on snapshots recorded on an H100, against torch.cuda's own figures."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gpuviz.analysis.allocator import device_figures
from gpuviz.trace.allocator_columns import Action
from gpuviz.trace.allocator_snapshot import load_snapshot, snapshot_from_data
from gpuviz.trace.kineto import load_trace
from gpuviz.trace.snapshot_pickle import load_snapshot_data

SNAPS = Path(__file__).parents[1] / "data" / "snapshots"


def sidecar(name: str) -> dict:
    return json.loads((SNAPS / f"{name}.torch_stats").read_text())


@pytest.mark.parametrize(
    "name",
    [
        "snap_train.pickle.gz",
        "snap_wrapped.pickle.gz",
        "snap_expandable.pickle.gz",
        "snap_oom.pickle",
    ],
)
def test_peak_allocated_and_reserved_match_torch(name: str) -> None:
    side = sidecar(name.split(".")[0])
    fig = device_figures(load_snapshot(SNAPS / name), 0)
    assert fig.peak_allocated_bytes == side["max_memory_allocated"]
    assert fig.allocated_bytes == side["memory_allocated"]
    assert fig.reserved_bytes == side["memory_reserved"]


def test_wrapped_trace_needs_what_lived_before_it() -> None:
    raw = load_snapshot_data(SNAPS / "snap_wrapped.pickle.gz")
    running = from_zero = 0
    for e in raw["device_traces"][0]:
        if e["action"] == "alloc":
            running += e["size"]
        elif e["action"] == "free_completed":
            running -= e["size"]
        from_zero = max(from_zero, running)
    fig = device_figures(load_snapshot(SNAPS / "snap_wrapped.pickle.gz"), 0)
    assert len(raw["device_traces"][0]) == 3000
    assert from_zero < 0.9 * fig.peak_allocated_bytes
    assert fig.peak_allocated_bytes == sidecar("snap_wrapped")["max_memory_allocated"]
    assert fig.window_start_live_bytes > 0


def test_oom() -> None:
    fig = device_figures(load_snapshot(SNAPS / "snap_oom.pickle"), 0)
    assert fig.oom is not None
    assert fig.oom.request_bytes == 352 << 20  # "Tried to allocate 352.00 MiB"
    assert fig.oom.free_bytes is not None and fig.oom.free_bytes > 0
    assert fig.oom.live_bytes == sidecar("snap_oom")["memory_allocated"]
    # the growing allocations, made by one line of the recording script, hold nearly all
    top = fig.oom.top_sites[0]
    assert top.filename.endswith("record_round2.py") and top.bytes > 0.9 * fig.oom.live_bytes


def test_cpp_frames_site_is_the_python_caller() -> None:
    snap = load_snapshot(SNAPS / "snap_cpp_frames.pickle")
    tr = snap.trace_columns(0)
    k = int(np.flatnonzero(tr.action == Action.ALLOC)[0])
    frames = snap.stack_frames(int(tr.stack[k]))
    assert not frames[0][0].endswith(".py")  # innermost frames are C++
    fig = device_figures(snap, 0)
    assert any(s.filename.endswith("record_round2.py") for s in fig.top_sites_at_peak)


def test_expandable_layout() -> None:
    snap = load_snapshot(SNAPS / "snap_expandable.pickle.gz")
    assert snap.allocator_settings["expandable_segments"] is True
    assert bool(snap.segments.is_expandable.all())
    assert "segment_map" in snap.trace_columns(0).action_names()


def test_block_bytes_match_the_profiler_trace_of_the_same_run() -> None:
    """The profiler's [memory] events carry each block's real size: every one of them must
    equal the block bytes inferred from the snapshot, on a shared clock."""
    snap = load_snapshot(SNAPS / "snap_train.pickle.gz")
    tr, al = snap.trace_columns(0), snap.device_allocations(0)
    trace = load_trace(SNAPS.parent / "snap_train_profile.json.gz")
    m = trace.memory
    gpu = (m.device_type == 1) & (m.bytes > 0)
    t_us = (m.ts_ns[gpu] + trace.zero_ns) / 1000
    new = al.start >= 0
    start_us = tr.time_us[np.maximum(al.start, 0)]
    checked = 0
    for a, size, t in zip(m.addr[gpu].tolist(), m.bytes[gpu].tolist(), t_us.tolist()):
        rows = np.flatnonzero(new & (al.addr == a))
        j = rows[np.argmin(np.abs(start_us[rows] - t))]
        assert abs(start_us[j] - t) < 50  # the two clocks agree to microseconds
        assert al.block_bytes[j] == size
        checked += 1
    assert checked > 1000


def test_backward_site_is_named_past_the_capture_machinery() -> None:
    # A backward allocation (autograd's thread) has no Python frame: its stack is the real
    # recording's C++ frames, from the unwinder down to tensor creation, then the autograd node
    # and the engine. Only the frames below tensor creation are swapped for backward's.
    data = load_snapshot_data(SNAPS / "snap_cpp_frames.pickle")
    entry = next(e for e in data["device_traces"][0] if e["action"] == "alloc")
    names = [f["name"] for f in entry["frames"]]
    creation = next(i for i, n in enumerate(names) if n.startswith("at::empty("))
    backward_frames = [
        {"filename": "??", "line": 0, "name": n}
        for n in (
            "at::native::structured_mm_out_cuda::impl(at::Tensor const&, at::Tensor const&)",
            "torch::autograd::generated::MmBackward0::apply(std::vector<at::Tensor>&&)",
            "torch::autograd::Node::operator()(std::vector<at::Tensor>&&)",
            "torch::autograd::Engine::evaluate_function(std::shared_ptr<GraphTask>&)",
            "torch::autograd::Engine::thread_main(std::shared_ptr<GraphTask> const&)",
            "start_thread",
        )
    ]
    stack = entry["frames"][: creation + 1] + backward_frames
    assert stack[0]["name"] == "torch::unwind::unwind()"  # what the site was named before
    for e in data["device_traces"][0]:
        if e["action"] in ("alloc", "free_requested", "free_completed"):
            e["frames"] = stack
    snap = snapshot_from_data(data, "backward")
    rows = device_figures(snap, 0).top_sites_at_peak
    site = next(r for r in rows if r.site.startswith("backward"))
    assert site.site == "backward: MmBackward0"
    assert site.function == "at::native::structured_mm_out_cuda::impl"
    assert not any("unwind" in r.function or r.site.startswith("??") for r in rows)


def test_real_snapshots_name_no_site_after_the_machinery() -> None:
    for name in ("snap_train.pickle.gz", "snap_cpp_frames.pickle"):
        fig = device_figures(load_snapshot(SNAPS / name), 0)
        for r in fig.top_sites_at_peak + fig.top_sites:
            assert "unwind" not in r.function and not r.site.startswith("??"), (name, r)
        # the sites are the recording script's lines, or the known placeholders
        assert all(
            r.filename.endswith("record_round2.py") or r.site.startswith("(")
            for r in fig.top_sites_at_peak
        )
