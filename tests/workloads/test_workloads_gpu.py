"""The workloads on a real GPU (run with ``pytest -m gpu`` on the device machine)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from gpuviz.engine.events import Finished, MemorySample, StepTimed, TraceReady
from gpuviz.engine.runner import Runner, RunRequest

pytestmark = pytest.mark.gpu


def run(
    name: str, params: dict[str, Any], tmp_path: Path, steps: int = 2
) -> tuple[dict[str, Any], list[Any]]:
    events = list(
        Runner(
            RunRequest(
                name, params, device="cuda", steps=steps, out=str(tmp_path / f"{name}.json.gz")
            )
        )
    )
    assert isinstance(events[-1], Finished), events[-1]
    return events[-1].result, events


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in result["strategies"]}


def trace(path: str) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        return json.load(f)["traceEvents"]  # type: ignore[no-any-return]


def test_loops_on_gpu(tmp_path: Path) -> None:
    n = 2000
    result, events = run("loops", {"n": n}, tmp_path)
    rows = by_name(result)
    assert all(e.gpu_ms is not None for e in events if isinstance(e, StepTimed))
    for name in ("for_loop", "vectorized", "vmap", "streams", "cuda_graph"):
        assert rows[name]["status"] == "ok", rows[name]
    assert rows["for_loop"]["launches"] == n and rows["for_loop"]["kernels"] == n  # one per element
    assert rows["vectorized"]["launches"] == 1 and rows["vectorized"]["kernels"] == 1
    assert rows["vmap"]["kernels"] == 1
    assert rows["streams"]["streams"] == 4 and rows["streams"]["kernels"] == 4
    assert (
        rows["cuda_graph"]["launches"] == 1 and rows["cuda_graph"]["kernels"] == n
    )  # one graph launch
    assert rows["for_loop"]["idle_share"] > rows["cuda_graph"]["idle_share"]
    assert rows["vectorized"]["speedup"] > 10
    dp = rows["dataparallel_function"]
    assert dp["status"] == "failed" and "Module" in dp["reason"]
    assert "AttributeError" in dp["error"] or "TypeError" in dp["error"]
    # Independently from the trace file: pow kernels inside the for loop's profiled step.
    evs = trace(result["trace"])
    (loop,) = [
        e
        for e in evs
        if e.get("cat") == "user_annotation" and e["name"].startswith("gpuviz/for_loop#")
    ]
    kernels = [
        e
        for e in evs
        if e.get("cat") == "kernel" and loop["ts"] <= e["ts"] <= loop["ts"] + loop["dur"]
    ]
    assert len(kernels) == n


def test_streams_overlap_on_gpu(tmp_path: Path) -> None:
    result, _ = run("streams", {"size": 2048, "matmuls": 8, "copy_mb": 128}, tmp_path)
    multi = by_name(result)["multi_stream"]
    assert multi["status"] == "ok"
    assert multi["streams"] >= 2
    assert multi["compute_copy_us"] > 0
    assert result["overlap"]["compute_copy_us"] == multi["compute_copy_us"]
    default = by_name(result)["default_stream"]
    # one H2D copy, and one small D2D copy per stream's result (k=2), all on one stream
    assert (
        default["streams"] == 1 and default["compute_copy_us"] == 0 and default["memcpy"] == 1 + 2
    )


def test_placement_on_gpu(tmp_path: Path) -> None:
    result, _ = run("placement", {"sizes_mb": [4, 64]}, tmp_path)
    rows = by_name(result)
    assert all(r["status"] == "ok" for r in rows.values())
    assert all(r["gb_per_s"] > 0.1 for r in rows.values())
    assert rows["to_pinned@64MB"]["gb_per_s"] > rows["to_pageable@64MB"]["gb_per_s"] * 0.8


def test_training_on_gpu_memory(tmp_path: Path) -> None:
    result, events = run("training", {"batch": 64, "hidden": 512}, tmp_path)
    rows = by_name(result)
    assert rows["fp32"]["peak_allocated_bytes"] > 0 and rows["amp_bf16"]["samples_per_s"] > 0
    samples = [e for e in events if isinstance(e, MemorySample)]
    assert samples and all(
        s.allocated_bytes is not None and s.reserved_bytes is not None for s in samples
    )
    assert any(s.nvml_used_bytes for s in samples)  # nvidia-ml-py finds the GPU
    assert result["memory"]["devices"]["cuda:0"]["peak_allocated_bytes"] > 0
    assert any(isinstance(e, TraceReady) for e in events)
