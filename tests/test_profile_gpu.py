"""``gpuviz profile`` on a GPU: the examples, allocator snapshots, two torchrun ranks on one GPU.

Run on the device machine: ``PYTHONPATH=. python -m pytest -m gpu tests/test_profile_gpu.py``.
Set ``GPUVIZ_GPU_OUT`` to a folder to keep the traces and event streams there.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_cli_profile import ROOT, SCRIPTS, events, profile, step_ranges, trace_events

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

EXAMPLES = ROOT / "examples"


@pytest.fixture
def out_dir(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    keep = os.environ.get("GPUVIZ_GPU_OUT")
    if not keep:
        return tmp_path
    d = Path(keep) / request.node.name.replace("[", "-").replace("]", "")
    d.mkdir(parents=True, exist_ok=True)
    return d


def _kernels(trace: dict[str, Any]) -> int:
    return sum(1 for e in trace["traceEvents"] if e.get("cat") == "kernel")


def test_gpt_example_times_steps_on_the_gpu(out_dir: Path) -> None:
    out, ev = out_dir / "gpt.json.gz", out_dir / "gpt.events.jsonl"
    r = profile(
        *("--stop", "--out", str(out), "--events", str(ev), "--json"),
        *(str(EXAMPLES / "gpt_train.py"), "--steps", "200"),
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    stream = events(ev)
    timed = [e for e in stream if e["type"] == "StepTimed"]
    assert len(timed) == 5 + 2 + 5  # --stop after skip + warmup + active
    assert all("gpu_ms" in e and e["gpu_ms"] > 0 for e in timed[1:])  # CUDA events per step
    cuda_mem = [e for e in stream if e["type"] == "MemorySample" and e["device"].startswith("cuda")]
    assert cuda_mem and max(e["allocated_bytes"] for e in cuda_mem) > 0
    trace = trace_events(out)
    assert {e["name"] for e in step_ranges(trace)} == {f"ProfilerStep#{k}" for k in range(7, 12)}
    assert _kernels(trace) > 100
    result = json.loads(r.stdout.strip().splitlines()[-1])
    util = result["windows"][0]["devices"][0]["utilization"]
    assert 0 < util <= 1
    print(r.stderr)


def test_resnet_example_with_allocator_snapshot(out_dir: Path) -> None:
    pytest.importorskip("torchvision")
    out = out_dir / "resnet.json.gz"
    r = profile(
        "--stop", "--memory-snapshot", "--out", str(out),
        str(EXAMPLES / "resnet_train.py"), "--model", "resnet50", "--batch", "64",
        cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert _kernels(trace_events(out)) > 100
    snap = out_dir / "resnet.memory.pickle"
    assert snap.exists() and snap.stat().st_size > 1000
    print(r.stderr)


def test_generate_example_with_step_fn(out_dir: Path) -> None:
    out, ev = out_dir / "generate.json.gz", out_dir / "generate.events.jsonl"
    r = profile(
        "--step-fn", "__main__:generate", "--out", str(out), "--events", str(ev),
        str(EXAMPLES / "generate.py"), "--requests", "20",
        cwd=ROOT,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert len([e for e in events(ev) if e["type"] == "StepTimed"]) == 20
    assert _kernels(trace_events(out)) > 100
    print(r.stderr)


def test_torchrun_two_gloo_ranks_on_one_gpu(out_dir: Path) -> None:
    out = out_dir / "gloo2"
    r = profile(
        "--nproc-per-node", "2", "--skip", "2", "--warmup", "1", "--active", "3",
        "--out", str(out), str(SCRIPTS / "ddp_gloo.py"), "--device", "cuda",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    for rank in (0, 1):
        with gzip.open(out / f"rank-{rank}.json.gz", "rt") as f:
            trace = json.load(f)
        assert trace["distributedInfo"]["rank"] == rank
        assert _kernels(trace) > 0
    import subprocess

    s = subprocess.run(
        [sys.executable, "-m", "gpuviz", "summary", str(out), "--json"],
        cwd=ROOT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert json.loads(s.stdout)["ranks"] == [0, 1]
    print(r.stderr)


def test_a_forked_child_of_a_cuda_script_ends_with_its_own_status(out_dir: Path) -> None:
    # CUPTI and Kineto's threads live in the parent; the child (CPU steps of its own) must
    # neither report nor write, nor hang in the profiler's teardown at exit.
    out = out_dir / "fork.json.gz"
    r = profile(
        "--skip", "2", "--warmup", "1", "--active", "3", "--out", str(out),
        "forks.py", "fork", "cuda",
    )  # fmt: skip
    assert r.returncode == 4, r.stderr
    assert "child stepped 12" in r.stdout and "child atexit ran" in r.stdout
    assert len(re.findall(r"^gpuviz: forks\.py: \d+ steps", r.stderr, flags=re.M)) == 1
    assert _kernels(trace_events(out)) > 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["fork.json.gz"]


def test_savings_of_a_launch_bound_script_are_per_step_and_at_most_the_step(
    out_dir: Path,
) -> None:
    # On an H100 such a script printed "could save ~173 ms" for 5 profiled steps of 35 ms,
    # against an unprofiled step of 24.7 ms.
    out = out_dir / "launch.json.gz"
    r = profile("--stop", "--json", "--out", str(out), "launch_bound.py", "60", "400")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    findings = result["windows"][0]["findings"]
    assert "launch_bound" in {f["kind"] for f in findings}, r.stderr
    for f in findings:
        assert 0 < f["saving_per_step_us"] <= f["step_us"]
    pace_ms = max(result["wall_ms"]["mean"], (result.get("gpu_ms") or {}).get("median", 0))
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("gpuviz: advisor")]
    assert lines, r.stderr
    for line in lines:
        m = re.search(
            r"could save ~([\d.]+) (ms|µs) a step \(.* of the ([\d.]+) ms unprofiled", line
        )
        assert m, line
        saving_ms = float(m.group(1)) / (1 if m.group(2) == "ms" else 1000)
        assert saving_ms <= float(m.group(3)) + 0.05 and float(m.group(3)) == pytest.approx(
            pace_ms, rel=0.05
        )
    print(r.stderr)


SLOW_SETUP = """
import time, sys
import torch
time.sleep(float(sys.argv[1]))  # a framework's imports and model building, before any CUDA call
model = torch.nn.Linear(64, 64).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(32, 64, device="cuda")
for _ in range(30):
    model(x).sum().backward()
    opt.step()
    opt.zero_grad()
"""


def test_a_slow_set_up_before_the_first_cuda_call_does_not_eat_the_steps(tmp_path: Path) -> None:
    # The HF Trainer spent over 10 s before its first CUDA call: the no-step countdown must
    # start there, or the set-up alone is recorded and --stop ends the script before a step.
    script = tmp_path / "slow_setup.py"
    script.write_text(SLOW_SETUP)
    out = tmp_path / "t.json.gz"
    r = profile("--stop", "--duration", "1", "--out", str(out), str(script), "3", cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert "no step was seen" not in r.stderr
    assert {e["name"] for e in step_ranges(trace_events(out))} == {
        f"ProfilerStep#{k}" for k in range(7, 12)
    }
