"""The Runner on a real GPU: CUDA-event timing, out of memory, the allocator emptied."""

from __future__ import annotations

from pathlib import Path

import pytest
import userfiles

from gpuviz.engine.child import ChildProcessRunner
from gpuviz.engine.events import Failed, Finished, StepTimed
from gpuviz.engine.runner import Runner, RunRequest

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _allocator_empty_before() -> None:
    # The run must leave the allocator as it found it: empty. A matmul earlier in this process
    # (another test file's) leaves cuBLAS's workspace (32 MiB on an H100) allocated for good.
    import torch

    torch._C._cuda_clearCublasWorkspaces()
    torch.cuda.empty_cache()
    assert torch.cuda.memory_allocated() == 0, "a test before this one left tensors alive"


def user(tmp_path: Path, source: str, func: str) -> str:
    f = tmp_path / f"{func}.py"
    f.write_text(source)
    return f"{f}:{func}"


def test_out_of_memory_fails_cleanly_and_empties_the_allocator(tmp_path: Path) -> None:
    import torch

    w = user(tmp_path, userfiles.FAILING, "fails")
    out = tmp_path / "t.json.gz"
    events = list(
        Runner(RunRequest(w, {"fail_at": 3, "oom": True}, device="cuda", steps=2, out=str(out)))
    )
    last = events[-1]
    assert isinstance(last, Failed) and "OutOfMemoryError" in last.error
    assert last.partial_trace_path == str(out) and out.exists()
    assert torch.cuda.memory_allocated() == 0
    assert torch.cuda.memory_reserved() == 0  # the caching allocator was emptied
    again = list(Runner(RunRequest("loops", {"n": 100}, device="cuda", steps=1, profile=False)))
    assert isinstance(again[-1], Finished)


def test_gpu_ms_from_cuda_events(tmp_path: Path) -> None:
    w = user(tmp_path, userfiles.OK, "sleepy")
    events = list(Runner(RunRequest(w, {"n": 1 << 20}, device="cuda", steps=3, profile=False)))
    steps = [e for e in events if isinstance(e, StepTimed)]
    assert all(s.gpu_ms is not None and 0 < s.gpu_ms <= s.wall_ms + 0.5 for s in steps)


def test_isolated_gpu_run(tmp_path: Path) -> None:
    out = tmp_path / "t.json.gz"
    events = list(
        ChildProcessRunner(
            RunRequest("loops", {"n": 50}, device="cuda", steps=1, out=str(out)),
            forward_stderr=False,
        )
    )
    assert isinstance(events[-1], Finished) and out.exists()
    rows = {r["name"]: r for r in events[-1].result["strategies"]}
    assert rows["for_loop"]["launches"] == 50 and rows["for_loop"]["kernels"] == 50


def test_sys_exit_on_cuda_fails_keeps_the_trace_and_empties_the_allocator(tmp_path: Path) -> None:
    import torch

    w = user(tmp_path, userfiles.EXITING, "exits")
    out = tmp_path / "t.json.gz"
    events = list(Runner(RunRequest(w, {"exit_at": 3}, device="cuda", steps=2, out=str(out))))
    last = events[-1]
    assert isinstance(last, Failed) and last.error == "the workload called sys.exit(5) in step 1"
    assert last.partial_trace_path == str(out) and out.exists()
    assert torch.cuda.memory_reserved() == 0
