"""The advisor on traces recorded here, on a CUDA GPU (``pytest -m gpu``).

Each test records a few profiled steps with ``torch.profiler`` (plain torch, like a user's
script), then advises on the written trace: a planted problem must be found, a well-tuned loop
must get no warning, and a multi-rank run with a planted straggler must name it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpuviz.analysis.advisor import advise
from gpuviz.analysis.ranks import rank_analysis
from gpuviz.trace.kineto import load_trace

pytestmark = pytest.mark.gpu
ROOT = Path(__file__).parent.parent.parent


def _record(path: Path, step, steps: int = 3) -> Path:
    import torch

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=activities) as prof:
        for _ in range(steps):
            step()
            prof.step()
        torch.cuda.synchronize()
    prof.export_chrome_trace(str(path))
    return path


def _kinds(path: Path) -> dict[str, object]:
    return {f.kind: f for f in advise(load_trace(path)).findings}


def test_tiny_kernels_are_launch_bound(tmp_path: Path) -> None:
    import torch

    x = torch.zeros(16, device="cuda")

    def step() -> None:
        for _ in range(300):
            x.add_(1.0)

    f = _kinds(_record(tmp_path / "launch.json", step))
    assert "launch_bound" in f and f["launch_bound"].severity in ("warning", "critical")


def test_item_in_the_loop_is_a_host_sync(tmp_path: Path) -> None:
    import time

    import torch

    a = torch.randn(4096, 4096, device="cuda")

    def step() -> None:
        for _ in range(4):
            b = a @ a  # a few ms of GPU work the CPU then waits for
            value = float(b[0, 0].item())
            time.sleep(0.0005)  # host work on the value (logging, a Python decision)
            a.mul_(1.0 if value == value else 0.0)

    f = _kinds(_record(tmp_path / "sync.json", step))
    assert "host_sync" in f and f["host_sync"].severity in ("warning", "critical")
    assert any("aten::item" in (e.names or ("",))[0] for e in f["host_sync"].evidence)


def test_well_tuned_loop_gets_no_warning(tmp_path: Path) -> None:
    import torch

    w = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)

    def step() -> None:
        y = x
        for _ in range(8):
            y = torch.tanh(y @ w)

    findings = advise(load_trace(_record(tmp_path / "clean.json", step))).findings
    assert not [f for f in findings if f.severity != "info"], [f.kind for f in findings]


@pytest.mark.parametrize("backend", ["gloo", "nccl"])
def test_multi_rank_straggler_on_gpus(tmp_path: Path, backend: str) -> None:
    import torch

    world = 2
    if backend == "nccl" and torch.cuda.device_count() < world:
        pytest.skip("NCCL needs one GPU per rank")
    out = tmp_path / backend
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "record_collectives.py"),
            str(out),
            "--world",
            str(world),
            "--straggler",
            "1",
            "--device",
            "cuda",
            "--backend",
            backend,
            "--delay-ms",
            "30",
            "--steps",
            "4",
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    trace = load_trace(out)
    ra = rank_analysis(trace)
    assert len(ra.collectives) >= 8  # 4 steps x (DDP's bucket + the loss all_reduce)
    assert ra.straggler is not None and ra.straggler.rank == 1
    assert "straggler" in _kinds(out)
