"""MemoryHistory: the snapshot's place beside the trace, "needs CUDA" on the CPU, and (gpu) the
recording itself, written at out of memory before the error reaches the caller."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuviz.engine.memory_history import MemoryHistory, snapshot_path_for


@pytest.mark.parametrize(
    ("trace", "expected"),
    [
        ("runs/loops-1.json.gz", "runs/loops-1.memory.pickle"),
        ("runs/loops-1.json", "runs/loops-1.memory.pickle"),
        ("w.pt.trace.json.gz", "w.memory.pickle"),
        ("ddp-run/rank-3.json.gz", "ddp-run/rank-3.memory.pickle"),
    ],
)
def test_snapshot_path_beside_trace(trace: str, expected: str) -> None:
    assert snapshot_path_for(Path(trace)) == Path(expected)


def test_snapshot_path_for_rank_folder(tmp_path: Path) -> None:
    assert snapshot_path_for(tmp_path, rank=2) == tmp_path / "rank-2.memory.pickle"
    assert snapshot_path_for(tmp_path) == tmp_path / "rank-0.memory.pickle"
    # the folder layout matches each rank's own trace file
    assert snapshot_path_for(tmp_path, rank=1) == snapshot_path_for(tmp_path / "rank-1.json.gz")


def test_cpu_build_says_needs_cuda(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this checks the CPU build")
    history = MemoryHistory(tmp_path / "x.memory.pickle", max_entries=10)
    assert history.start() == "needs CUDA"
    assert history.dump() is None
    assert history.finish() is None
    history.stop()  # idempotent
    assert not (tmp_path / "x.memory.pickle").exists()


@pytest.mark.gpu
def test_records_and_dumps_snapshot(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from gpuviz.trace.allocator_snapshot import load_snapshot

    path = tmp_path / "t.memory.pickle"
    history = MemoryHistory(path, max_entries=1000)
    assert history.start() is None
    keep = [torch.empty(1 << 20, device="cuda") for _ in range(3)]
    tmp = torch.empty(1 << 22, device="cuda")
    del tmp
    written = history.finish()
    assert written == path and path.exists()
    snap = load_snapshot(path)
    dev = torch.cuda.current_device()
    actions = snap.trace_columns(dev).action_names()
    assert actions.count("alloc") >= 4
    assert "free_requested" in actions
    # the three 4 MiB tensors are live at the snapshot
    assert snap.allocated_bytes(dev) >= 3 * 4 * (1 << 20)
    del keep


@pytest.mark.gpu
def test_oom_snapshot_written_before_error(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from gpuviz.trace.allocator_snapshot import load_snapshot

    path = tmp_path / "oom.memory.pickle"
    history = MemoryHistory(path, max_entries=1000)
    assert history.start() is None
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(0.05, 0)
    try:
        held = torch.empty(int(total * 0.03), dtype=torch.uint8, device="cuda")
        with pytest.raises(torch.OutOfMemoryError):
            torch.empty(int(total * 0.04), dtype=torch.uint8, device="cuda")
        # written by the observer, before the exception reached this frame
        assert path.exists()
        assert history.oom_path == path
        mtime = path.stat().st_mtime_ns
        del held
        assert history.finish() == path
        assert path.stat().st_mtime_ns == mtime  # the OOM state is kept, not overwritten
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0, 0)
        history.stop()
    snap = load_snapshot(path)
    assert "oom" in snap.trace_columns(0).action_names()


def test_run_on_cpu_says_needs_cuda_and_goes_on(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this checks the CPU build")
    from gpuviz.engine.events import Finished
    from gpuviz.engine.runner import RunRequest, run_to_end

    out = tmp_path / "loops.json.gz"
    req = RunRequest("loops", {"n": 50}, device="cpu", steps=1, out=str(out), memory_snapshot=True)
    events = run_to_end(req)
    result = events[-1].result if isinstance(events[-1], Finished) else None
    assert result is not None, events[-1]
    assert result["memory_snapshot"] is None
    assert "--memory-snapshot: needs CUDA" in result["warnings"]
    assert out.exists() and not snapshot_path_for(out).exists()


OOM_WORKLOAD = """
import torch

def grab(device, gib: int = 1 << 14):
    # asks for 16 TiB: more than any GPU has
    return torch.empty(gib << 30, dtype=torch.uint8, device=device)
"""


@pytest.mark.gpu
def test_run_writes_snapshot_beside_trace(tmp_path: Path) -> None:
    from gpuviz.engine.events import Finished
    from gpuviz.engine.runner import RunRequest, run_to_end
    from gpuviz.trace.allocator_snapshot import load_snapshot

    out = tmp_path / "loops.json.gz"
    req = RunRequest(
        "loops", {"n": 2000}, device="cuda", steps=1, out=str(out), memory_snapshot=True
    )
    events = run_to_end(req)
    assert isinstance(events[-1], Finished), events[-1]
    snap_path = snapshot_path_for(out)
    assert events[-1].result["memory_snapshot"] == str(snap_path)
    snap = load_snapshot(snap_path)
    assert "alloc" in snap.trace_columns(0).action_names()


@pytest.mark.gpu
def test_run_oom_snapshot_exists_when_failure_is_reported(tmp_path: Path) -> None:
    from gpuviz.engine.events import Failed
    from gpuviz.engine.runner import Runner, RunRequest
    from gpuviz.trace.allocator_snapshot import load_snapshot

    src = tmp_path / "oom_workload.py"
    src.write_text(OOM_WORKLOAD)
    out = tmp_path / "oom.json.gz"
    req = RunRequest(f"{src}:grab", {}, device="cuda", steps=1, out=str(out), memory_snapshot=True)
    snap_path = snapshot_path_for(out)
    for event in Runner(req):
        if isinstance(event, Failed):
            assert "OutOfMemoryError" in event.error or "out of memory" in event.error
            assert snap_path.exists()  # written before the failure was reported
            break
    else:
        pytest.fail("the run did not fail")
    snap = load_snapshot(snap_path)
    assert "oom" in snap.trace_columns(0).action_names()
