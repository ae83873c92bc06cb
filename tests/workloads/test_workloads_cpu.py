"""Each built-in workload runs on the CPU build; CUDA-only strategies are reported as skipped."""

from __future__ import annotations

from typing import Any

import pytest

from gpuviz.engine.events import Finished, StepTimed
from gpuviz.engine.runner import Runner, RunRequest


def run(
    name: str, params: dict[str, Any], steps: int = 1
) -> tuple[dict[str, Any], list[StepTimed]]:
    events = list(Runner(RunRequest(name, params, device="cpu", steps=steps, profile=False)))
    assert isinstance(events[-1], Finished), events[-1]
    return events[-1].result, [e for e in events if isinstance(e, StepTimed)]


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in result["strategies"]}


def test_loops_tutorial_default_data() -> None:
    result, steps = run("loops", {})
    assert result["n"] == 5  # the tutorial's [1, 2, 3, 4, 5]
    assert {s.label for s in steps} == {"for_loop", "vectorized", "vmap", "dataparallel_function"}


@pytest.mark.parametrize("only", ["for_loop", "vmap"])
def test_loops_only(only: str) -> None:
    result, steps = run("loops", {"n": 10, "only": only}, steps=2)
    assert [s.label for s in steps] == [only, only]
    assert [r["name"] for r in result["strategies"]] == [only]


def test_loops_every_strategy_gives_the_loops_result() -> None:
    # The check compares each strategy with x**2 computed apart; int64 makes it exact.
    result, _ = run("loops", {"n": 100, "dtype": "int64"})
    assert all(r["status"] in ("ok", "skipped") for r in result["strategies"])


def test_streams_on_cpu() -> None:
    result, _steps = run("streams", {"size": 16, "matmuls": 2, "copy_mb": 1})
    rows = by_name(result)
    assert rows["default_stream"]["status"] == "ok" and "tflop_per_s" in rows["default_stream"]
    assert rows["multi_stream"] == {
        "name": "multi_stream",
        "title": rows["multi_stream"]["title"],
        "status": "skipped",
        "reason": "needs CUDA",
    }
    assert "overlap" not in result
    assert result["copy_bytes"] == 2**20


def test_placement_on_cpu() -> None:
    result, steps = run("placement", {"sizes_mb": [1, 2]})
    rows = by_name(result)
    assert [s.label for s in steps] == ["host_clone@1MB", "host_clone@2MB"]
    assert rows["to_pinned_nonblocking@1MB"]["reason"] == "needs CUDA"
    assert rows["module_to@2MB"]["status"] == "skipped"
    assert set(result["gb_per_s_by_size_mb"]) == {"1", "2"}
    # GB/s = bytes / median time, computed apart here
    r = rows["host_clone@2MB"]
    assert r["gb_per_s"] == pytest.approx(2 * 2**20 / (r["median_wall_ms"] / 1e3) / 1e9)


def test_training_on_cpu() -> None:
    result, steps = run(
        "training", {"batch": 8, "features": 16, "hidden": 16, "layers": 2}, steps=2
    )
    rows = by_name(result)
    assert [s.label for s in steps] == ["fp32", "fp32", "amp_bf16", "amp_bf16"]
    r = rows["amp_bf16"]
    assert r["samples_per_s"] == pytest.approx(8 / (r["median_wall_ms"] / 1e3))
    assert "peak_allocated_bytes" not in r  # no allocator statistics on the CPU
    assert rows["fp32"]["speedup"] == 1.0
    only, _ = run(
        "training", {"batch": 2, "features": 4, "hidden": 4, "layers": 1, "precision": "fp32"}
    )
    assert [r["name"] for r in only["strategies"]] == ["fp32"]
