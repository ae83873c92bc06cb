"""``benchmarks/cupti_window.py``: CUPTI attached with no ``torch.profiler``, then detached as
Kineto's teardown does, so that a profiler window after it still records the GPU."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.test_cli_profile import ROOT, _env

CODE = textwrap.dedent(
    """
    import json, sys, torch
    sys.path.insert(0, {bench!r})
    from cupti_window import close_window, open_window

    x = torch.randn(4096, device="cuda")
    torch.cuda.synchronize()
    win = open_window()
    for _ in range(20):
        x = torch.sin(x)
    torch.cuda.synchronize()
    close_window(win)
    acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(3):
            x = torch.cos(x)
        torch.cuda.synchronize()
    prof.export_chrome_trace({trace!r})
    print(json.dumps({{"bytes": win.recorded_bytes, "finalized": win.finalized, "via": win.via}}))
    """
)


@pytest.mark.gpu
def test_a_cupti_window_records_detaches_and_leaves_the_profiler_working(tmp_path: Path) -> None:
    trace = tmp_path / "after.json"
    code = CODE.format(bench=str(ROOT / "benchmarks"), trace=str(trace))
    r = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, timeout=300
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    # 20 kernels and their launches at least: each record is tens of bytes.
    assert out["bytes"] > 20 * 32 and out["finalized"], out
    kernels = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("cat") == "kernel"]
    assert len(kernels) >= 3, out  # CUPTI attached again for torch's own window
