"""Communication figures of multi-rank traces (gpuviz.analysis.comm), against the raw JSON."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from figures_reference import union

from gpuviz.analysis.comm import comm_figures
from gpuviz.trace.kineto import load_trace

# The engine names each profiled step's range "gpuviz/<label>#<step>" (engine.profiling).
STEP_PREFIX = "gpuviz/"


def test_nccl_figures_of_a_real_two_rank_trace(data_dir: Path) -> None:
    folder = data_dir / "ddp_2rank"
    figures = comm_figures(load_trace(folder), STEP_PREFIX)
    by_rank = {r["rank"]: r for r in figures["ranks"]}
    assert sorted(by_rank) == [0, 1]
    for r in (0, 1):
        with gzip.open(folder / f"rank-{r}.json.gz", "rt") as f:
            doc = json.load(f)
        kernels = [e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
        nccl = [(e["ts"], e["ts"] + e["dur"]) for e in kernels if "nccl" in e["name"].lower()]
        other = [(e["ts"], e["ts"] + e["dur"]) for e in kernels if "nccl" not in e["name"].lower()]
        assert nccl, "the NCCL run has NCCL kernels"
        got = by_rank[r]
        assert got["nccl_kernels"] == len(nccl)
        assert got["nccl_us"] == pytest.approx(union(nccl), abs=0.01 * len(nccl) + 0.01)
        assert got["compute_us"] == pytest.approx(union(other), abs=0.01 * len(other) + 0.01)
        both = union(nccl) + union(other) - union(nccl + other)
        assert got["overlap_us"] == pytest.approx(both, abs=0.01 * len(kernels) + 0.01)
        assert got["exposed_comm_us"] == pytest.approx(got["nccl_us"] - got["overlap_us"])


def test_nccl_figures_step_by_step(data_dir: Path) -> None:
    # Each profiled step's NCCL time, from kernels that start inside its gpuviz/ddp#k range.
    folder = data_dir / "ddp_nccl_4rank"
    figures = comm_figures(load_trace(folder), STEP_PREFIX)
    for r in range(4):
        with gzip.open(folder / f"rank-{r}.json.gz", "rt") as f:
            doc = json.load(f)
        ranges = sorted(
            (e["ts"], e["ts"] + e["dur"])
            for e in doc["traceEvents"]
            if e.get("cat") == "user_annotation" and e["name"].startswith("gpuviz/ddp#")
        )
        nccl = [
            (e["ts"], e["ts"] + e["dur"])
            for e in doc["traceEvents"]
            if e.get("cat") == "kernel" and "nccl" in e["name"].lower()
        ]
        got = next(x for x in figures["ranks"] if x["rank"] == r)
        assert got["profiled_steps"] == len(ranges) == 2
        for (t0, t1), step in zip(ranges, got["steps"]):
            mine = [iv for iv in nccl if t0 <= iv[0] < t1]
            assert step["nccl_us"] == pytest.approx(union(mine), abs=0.01 * len(mine) + 0.01)
    per_step = figures["nccl_us_by_step_min"]
    assert per_step == [min(x["steps"][k]["nccl_us"] for x in figures["ranks"]) for k in range(2)]
