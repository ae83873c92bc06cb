"""Allocator snapshot figures, checked against the allocator model's own bookkeeping and against
the issue's formula computed here from the raw dict."""

from __future__ import annotations

from typing import Any

import pytest

from gpuviz.analysis.allocator import (
    device_figures,
    is_user_frame,
    snapshot_figures,
    stack_sites,
)
from gpuviz.trace.allocator_snapshot import snapshot_from_data
from gpuviz.trace.synthetic_snapshot import make_snapshot, round_block

CONFIGS = [
    {},
    {"max_entries": 4000},  # the ring buffer wrapped: parameters were allocated before it
    {"oom": True},
    {"record_stream": True, "seed": 1},
    {"max_entries": 2500, "record_stream": True, "seed": 2},
    {"cpp_frames": True, "seed": 4},
]


def raw_formula(raw: dict[str, Any]) -> tuple[int, int, float, int]:
    """The issue's definitions, from the raw dict: (allocated, window start, fragmentation,
    reserved). Window start = allocated minus the window's net change (allocs minus
    free_completed), in block bytes."""
    blocks = [b for s in raw["segments"] for b in s["blocks"]]
    allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
    pending = sum(b["size"] for b in blocks if b["state"] == "active_pending_free")
    net = 0
    for e in raw["device_traces"][0]:
        if e["action"] == "alloc":
            net += round_block(e["size"])
        elif e["action"] == "free_completed":
            net -= round_block(e["size"])
    free = [b["size"] for b in blocks if b["state"] == "inactive"]
    frag = 1 - max(free) / sum(free) if free else 0.0
    reserved = sum(s["total_size"] for s in raw["segments"])
    # blocks still waiting for their free to complete are live too (not yet free_completed)
    return allocated, allocated + pending - net, frag, reserved


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: ",".join(map(str, c)) or "plain")
def test_figures_match_the_model(config: dict[str, Any]) -> None:
    raw, truth = make_snapshot(15_000, **config)
    snap = snapshot_from_data(raw, "s.pickle")
    fig = device_figures(snap, 0)
    allocated, start_live, frag, reserved = raw_formula(raw)
    assert fig.allocated_bytes == allocated == truth.live_bytes
    assert fig.reserved_bytes == reserved == truth.reserved_bytes
    assert fig.window_start_live_bytes == start_live == truth.window_start_live_bytes
    assert fig.peak_allocated_bytes == truth.window_peak_bytes
    assert fig.fragmentation == pytest.approx(frag, abs=1e-6)
    if config.get("max_entries") is None:
        assert fig.peak_allocated_bytes == truth.peak_bytes  # recorded from the start
    else:
        assert fig.window_start_live_bytes > 0
    top = dict(sorted(truth.peak_by_site.items(), key=lambda kv: -kv[1])[:10])
    assert {(s.filename, s.line): s.bytes for s in fig.top_sites_at_peak} == top
    now = dict(sorted(truth.live_by_site.items(), key=lambda kv: -kv[1])[:10])
    assert {(s.filename, s.line): s.bytes for s in fig.top_sites} == now
    if config.get("oom"):
        assert fig.oom is not None
        assert fig.oom.request_bytes == truth.oom_request_bytes
        assert fig.oom.free_bytes is not None and fig.oom.free_bytes > 0
    else:
        assert fig.oom is None


def test_replaying_from_zero_undercounts_a_wrapped_trace() -> None:
    raw, truth = make_snapshot(15_000, max_entries=4000)
    fig = device_figures(snapshot_from_data(raw, "s"), 0)
    running = peak_from_zero = 0
    for e in raw["device_traces"][0]:
        if e["action"] == "alloc":
            running += round_block(e["size"])
        elif e["action"] == "free_completed":
            running -= round_block(e["size"])
        peak_from_zero = max(peak_from_zero, running)
    assert peak_from_zero < fig.peak_allocated_bytes == truth.window_peak_bytes


def test_json_shape() -> None:
    raw, _ = make_snapshot(3000, oom=True)
    out = snapshot_figures(snapshot_from_data(raw, "s.pickle")).to_json()
    assert out["source"] == "s.pickle"
    (dev,) = out["devices"]
    for key in (
        "device",
        "segments",
        "reserved_bytes",
        "allocated_bytes",
        "active_blocks",
        "inactive_blocks",
        "largest_free_block_bytes",
        "fragmentation",
        "peak_allocated_bytes",
        "peak_time_us",
        "oom",
        "top_sites",
        "top_sites_at_peak",
    ):
        assert key in dev
    assert set(dev["oom"]) >= {"request_bytes", "time_us", "free_bytes"}
    assert set(dev["top_sites"][0]) >= {"site", "function", "bytes", "blocks"}
    assert dev["top_sites"][0]["site"].startswith("train.py:")


def test_empty_snapshot_has_no_devices() -> None:
    snap = snapshot_from_data({"segments": [], "device_traces": [[]]}, "e")
    assert snapshot_figures(snap).devices == []


@pytest.mark.parametrize(
    ("filename", "user"),
    [
        ("/home/me/train.py", True),
        ("/home/me/.venv/lib/python3.12/site-packages/torch/nn/modules/linear.py", False),
        ("/usr/lib/python3.12/runpy.py", False),
        ("/opt/pytorch/torch/nn/functional.py", False),
        ("/tmp/torchinductor_me/ab/cabc.py", False),
        ("<frozen runpy>", False),
        ("/x/site-packages/gpuviz/workloads/loops.py", True),
        ("/x/site-packages/gpuviz/engine/runner.py", False),
        ("/pytorch/c10/cuda/CUDACachingAllocator.cpp", False),
        ("??", False),
    ],
)
def test_user_frames(filename: str, user: bool) -> None:
    assert is_user_frame(filename) is user


def test_site_is_first_user_frame_then_python_then_first() -> None:
    torch_f = {"filename": "/s/site-packages/torch/nn/modules/linear.py", "line": 1, "name": "f"}
    std_f = {"filename": "/usr/lib/python3.12/runpy.py", "line": 2, "name": "g"}
    user_f = {"filename": "/u/train.py", "line": 3, "name": "h"}
    cpp_f = {"filename": "/pytorch/c10/Alloc.cpp", "line": 4, "name": "malloc"}
    stacks = [[cpp_f, torch_f, std_f, user_f], [cpp_f, torch_f, std_f], [cpp_f]]
    trace = [
        {"action": "alloc", "addr": 512 * (i + 1), "size": 8, "time_us": i, "frames": s}
        for i, s in enumerate(stacks)
    ]
    snap = snapshot_from_data({"segments": [], "device_traces": [trace]}, "s")
    sites = stack_sites(snap)
    chosen = [snap.frame_info(int(sites[s])) for s in snap.trace_columns(0).stack]
    assert chosen == [
        ("/u/train.py", 3, "h"),
        (torch_f["filename"], 1, "f"),
        ("/pytorch/c10/Alloc.cpp", 4, "malloc"),
    ]


def test_entries_recorded_without_frames_are_one_site() -> None:
    # frames: [] everywhere (history recorded with context=None): no stack at all in the file
    trace = [
        {"action": "alloc", "addr": 512 * (i + 1), "size": 512, "time_us": i, "frames": []}
        for i in range(3)
    ]
    snap = snapshot_from_data({"segments": [], "device_traces": [trace]}, "s")
    assert snap.n_stacks == 0
    fig = device_figures(snap, 0)
    (row,) = fig.top_sites_at_peak
    assert row.site == "(no stack recorded)" and row.blocks == 3 and row.bytes == 3 * 512
    from gpuviz.analysis.allocator_timeline import build_timeline

    assert build_timeline(snap, 0).row_site.tolist() == [-1, -1, -1]  # the timeline's sites too
