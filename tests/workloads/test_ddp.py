"""The ``ddp`` workload: its declaration, its body as a world of one, and NCCL ranks on GPUs.

The launcher's own tests (gloo ranks, faults, orphans) are in tests/engine/test_multiprocess.py.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from gpuviz.engine.events import Failed, Finished, StepTimed
from gpuviz.engine.runner import Runner, RunRequest
from gpuviz.workloads.registry import resolve_workload


def test_declaration() -> None:
    spec = resolve_workload("ddp")
    assert spec.multi_process and spec.multi_gpu
    defaults = {p.name: p.default for p in spec.params}
    assert (defaults["in_features"], defaults["out_features"]) == (100, 10)
    assert defaults["cpu_ranks"] == 2
    assert defaults["fail_rank"] == -1 and defaults["hang_rank"] == -1


def test_body_runs_as_a_world_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # Without a launcher (no RANK/WORLD_SIZE), the body trains alone on gloo and closes its group.
    import torch.distributed as dist

    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "GPUVIZ_DIST_INIT", "GPUVIZ_RANK_CHILD"):
        monkeypatch.delenv(k, raising=False)
    spec = replace(resolve_workload("ddp"), multi_process=False, multi_gpu=False)
    req = RunRequest("ddp", {"batch": 4}, device="cpu", steps=2, profile=False)
    events = list(Runner(req, spec=spec))
    assert isinstance(events[-1], Finished), events[-1]
    result = events[-1].result
    assert (result["rank"], result["world_size"], result["backend"]) == (0, 1, "gloo")
    assert [e.label for e in events if isinstance(e, StepTimed)] == ["ddp", "ddp"]
    assert not dist.is_initialized()


def test_injected_failure_in_a_world_of_one(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "GPUVIZ_DIST_INIT", "GPUVIZ_RANK_CHILD"):
        monkeypatch.delenv(k, raising=False)
    spec = replace(resolve_workload("ddp"), multi_process=False, multi_gpu=False)
    req = RunRequest("ddp", {"fail_rank": 0, "fault_step": 0}, device="cpu", profile=False)
    events = list(Runner(req, spec=spec))
    assert isinstance(events[-1], Failed)
    assert "injected failure on rank 0" in events[-1].error


@pytest.mark.gpu
def test_nccl_ranks_on_gpus(tmp_path: Path) -> None:
    import torch

    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n < 2:
        pytest.skip("needs 2 GPUs")
    out = tmp_path / "ddp"
    events = list(Runner(RunRequest("ddp", {"hidden": 1024}, steps=3, out=str(out))))
    assert isinstance(events[-1], Finished), events[-1]
    result = events[-1].result
    assert result["backend"] == "nccl" and result["world_size"] == n
    assert [r["device"] for r in result["ranks"]] == [f"cuda:{i}" for i in range(n)]
    for r in result["ranks"]:
        assert r["median_gpu_ms"] > 0
        assert r["nccl_kernels"] > 0 and r["nccl_us"] > 0
        assert 0 <= r["overlap_us"] <= r["nccl_us"]
        assert r["env"]["NCCL_NVLS_ENABLE"] == "0"
    for i in range(n):
        with gzip.open(out / f"rank-{i}.json.gz", "rt") as f:
            assert json.load(f)["distributedInfo"]["rank"] == i
    summary = subprocess.run(
        [sys.executable, "-m", "gpuviz", "summary", str(out), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(summary.stdout)["ranks"] == list(range(n))


def test_recorded_nccl_ranks(data_dir: Path) -> None:
    # 4 NCCL ranks that this workload recorded on H200s: one trace per rank, merged by rank.
    from gpuviz.analysis.comm import comm_figures
    from gpuviz.engine.profiling import STEP_PREFIX
    from gpuviz.trace.kineto import load_trace

    folder = data_dir / "ddp_nccl_4rank"
    summary = subprocess.run(
        [sys.executable, "-m", "gpuviz", "summary", str(folder), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(summary.stdout)["ranks"] == [0, 1, 2, 3]
    figures = {r["rank"]: r for r in comm_figures(load_trace(folder), STEP_PREFIX)["ranks"]}
    for i in range(4):
        with gzip.open(folder / f"rank-{i}.json.gz", "rt") as f:
            doc = json.load(f)
        assert doc["distributedInfo"]["rank"] == i and doc["distributedInfo"]["backend"] == "nccl"
        kernels = [e for e in doc["traceEvents"] if e.get("cat") == "kernel"]
        nccl = [e for e in kernels if "nccl" in e["name"].lower()]
        assert nccl and figures[i]["nccl_kernels"] == len(nccl)
        assert figures[i]["nccl_us"] > 0
