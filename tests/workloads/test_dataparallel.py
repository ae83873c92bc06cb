"""The ``dataparallel`` workload: rows per replica against ``gpuviz split``, costs, the CPU path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gpuviz.engine.events import Finished, SplitRecorded, StepTimed, TraceReady
from gpuviz.engine.runner import Runner, RunRequest


def gpuviz_split(batch: int, gpus: int) -> list[int]:
    """What the CLI says DataParallel does with ``batch`` rows on ``gpus`` GPUs."""
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "gpuviz",
            "split",
            "--batch",
            str(batch),
            "--gpus",
            str(gpus),
            "--json",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    obj = json.loads(out.stdout)
    assert obj["batch"] == batch and obj["gpus"] == gpus
    return list(obj["rows"])


def tutorial_batches(length: int, batch: int) -> list[int]:
    # A DataLoader without drop_last: full batches, then the rest (computed here by hand).
    sizes = []
    left = length
    while left > 0:
        sizes.append(min(batch, left))
        left -= batch
    return sizes


def run(params: dict[str, Any], tmp_path: Path, **kw: Any) -> list[Any]:
    req = RunRequest("dataparallel", params, out=str(tmp_path / "dp.json.gz"), **kw)
    events = list(Runner(req))
    assert isinstance(events[-1], Finished), events[-1]
    return events


def test_tutorial_defaults_on_cpu(tmp_path: Path) -> None:
    events = run({}, tmp_path, device="cpu", steps=4)
    result = events[-1].result
    dp = result["dataparallel"]
    sizes = tutorial_batches(100, 30)
    assert sizes == [30, 30, 30, 10]
    assert dp["epoch_batches"] == sizes
    # No GPU: DataParallel runs its module; the result says so.
    assert dp["runs_module_directly"] is True and "just runs its module" in dp["behaviour"]
    # One SplitRecorded per step (4 profiled + 4 timed), the whole batch on the CPU.
    splits = [e for e in events if isinstance(e, SplitRecorded)]
    steps = [e for e in events if isinstance(e, StepTimed) and e.label == "dataparallel"]
    assert [s.step for s in splits] == [s.step for s in steps]
    assert [s.rows for s in splits] == sizes * 2
    assert all(s.device == "cpu" and s.replica == 0 and s.gpu_ms is None for s in splits)
    # The profiled steps are exactly one epoch.
    assert [s.profiled for s in steps] == [True] * 4 + [False] * 4
    # The planned split (8 GPUs without two of them) is what `gpuviz split` says.
    plan = dp["planned_split"]
    assert plan["gpus"] == 8
    assert plan["rows"] == [gpuviz_split(b, 8) for b in sizes]
    assert plan["rows"][-1] == [2, 2, 2, 2, 2, 0, 0, 0]  # the tutorial's idle GPUs
    # Only one strategy on the CPU: there is no single-device baseline to compare.
    assert [s["name"] for s in result["strategies"]] == ["dataparallel"]
    assert any(isinstance(e, TraceReady) for e in events)


def test_planned_split_for_a_chosen_gpu_count(tmp_path: Path) -> None:
    events = run({"plan_gpus": 4, "length": 47, "batch": 13}, tmp_path, device="cpu", steps=1)
    dp = events[-1].result["dataparallel"]
    sizes = tutorial_batches(47, 13)
    assert dp["epoch_batches"] == sizes
    assert dp["planned_split"]["rows"] == [gpuviz_split(b, 4) for b in sizes]
    for step in dp["steps"]:
        assert step["planned_rows"] == gpuviz_split(step["batch"], 4)


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_bigger_models_forward_backward_on_cpu(tmp_path: Path, model: str) -> None:
    params = {"model": model, "hidden": 64, "input_size": 8, "mode": "forward_backward"}
    events = run(params, tmp_path, device="cpu", steps=1)
    dp = events[-1].result["dataparallel"]
    assert dp["model"] == model
    # forward_backward records the backward's time for every recorded step.
    assert all(s["backward_ms"] > 0 for s in dp["steps"])
    assert all(s["output_rows"] == s["batch"] for s in dp["steps"])


def test_trace_holds_one_dataparallel_forward_per_profiled_step(tmp_path: Path) -> None:
    import gzip

    run({}, tmp_path, device="cpu", steps=1)
    with gzip.open(tmp_path / "dp.json.gz", "rt") as f:
        events = json.load(f)["traceEvents"]
    names = [e.get("name") for e in events if e.get("ph") == "X"]
    # DataParallel's own range, once per profiled batch (one epoch): the splits analysis
    # counts steps by it.
    assert names.count("DataParallel.forward") == 4


# ---------------------------------------------------------------------------------- on GPUs


def _gpus() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


@pytest.mark.gpu
@pytest.mark.parametrize("n", [2, 4, 8])
def test_recorded_rows_match_gpuviz_split_on_gpus(tmp_path: Path, n: int) -> None:
    if _gpus() < n:
        pytest.skip(f"needs {n} GPUs")
    events = run({}, tmp_path, gpus=str(n), steps=4)
    sizes = tutorial_batches(100, 30)
    splits = [e for e in events if isinstance(e, SplitRecorded)]
    by_step: dict[int, list[SplitRecorded]] = {}
    for s in splits:
        by_step.setdefault(s.step, []).append(s)
    dp_steps = [e.step for e in events if isinstance(e, StepTimed) and e.label == "dataparallel"]
    assert sorted(by_step) == dp_steps
    for i, step in enumerate(dp_steps):
        reps = sorted(by_step[step], key=lambda s: s.replica)
        assert [r.device for r in reps] == [f"cuda:{k}" for k in range(n)]
        assert [r.rows for r in reps] == gpuviz_split(sizes[i % 4], n)
        assert all(r.gpu_ms is not None and r.gpu_ms > 0 for r in reps if r.rows > 0)
    expected = {2: ([15, 15], [5, 5]), 4: ([8, 8, 8, 6], [3, 3, 3, 1])}
    if n in expected:
        full, last = expected[n]
        rows = [[r.rows for r in sorted(by_step[s], key=lambda r: r.replica)] for s in dp_steps[:4]]
        assert rows == [full, full, full, last]
    dp = events[-1].result["dataparallel"]
    assert dp["matches_plan"] is True and dp["runs_module_directly"] is False
    for phase in ("scatter", "replicate", "parallel_apply", "gather"):
        assert dp["phases"][phase]["median_ms"] > 0
    # The trace-side analysis finds the same rows in the profiled steps.
    from gpuviz.analysis.splits import find_splits
    from gpuviz.trace.kineto import load_trace

    found = find_splits(load_trace(tmp_path / "dp.json.gz"))
    for step in range(4):
        rows = [r.rows for r in found if r.step == step]
        assert rows == gpuviz_split(sizes[step], n)


@pytest.mark.gpu
def test_one_gpu_runs_the_module(tmp_path: Path) -> None:
    if _gpus() < 1:
        pytest.skip("needs a GPU")
    events = run({"plan_gpus": 2}, tmp_path, gpus="1", steps=1)
    dp = events[-1].result["dataparallel"]
    assert dp["runs_module_directly"] is True and "One GPU" in dp["behaviour"]
    splits = [e for e in events if isinstance(e, SplitRecorded)]
    assert all(s.device == "cuda:0" and s.gpu_ms is not None for s in splits)
    assert [s.rows for s in splits[:4]] == tutorial_batches(100, 30)
    assert dp["planned_split"]["rows"] == [gpuviz_split(b, 2) for b in tutorial_batches(100, 30)]


# ------------------------------------------------------- recordings made on H200s by this workload


def test_recorded_2gpu_events_match_gpuviz_split(data_dir: Path) -> None:
    from gpuviz.engine.events import Started, read_events

    folder = data_dir / "events" / "dataparallel_2gpu"
    events = list(read_events(folder / "events.jsonl"))
    assert isinstance(events[0], Started) and events[0].devices == ["cuda:0", "cuda:1"]
    assert isinstance(events[-1], Finished)
    dp_steps = [e.step for e in events if isinstance(e, StepTimed) and e.label == "dataparallel"]
    splits = [e for e in events if isinstance(e, SplitRecorded)]
    sizes = tutorial_batches(100, 30)
    rows = []
    for i, step in enumerate(dp_steps):
        reps = sorted((s for s in splits if s.step == step), key=lambda s: s.replica)
        assert [r.device for r in reps] == ["cuda:0", "cuda:1"]
        assert [r.rows for r in reps] == gpuviz_split(sizes[i % 4], 2)
        assert all(r.gpu_ms is not None and r.gpu_ms > 0 for r in reps)
        rows.append([r.rows for r in reps])
    assert rows[:4] == [[15, 15], [15, 15], [15, 15], [5, 5]]  # the figures
    trace = [e for e in events if isinstance(e, TraceReady)]
    assert len(trace) == 1 and Path(trace[0].path) == folder / "dataparallel_2gpu.json.gz"


@pytest.mark.parametrize(
    ("name", "gpus", "expected"),
    [
        ("events/dataparallel_2gpu/dataparallel_2gpu.json.gz", 2, ([15, 15], [5, 5])),
        ("dataparallel_4gpu.json.gz", 4, ([8, 8, 8, 6], [3, 3, 3, 1])),
    ],
)
def test_recorded_traces_show_the_split(
    data_dir: Path, name: str, gpus: int, expected: tuple[list[int], list[int]]
) -> None:
    # The trace-side analysis finds in our own recordings what DataParallel's chunking gives.
    from gpuviz.analysis.splits import find_splits
    from gpuviz.trace.kineto import load_trace

    found = find_splits(load_trace(data_dir / name))
    sizes = tutorial_batches(100, 30)
    assert sorted({r.step for r in found}) == [0, 1, 2, 3]  # one epoch was profiled
    full, last = expected
    for step in range(4):
        mine = sorted((r for r in found if r.step == step), key=lambda r: r.device)
        assert [r.device for r in mine] == list(range(gpus))
        assert [r.rows for r in mine] == gpuviz_split(sizes[step], gpus)
        assert [r.rows for r in mine] == (full if step < 3 else last)
        assert all(r.gpu_ns > 0 for r in mine)
